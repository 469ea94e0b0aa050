/**
 * Writing YAML without the yaml library, for the shapes manifests have.
 * `yaml`'s stringify builds a node for every value before it writes a byte;
 * in a short-lived CLI process most of that code runs cold, and for
 * `generate bundle` it was the largest single cost (about 36 ms of 270).
 * This writer produces the same bytes as `YAML.stringify(value, { version,
 * indentSeq: false, lineWidth: 0, minContentWidth: 0 })` for plain data, and
 * returns undefined for anything it is not sure of, so callers fall back to
 * the library: test/unit/yaml-output.test.ts holds the two to the same bytes
 * over the bundle fixtures and a corpus of awkward strings.
 */

/** Recursively sorts object keys, as controller-gen's JSON round trip does. Arrays keep their order. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, sortKeysDeep((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Which plain scalars a reader would take for something other than a string. */
export type YamlSchema = '1.1' | 'core';

/** Words and forms each schema resolves to null, booleans, numbers or (1.1) timestamps and merge keys. */
const NOT_A_STRING: Record<YamlSchema, readonly RegExp[]> = {
  core: [
    /^(?:~|[Nn]ull|NULL)?$/,
    /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
    /^0o[0-7]+$/,
    /^[-+]?[0-9]+$/,
    /^0x[0-9a-fA-F]+$/,
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
    /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
  ],
  // YAML 1.1 (what Go's yaml.v2 and OLM read): yes/no/on/off are booleans,
  // 0-prefixed digits octal, 1:30 base 60, and dates timestamps.
  '1.1': [
    /^(?:~|[Nn]ull|NULL)?$/,
    /^(?:Y|y|[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON|N|n|[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/,
    /^[-+]?0b[0-1_]+$/,
    /^[-+]?0[0-7_]+$/,
    /^[-+]?[0-9][0-9_]*$/,
    /^[-+]?0x[0-9a-fA-F_]+$/,
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    /^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?[eE][-+]?[0-9]+$/,
    /^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*$/,
    /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/,
    /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:t|T|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:[ \t]*(?:Z|[-+][012]?[0-9](?::[0-9]{2})?))?)?$/,
  ],
};

/** Text that cannot stay plain: indicators at the start, `: ` and ` #` inside, blanks or a colon at the end. */
const NEEDS_QUOTES = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
/** Characters only a double-quoted escape can carry; the library has its own escapes for them. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_ESCAPES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\u{D800}-\u{DFFF}]/u;
/**
 * Left to the library: a line starting like a directive or a document marker
 * (it changes how the library indents), and YAML 1.1's merge key `<<`.
 */
const DOCUMENT_MARKER = /^(?:%|---|\.\.\.|<<$)/m;
/** The library writes keys longer than this as explicit `? key` entries. */
const MAX_KEY_LENGTH = 1024;

/**
 * A string as a single-line scalar (a key, a value without a line break, or a
 * document that is one scalar, without its final line break), as the library
 * writes it; undefined for multi-line or otherwise unsure strings.
 */
export function yamlInlineString(value: string, schema: YamlSchema): string | undefined {
  if (value.includes('\n') || NEEDS_ESCAPES.test(value) || DOCUMENT_MARKER.test(value)) return undefined;
  if (!NEEDS_QUOTES.test(value) && !NOT_A_STRING[schema].some((pattern) => pattern.test(value))) return value;
  // Quoted: single quotes only when that avoids escaping a double quote.
  if (value.includes('"') && !value.includes("'")) return `'${value}'`;
  return JSON.stringify(value);
}

/**
 * A multi-line value as a literal block (`|` when it ends with one line
 * break, `|-` when it ends with none), its lines at `indent`, or undefined
 * for the forms the library writes differently (leading or trailing blanks,
 * several final line breaks, document markers).
 */
function literalBlock(value: string, indent: string): string | undefined {
  if (NEEDS_ESCAPES.test(value) || DOCUMENT_MARKER.test(value) || /^[\n\t ]|[\t ]$|\n[\t ]*\n$/.test(value)) {
    return undefined;
  }
  const clip = value.endsWith('\n');
  const body = clip ? value.slice(0, -1) : value;
  return `|${clip ? '' : '-'}\n${indent}${body.replace(/\n+/g, `$&${indent}`)}`;
}

/** A number as the library writes it. */
function numberText(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? '.nan' : value < 0 ? '-.inf' : '.inf';
  return Object.is(value, -0) ? '-0' : JSON.stringify(value);
}

/** Whether `value` is a plain object (an object literal or a JSON parse), not a class instance. */
function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * `value` (a mapping) as the text `yaml` would write with `lineWidth: 0` and
 * these options (its default is `indentSeq: true`; manifests use false), or undefined when this
 * writer is not sure it would write the same: shared or cyclic objects (the
 * library makes anchors), lists in lists, an empty top-level mapping, and
 * the string forms named above.
 */
export function yamlTextWithoutLibrary(
  value: unknown,
  schema: YamlSchema,
  { indentSeq = false }: { indentSeq?: boolean } = {},
): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !isPlainObject(value)) return undefined;
  const seen = new Set<object>();
  const lines: string[] = [];

  /** The text after `key:` or `- ` for a scalar or empty collection; undefined for a non-empty collection or unknown value. */
  const scalarText = (item: unknown, indent: string): string | undefined => {
    switch (typeof item) {
      case 'string':
        return item.includes('\n') ? literalBlock(item, indent) : yamlInlineString(item, schema);
      case 'number':
        return numberText(item);
      case 'boolean':
        return item ? 'true' : 'false';
      case 'object': {
        if (item === null) return 'null';
        const empty = Array.isArray(item) ? item.length === 0 : isPlainObject(item) && Object.keys(item).length === 0;
        if (!empty) return undefined;
        // The library anchors any object it meets twice, empty ones too.
        if (seen.has(item)) return undefined;
        seen.add(item);
        return Array.isArray(item) ? '[]' : '{}';
      }
      default:
        return undefined;
    }
  };

  /** Writes a non-empty mapping's entries at `indent`; the first line after `firstPrefix` (a `- ` item). */
  const mapping = (map: Record<string, unknown>, indent: string, firstPrefix?: string): boolean => {
    if (seen.has(map)) return false;
    seen.add(map);
    let first = true;
    for (const key of Object.keys(map)) {
      const item = map[key];
      if (item === undefined) continue;
      const keyText = yamlInlineString(key, schema);
      if (keyText === undefined || keyText.length > MAX_KEY_LENGTH) return false;
      const lead = first && firstPrefix !== undefined ? firstPrefix : indent;
      first = false;
      if (!entry(`${lead}${keyText}:`, item, indent)) return false;
    }
    return !first;
  };

  /** Writes one `key:` (or `- `) head and its value, nested at `indent` plus two spaces. */
  const entry = (head: string, item: unknown, indent: string): boolean => {
    const text = scalarText(item, `${indent}  `);
    if (text !== undefined) {
      lines.push(head.endsWith(':') ? `${head} ${text}` : `${head}${text}`);
      return true;
    }
    if (typeof item !== 'object' || item === null) return false;
    if (Array.isArray(item)) {
      // Lists sit flush with their key unless indentSeq; a list in a list is left to the library.
      if (!head.endsWith(':')) return false;
      lines.push(head);
      return sequence(item, indentSeq ? `${indent}  ` : indent);
    }
    if (!isPlainObject(item)) return false;
    if (head.endsWith(':')) {
      lines.push(head);
      return mapping(item, `${indent}  `);
    }
    return mapping(item, `${indent}  `, head);
  };

  const sequence = (list: unknown[], indent: string): boolean => {
    if (seen.has(list)) return false;
    seen.add(list);
    for (let index = 0; index < list.length; index++) {
      if (!(index in list) || !entry(`${indent}- `, list[index], indent)) return false;
    }
    return true;
  };

  return mapping(value, '') ? `${lines.join('\n')}\n` : undefined;
}

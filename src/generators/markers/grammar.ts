import { lookupMarker, FOREIGN_MARKER_PREFIXES, type MarkerDefinition, type ValueKind } from './registry.js';

/** Unconverted argument text; `quoted` tells `"5"` (a string) from `5`. */
export interface RawValue {
  text: string;
  quoted: boolean;
}

/** A converted marker argument. */
export type MarkerValue = string | number | boolean | RawValue | RawValue[];

/** A marker value as messages quote it: a raw value's text, else String() of it. */
export function markerValueText(value: MarkerValue | undefined): string {
  if (Array.isArray(value)) return value.map((raw) => raw.text).join(',');
  if (typeof value === 'object') return value.text;
  return String(value);
}

/** One marker as written in a comment. */
export interface Marker {
  definition: MarkerDefinition;
  /** The marker's value for `value` markers, `true` for flags. */
  value: MarkerValue;
  /** The named arguments of `named` markers. */
  args: Record<string, MarkerValue>;
  file: string;
  line: number;
  /** The marker as written, for error messages. */
  source: string;
}

/** Raised for a marker that cannot be parsed; the caller adds file:line. */
export class MarkerSyntaxError extends Error {}

/**
 * Parses the text after `+` of one marker line (`kubebuilder:validation:Minimum=0`).
 * Returns undefined for markers owned by other tools (deepcopy, scaffold).
 * Throws MarkerSyntaxError for unknown or malformed markers.
 */
export function parseMarker(body: string, file: string, line: number): Marker | undefined {
  const text = body.trim();
  if (FOREIGN_MARKER_PREFIXES.some((p) => text.startsWith(p))) return undefined;
  const definition = lookupMarker(text);
  if (!definition) {
    const name = text.split('=', 1)[0];
    throw new MarkerSyntaxError(
      `unknown marker +${name}: check the spelling against controller-gen's marker list (for example +kubebuilder:validation:Minimum=0)`,
    );
  }
  const rest = text.slice(definition.name.length);
  const marker: Marker = { definition, value: true, args: {}, file, line, source: `+${text}` };
  const args = definition.args;
  if (args.form === 'flag') {
    if (rest === '' || rest === '=true') return marker;
    if (rest === '=false') return { ...marker, value: false };
    throw new MarkerSyntaxError(
      `marker +${definition.name} takes no value, found "${rest}": write it as +${definition.name}`,
    );
  }
  if (args.form === 'value') {
    if (!rest.startsWith('=') || rest.length === 1) {
      throw new MarkerSyntaxError(`marker +${definition.name} needs a value: write +${definition.name}=<value>`);
    }
    marker.value = convert(rest.slice(1), args.kind, `+${definition.name}`, true);
    return marker;
  }
  if (rest === '') {
    const missing = Object.entries(args.params)
      .filter(([, p]) => p.required)
      .map(([k]) => k);
    if (missing.length > 0)
      throw new MarkerSyntaxError(
        `marker +${definition.name} needs ${missing.join(', ')}: write +${definition.name}:${missing.map((k) => `${k}=...`).join(',')}`,
      );
    return marker;
  }
  if (!rest.startsWith(':'))
    throw new MarkerSyntaxError(
      `marker +${definition.name} takes named arguments: write +${definition.name}:key=value,...`,
    );
  for (const [key, raw] of splitNamedArgs(rest.slice(1), definition.name)) {
    const param = args.params[key];
    if (!param) {
      throw new MarkerSyntaxError(
        `marker +${definition.name} has no argument "${key}": use one of ${Object.keys(args.params).join(', ')}`,
      );
    }
    marker.args[key] = convert(raw, param.kind, `+${definition.name} argument ${key}`, false);
  }
  for (const [key, param] of Object.entries(args.params)) {
    if (param.required && !(key in marker.args))
      throw new MarkerSyntaxError(`marker +${definition.name} is missing the required argument ${key}=`);
  }
  return marker;
}

/** Splits `a=1,b="x,y",c=p;q` at top-level commas, honouring quotes and braces. */
function splitNamedArgs(text: string, markerName: string): Array<[string, string]> {
  const parts: Array<[string, string]> = [];
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0)
      throw new MarkerSyntaxError(
        `marker +${markerName} has an argument without a value near "${text.slice(i)}": write key=value`,
      );
    const key = text.slice(i, eq).trim();
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(key))
      throw new MarkerSyntaxError(`marker +${markerName} has a malformed argument name "${key}"`);
    let j = eq + 1;
    let depth = 0;
    while (j < text.length) {
      const c = text[j]!;
      if (c === '"' || c === '`' || c === "'") j = skipQuoted(text, j, markerName);
      else {
        if (c === '{') depth++;
        else if (c === '}') depth--;
        else if (c === ',' && depth === 0) break;
        j++;
      }
    }
    parts.push([key, text.slice(eq + 1, j)]);
    i = j + 1;
  }
  return parts;
}

/** Returns the index just past the quoted string starting at `start`. */
function skipQuoted(text: string, start: number, markerName: string): number {
  const quote = text[start];
  for (let j = start + 1; j < text.length; j++) {
    if (text[j] === '\\' && quote !== '`') {
      j++;
      continue;
    }
    if (text[j] === quote) return j + 1;
  }
  throw new MarkerSyntaxError(`marker +${markerName} has an unterminated ${quote} string: close the quote`);
}

function unquote(text: string, markerName: string): RawValue {
  const t = text.trim();
  const q = t[0];
  if (q === '"' || q === '`' || q === "'") {
    const end = skipQuoted(t, 0, markerName);
    if (end !== t.length) throw new MarkerSyntaxError(`marker ${markerName} has text after a quoted string: "${t}"`);
    const inner = t.slice(1, -1);
    if (q === '"') {
      try {
        return { text: JSON.parse(t) as string, quoted: true };
      } catch {
        return { text: inner.replace(/\\(.)/g, '$1'), quoted: true };
      }
    }
    return { text: inner, quoted: true };
  }
  return { text: t, quoted: false };
}

/**
 * Splits `a;b;"c;d"` or `{a,b}` into items. A separator at the end adds no
 * item, as in controller-gen (the seeds write `verbs=get;list;`); an empty
 * item elsewhere (`get;;list`, `;apps`) is refused, where controller-gen
 * writes a verb or group that cannot match anything (`;list`). An empty
 * string written as `""` stays an item (the core API group).
 */
function splitList(text: string, markerName: string): RawValue[] {
  let t = text.trim();
  let sep = ';';
  if (t.startsWith('{') && t.endsWith('}')) {
    t = t.slice(1, -1);
    sep = ',';
  }
  if (t === '') return [];
  const items: RawValue[] = [];
  let start = 0;
  let j = 0;
  while (j <= t.length) {
    const c = t[j];
    if (c === '"' || c === '`' || c === "'") {
      j = skipQuoted(t, j, markerName);
      continue;
    }
    if (c === sep || j === t.length) {
      const item = unquote(t.slice(start, j), markerName);
      if (item.text !== '' || item.quoted) items.push(item);
      // Empty and unquoted: after the last separator it is dropped; before one, refused.
      else if (j < t.length) {
        throw new MarkerSyntaxError(
          `${markerName} has an empty item in "${text.trim()}": remove the extra ${sep} (write "" for an empty string)`,
        );
      }
      start = j + 1;
    }
    j++;
  }
  return items;
}

function convert(raw: string, kind: ValueKind, what: string, wholeRest: boolean): MarkerValue {
  switch (kind) {
    case 'string': {
      const t = raw.trim();
      // A bare single value keeps everything after `=`, so regex patterns need no quoting.
      if (wholeRest && !/^["'`]/.test(t)) return t;
      return unquote(t, what).text;
    }
    case 'int': {
      const t = unquote(raw, what).text;
      if (!/^-?\d+$/.test(t)) throw new MarkerSyntaxError(`${what} must be an integer, found "${t}"`);
      return Number(t);
    }
    case 'number': {
      const t = unquote(raw, what).text;
      if (t === '' || !Number.isFinite(Number(t)))
        throw new MarkerSyntaxError(`${what} must be a number, found "${t}"`);
      return Number(t);
    }
    case 'bool': {
      const t = unquote(raw, what).text;
      if (t !== 'true' && t !== 'false') throw new MarkerSyntaxError(`${what} must be true or false, found "${t}"`);
      return t === 'true';
    }
    case 'list':
      return splitList(raw, what);
    case 'any': {
      const t = raw.trim();
      if (/^["'`]/.test(t)) return unquote(t, what);
      return { text: t, quoted: false };
    }
  }
}

/**
 * Finds every `+<name>` marker (e.g. `kubebuilder:rbac`) in a source file's
 * `//` or JSDoc comment lines, for markers read line by line rather than
 * from a declaration's comments. Malformed markers are reported through
 * `report` with their line; well-formed ones are returned in file order.
 */
export function readLineMarkers(
  text: string,
  name: string,
  file: string,
  report: (line: number, message: string) => void,
): Marker[] {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // The name must end there: `kubebuilder:webhook` must not match `+kubebuilder:webhookconfiguration`.
  const pattern = new RegExp(`^\\s*(?:\\/\\/+|\\*|\\/\\*\\*?)\\s*\\+(${escaped}(?![A-Za-z]).*?)\\s*(?:\\*\\/)?\\s*$`);
  const markers: Marker[] = [];
  text.split('\n').forEach((lineText, index) => {
    const match = pattern.exec(lineText);
    if (!match) return;
    try {
      const marker = parseMarker(match[1]!, file, index + 1);
      if (marker) markers.push(marker);
    } catch (err) {
      if (err instanceof MarkerSyntaxError) report(index + 1, err.message);
      else throw err;
    }
  });
  return markers;
}

/**
 * Reading the user's YAML with bounds. Manifests come from files, directories
 * and pipes the user controls, so every read is checked for type (a FIFO or a
 * device would block forever) and size (the YAML parser is far slower than
 * the disk), and every parse is linear and alias-bounded. Each failure is a
 * one-line {@link UsageError} naming the file.
 */
import { readFileSync, statSync, type Stats } from 'node:fs';
import { loadAll } from 'js-yaml';
import { isMap, isScalar, parseAllDocuments, visit, type Document } from 'yaml';
import { UsageError } from './errors.js';

/**
 * The largest single manifest file read. kube-apiserver refuses request
 * bodies over 3 MiB and etcd objects over 1.5 MiB, so a bigger file cannot
 * hold an object a cluster accepts; 8 MiB leaves room for comments and
 * several documents while keeping the parse to seconds.
 */
export const MAX_MANIFEST_FILE_BYTES = 8 * 1024 * 1024;

/**
 * The largest piped manifest stream (`kustomize build | generate bundle`):
 * a whole operator, CRDs included. Large operators ship a few MiB.
 */
export const MAX_MANIFEST_STREAM_BYTES = 32 * 1024 * 1024;

/**
 * How many alias expansions a document may make before it is treated as an
 * alias bomb; the yaml library's own default, named here so the message can say it.
 */
const MAX_ALIAS_COUNT = 100;

/** What a stat said the path is, for messages. */
function typeName(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** Formats a byte count as operators read it (KiB/MiB, one decimal). */
export function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/**
 * Stats `path` following symlinks and checks it is a regular file of at most
 * `limit` bytes, without opening it (opening a FIFO blocks). `display` is
 * the path as messages print it. Returns its size.
 */
export function checkRegularFile(path: string, display: string, limit = MAX_MANIFEST_FILE_BYTES): number {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    throw fileError(err, display);
  }
  if (!stats.isFile())
    throw new UsageError(
      `${display} is ${typeName(stats)}, not a manifest file`,
      `replace it with a regular YAML file or remove it`,
    );
  if (stats.size > limit) {
    throw new UsageError(
      `${display} is ${formatSize(stats.size)}, more than the ${formatSize(limit)} a manifest file may have`,
      'split it, or remove what a cluster would refuse anyway (objects over 1.5 MiB)',
    );
  }
  return stats.size;
}

/** Reads a regular file of at most `limit` bytes as UTF-8 (see {@link checkRegularFile}). */
export function readManifestFile(path: string, display: string, limit = MAX_MANIFEST_FILE_BYTES): string {
  checkRegularFile(path, display, limit);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw fileError(err, display);
  }
}

/** Maps an fs error of a manifest read to its one-line user error. */
export function fileError(err: unknown, display: string): UsageError {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return new UsageError(`${display} does not exist (or is a broken symlink)`, 'fix the path or the symlink', {
        cause: err,
      });
    case 'ELOOP':
      return new UsageError(`${display} is a symlink loop`, 'point the symlink at a real file, or remove it', {
        cause: err,
      });
    case 'EACCES':
    case 'EPERM':
      return new UsageError(
        `${display} is not readable (permission denied)`,
        `make it readable, e.g. chmod u+r ${display}`,
        { cause: err },
      );
    case 'EISDIR':
      return new UsageError(
        `${display} is a directory, not a manifest file`,
        'replace it with a regular YAML file or remove it',
        { cause: err },
      );
    default:
      return new UsageError(
        `cannot read ${display} (${code ?? (err as Error).message})`,
        'check the file and run again',
        { cause: err },
      );
  }
}

/**
 * Parses every YAML document of `text` into plain values. `source` names the
 * input in errors. Linear in the input: the yaml library's duplicate-key
 * check is quadratic per map (a 200,000-key ConfigMap never finishes), so it
 * is off and an equivalent linear check runs instead. Alias expansion is
 * bounded. Syntax errors go to `syntaxError(document index, first line of
 * the message)` so callers keep their wording; alias bombs and duplicate keys
 * are reported here.
 */
export function parseYamlDocuments(
  text: string,
  source: string,
  syntaxError: (index: number, reason: string) => UsageError,
): unknown[] {
  checkDocumentSizes(text, source);
  return quickParseYaml(text) ?? parseYamlCarefully(text, source, syntaxError);
}

/**
 * The common case, several times faster than {@link parseYamlCarefully}, or than the yaml library's `parse`: js-yaml
 * builds plain values straight from the parser's events, where the yaml
 * library builds a syntax tree and a document model first (for `generate
 * bundle`'s input stream that was most of the command's own time). Only for
 * input both libraries read alike: YAML 1.2's core schema in both, and
 * anything js-yaml refuses (a syntax error, a duplicate key, any alias, an
 * unknown tag, nesting deeper than 100) gives undefined, so that input is
 * read and reported by the yaml library exactly as before. So does what the
 * two would read differently: directives, explicit core tags, and a null
 * mapping key (`~:`, which js-yaml names "null" and the yaml library "").
 */
export function quickParseYaml(text: string): unknown[] | undefined {
  // A %YAML 1.1 directive switches the yaml library to YAML 1.1 (yes is
  // true), and a core tag (!!float 1) resolves differently in the two: such
  // input, rare in manifests, keeps the careful path. The test is on the raw
  // text, so a `!!` inside a string only costs that input the speed-up.
  if (/^%/m.test(text) || text.includes('!!') || text.includes('!<')) return undefined;
  let documents: unknown[];
  try {
    documents = loadAll(text, { maxAliases: 0 });
  } catch {
    return undefined;
  }
  return documents.some(hasNullKey) ? undefined : documents;
}

/** Whether a mapping in `value` has the key js-yaml makes of a null key (the yaml library makes ''). */
function hasNullKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasNullKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, item]) => key === 'null' || hasNullKey(item));
}

/**
 * The yaml library's reading, with the checks and messages described at
 * {@link parseYamlDocuments}; exported for the test that holds the quick
 * reader to it.
 */
export function parseYamlCarefully(
  text: string,
  source: string,
  syntaxError: (index: number, reason: string) => UsageError,
): unknown[] {
  const documents = parseAllDocuments(text, { uniqueKeys: false });
  const list = Array.isArray(documents) ? documents : [documents];
  return list.map((document, index) => {
    const [problem] = document.errors;
    if (problem) throw syntaxError(index, problem.message.split('\n')[0]!.replace(/[.:]\s*$/, ''));
    const duplicate = firstDuplicateKey(document);
    if (duplicate !== undefined) throw syntaxError(index, `map keys must be unique; "${duplicate}" is repeated`);
    try {
      return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
    } catch (err) {
      // The library stops an alias bomb ("billion laughs") by counting expansions.
      if (err instanceof ReferenceError && /alias/i.test(err.message)) {
        throw new UsageError(
          `${source} document ${index + 1} expands YAML aliases more than ${MAX_ALIAS_COUNT} times (an alias bomb)`,
          'write the values out instead of nesting aliases (*name) of aliases',
          { cause: err },
        );
      }
      throw new UsageError(
        `${source} document ${index + 1} cannot be read as data (${(err as Error).message})`,
        'fix the YAML, or check the command that produced it',
        { cause: err },
      );
    }
  });
}

/**
 * Refuses a stream with one document larger than a manifest file may be,
 * before parsing it: parse time grows with the document, and no object that
 * size is accepted by a cluster. Documents are cut at `---` lines, which is
 * cheap and, if a block scalar holds such a line, only makes pieces smaller.
 */
function checkDocumentSizes(text: string, source: string): void {
  if (Buffer.byteLength(text) <= MAX_MANIFEST_FILE_BYTES) return;
  let start = 0;
  for (let index = 0; start <= text.length; index++) {
    const separator = text.indexOf('\n---', start);
    const end = separator < 0 ? text.length : separator + 1;
    const size = Buffer.byteLength(text.slice(start, end));
    if (size > MAX_MANIFEST_FILE_BYTES) {
      throw new UsageError(
        `document ${index + 1} of ${source} is ${formatSize(size)}, more than the ${formatSize(MAX_MANIFEST_FILE_BYTES)} a manifest may have`,
        'split it, or remove what a cluster would refuse anyway (objects over 1.5 MiB)',
      );
    }
    if (separator < 0) break;
    start = separator + 4;
  }
}

/** The first scalar key repeated within one map, in one pass over the document. */
function firstDuplicateKey(document: Document.Parsed): string | undefined {
  let found: string | undefined;
  visit(document, {
    Map(_key, map) {
      if (!isMap(map)) return undefined;
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const value = pair.key.value;
        if (seen.has(value)) {
          found = String(value);
          return visit.BREAK;
        }
        seen.add(value);
      }
      return undefined;
    },
  });
  return found;
}

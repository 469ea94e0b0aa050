import type { JsonPatchOperation } from '../client/client.js';

/**
 * An RFC 6902 JSON patch that turns `original` into `modified`, as the
 * defaulting webhook returns it to the API server.
 *
 * Only `add`, `remove` and `replace` are produced. Objects are compared key
 * by key, so a default set deep inside `spec` is one small operation; arrays
 * are replaced whole when they differ at all. That keeps the patch correct
 * without a sequence diff: the API server applies it to exactly the object it
 * sent, so there is no concurrent change for a finer array patch to merge with.
 *
 * Both values must be JSON data (what `JSON.parse` returns); `undefined`
 * members of `modified` count as absent, as they vanish in JSON.
 */
export function createJsonPatch(original: unknown, modified: unknown): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  diffValue(original, asJson(modified), '', operations);
  return operations;
}

/** Escapes one member name for a JSON pointer (RFC 6901): `~` first, then `/`. */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function diffValue(before: unknown, after: unknown, path: string, out: JsonPatchOperation[]): void {
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const key of Object.keys(before)) {
      if (!Object.hasOwn(after, key)) out.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    }
    for (const [key, value] of Object.entries(after)) {
      const member = `${path}/${escapePointerToken(key)}`;
      if (!Object.hasOwn(before, key)) out.push({ op: 'add', path: member, value });
      else diffValue(before[key], value, member, out);
    }
    return;
  }
  if (!jsonEqual(before, after)) out.push({ op: 'replace', path, value: after });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep equality of JSON data; member order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => jsonEqual(item, b[index]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

/** What the API server will see: drops `undefined` members and turns class instances (Dates...) into JSON. */
function asJson(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

import YAML from 'yaml';

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

/**
 * Renders objects as a multi-document YAML file in controller-gen's layout:
 * each document starts with `---`, keys sorted, sequences not indented under
 * their key, long strings never folded (so output is stable and diffable).
 */
export function renderDocuments(documents: unknown[]): string {
  return documents
    .map((doc) => `---\n${YAML.stringify(sortKeysDeep(doc), { indentSeq: false, lineWidth: 0, minContentWidth: 0 })}`)
    .join('');
}

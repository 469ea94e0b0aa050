import YAML from 'yaml';
import { sortKeysDeep, yamlTextWithoutLibrary, type YamlSchema } from '../yaml-output.js';

/**
 * `value` (a mapping) as `yaml`'s stringify writes it with `lineWidth: 0`:
 * through src/yaml-output.ts when it is sure of the bytes, else the library
 * with the same options, so the two can never be asked for different layouts.
 * (Not in yaml-output.ts itself: `init` loads that module, and must not load `yaml`.)
 */
export function yamlText(value: unknown, schema: YamlSchema, { indentSeq = false } = {}): string {
  return (
    yamlTextWithoutLibrary(value, schema, { indentSeq }) ??
    YAML.stringify(value, {
      ...(schema === '1.1' ? { version: '1.1' as const } : {}),
      indentSeq,
      lineWidth: 0,
      minContentWidth: 0,
    })
  );
}

/**
 * Renders objects as a multi-document YAML file in controller-gen's layout:
 * each document starts with `---`, keys sorted, sequences not indented under
 * their key, long strings never folded (so output is stable and diffable).
 */
export function renderDocuments(documents: unknown[]): string {
  return documents.map((doc) => `---\n${yamlText(sortKeysDeep(doc), 'core')}`).join('');
}

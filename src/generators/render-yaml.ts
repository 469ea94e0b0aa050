import YAML from 'yaml';
import { sortKeysDeep, yamlTextWithoutLibrary } from '../yaml-output.js';

/**
 * Renders objects as a multi-document YAML file in controller-gen's layout:
 * each document starts with `---`, keys sorted, sequences not indented under
 * their key, long strings never folded (so output is stable and diffable).
 */
export function renderDocuments(documents: unknown[]): string {
  return documents
    .map((doc) => {
      const sorted = sortKeysDeep(doc);
      const text =
        yamlTextWithoutLibrary(sorted, 'core') ??
        YAML.stringify(sorted, { indentSeq: false, lineWidth: 0, minContentWidth: 0 });
      return `---\n${text}`;
    })
    .join('');
}

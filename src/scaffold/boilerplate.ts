import type { VirtualTree } from './tree.js';

/** The licenses `init --license` can put in the source header. */
export const LICENSES = ['apache2', 'none'] as const;

/** Where init writes the license header that every generated .ts file starts with. */
export const BOILERPLATE_FILE = 'hack/boilerplate.ts.txt';

/**
 * The header to put on top of generated TypeScript files: the project's
 * boilerplate followed by a blank line, or nothing for `--license none`.
 */
export function boilerplateHeader(tree: VirtualTree): string {
  const text = tree.read(BOILERPLATE_FILE);
  return text && text.trim() ? `${text.trimEnd()}\n\n` : '';
}

import { UsageError } from '../errors.js';
import { renderTemplate } from './render.js';
import type { VirtualTree } from './tree.js';

/** What to do when a file a command wants to create is already there. */
export type IfExists = 'skip' | 'error' | 'overwrite';

/** One generated file: where it goes, which template renders it, and the policy for an existing file. */
export interface FileSpec {
  /** Project-relative output path (may depend on the data, e.g. the multigroup layout). */
  path: string;
  /** Template path relative to the templates folder. */
  template: string;
  ifExists: IfExists;
}

/**
 * The one executor for file lists: renders every spec with `data` into the
 * tree, honouring each spec's `ifExists`. Nothing reaches the disk here.
 */
export function scaffoldFiles(tree: VirtualTree, specs: readonly FileSpec[], data: object): void {
  for (const spec of specs) {
    if (tree.exists(spec.path)) {
      if (spec.ifExists === 'skip') continue;
      if (spec.ifExists === 'error') {
        throw new UsageError(
          `${spec.path} already exists`,
          'remove it, or pass --force to overwrite the scaffolded files',
        );
      }
    }
    tree.write(spec.path, renderTemplate(spec.template, data));
  }
}

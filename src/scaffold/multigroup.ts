/**
 * The multigroup switch of `edit --multigroup`: which API files move between
 * `apis/<version>` and `apis/<group>/<version>` (and the controllers, RBAC
 * roles, webhooks and conversion patches with them), and the relative imports
 * and kustomization entries that follow them.
 */
import { posix } from 'node:path';
import { UsageError } from '../errors.js';
import { kindLayout, RBAC_HELPER_ROLES, relativeImport } from './layout.js';
import type { ProjectConfig } from './project.js';
import type { VirtualTree } from './tree.js';

/**
 * Moves every API's files from the layout of one multigroup setting to the
 * other and returns the moves (old path → new path). Kubebuilder only flips
 * the flag and leaves the move to the user (kubebuilder#1640); here the
 * project keeps building.
 */
export function planLayoutMoves(tree: VirtualTree, project: ProjectConfig, toMultigroup: boolean): Map<string, string> {
  const moves = new Map<string, string>();
  const add = (from: string, to: string): void => {
    if (from !== to && tree.exists(from)) moves.set(from, to);
  };
  /** Everything directly in a directory moves: the generated files and whatever the user added next to them. */
  const addDirectory = (from: string, to: string): void => {
    if (from === to) return;
    for (const file of tree.list(from)) {
      if (posix.dirname(file) === from) add(file, `${to}/${posix.basename(file)}`);
    }
  };
  for (const resource of project.resources ?? []) {
    if (resource.core || resource.external) continue;
    const before = kindLayout(resource, !toMultigroup);
    const after = kindLayout(resource, toMultigroup);
    addDirectory(before.typesDir, after.typesDir);
    add(before.controllerFile, after.controllerFile);
    add(before.controllerTestFile, after.controllerTestFile);
    for (const role of RBAC_HELPER_ROLES) add(before.rbacRoleFiles[role], after.rbacRoleFiles[role]);
    // Webhooks follow the same rule, so the next `create webhook` finds the kind's file where it looks.
    addDirectory(before.webhookDir, after.webhookDir);
    add(before.crdPatchFile, after.crdPatchFile);
  }
  return moves;
}

/**
 * Throws, naming the file, when a move would replace a file that is already
 * at its target (the user's own file, or a second API mapped to the same
 * place), before anything is changed.
 */
export function assertMoveTargetsFree(tree: VirtualTree, moves: Map<string, string>): void {
  const sources = new Map<string, string>();
  for (const [from, to] of moves) {
    if (tree.exists(to) && !moves.has(to)) {
      throw new UsageError(
        `${to} already exists, and moving ${from} to the new layout would overwrite it`,
        'move or rename that file, then run the command again',
      );
    }
    const other = sources.get(to);
    if (other !== undefined) {
      throw new UsageError(
        `both ${other} and ${from} would move to ${to}`,
        'rename or remove one of them, then run the command again',
      );
    }
    sources.set(to, from);
  }
}

const RELATIVE_IMPORT = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\2/g;

/**
 * Applies the moves and rewrites relative imports in every TypeScript file
 * of the project (moved or not) so they point at the new places.
 */
export function applyMoves(tree: VirtualTree, moves: Map<string, string>): void {
  const newPathOf = (path: string): string => moves.get(path) ?? path;
  const sources = tree.list().filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
  for (const oldFile of sources) {
    const content = tree.read(oldFile)!;
    const newFile = newPathOf(oldFile);
    const rewritten = content.replace(RELATIVE_IMPORT, (whole, prefix: string, quote: string, specifier: string) => {
      const target = posix.normalize(posix.join(posix.dirname(oldFile), specifier)).replace(/\.js$/, '.ts');
      if (!moves.has(target) && !moves.has(oldFile)) return whole;
      return `${prefix}${quote}${relativeImport(newFile, newPathOf(target))}${quote}`;
    });
    if (newFile !== oldFile) tree.delete(oldFile);
    if (newFile !== oldFile || rewritten !== content) tree.write(newFile, rewritten);
  }
  for (const [from, to] of moves) {
    if (from.endsWith('.ts')) continue;
    tree.move(from, to);
  }
  renameKustomizationEntries(tree, moves);
}

/** The kustomizations that list moved files by path: the RBAC roles, and the CRDs' conversion patches. */
const KUSTOMIZATION_DIRS = ['config/rbac', 'config/crd'];

/** Renames the entries (`- <file>` or `- path: <file>`) of moved files in the kustomization of their directory. */
function renameKustomizationEntries(tree: VirtualTree, moves: Map<string, string>): void {
  for (const dir of KUSTOMIZATION_DIRS) {
    const path = `${dir}/kustomization.yaml`;
    const content = tree.read(path);
    if (content === undefined) continue;
    let updated = content;
    for (const [from, to] of moves) {
      if (!from.startsWith(`${dir}/`)) continue;
      const entry = new RegExp(`^(\\s*-\\s+(?:path:\\s+)?)${escapeRegExp(posix.relative(dir, from))}$`, 'm');
      updated = updated.replace(entry, `$1${posix.relative(dir, to)}`);
    }
    if (updated !== content) tree.write(path, updated);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

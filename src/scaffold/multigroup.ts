/**
 * The multigroup switch of `edit --multigroup`: which API files move between
 * `apis/<version>` and `apis/<group>/<version>` (and the controllers and RBAC
 * roles with them), and the relative imports that follow them.
 */
import { posix } from 'node:path';
import { UsageError } from '../errors.js';
import { apiLayout, relativeImport } from './layout.js';
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
  for (const resource of project.resources ?? []) {
    if (resource.core || resource.external) continue;
    const before = apiLayout(resource, !toMultigroup);
    const after = apiLayout(resource, toMultigroup);
    if (before.typesDir !== after.typesDir) {
      // Everything in the version directory moves: types, groupversion_info,
      // and whatever the user added next to them.
      for (const file of tree.list(before.typesDir)) {
        if (posix.dirname(file) !== before.typesDir) continue;
        add(file, `${after.typesDir}/${posix.basename(file)}`);
      }
    }
    add(before.controllerFile, after.controllerFile);
    add(before.controllerTestFile, after.controllerTestFile);
    for (const role of ['admin', 'editor', 'viewer']) {
      add(`config/rbac/${before.rbacRolePrefix}_${role}_role.yaml`, `config/rbac/${after.rbacRolePrefix}_${role}_role.yaml`);
    }
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
      throw new UsageError(`both ${other} and ${from} would move to ${to}`, 'rename or remove one of them, then run the command again');
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
  renameRbacEntries(tree, moves);
}

/** The role files are listed in config/rbac/kustomization.yaml by name. */
function renameRbacEntries(tree: VirtualTree, moves: Map<string, string>): void {
  const path = 'config/rbac/kustomization.yaml';
  let content = tree.read(path);
  if (content === undefined) return;
  for (const [from, to] of moves) {
    if (!from.startsWith('config/rbac/')) continue;
    content = content.replace(new RegExp(`^(\\s*- )${escapeRegExp(posix.basename(from))}$`, 'm'), `$1${posix.basename(to)}`);
  }
  tree.write(path, content);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

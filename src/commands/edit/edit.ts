import { posix, resolve } from 'node:path';
import { UsageError } from '../../errors.js';
import { apiLayout, relativeImport } from '../../scaffold/layout.js';
import { qualifiedGroup, readProject, writeProject, type ProjectConfig } from '../../scaffold/project.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

/** Options of `ts-operator-sdk edit`. */
export interface EditOptions {
  directory: string;
  /** Undefined when the flag was not given. */
  multigroup?: boolean;
  dryRun: boolean;
}

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

/** `ts-operator-sdk edit`: changes project-wide settings (today: multigroup). */
export async function edit(options: EditOptions, io: CommandIO): Promise<void> {
  const tree = new VirtualTree(resolve(options.directory));
  const project = readProject(tree);
  if (options.multigroup === undefined) {
    throw new UsageError('nothing to edit', 'pass --multigroup or --multigroup=false');
  }
  const wanted = options.multigroup;
  const groups = new Set((project.resources ?? []).map((resource) => qualifiedGroup(resource)));
  if (!wanted && groups.size > 1) {
    throw new UsageError(
      `cannot turn multigroup off: the project has ${groups.size} API groups (${[...groups].sort().join(', ')})`,
      'keep multigroup on, or remove the APIs of all groups but one first',
    );
  }
  if ((project.multigroup === true) !== wanted) {
    applyMoves(tree, planLayoutMoves(tree, project, wanted));
    project.multigroup = wanted;
    for (const resource of project.resources ?? []) {
      if (resource.path !== undefined && !resource.core && !resource.external) resource.path = apiLayout(resource, wanted).typesDir;
    }
    writeProject(tree, project);
  }
  if (!(await finishTree(tree, io, options.dryRun))) return;
}

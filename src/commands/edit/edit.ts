import { resolve } from 'node:path';
import { UsageError } from '../../errors.js';
import { kindLayout } from '../../scaffold/layout.js';
import { applyMoves, assertMoveTargetsFree, planLayoutMoves } from '../../scaffold/multigroup.js';
import {
  assertOurLayout,
  qualifiedGroup,
  readProject,
  writeProject,
  type ProjectConfig,
} from '../../scaffold/project.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

/** The flags of `ts-operator-sdk edit`. */
export interface EditFlags {
  /** Undefined when the flag was not given. */
  multigroup?: boolean;
  dryRun: boolean;
}

/** Options of `ts-operator-sdk edit`: its flags and the project directory. */
export interface EditOptions extends EditFlags {
  directory: string;
}

/** What one `edit` run changes, decided before anything is written. */
export interface ResolvedEdit {
  /** The multigroup setting the project ends with. */
  multigroup: boolean;
  /** Old path → new path of every file the layout switch moves; empty when the setting does not change. */
  moves: Map<string, string>;
  /** Whether the setting changes (false: the project already has the layout). */
  switches: boolean;
  dryRun: boolean;
}

/** Validates the flags of `edit` against the project and plans the moves (throws before anything changes). */
export function resolveEdit(flags: EditFlags, project: ProjectConfig, tree: VirtualTree): ResolvedEdit {
  if (flags.multigroup === undefined) {
    throw new UsageError('nothing to edit', 'pass --multigroup or --multigroup=false');
  }
  const multigroup = flags.multigroup;
  const groups = new Set((project.resources ?? []).map((resource) => qualifiedGroup(resource)));
  if (!multigroup && groups.size > 1) {
    throw new UsageError(
      `cannot turn multigroup off: the project has ${groups.size} API groups (${[...groups].sort().join(', ')})`,
      'keep multigroup on, or remove the APIs of all groups but one first',
    );
  }
  const switches = (project.multigroup === true) !== multigroup;
  const moves = switches ? planLayoutMoves(tree, project, multigroup) : new Map<string, string>();
  assertMoveTargetsFree(tree, moves);
  return { multigroup, moves, switches, dryRun: flags.dryRun };
}

/** `ts-operator-sdk edit`: changes project-wide settings (today: multigroup). */
export async function edit(options: EditOptions, io: CommandIO): Promise<void> {
  const tree = new VirtualTree(resolve(options.directory));
  const project = readProject(tree);
  assertOurLayout(project);
  const plan = resolveEdit(options, project, tree);
  const layout = plan.multigroup ? 'multigroup' : 'single-group';
  let summary = `the project already has the ${layout} layout: nothing changed`;
  if (plan.switches) {
    applyMoves(tree, plan.moves);
    project.multigroup = plan.multigroup;
    for (const resource of project.resources ?? []) {
      if (resource.path !== undefined && !resource.core && !resource.external)
        resource.path = kindLayout(resource, plan.multigroup).typesDir;
    }
    writeProject(tree, project);
    summary = `switched to the ${layout} layout: moved ${plan.moves.size} file${plan.moves.size === 1 ? '' : 's'}, updated PROJECT`;
  }
  await finishTree(tree, io, plan.dryRun, [summary]);
}

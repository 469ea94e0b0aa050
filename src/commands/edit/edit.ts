import { resolve } from 'node:path';
import { UsageError } from '../../errors.js';
import { apiLayout } from '../../scaffold/layout.js';
import { applyMoves, assertMoveTargetsFree, planLayoutMoves } from '../../scaffold/multigroup.js';
import { assertOurLayout, qualifiedGroup, readProject, writeProject } from '../../scaffold/project.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

/** Options of `ts-operator-sdk edit`. */
export interface EditOptions {
  directory: string;
  /** Undefined when the flag was not given. */
  multigroup?: boolean;
  dryRun: boolean;
}

/** `ts-operator-sdk edit`: changes project-wide settings (today: multigroup). */
export async function edit(options: EditOptions, io: CommandIO): Promise<void> {
  const tree = new VirtualTree(resolve(options.directory));
  const project = readProject(tree);
  assertOurLayout(project);
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
  const layout = wanted ? 'multigroup' : 'single-group';
  let summary = `the project already has the ${layout} layout: nothing changed`;
  if ((project.multigroup === true) !== wanted) {
    const moves = planLayoutMoves(tree, project, wanted);
    assertMoveTargetsFree(tree, moves);
    applyMoves(tree, moves);
    project.multigroup = wanted;
    for (const resource of project.resources ?? []) {
      if (resource.path !== undefined && !resource.core && !resource.external)
        resource.path = apiLayout(resource, wanted).typesDir;
    }
    writeProject(tree, project);
    summary = `switched to the ${layout} layout: moved ${moves.size} file${moves.size === 1 ? '' : 's'}, updated PROJECT`;
  }
  await finishTree(tree, io, options.dryRun, [summary]);
}

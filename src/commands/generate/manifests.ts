import { resolve } from 'node:path';
import { generateManifests } from '../../generators/manifests.js';
import { UsageError } from '../../errors.js';
import { MAX_TYPE_NESTING } from '../../generators/crd/type-schema.js';
import { readProject } from '../../scaffold/project.js';
import { apiResourcesOf } from './api-resources.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

/** Options of `ts-operator-sdk generate manifests`. */
export interface GenerateManifestsOptions {
  directory: string;
  /** Accept float64 fields, as controller-gen's crd:allowDangerousTypes. */
  allowDangerousTypes: boolean;
  dryRun: boolean;
}

/**
 * `ts-operator-sdk generate manifests`: CRDs, RBAC, webhook configurations
 * and the CRD kustomization from the API types and markers (the Makefile's `manifests` target). Every
 * problem in the types is printed as `file:line: message`; nothing is
 * written unless every API generated cleanly.
 */
export async function generateManifestsCommand(options: GenerateManifestsOptions, io: CommandIO): Promise<void> {
  const projectDir = resolve(options.directory);
  const tree = new VirtualTree(projectDir);
  const project = readProject(tree);
  let files;
  try {
    files = await generateManifests({
      projectDir,
      domain: project.domain ?? '',
      multigroup: project.multigroup === true,
      resources: apiResourcesOf(project),
      allowDangerousTypes: options.allowDangerousTypes,
    });
  } catch (err) {
    // Past MAX_TYPE_NESTING the generator stops with the place; inline object
    // types that deep already exhaust the TypeScript parser's stack before that.
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      throw new UsageError(
        'the API types nest too deeply to read (the TypeScript parser ran out of stack)',
        `flatten the types to at most ${MAX_TYPE_NESTING} levels, or use RawExtension for free-form data`,
        { cause: err },
      );
    }
    if (!(err instanceof UsageError) || err.problems.length === 0) throw err;
    const count = err.problems.length;
    throw new UsageError(
      `generate manifests found ${count} problem${count === 1 ? '' : 's'} in the API types and controllers (listed above); nothing was written`,
      'fix them and run it again',
      { problems: err.problems },
    );
  }
  const written: string[] = [];
  for (const file of files) {
    if (tree.read(file.path) === file.content) continue;
    tree.write(file.path, file.content);
    written.push(file.path);
  }
  await finishTree(tree, io, options.dryRun, [
    manifestsSummary(
      written,
      files.map((file) => file.path),
    ),
  ]);
}

/**
 * The one line `generate manifests` prints on success: what it wrote, CRDs
 * counted and other files named (`wrote 1 CRD, config/rbac/role.yaml`), or
 * that everything was already up to date.
 */
export function manifestsSummary(written: readonly string[], generated: readonly string[]): string {
  const describe = (paths: readonly string[]): string => {
    const crds = paths.filter((path) => path.startsWith('config/crd/bases/')).length;
    const others = paths.filter((path) => !path.startsWith('config/crd/bases/'));
    return [...(crds > 0 ? [`${crds} CRD${crds === 1 ? '' : 's'}`] : []), ...others].join(', ');
  };
  if (written.length === 0)
    return generated.length === 0
      ? 'no APIs or RBAC markers yet: nothing to write'
      : `manifests up to date (${describe(generated)})`;
  return `wrote ${describe(written)}`;
}

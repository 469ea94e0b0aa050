import { resolve } from 'node:path';
import { boilerplateHeader } from '../../scaffold/boilerplate.js';
import { UsageError } from '../../errors.js';
import { scaffoldFiles } from '../../scaffold/files.js';
import { applyInserters, uncommentLine } from '../../scaffold/inserter.js';
import { apiData } from '../../scaffold/layout.js';
import { pluralize } from '../../scaffold/names.js';
import {
  validateDerivedPlural,
  validateGroup,
  validateKind,
  validatePlural,
  validateVersion,
} from '../../scaffold/names.js';
import {
  assertOurLayout,
  qualifiedGroup,
  readProject,
  sameGvk,
  writeProject,
  type ProjectResource,
} from '../../scaffold/project.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';
import { apiFiles, apiInserters, reconcilerLocalName, type CreateApiOptions } from './api-scaffold.js';

const MULTIGROUP_HINT =
  'multiple groups are not allowed by default, to enable multi-group run `ts-operator-sdk edit --multigroup`';

/** `ts-operator-sdk create api`: adds an API (types) and/or its controller. */
export async function createApi(options: CreateApiOptions, io: CommandIO): Promise<void> {
  const tree = new VirtualTree(resolve(options.directory));
  const project = readProject(tree);
  assertOurLayout(project);
  if (options.timeout !== undefined && options.fromCluster === undefined) {
    throw new UsageError(
      '--timeout is for reading a CRD from the cluster, and needs --from-cluster',
      'leave out --timeout, or pass --from-cluster <crd-name>',
    );
  }
  if (options.externalApiPath !== undefined) {
    const { createExternalApi } = await import('./external-api.js');
    return createExternalApi(tree, project, { ...options, externalApiPath: options.externalApiPath }, io);
  }
  for (const [flag, value] of [
    ['--external-api-domain', options.externalApiDomain],
    ['--from-crd', options.fromCrd],
    ['--from-cluster', options.fromCluster],
  ] as const) {
    if (value !== undefined)
      throw new UsageError(
        `${flag} is for kinds another project owns, and needs --external-api-path`,
        'pass --external-api-path <directory for the types>, e.g. apis/external/route/v1',
      );
  }
  if (!options.version) throw new UsageError('missing --version', 'pass the API version, e.g. --version v1');
  if (!options.kind) throw new UsageError('missing --kind', 'pass the kind, e.g. --kind Memcached');
  const domain = project.domain ?? '';
  validateGroup(options.group, domain);
  validateVersion(options.version);
  validateKind(options.kind);
  if (options.plural !== undefined) validatePlural(options.plural);

  const requested: ProjectResource = {
    group: options.group || undefined,
    domain,
    version: options.version,
    kind: options.kind,
  };
  const resources = project.resources ?? [];
  const existing = resources.find((resource) => sameGvk(resource, requested));
  if (options.plural === undefined && existing?.plural === undefined) validateDerivedPlural(options.kind);
  checkKindNames(resources, requested, options.plural ?? existing?.plural ?? pluralize(options.kind));
  if (existing && !options.force) {
    throw new UsageError(
      `API ${qualifiedGroup(requested)}/${options.version}, Kind=${options.kind} already exists`,
      'pass --force to regenerate its scaffold files, or choose another --kind or --version',
    );
  }
  if (!project.multigroup) {
    // External and core kinds are used, not served, so their groups do not make a project multigroup.
    const otherGroup = resources.find(
      (resource) => !resource.external && !resource.core && qualifiedGroup(resource) !== qualifiedGroup(requested),
    );
    if (otherGroup) {
      throw new UsageError(
        `this project already has group ${qualifiedGroup(otherGroup)}: ${MULTIGROUP_HINT}`,
        `then run this command again for group ${qualifiedGroup(requested)}`,
      );
    }
  }

  const resource = options.resource ?? (options.interactive ? await io.confirm('Create Resource [y/n]') : true);
  const controller = options.controller ?? (options.interactive ? await io.confirm('Create Controller [y/n]') : true);
  if (!resource && !controller) {
    throw new UsageError(
      'nothing to create: both --resource and --controller are false',
      'pass --resource or --controller',
    );
  }

  const otherVersions = resources.filter(
    (item) =>
      qualifiedGroup(item) === qualifiedGroup(requested) &&
      item.kind === requested.kind &&
      item.version !== requested.version,
  );
  // Even with --force: the controller file is the kind's, not this version's, and --force would overwrite the user's code.
  if (controller) {
    const served = otherVersions.find((item) => item.controller);
    if (served) {
      throw new UsageError(
        `kind ${requested.kind} of group ${qualifiedGroup(requested)} already has a controller (version ${served.version}), and one controller serves every version of a kind`,
        `pass --controller=false to add only the ${requested.version} types`,
      );
    }
  }

  const entry: ProjectResource = {
    ...existing,
    ...requested,
    plural: options.plural ?? existing?.plural,
    controller: controller || existing?.controller,
    api: resource ? { crdVersion: 'v1', namespaced: options.namespaced } : existing?.api,
  };
  // The version created first keeps kubebuilder's `<kind>-sample`; the others get their own name, so
  // `kubectl apply -k config/samples` creates one object per version instead of writing one twice.
  const firstSampled =
    otherVersions.length > 0
      ? resources.find(
          (item) => item.api && qualifiedGroup(item) === qualifiedGroup(requested) && item.kind === requested.kind,
        )
      : undefined;
  const data = apiData(entry, {
    multigroup: project.multigroup === true,
    projectName: project.projectName ?? '',
    boilerplate: boilerplateHeader(tree),
    versionedSample: firstSampled !== undefined && firstSampled.version !== requested.version,
  });
  entry.path = data.layout.typesDir;

  if (!resource && !tree.exists(data.layout.typesFile)) {
    throw new UsageError(
      `--resource=false needs the types of ${options.kind}, but ${data.layout.typesFile} does not exist`,
      'create the types too (leave out --resource=false), or restore that file',
    );
  }

  const parts = { resource, controller, force: options.force };
  scaffoldFiles(tree, apiFiles(data, parts), data);
  applyInserters(
    tree,
    apiInserters(data, parts, controller ? reconcilerLocalName(tree.read('main.ts') ?? '', data) : undefined),
  );
  if (resource) uncommentLine(tree, 'config/default/kustomization.yaml', '- ../crd');

  project.resources = existing ? resources.map((item) => (item === existing ? entry : item)) : [...resources, entry];
  writeProject(tree, project);

  const report: string[] = [];
  if (resource)
    report.push('Next: implement your new API and generate the manifests (e.g. CRDs, CRs) with:\n$ make manifests');
  if (resource && otherVersions.length > 0) {
    const versions = [...otherVersions.map((item) => item.version), options.version].sort();
    report.push(
      `Note: ${options.kind} now has ${versions.length} versions (${versions.join(', ')}): mark exactly one of them with \`+kubebuilder:storageversion\` in its ${options.kind} type's comment before running \`make manifests\`.`,
    );
  }
  await finishTree(tree, io, options.dryRun, report);
}

/**
 * Refuses names the API server would refuse for the group's CRDs: a kind
 * that differs from an existing one only in case (both would need the CRD
 * `<plural>.<group>`), and a plural already used by another kind, or a
 * different plural for another version of the same kind (one CRD per kind).
 */
function checkKindNames(resources: readonly ProjectResource[], requested: ProjectResource, plural: string): void {
  const group = qualifiedGroup(requested);
  for (const item of resources) {
    if (qualifiedGroup(item) !== group || item.core || item.external) continue;
    if (item.kind !== requested.kind && item.kind.toLowerCase() === requested.kind.toLowerCase()) {
      throw new UsageError(
        `kind ${requested.kind} differs from the existing kind ${item.kind} (${group}/${item.version}) only in case, and both would need the CRD ${plural}.${group}`,
        `use --kind ${item.kind} to add a version of it, or choose a different name`,
      );
    }
    const itemPlural = item.plural ?? pluralize(item.kind);
    if (item.kind !== requested.kind && itemPlural === plural) {
      throw new UsageError(
        `plural "${plural}" is already the resource name of kind ${item.kind} in group ${group}`,
        'pass a different --plural',
      );
    }
    if (item.kind === requested.kind && item.version !== requested.version && itemPlural !== plural && item.api) {
      throw new UsageError(
        `kind ${requested.kind} already has the plural "${itemPlural}" (version ${item.version}), and all versions of a kind share one CRD`,
        `pass --plural ${itemPlural}, or leave --plural out`,
      );
    }
  }
}

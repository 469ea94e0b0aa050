/**
 * The first step of `create api`: the flags, checked against the project,
 * resolved once into the value the scaffolding reads (kubebuilder resolves a
 * `resource.Resource` from its options the same way before it scaffolds).
 */
import { boilerplateHeader } from '../../scaffold/boilerplate.js';
import { UsageError } from '../../errors.js';
import { apiNames, type ApiNames } from '../../scaffold/api-names.js';
import { mainImport, type MainImport } from '../../scaffold/main-imports.js';
import {
  pluralize,
  validateDerivedPlural,
  validateGroup,
  validateKind,
  validatePlural,
  validateVersion,
} from '../../scaffold/names.js';
import { qualifiedGroup, sameGvk, type ProjectConfig, type ProjectResource } from '../../scaffold/project.js';
import type { VirtualTree } from '../../scaffold/tree.js';
import type { CommandIO } from '../../cli/io.js';
import type { ApiParts, CreateApiFlags } from './api-scaffold.js';

const MULTIGROUP_HINT =
  'multiple groups are not allowed by default, to enable multi-group run `ts-operator-sdk edit --multigroup`';

/** One `create api` run of one of the project's own kinds, resolved: everything the scaffolding reads. */
export interface ResolvedApi extends ApiParts {
  /** Every name and path of the kind (group, qualified group, version, kind, plural, files, webhook files). */
  names: ApiNames;
  dryRun: boolean;
  /** The PROJECT entry after this run. */
  record: ProjectResource;
  /** The entry it replaces (with --force), if the API existed. */
  replaces?: ProjectResource;
  /** How main.ts imports the kind's reconciler; undefined without a controller. */
  reconciler?: MainImport;
  /** The kind's other versions in the project, oldest first as PROJECT lists them. */
  otherVersions: string[];
}

/** What of the project `create api` resolves against. */
export interface ApiContext {
  project: ProjectConfig;
  tree: VirtualTree;
  io: CommandIO;
  /** Whether stdin is a terminal: --resource and --controller are asked for when left out. */
  interactive: boolean;
}

/**
 * Validates the flags of `create api` (for one of the project's own kinds)
 * against the project and derives every name once. Throws a one-line
 * UsageError before anything is scaffolded.
 */
export async function resolveApi(flags: CreateApiFlags, context: ApiContext): Promise<ResolvedApi> {
  const { project, tree, io } = context;
  for (const [flag, value] of [
    ['--external-api-domain', flags.externalApiDomain],
    ['--from-crd', flags.fromCrd],
    ['--from-cluster', flags.fromCluster],
  ] as const) {
    if (value !== undefined)
      throw new UsageError(
        `${flag} is for kinds another project owns, and needs --external-api-path`,
        'pass --external-api-path <directory for the types>, e.g. apis/external/route/v1',
      );
  }
  if (!flags.version) throw new UsageError('missing --version', 'pass the API version, e.g. --version v1');
  if (!flags.kind) throw new UsageError('missing --kind', 'pass the kind, e.g. --kind Memcached');
  const { version, kind } = flags;
  const domain = project.domain ?? '';
  validateGroup(flags.group, domain);
  validateVersion(version);
  validateKind(kind);
  if (flags.plural !== undefined) validatePlural(flags.plural);

  const requested: ProjectResource = { group: flags.group || undefined, domain, version, kind };
  const resources = project.resources ?? [];
  const existing = resources.find((resource) => sameGvk(resource, requested));
  if (flags.plural === undefined && existing?.plural === undefined) validateDerivedPlural(kind);
  checkKindNames(resources, requested, flags.plural ?? existing?.plural ?? pluralize(kind));
  if (existing && !flags.force) {
    throw new UsageError(
      `API ${qualifiedGroup(requested)}/${version}, Kind=${kind} already exists`,
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

  const resource = flags.resource ?? (context.interactive ? await io.confirm('Create Resource [y/n]') : true);
  const controller = flags.controller ?? (context.interactive ? await io.confirm('Create Controller [y/n]') : true);
  if (!resource && !controller) {
    throw new UsageError(
      'nothing to create: both --resource and --controller are false',
      'pass --resource or --controller',
    );
  }

  const sameKind = (item: ProjectResource): boolean =>
    qualifiedGroup(item) === qualifiedGroup(requested) && item.kind === kind;
  const otherVersions = resources.filter((item) => sameKind(item) && item.version !== version);
  // Even with --force: the controller file is the kind's, not this version's, and --force would overwrite the user's code.
  if (controller) {
    const served = otherVersions.find((item) => item.controller);
    if (served) {
      throw new UsageError(
        `kind ${kind} of group ${qualifiedGroup(requested)} already has a controller (version ${served.version}), and one controller serves every version of a kind`,
        `pass --controller=false to add only the ${version} types`,
      );
    }
  }

  // The version created first keeps kubebuilder's `<kind>-sample`; the others get their own name, so
  // `kubectl apply -k config/samples` creates one object per version instead of writing one twice.
  const firstSampled = otherVersions.length > 0 ? resources.find((item) => item.api && sameKind(item)) : undefined;
  const record: ProjectResource = {
    ...existing,
    ...requested,
    plural: flags.plural ?? existing?.plural,
    controller: controller || existing?.controller,
    api: resource ? { crdVersion: 'v1', namespaced: flags.namespaced } : existing?.api,
  };
  const names = apiNames(record, {
    multigroup: project.multigroup === true,
    projectName: project.projectName ?? '',
    boilerplate: boilerplateHeader(tree),
    versionedSample: firstSampled !== undefined && firstSampled.version !== version,
  });
  record.path = names.layout.typesDir;

  if (!resource && !tree.exists(names.layout.typesFile)) {
    throw new UsageError(
      `--resource=false needs the types of ${kind}, but ${names.layout.typesFile} does not exist`,
      'create the types too (leave out --resource=false), or restore that file',
    );
  }

  return {
    names,
    resource,
    controller,
    force: flags.force,
    dryRun: flags.dryRun,
    record,
    replaces: existing,
    reconciler: controller ? reconcilerImport(tree, names) : undefined,
    otherVersions: otherVersions.map((item) => item.version),
  };
}

/**
 * How main.ts imports a kind's reconciler: `<Kind>Reconciler`, or, when
 * main.ts already imports that name from another group's controller (the
 * same kind in two groups), `<Group><Kind>Reconciler`.
 */
export function reconcilerImport(tree: VirtualTree, names: ApiNames): MainImport {
  return mainImport(tree.read('main.ts') ?? '', {
    name: names.reconcilerName,
    from: names.controllerImportFromMain,
    alias: `${names.groupIdentifier}${names.reconcilerName}`,
  });
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

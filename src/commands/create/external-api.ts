import { posix, resolve } from 'node:path';
import { stringify } from 'yaml';
import { UsageError } from '../../errors.js';
import {
  chooseVersion,
  crdModel,
  readCrdFile,
  type CrdModel,
  type CrdVersion,
} from '../../generators/crd-to-typescript/crd-source.js';
import { crdToTypeScript } from '../../generators/crd-to-typescript/schema-to-typescript.js';
import { boilerplateHeader } from '../../scaffold/boilerplate.js';
import { scaffoldFiles, type FileSpec } from '../../scaffold/files.js';
import { applyInserters } from '../../scaffold/inserter.js';
import { apiNames, type ApiNames } from '../../scaffold/api-names.js';
import { kindLayout } from '../../scaffold/layout.js';
import type { MainImport } from '../../scaffold/main-imports.js';
import { pluralize, validateGroup, validateKind, validatePlural, validateVersion } from '../../scaffold/names.js';
import {
  qualifiedGroup,
  sameGvk,
  writeProject,
  type ProjectConfig,
  type ProjectResource,
} from '../../scaffold/project.js';
import type { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';
import { reconcilerInserters, type CreateApiOptions } from './api-scaffold.js';
import { reconcilerImport } from './resolve-api.js';

/**
 * Where envtest finds the CRDs of kinds the project does not own: copies of
 * them, kept out of config/crd/kustomization.yaml so `make deploy` never
 * installs another operator's CRD.
 */
export const EXTERNAL_CRD_DIR = 'config/crd/external';
/**
 * How long --from-cluster may take without --timeout. kubectl waits as long
 * as the server takes; a scaffolding command should not hang on a cluster
 * that does not answer, and one GET of a CRD takes milliseconds.
 */
export const FROM_CLUSTER_TIMEOUT = '30s';

/** The options of `create api` that apply to a kind another project owns. */
export type ExternalApiOptions = Pick<
  CreateApiOptions,
  'group' | 'version' | 'kind' | 'plural' | 'controller' | 'namespaced' | 'force' | 'dryRun' | 'interactive' | 'timeout'
> & {
  /** Undefined when the flag was not given: external kinds never get a CRD, so only `true` is refused. */
  resource?: boolean;
  /** Project directory of the kind's TypeScript types (kubebuilder: the Go import path); PROJECT `path`. */
  externalApiPath: string;
  /** The kind's domain: its API group is `<group>.<domain>`. */
  externalApiDomain?: string;
  /** A CRD file to generate the types from. */
  fromCrd?: string;
  /** The name of a CRD in the kubeconfig's cluster to generate the types from. */
  fromCluster?: string;
};

/** The CRD an external kind's types are generated from, and how to name where it came from. */
interface CrdSource {
  crd: CrdModel;
  version: CrdVersion;
  /** The flag that named it, as the regenerate command repeats it: `--from-crd <file>` or `--from-cluster <name>`. */
  flag: string;
  /** Where it came from, for the header of its copy. */
  origin: string;
}

/** One `create api --external-api-path` run, resolved: everything the scaffolding reads. */
export interface ResolvedExternalApi {
  /** Every name and path of the kind; its types file is under --external-api-path. */
  names: ApiNames;
  /** Undefined without --from-crd or --from-cluster: the types exist already. */
  source?: CrdSource;
  controller: boolean;
  force: boolean;
  dryRun: boolean;
  /** The PROJECT entry after this run, and the one it replaces. */
  record: ProjectResource;
  replaces?: ProjectResource;
  /** How main.ts imports the kind's reconciler; undefined without a controller. */
  reconciler?: MainImport;
}

/**
 * `create api --external-api-path`: a kind another project owns (OpenShift's
 * Route, cert-manager's Certificate). Recorded in PROJECT as `external: true`
 * with its path and domain, as kubebuilder records it; no CRD, samples or
 * roles are scaffolded. With `--from-crd` or `--from-cluster` its TypeScript
 * types and `defineKind` are generated from the CRD's schema; the controller
 * (optional) gets RBAC markers for the kind's group.
 */
export async function createExternalApi(
  tree: VirtualTree,
  project: ProjectConfig,
  options: ExternalApiOptions,
  io: CommandIO,
): Promise<void> {
  const api = await resolveExternalApi(options, { project, tree, io });
  const { names, source } = api;
  if (source) {
    tree.write(
      names.layout.typesFile,
      crdToTypeScript(source.crd, source.version, {
        header: names.boilerplate,
        printWidth: projectPrintWidth(tree),
        regenerate: `npx ts-operator-sdk create api --group ${names.group || '""'} --version ${names.version} --kind ${names.kind} --external-api-path ${names.layout.typesDir} --external-api-domain ${names.domain} ${source.flag} --controller=false --force`,
      }),
    );
    tree.write(`${EXTERNAL_CRD_DIR}/${source.crd.group}_${source.crd.plural}.yaml`, crdCopy(source.crd, source.origin));
  }
  if (api.reconciler) {
    // The controller only: its test creates an object of the kind, whose required fields only the user knows.
    const specs: FileSpec[] = [
      {
        path: names.layout.controllerFile,
        template: 'api/controllers/external/kind_controller.ts.hbs',
        ifExists: api.force ? 'overwrite' : 'error',
      },
    ];
    scaffoldFiles(tree, specs, names);
    applyInserters(tree, reconcilerInserters(api.reconciler));
  }
  const resources = project.resources ?? [];
  project.resources = api.replaces
    ? resources.map((item) => (item === api.replaces ? api.record : item))
    : [...resources, api.record];
  writeProject(tree, project);

  await finishTree(
    tree,
    io,
    api.dryRun,
    source
      ? [
          `Next: install the CRD in envtest with crdDirectoryPaths: ['${EXTERNAL_CRD_DIR}'] (it is not deployed with your operator), and import ${names.kind} from ${names.layout.typesFile}`,
        ]
      : [],
  );
}

/**
 * Validates the flags of `create api --external-api-path` against the
 * project, reads the CRD they name (a file or the cluster's), and derives
 * every name once. Throws a one-line UsageError before anything is scaffolded.
 */
export async function resolveExternalApi(
  options: ExternalApiOptions,
  context: { project: ProjectConfig; tree: VirtualTree; io: CommandIO },
): Promise<ResolvedExternalApi> {
  const { project, tree, io } = context;
  if (options.resource === true) {
    throw new UsageError(
      "--resource cannot be used with --external-api-path: an external kind's CRD belongs to the project that owns it",
      'leave out --resource (or pass --resource=false)',
    );
  }
  if (options.fromCrd !== undefined && options.fromCluster !== undefined)
    throw new UsageError('--from-crd and --from-cluster both name the CRD to read', 'pass only one of them');
  const { parseDuration } = await import('../../cluster/session.js');
  const timeoutMs = parseDuration('--timeout', options.timeout ?? FROM_CLUSTER_TIMEOUT);
  const typesDir = checkedTypesDir(options.externalApiPath, project);

  const crd =
    options.fromCrd !== undefined
      ? readCrdFile(resolve(tree.root, options.fromCrd), options.fromCrd, options.kind)
      : options.fromCluster !== undefined
        ? await readCrdFromCluster(options.fromCluster, timeoutMs)
        : undefined;
  const kind = options.kind ?? crd?.kind;
  if (!kind) throw new UsageError('missing --kind', 'pass the kind, e.g. --kind Route');
  validateKind(kind);
  if (crd && crd.kind !== kind)
    throw new UsageError(
      `the CRD ${crd.name} is for kind ${crd.kind}, not ${kind}`,
      `pass --kind ${crd.kind}, or the CRD of ${kind}`,
    );
  const crdVersion = crd ? chooseVersion(crd, options.version) : undefined;
  const version = crdVersion?.name ?? options.version;
  if (!version) throw new UsageError('missing --version', 'pass the API version, e.g. --version v1');
  validateVersion(version);
  const domain = externalDomain(options, crd);
  validateGroup(options.group, domain);
  const requested: ProjectResource = { group: options.group || undefined, domain, version, kind };
  if (crd && crd.group !== qualifiedGroup(requested)) {
    throw new UsageError(
      `the CRD ${crd.name} is in group ${crd.group}, not ${qualifiedGroup(requested)}`,
      "pass --group and --external-api-domain that join to the CRD's group, or leave --external-api-domain out",
    );
  }
  if (options.plural !== undefined) validatePlural(options.plural);
  if (crd && options.plural !== undefined && options.plural !== crd.plural)
    throw new UsageError(
      `the CRD ${crd.name} names its plural "${crd.plural}", not "${options.plural}"`,
      'leave out --plural: the CRD decides it',
    );
  const plural = crd?.plural ?? options.plural ?? pluralize(kind);

  const resources = project.resources ?? [];
  const existing = resources.find((resource) => sameGvk(resource, requested));
  if (existing && !options.force) {
    throw new UsageError(
      `API ${qualifiedGroup(requested)}/${version}, Kind=${kind} already exists`,
      'pass --force to regenerate its types, or choose another --kind or --version',
    );
  }
  if (existing && !existing.external) {
    throw new UsageError(
      `${qualifiedGroup(requested)}/${version}, Kind=${kind} is an API of this project, not an external one`,
      'leave out --external-api-path to work on it',
    );
  }

  const typesFile = kindLayout({ ...requested, external: true, path: typesDir }, project.multigroup === true).typesFile;
  const controller = options.controller ?? (options.interactive ? await io.confirm('Create Controller [y/n]') : true);
  if (!crd && !controller)
    throw new UsageError(
      'nothing to create: no CRD to generate types from and --controller is false',
      'pass --from-crd <file> or --from-cluster <crd-name>, or --controller',
    );
  if (!crd && !tree.exists(typesFile)) {
    throw new UsageError(
      `the controller of ${kind} needs its types in ${typesFile}, which does not exist`,
      'generate them with --from-crd <file> or --from-cluster <crd-name>, or write that file (an interface and a defineKind named ' +
        kind +
        ')',
    );
  }
  const record: ProjectResource = {
    ...existing,
    ...requested,
    controller: controller || existing?.controller,
    external: true,
    path: typesDir,
    // Recorded only when it is not the derived one, as for --plural; later commands need it for RBAC.
    plural: plural === pluralize(kind) ? undefined : plural,
  };
  if (crd && tree.exists(typesFile) && !options.force)
    throw new UsageError(`${typesFile} already exists`, 'pass --force to regenerate it from the CRD');

  const names = apiNames(
    { ...record, plural, api: { crdVersion: 'v1', namespaced: crd?.namespaced ?? options.namespaced } },
    {
      multigroup: project.multigroup === true,
      projectName: project.projectName ?? '',
      boilerplate: boilerplateHeader(tree),
    },
  );
  return {
    names,
    source:
      crd && crdVersion
        ? {
            crd,
            version: crdVersion,
            flag:
              options.fromCrd !== undefined ? `--from-crd ${options.fromCrd}` : `--from-cluster ${options.fromCluster}`,
            origin: options.fromCrd ?? `the cluster's ${crd.name}`,
          }
        : undefined,
    controller,
    force: options.force,
    dryRun: options.dryRun,
    record,
    replaces: existing,
    reconciler: controller ? reconcilerImport(tree, names) : undefined,
  };
}

/**
 * The kind's domain: the flag, else what the CRD's group has after
 * `<group>.`; without either the group stands alone (kubebuilder's
 * behaviour when the domain is left out).
 */
function externalDomain(options: ExternalApiOptions, crd: CrdModel | undefined): string {
  if (options.externalApiDomain !== undefined) return options.externalApiDomain;
  if (!crd)
    throw new UsageError(
      'missing --external-api-domain',
      'pass the domain of the external kind, e.g. --external-api-domain openshift.io for route.openshift.io',
    );
  if (options.group === '') return crd.group;
  if (crd.group.startsWith(`${options.group}.`)) return crd.group.slice(options.group.length + 1);
  throw new UsageError(
    `the CRD ${crd.name} is in group ${crd.group}, which does not start with --group ${options.group}`,
    `pass the CRD's group: --group ${crd.group.split('.')[0]}`,
  );
}

/**
 * The printWidth of the project's prettier config (`.prettierrc.json`, a
 * JSON `.prettierrc`, or package.json's `prettier` key), so the generated
 * file passes `prettier --check` as written; prettier's default otherwise.
 * Other config formats (YAML, JavaScript) are not read.
 */
function projectPrintWidth(tree: VirtualTree): number | undefined {
  for (const [file, pick] of [
    ['.prettierrc.json', (c: unknown) => c],
    ['.prettierrc', (c: unknown) => c],
    ['package.json', (c: unknown) => (c as { prettier?: unknown } | null)?.prettier],
  ] as const) {
    const text = tree.read(file);
    if (text === undefined) continue;
    let config: unknown;
    try {
      config = pick(JSON.parse(text));
    } catch {
      continue;
    }
    const width = (config as { printWidth?: unknown } | null | undefined)?.printWidth;
    if (typeof width === 'number' && Number.isInteger(width) && width > 0) return width;
    if (file !== 'package.json' && config !== undefined) return undefined;
  }
  return undefined;
}

/**
 * Reads the CRD named `name` (`<plural>.<group>`, as `kubectl get crd` lists
 * it) from the cluster of the current kubeconfig context (KUBECONFIG,
 * ~/.kube/config or in-cluster), within `timeoutMs` in all.
 */
async function readCrdFromCluster(name: string, timeoutMs: number): Promise<CrdModel> {
  const { KubeSession } = await import('../../cluster/session.js');
  const { NotFoundError } = await import('../../runtime/api/errors.js');
  const { loadKubeConfig } = await import('../../runtime/transport/kubeconfig.js');
  let config;
  try {
    config = loadKubeConfig();
  } catch (error) {
    throw new UsageError(
      `cannot read the CRD ${name} from a cluster: ${(error as Error).message}`,
      'point KUBECONFIG at the cluster, or pass the CRD as a file with --from-crd',
      { cause: error },
    );
  }
  const session = await KubeSession.connect({ config, timeoutMs, hint: 'KUBECONFIG' });
  try {
    return crdModel(
      await session.rest.request(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`,
      ),
      `the cluster's CRD ${name}`,
    );
  } catch (error) {
    if (error instanceof NotFoundError)
      throw new UsageError(
        `the cluster ${session.server} has no CRD named ${name}`,
        'pass the name `kubectl get crd` lists (<plural>.<group>), or install the CRD first',
      );
    throw session.failure(error, `reading the CRD ${name}`);
  } finally {
    await session.close();
  }
}

/** The types directory, checked: inside the project, and not the types of one of its own APIs. */
function checkedTypesDir(path: string, project: ProjectConfig): string {
  const normal = posix.normalize(path.replace(/\\/g, '/')).replace(/\/+$/, '');
  if (normal === '' || normal === '.' || posix.isAbsolute(normal) || normal.startsWith('../') || normal === '..') {
    throw new UsageError(
      `--external-api-path "${path}" is not a directory inside the project`,
      'pass a project directory for the types, e.g. apis/external/route/v1',
    );
  }
  if (!/^[A-Za-z0-9_.\-/]+$/.test(normal))
    throw new UsageError(
      `--external-api-path "${path}" has characters an import path cannot carry`,
      'use letters, digits, "-", "_", "." and "/"',
    );
  const owned = (project.resources ?? []).find(
    (resource) => !resource.external && !resource.core && resource.path === normal,
  );
  if (owned) {
    throw new UsageError(
      `--external-api-path ${normal} holds the types of this project's ${owned.kind}, and \`generate manifests\` would read the external types as its own`,
      'pass another directory, e.g. apis/external/<group>/<version>',
    );
  }
  return normal;
}

/** The CRD as envtest installs it: what the owner wrote, without the cluster's bookkeeping. */
function crdCopy(crd: CrdModel, from: string): string {
  const document = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crd.name },
    spec: crd.spec,
  };
  return `# A copy of ${crd.name} from ${from}, for envtest (crdDirectoryPaths). Not deployed: its owner installs it.\n${stringify(document, { indentSeq: false, lineWidth: 0 })}`;
}

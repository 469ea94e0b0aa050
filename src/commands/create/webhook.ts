import { resolve } from 'node:path';
import { boilerplateHeader } from '../../scaffold/boilerplate.js';
import { UsageError } from '../../errors.js';
import { scaffoldFiles, type FileSpec } from '../../scaffold/files.js';
import { applyInserters, uncommentBlock, uncommentLine, type Inserter } from '../../scaffold/inserter.js';
import { apiNames, type ApiNames } from '../../scaffold/api-names.js';
import { kindLayout, relativeImport } from '../../scaffold/layout.js';
import { mainImport, mainInserters, type MainImport } from '../../scaffold/main-imports.js';
import { ScaffoldMarkers } from '../../scaffold/markers.js';
import { validateGroup, validateKind, validateVersion } from '../../scaffold/names.js';
import { DNS1123_LABEL_MAX } from '../../validation/names.js';
import { readProjectWebhookMarkers } from '../../generators/webhook/webhook.js';
import { ProblemList } from '../../generators/problems.js';
import {
  assertOurLayout,
  qualifiedGroup,
  readProject,
  sameGvk,
  writeProject,
  type ProjectConfig,
  type ProjectResource,
  type ResourceWebhooks,
} from '../../scaffold/project.js';
import { renderTemplate } from '../../scaffold/render.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';
import { mutatingWebhookPath, validatingWebhookPath } from '../../runtime/webhook/paths.js';

/** The flags of `ts-operator-sdk create webhook`. */
export interface CreateWebhookFlags {
  /** Empty: the API group is the project domain itself. */
  group: string;
  version?: string;
  kind?: string;
  defaulting: boolean;
  programmaticValidation: boolean;
  conversion: boolean;
  /** The versions that convert to and from the hub (`--version`); only with `--conversion`. */
  spoke?: string[];
  force: boolean;
  dryRun: boolean;
}

/** Options of `ts-operator-sdk create webhook`: its flags and the project directory. */
export interface CreateWebhookOptions extends CreateWebhookFlags {
  directory: string;
}

/** The webhook types of one `create webhook` run, as kubebuilder names them in PROJECT. */
type WebhookType = 'defaulting' | 'validation' | 'conversion';

const TYPE_FLAGS: Record<WebhookType, string> = {
  defaulting: '--defaulting',
  validation: '--programmatic-validation',
  conversion: '--conversion',
};

/** One spoke version of a conversion webhook, as the hub's webhook file sees it. */
export interface SpokeData {
  version: string;
  /** The spoke kind's local name in the webhook file: `<Kind><Version>`, e.g. `MemcachedV1alpha1`. */
  kindAlias: string;
  /** The namespace import of the spoke's conversion functions, e.g. `v1alpha1Conversion`. */
  conversionAlias: string;
  typesImportFromWebhook: string;
  conversionImportFromWebhook: string;
  conversionFile: string;
  /** Relative import from the spoke's conversion file to the hub's types. */
  hubImportFromConversion: string;
}

/** Everything the webhook templates need: the kind's names (its webhook files are in `layout`) and the webhook's own. */
export interface WebhookData extends ApiNames {
  /** `/mutate-<group with dashes>-<version>-<kind>`: the runtime's {@link mutatingWebhookPath}, so the manifests and the server agree. */
  mutatePath: string;
  validatePath: string;
  /** The `name=` of the mutating and validating webhooks (see {@link webhookName}). */
  mutatingName: string;
  validatingName: string;
  spokes: SpokeData[];
  hubVersion: string;
}

/**
 * The name of a kind's mutating (`m`) or validating (`v`) webhook:
 * kubebuilder's `<m|v><kind>-<version>.kb.io` with the API group's own
 * labels before `kb.io` (`mmemcached-v1.cache.kb.io`). Kubebuilder leaves the
 * group out, so the same kind and version in two groups of a multigroup
 * project get the same name, and the API server refuses the second webhook
 * (`Duplicate value`). With the group as its own labels the name is unique by
 * construction: a project's APIs share its domain, and the group's labels
 * stay DNS labels. An API whose group is the domain itself keeps
 * kubebuilder's form.
 */
export function webhookName(prefix: 'm' | 'v', resource: Pick<ProjectResource, 'group' | 'version' | 'kind'>): string {
  return [`${prefix}${resource.kind.toLowerCase()}-${resource.version}`, resource.group, 'kb.io']
    .filter(Boolean)
    .join('.');
}

const pascal = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** The config files every webhook needs; kept when they exist, because the user may have changed them. */
function sharedFiles(conversion: boolean, data: WebhookData, force: boolean): FileSpec[] {
  const specs: FileSpec[] = [
    {
      path: 'config/webhook/kustomization.yaml',
      template: 'webhook/config/webhook/kustomization.yaml.hbs',
      ifExists: 'skip',
    },
    {
      path: 'config/webhook/kustomizeconfig.yaml',
      template: 'webhook/config/webhook/kustomizeconfig.yaml.hbs',
      ifExists: 'skip',
    },
    { path: 'config/webhook/service.yaml', template: 'webhook/config/webhook/service.yaml.hbs', ifExists: 'skip' },
    {
      path: 'config/certmanager/issuer.yaml',
      template: 'webhook/config/certmanager/issuer.yaml.hbs',
      ifExists: 'skip',
    },
    {
      path: 'config/certmanager/certificate-webhook.yaml',
      template: 'webhook/config/certmanager/certificate-webhook.yaml.hbs',
      ifExists: 'skip',
    },
    {
      path: 'config/certmanager/certificate-metrics.yaml',
      template: 'webhook/config/certmanager/certificate-metrics.yaml.hbs',
      ifExists: 'skip',
    },
    {
      path: 'config/certmanager/kustomization.yaml',
      template: 'webhook/config/certmanager/kustomization.yaml.hbs',
      ifExists: 'skip',
    },
    {
      path: 'config/certmanager/kustomizeconfig.yaml',
      template: 'webhook/config/certmanager/kustomizeconfig.yaml.hbs',
      ifExists: 'skip',
    },
    {
      path: 'config/default/manager_webhook_patch.yaml',
      template: 'webhook/config/default/manager_webhook_patch.yaml.hbs',
      ifExists: 'skip',
    },
    {
      path: 'config/network-policy/allow-webhook-traffic.yaml',
      template: 'webhook/config/network-policy/allow-webhook-traffic.yaml.hbs',
      ifExists: 'skip',
    },
    // The kind's own files: a second webhook type adds to them at their markers, so they are kept unless --force.
    {
      path: data.layout.webhookFile,
      template: 'webhook/webhooks/version/kind_webhook.ts.hbs',
      ifExists: force ? 'overwrite' : 'skip',
    },
    {
      path: data.layout.webhookTestFile,
      template: 'webhook/webhooks/version/kind_webhook.test.ts.hbs',
      ifExists: force ? 'overwrite' : 'skip',
    },
  ];
  if (conversion) {
    specs.push({
      path: data.layout.crdPatchFile,
      template: 'webhook/config/crd/patches/webhook_in_plural.yaml.hbs',
      ifExists: force ? 'overwrite' : 'error',
    });
  }
  return specs;
}

/** The code each webhook type adds to the kind's webhook file, its test, and the project files. */
function typeInserters(types: readonly WebhookType[], data: WebhookData): Inserter[] {
  const fragment = (name: string): string => renderTemplate(`webhook/fragments/${name}.hbs`, data).replace(/\n$/, '');
  const inserters: Inserter[] = [];
  for (const type of types) {
    inserters.push(
      // One fragment per import line, so a line two types share is written once.
      {
        path: data.layout.webhookFile,
        marker: ScaffoldMarkers.webhookImports,
        fragments: fragment(`${type}-imports`).split('\n'),
      },
      {
        path: data.layout.webhookFile,
        marker: ScaffoldMarkers.webhookBuilder,
        fragments: [fragment(`${type}-builder`)],
      },
      { path: data.layout.webhookFile, marker: ScaffoldMarkers.webhookTypes, fragments: [fragment(`${type}-types`)] },
      {
        path: data.layout.webhookTestFile,
        marker: ScaffoldMarkers.webhookTests,
        fragments: [fragment(`${type}-tests`)],
      },
    );
  }
  if (types.includes('conversion')) {
    inserters.push(
      {
        path: data.layout.webhookTestFile,
        marker: ScaffoldMarkers.webhookTestImports,
        fragments: fragment('conversion-test-imports').split('\n'),
      },
      {
        path: data.layout.webhookTestFile,
        marker: ScaffoldMarkers.webhookConversionCrds,
        fragments: [`'${data.plural}.${data.qualifiedGroup}',`],
      },
      {
        path: 'config/crd/kustomization.yaml',
        marker: ScaffoldMarkers.crdWebhookPatch,
        fragments: [`- path: ${data.layout.crdPatchFile.slice('config/crd/'.length)}`],
      },
      {
        path: 'config/default/kustomization.yaml',
        marker: ScaffoldMarkers.caInjectionNamespace,
        fragments: [fragment('cainjection-crd-namespace')],
      },
      {
        path: 'config/default/kustomization.yaml',
        marker: ScaffoldMarkers.caInjectionName,
        fragments: [fragment('cainjection-crd-name')],
      },
    );
  }
  return inserters
    .map((inserter) => ({ ...inserter, fragments: inserter.fragments.filter((text) => text.trim() !== '') }))
    .filter((inserter) => inserter.fragments.length > 0);
}

/**
 * How main.ts imports the kind's webhook setup: under its own name, or as
 * `setup<Group><Kind><Version>Webhook` when another group's kind of the same
 * name took it (the rule of ../../scaffold/main-imports.ts).
 */
function webhookSetupImport(tree: VirtualTree, names: ApiNames): MainImport {
  return mainImport(tree.read('main.ts') ?? '', {
    name: names.setupFunction,
    from: names.webhookImportFromMain,
    alias: `setup${names.groupIdentifier}${names.kind}${pascal(names.version)}Webhook`,
  });
}

/** The lines main.ts gets: the import, and the registration guarded by ENABLE_WEBHOOKS as kubebuilder's main.go does. */
function webhookMainInserters(setup: MainImport): Inserter[] {
  return mainInserters(setup, [
    // Set ENABLE_WEBHOOKS=false to run the operator locally without certificates (`make run`).
    `if (process.env.ENABLE_WEBHOOKS !== 'false') {\n  mgr.addReadyzCheck('webhook', mgr.getWebhookServer().startedChecker());\n}`,
    `if (process.env.ENABLE_WEBHOOKS !== 'false') {\n  ${setup.local}(mgr);\n}`,
  ]);
}

/** Webhooks are served from their own folder, which the build must compile and the image must copy. */
function includeWebhookSources(tree: VirtualTree): void {
  const tsconfig = tree.read('tsconfig.json');
  if (tsconfig !== undefined && !tsconfig.includes('"webhooks/**/*.ts"')) {
    const updated = tsconfig.replace(/("include"\s*:\s*\[[^\]]*?)(\s*\])/, '$1, "webhooks/**/*.ts"$2');
    if (updated !== tsconfig) tree.write('tsconfig.json', updated);
  }
  const dockerfile = tree.read('Dockerfile');
  if (dockerfile !== undefined && !/^COPY webhooks\//m.test(dockerfile)) {
    const updated = dockerfile.replace(/^(COPY controllers\/ controllers\/)$/m, '$1\nCOPY webhooks/ webhooks/');
    if (updated !== dockerfile) tree.write('Dockerfile', updated);
  }
}

/** One `create webhook` run, resolved: everything the scaffolding reads. */
export interface ResolvedWebhook {
  data: WebhookData;
  /** The types the kind's files get: the requested ones, or with --force every type the kind has (its files are written again). */
  typesToInsert: WebhookType[];
  /** The spokes whose conversion files this run writes. */
  scaffoldedSpokes: SpokeData[];
  conversion: boolean;
  force: boolean;
  dryRun: boolean;
  /** The PROJECT entry after this run, and the one it replaces. */
  record: ProjectResource;
  replaces: ProjectResource;
  /** How main.ts imports the kind's webhook setup. */
  setup: MainImport;
}

/** `ts-operator-sdk create webhook`: adds defaulting, validating and/or conversion webhooks to an existing API. */
export async function createWebhook(options: CreateWebhookOptions, io: CommandIO): Promise<void> {
  const tree = new VirtualTree(resolve(options.directory));
  const project = readProject(tree);
  assertOurLayout(project);
  const webhook = resolveWebhook(options, project, tree);
  const notes = scaffoldWebhook(tree, webhook);
  project.resources = (project.resources ?? []).map((item) => (item === webhook.replaces ? webhook.record : item));
  writeProject(tree, project);

  const { data } = webhook;
  await finishTree(tree, io, webhook.dryRun, [
    `Next: implement the webhook in ${data.layout.webhookFile}, then generate config/webhook/manifests.yaml with:\n$ make manifests`,
    ...notes.map((note) => `Note: ${note}.`),
    ...(webhook.conversion
      ? [
          `Conversion: fill in the conversion functions of ${data.spokes.map((spoke) => spoke.conversionFile).join(', ')}; ${data.version} is the hub (the storage version).`,
        ]
      : []),
  ]);
}

/**
 * Validates the flags of `create webhook` against the project and derives
 * every name and path once. Throws a one-line UsageError before anything is
 * scaffolded.
 */
export function resolveWebhook(
  options: CreateWebhookFlags,
  project: ProjectConfig,
  tree: VirtualTree,
): ResolvedWebhook {
  if (!options.version)
    throw new UsageError('missing --version', 'pass the API version of the webhook, e.g. --version v1');
  if (!options.kind) throw new UsageError('missing --kind', 'pass the kind of the webhook, e.g. --kind Memcached');
  const domain = project.domain ?? '';
  validateGroup(options.group, domain);
  validateVersion(options.version);
  validateKind(options.kind);

  const requestedTypes: WebhookType[] = [];
  if (options.defaulting) requestedTypes.push('defaulting');
  if (options.programmaticValidation) requestedTypes.push('validation');
  if (options.conversion) requestedTypes.push('conversion');
  if (requestedTypes.length === 0) {
    throw new UsageError(
      'no webhook type given',
      'pass at least one of --defaulting, --programmatic-validation and --conversion',
    );
  }
  const spokes = options.spoke ?? [];
  if (spokes.length > 0 && !options.conversion) {
    throw new UsageError(
      '--spoke is only meaningful for a conversion webhook',
      'add --conversion, or leave out --spoke',
    );
  }

  const requested: ProjectResource = {
    group: options.group || undefined,
    domain,
    version: options.version,
    kind: options.kind,
  };
  const gvk = `${qualifiedGroup(requested)}/${options.version}, Kind=${options.kind}`;
  const resources = project.resources ?? [];
  // An external or core API is recorded with its own full group, which --group names whole.
  const existing =
    resources.find((resource) => sameGvk(resource, requested)) ??
    resources.find(
      (resource) =>
        (resource.external || resource.core) &&
        qualifiedGroup(resource) === options.group &&
        resource.version === options.version &&
        resource.kind === options.kind,
    );
  if (!existing) {
    const versions = resources
      .filter((item) => qualifiedGroup(item) === qualifiedGroup(requested) && item.kind === options.kind)
      .map((item) => item.version);
    throw new UsageError(
      `API ${gvk} does not exist in this project${versions.length > 0 ? ` (${options.kind} has ${versions.join(', ')})` : ''}`,
      `create it first with \`ts-operator-sdk create api --group ${options.group || '""'} --version ${options.version} --kind ${options.kind}\`, or correct --group/--version/--kind`,
    );
  }
  if (existing.external || existing.core) {
    throw new UsageError(
      `API ${gvk} is ${existing.core ? 'a core' : 'an external'} type, and webhooks can only be scaffolded for this project's own APIs`,
      'write the webhook by hand with newWebhookManagedBy, or choose one of your own kinds',
    );
  }
  if (!existing.api) {
    throw new UsageError(
      `API ${gvk} has no types in this project (it was created with --resource=false)`,
      `create its types with \`ts-operator-sdk create api ... --resource --controller=false\` first`,
    );
  }
  const had: ResourceWebhooks = existing.webhooks ?? {};
  const already = requestedTypes.filter((type) => had[type] === true);
  if (already.length > 0 && !options.force) {
    throw new UsageError(
      `${gvk} already has a ${already.join(' and a ')} webhook`,
      `leave out ${already.map((type) => TYPE_FLAGS[type]).join(' and ')} to add another type, or pass --force to scaffold its files again`,
    );
  }

  const sameKind = resources.filter(
    (item) => qualifiedGroup(item) === qualifiedGroup(requested) && item.kind === options.kind && item !== existing,
  );
  if (options.conversion) {
    const withApi = sameKind.filter((item) => item.api);
    if (withApi.length === 0) {
      throw new UsageError(
        `a conversion webhook needs at least two versions of ${options.kind}, and ${qualifiedGroup(requested)} has only ${options.version}`,
        `add a version first, e.g. \`ts-operator-sdk create api --group ${options.group || '""'} --version v1alpha1 --kind ${options.kind} --controller=false\``,
      );
    }
    const otherHub = sameKind.find((item) => item.webhooks?.conversion);
    if (otherHub) {
      throw new UsageError(
        `${options.kind} already converts through the hub version ${otherHub.version}, and a kind has one hub`,
        `add the new versions to that hub with \`create webhook --version ${otherHub.version} --conversion --force --spoke ...\``,
      );
    }
    if (spokes.length === 0) {
      throw new UsageError(
        '--conversion needs the spoke versions that convert to and from the hub',
        `pass --spoke ${withApi.map((item) => item.version).join(',')}`,
      );
    }
    const seen = new Set<string>();
    for (const spoke of spokes) {
      try {
        validateVersion(spoke);
      } catch (error) {
        if (error instanceof UsageError)
          throw new UsageError(
            `--spoke ${JSON.stringify(spoke)} is not a valid version: ${error.problem}`,
            'pass versions such as v1alpha1 or v2beta1, separated by commas',
          );
        throw error;
      }
      if (spoke === options.version)
        throw new UsageError(
          `--spoke ${spoke} is the hub version itself (--version)`,
          `leave ${spoke} out of --spoke; the spokes are the other versions`,
        );
      if (seen.has(spoke)) throw new UsageError(`--spoke lists ${spoke} twice`, 'list each spoke version once');
      seen.add(spoke);
      if (!withApi.some((item) => item.version === spoke)) {
        throw new UsageError(
          `--spoke ${spoke} is not a version of ${options.kind} in this project (it has ${[options.version, ...withApi.map((item) => item.version)].join(', ')})`,
          `create it first with \`ts-operator-sdk create api --version ${spoke} --kind ${options.kind} --controller=false\`, or pass one of the existing versions`,
        );
      }
    }
  }

  const multigroup = project.multigroup === true;
  const webhooks: ResourceWebhooks = {
    ...had,
    defaulting: had.defaulting || options.defaulting || undefined,
    validation: had.validation || options.programmaticValidation || undefined,
    conversion: had.conversion || options.conversion || undefined,
    webhookVersion: 'v1',
    spoke: options.conversion ? [...new Set([...(had.spoke ?? []), ...spokes])].sort() : had.spoke,
  };
  const entry: ProjectResource = { ...existing, webhooks };
  const base = apiNames(entry, {
    multigroup,
    projectName: project.projectName ?? '',
    boilerplate: boilerplateHeader(tree),
  });
  const { layout } = base;
  // The marker's paths come from the runtime's own naming, so the manifests name the paths the builder serves.
  const servedKind = { group: base.qualifiedGroup, version: base.version, kind: base.kind };
  const data: WebhookData = {
    ...base,
    mutatePath: mutatingWebhookPath(servedKind),
    validatePath: validatingWebhookPath(servedKind),
    mutatingName: webhookName('m', entry),
    validatingName: webhookName('v', entry),
    hubVersion: base.version,
    spokes: (webhooks.spoke ?? []).map((version) => {
      const spokeLayout = kindLayout({ ...entry, version }, multigroup);
      const conversionFile = spokeLayout.conversionFile;
      return {
        version,
        kindAlias: `${base.kind}${pascal(version)}`,
        conversionAlias: `${version}Conversion`,
        typesImportFromWebhook: relativeImport(layout.webhookFile, spokeLayout.typesFile),
        conversionImportFromWebhook: relativeImport(layout.webhookFile, conversionFile),
        conversionFile,
        hubImportFromConversion: relativeImport(conversionFile, base.layout.typesFile),
      };
    }),
  };
  if (options.conversion) checkStorageVersion(tree, data, sameKind, multigroup);
  checkWebhookNames(tree, data, requestedTypes);

  return {
    data,
    // --force scaffolds the kind's files again, so every type the kind has goes back in, not only the requested ones.
    typesToInsert: options.force
      ? (['defaulting', 'validation', 'conversion'] as const).filter((type) => webhooks[type])
      : requestedTypes,
    scaffoldedSpokes: data.spokes.filter((item) => options.force || spokes.includes(item.version)),
    conversion: options.conversion,
    force: options.force,
    dryRun: options.dryRun,
    record: entry,
    replaces: existing,
    setup: webhookSetupImport(tree, data),
  };
}

/** Writes the webhook's files and inserts its lines, from the resolved value only; returns notes for the user. */
function scaffoldWebhook(tree: VirtualTree, webhook: ResolvedWebhook): string[] {
  const { data, force } = webhook;
  scaffoldFiles(tree, sharedFiles(webhook.conversion, data, force), data);
  for (const spoke of webhook.scaffoldedSpokes) {
    const spec: FileSpec = {
      path: spoke.conversionFile,
      template: 'webhook/apis/version/kind_conversion.ts.hbs',
      ifExists: force ? 'overwrite' : 'error',
    };
    scaffoldFiles(tree, [spec], {
      ...data,
      spokeVersion: spoke.version,
      hubImportFromConversion: spoke.hubImportFromConversion,
    });
  }
  // config/default of a project scaffolded before webhooks existed has no CA-injection markers: the
  // replacements there are commented-out help, so their absence is reported, not an error.
  const notes: string[] = [];
  const defaultKustomization = tree.read('config/default/kustomization.yaml') ?? '';
  const inserters = typeInserters(webhook.typesToInsert, data).filter((inserter) => {
    if (
      inserter.path !== 'config/default/kustomization.yaml' ||
      defaultKustomization.split('\n').some((line) => line.trim() === inserter.marker)
    )
      return true;
    notes.push(
      `config/default/kustomization.yaml has no "${inserter.marker}" marker: to have cert-manager inject the CA into the ${data.plural}.${data.qualifiedGroup} CRD, add its replacement targets by hand`,
    );
    return false;
  });
  applyInserters(tree, [...inserters, ...webhookMainInserters(webhook.setup)]);
  if (webhook.conversion) markStorageVersion(tree, data);
  addNetworkPolicy(tree);
  includeWebhookSources(tree);
  uncommentLine(tree, 'config/default/kustomization.yaml', '- ../webhook');
  uncommentBlock(tree, 'config/default/kustomization.yaml', [
    '- path: manager_webhook_patch.yaml',
    '  target:',
    '    kind: Deployment',
  ]);
  if (!/^- path: manager_webhook_patch\.yaml$/m.test(tree.read('config/default/kustomization.yaml') ?? '')) {
    notes.push(
      'config/default/kustomization.yaml does not apply manager_webhook_patch.yaml: add it under `patches:` (with `target: {kind: Deployment}`) so the manager serves the webhooks with the mounted certificate',
    );
  }
  uncommentBlock(tree, 'config/manifests/kustomization.yaml', OLM_CERT_PATCH_START);
  // Only admission webhooks have a manifests.yaml (kubebuilder#2231: listing it for a conversion-only
  // webhook broke every kustomize build of config/default).
  if (webhook.typesToInsert.some((type) => type !== 'conversion'))
    uncommentLine(tree, 'config/webhook/kustomization.yaml', '- manifests.yaml');
  if (webhook.conversion)
    uncommentBlock(tree, 'config/crd/kustomization.yaml', ['configurations:', '- kustomizeconfig.yaml']);
  return notes;
}

/**
 * Refuses a webhook name Kubernetes would reject (a label over 63
 * characters), or one that another webhook marker of the project already
 * uses (a webhook scaffolded before names carried the group, or written by
 * hand): `generate manifests` would refuse the project afterwards.
 */
function checkWebhookNames(tree: VirtualTree, data: WebhookData, types: readonly WebhookType[]): void {
  const names = [
    ...(types.includes('defaulting') ? [data.mutatingName] : []),
    ...(types.includes('validation') ? [data.validatingName] : []),
  ];
  for (const name of names) {
    // Only the first label can be too long: the group's labels are DNS labels already. (The whole name
    // cannot pass 253 characters: the files named after the group would pass the file system's limit first.)
    const label = name.slice(0, name.indexOf('.'));
    if (label.length > DNS1123_LABEL_MAX) {
      throw new UsageError(
        `the webhook name ${name} is not a valid Kubernetes name (its first label has ${label.length} characters, at most ${DNS1123_LABEL_MAX})`,
        `use a kind of at most ${data.kind.length - (label.length - DNS1123_LABEL_MAX)} characters, or write this webhook by hand with a shorter name=`,
      );
    }
  }
  const markers = readProjectWebhookMarkers(tree.root, new ProblemList());
  for (const name of names) {
    const taken = markers.find((marker) => marker.args.name === name && marker.file !== data.layout.webhookFile);
    if (taken) {
      throw new UsageError(
        `the webhook name ${name} is already used by ${taken.file}:${taken.line}, and webhook names must be unique in a project`,
        'give that marker another name= (unique in the project), then run the command again',
      );
    }
  }
}

/**
 * The first lines of the commented patch in config/manifests/kustomization.yaml
 * that removes the cert-manager volume for OLM; the whole block is uncommented.
 */
const OLM_CERT_PATCH_START = ['patches:', '- target:'];

/** Lists allow-webhook-traffic.yaml in the network-policy kustomization (kubebuilder adds it after `resources:`). */
function addNetworkPolicy(tree: VirtualTree): void {
  const path = 'config/network-policy/kustomization.yaml';
  const content = tree.read(path);
  if (content === undefined || content.includes('- allow-webhook-traffic.yaml')) return;
  const updated = content.replace(/^resources:\n((?:- .*\n)*)/m, (block) => `${block}- allow-webhook-traffic.yaml\n`);
  if (updated !== content) tree.write(path, updated);
}

const STORAGE_MARKER = '+kubebuilder:storageversion';

/**
 * The hub is the storage version (the API server stores every version as the
 * hub). Refuses when another version of the kind carries the storage marker:
 * silently moving it would change what the cluster stores.
 */
function checkStorageVersion(
  tree: VirtualTree,
  data: WebhookData,
  sameKind: readonly ProjectResource[],
  multigroup: boolean,
): void {
  for (const item of sameKind) {
    const typesFile = kindLayout(item, multigroup).typesFile;
    const text = tree.read(typesFile);
    if (text?.includes(STORAGE_MARKER)) {
      throw new UsageError(
        `${typesFile} marks ${item.version} as the storage version, but the hub of a conversion webhook (--version ${data.version}) must be the storage version`,
        `run the command with --version ${item.version} (and the other versions as --spoke), or move the ${STORAGE_MARKER} marker to ${data.layout.typesFile}`,
      );
    }
  }
  if (!tree.exists(data.layout.typesFile)) {
    throw new UsageError(
      `${data.layout.typesFile} is missing`,
      'restore the types of the hub version and run the command again',
    );
  }
}

/** Adds `+kubebuilder:storageversion` to the hub kind's doc comment, after its `+kubebuilder:object:root=true`. */
function markStorageVersion(tree: VirtualTree, data: WebhookData): void {
  const text = tree.read(data.layout.typesFile)!;
  if (text.includes(STORAGE_MARKER)) return;
  const lines = text.split('\n');
  const declaration = lines.findIndex((line) => new RegExp(`^export interface ${data.kind} extends\\b`).test(line));
  let rootMarker = -1;
  for (let index = declaration - 1; index >= 0 && declaration !== -1; index--) {
    if (lines[index]!.includes('+kubebuilder:object:root=true')) {
      rootMarker = index;
      break;
    }
    if (lines[index]!.trim() === '/**') break;
  }
  if (rootMarker === -1) {
    throw new UsageError(
      `cannot find the doc comment with +kubebuilder:object:root=true above \`export interface ${data.kind}\` in ${data.layout.typesFile}`,
      `add \` * ${STORAGE_MARKER}\` to that comment by hand, or restore the comment, and run the command again`,
    );
  }
  const prefix = /^(\s*\*\s*)/.exec(lines[rootMarker]!)?.[1] ?? ' * ';
  lines.splice(rootMarker + 1, 0, `${prefix}${STORAGE_MARKER}`);
  tree.write(data.layout.typesFile, lines.join('\n'));
}

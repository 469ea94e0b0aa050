import { resolve } from 'node:path';
import { boilerplateHeader } from '../../scaffold/boilerplate.js';
import { UsageError } from '../../errors.js';
import { scaffoldFiles, type FileSpec } from '../../scaffold/files.js';
import { applyInserters, Markers, uncommentBlock, uncommentLine, type Inserter } from '../../scaffold/inserter.js';
import {
  apiData,
  apiLayout,
  relativeImport,
  webhookLayout,
  type ApiData,
  type WebhookLayout,
} from '../../scaffold/layout.js';
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
  type ProjectResource,
  type ResourceWebhooks,
} from '../../scaffold/project.js';
import { renderTemplate } from '../../scaffold/render.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

/** Options of `ts-operator-sdk create webhook`. */
export interface CreateWebhookOptions {
  directory: string;
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

/** Everything the webhook templates need. */
export interface WebhookData extends ApiData {
  webhook: WebhookLayout;
  /** `/mutate-<group with dashes>-<version>-<kind>`: controller-runtime's path, so the manifests and the server agree. */
  mutatePath: string;
  validatePath: string;
  /** The `name=` of the mutating and validating webhooks (see {@link webhookName}). */
  mutatingName: string;
  validatingName: string;
  /** `<Kind>` or `<Kind>Kind` (see ApiData.kindLocal), imported from the types. */
  typesImportFromWebhook: string;
  setupFunction: string;
  spokes: SpokeData[];
  hubVersion: string;
}

/** controller-runtime's webhook path for a kind: `/<prefix>-<group, dots as dashes>-<version>-<lowercase kind>`. */
export function webhookPath(prefix: 'mutate' | 'validate', group: string, version: string, kind: string): string {
  return `/${prefix}-${group.replace(/\./g, '-')}-${version}-${kind.toLowerCase()}`;
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
      path: data.webhook.webhookFile,
      template: 'webhook/webhooks/version/kind_webhook.ts.hbs',
      ifExists: force ? 'overwrite' : 'skip',
    },
    {
      path: data.webhook.webhookTestFile,
      template: 'webhook/webhooks/version/kind_webhook.test.ts.hbs',
      ifExists: force ? 'overwrite' : 'skip',
    },
  ];
  if (conversion) {
    specs.push({
      path: data.webhook.crdPatchFile,
      template: 'webhook/config/crd/patches/webhook_in_plural.yaml.hbs',
      ifExists: force ? 'overwrite' : 'error',
    });
  }
  return specs;
}

/** The markers inside a kind's webhook file and its test, where each webhook type adds its part. */
export const WebhookMarkers = {
  imports: '// +kubebuilder:scaffold:webhook-imports',
  builder: '// +kubebuilder:scaffold:webhook-builder',
  types: '// +kubebuilder:scaffold:webhook-types',
  testImports: '// +kubebuilder:scaffold:webhook-test-imports',
  tests: '// +kubebuilder:scaffold:webhook-tests',
  conversionCrds: '// +kubebuilder:scaffold:webhook-conversion-crds',
} as const;

/** The code each webhook type adds to the kind's webhook file, its test, and the project files. */
function typeInserters(types: readonly WebhookType[], data: WebhookData): Inserter[] {
  const fragment = (name: string): string => renderTemplate(`webhook/fragments/${name}.hbs`, data).replace(/\n$/, '');
  const inserters: Inserter[] = [];
  for (const type of types) {
    inserters.push(
      // One fragment per import line, so a line two types share is written once.
      {
        path: data.webhook.webhookFile,
        marker: WebhookMarkers.imports,
        fragments: fragment(`${type}-imports`).split('\n'),
      },
      { path: data.webhook.webhookFile, marker: WebhookMarkers.builder, fragments: [fragment(`${type}-builder`)] },
      { path: data.webhook.webhookFile, marker: WebhookMarkers.types, fragments: [fragment(`${type}-types`)] },
      { path: data.webhook.webhookTestFile, marker: WebhookMarkers.tests, fragments: [fragment(`${type}-tests`)] },
    );
  }
  if (types.includes('conversion')) {
    inserters.push(
      {
        path: data.webhook.webhookTestFile,
        marker: WebhookMarkers.testImports,
        fragments: fragment('conversion-test-imports').split('\n'),
      },
      {
        path: data.webhook.webhookTestFile,
        marker: WebhookMarkers.conversionCrds,
        fragments: [`'${data.plural}.${data.qualifiedGroup}',`],
      },
      {
        path: 'config/crd/kustomization.yaml',
        marker: Markers.crdWebhookPatch,
        fragments: [`- path: ${data.webhook.crdPatchFile.slice('config/crd/'.length)}`],
      },
      {
        path: 'config/default/kustomization.yaml',
        marker: Markers.caInjectionNamespace,
        fragments: [fragment('cainjection-crd-namespace')],
      },
      {
        path: 'config/default/kustomization.yaml',
        marker: Markers.caInjectionName,
        fragments: [fragment('cainjection-crd-name')],
      },
    );
  }
  return inserters
    .map((inserter) => ({ ...inserter, fragments: inserter.fragments.filter((text) => text.trim() !== '') }))
    .filter((inserter) => inserter.fragments.length > 0);
}

/** The lines main.ts gets: the import, and the registration guarded by ENABLE_WEBHOOKS as kubebuilder's main.go does. */
function mainInserters(mainTs: string, data: WebhookData): Inserter[] {
  const importPath = relativeImport('main.ts', data.webhook.webhookFile);
  const importsName = new RegExp(`^import \\{[^}]*\\b${data.setupFunction}\\b[^}]*\\} from '([^']+)';$`, 'm').exec(
    mainTs,
  );
  const local =
    !importsName || importsName[1] === importPath
      ? data.setupFunction
      : `setup${(data.group || data.qualifiedGroup)
          .split(/[^a-z0-9]+/)
          .filter(Boolean)
          .map(pascal)
          .join('')}${data.kind}${pascal(data.version)}Webhook`;
  return [
    {
      path: 'main.ts',
      marker: Markers.imports,
      fragments: [
        `import { ${local === data.setupFunction ? local : `${data.setupFunction} as ${local}`} } from '${importPath}';`,
      ],
    },
    {
      path: 'main.ts',
      marker: Markers.builder,
      fragments: [
        // Set ENABLE_WEBHOOKS=false to run the operator locally without certificates (`make run`).
        `if (process.env.ENABLE_WEBHOOKS !== 'false') {\n  mgr.addReadyzCheck('webhook', mgr.getWebhookServer().startedChecker());\n}`,
        `if (process.env.ENABLE_WEBHOOKS !== 'false') {\n  ${local}(mgr);\n}`,
      ],
    },
  ];
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

/** `ts-operator-sdk create webhook`: adds defaulting, validating and/or conversion webhooks to an existing API. */
export async function createWebhook(options: CreateWebhookOptions, io: CommandIO): Promise<void> {
  const tree = new VirtualTree(resolve(options.directory));
  const project = readProject(tree);
  assertOurLayout(project);
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
  const base = apiData(entry, {
    multigroup,
    projectName: project.projectName ?? '',
    boilerplate: boilerplateHeader(tree),
  });
  const layout = webhookLayout(entry, multigroup);
  const data: WebhookData = {
    ...base,
    webhook: layout,
    mutatePath: webhookPath('mutate', base.qualifiedGroup, base.version, base.kind),
    validatePath: webhookPath('validate', base.qualifiedGroup, base.version, base.kind),
    mutatingName: webhookName('m', entry),
    validatingName: webhookName('v', entry),
    typesImportFromWebhook: relativeImport(layout.webhookFile, base.layout.typesFile),
    setupFunction: `setup${base.kind}WebhookWithManager`,
    hubVersion: base.version,
    spokes: (webhooks.spoke ?? []).map((version) => {
      const spokeLayout = apiLayout({ ...entry, version }, multigroup);
      const conversionFile = `${spokeLayout.typesDir}/${base.kindLower}_conversion.ts`;
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

  // --force scaffolds the kind's files again, so every type the kind has goes back in, not only the requested ones.
  const typesToInsert: WebhookType[] = options.force
    ? (['defaulting', 'validation', 'conversion'] as const).filter((type) => webhooks[type])
    : requestedTypes;
  scaffoldFiles(tree, sharedFiles(options.conversion, data, options.force), data);
  for (const spoke of data.spokes.filter((item) => options.force || spokes.includes(item.version))) {
    const spec: FileSpec = {
      path: spoke.conversionFile,
      template: 'webhook/apis/version/kind_conversion.ts.hbs',
      ifExists: options.force ? 'overwrite' : 'error',
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
  const inserters = typeInserters(typesToInsert, data).filter((inserter) => {
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
  applyInserters(tree, [...inserters, ...mainInserters(tree.read('main.ts') ?? '', data)]);
  if (options.conversion) markStorageVersion(tree, data);
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
  if (options.conversion)
    uncommentBlock(tree, 'config/crd/kustomization.yaml', ['configurations:', '- kustomizeconfig.yaml']);

  project.resources = resources.map((item) => (item === existing ? entry : item));
  writeProject(tree, project);

  await finishTree(tree, io, options.dryRun, [
    `Next: implement the webhook in ${data.webhook.webhookFile}, then generate config/webhook/manifests.yaml with:\n$ make manifests`,
    ...notes.map((note) => `Note: ${note}.`),
    ...(options.conversion
      ? [
          `Conversion: fill in the conversion functions of ${data.spokes.map((spoke) => spoke.conversionFile).join(', ')}; ${options.version} is the hub (the storage version).`,
        ]
      : []),
  ]);
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
    const taken = markers.find((marker) => marker.args.name === name && marker.file !== data.webhook.webhookFile);
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
    const typesFile = apiLayout(item, multigroup).typesFile;
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

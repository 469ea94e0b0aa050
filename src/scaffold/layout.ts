import { posix } from 'node:path';
import { pluralize } from './names.js';
import { qualifiedGroup, type ProjectResource } from './project.js';

/** Where one API's files live in the generated project, single-group or multigroup. */
export interface ApiLayout {
  /** Directory of the types, e.g. `apis/v1` or `apis/cache/v1`; PROJECT `path`. */
  typesDir: string;
  typesFile: string;
  groupVersionFile: string;
  controllerDir: string;
  controllerFile: string;
  controllerTestFile: string;
  /** `config/rbac/<prefix>_{admin,editor,viewer}_role.yaml`. */
  rbacRolePrefix: string;
  sampleFile: string;
}

/** Everything the API templates need, derived once from the resource and the project. */
export interface ApiData {
  group: string;
  version: string;
  kind: string;
  domain: string;
  qualifiedGroup: string;
  plural: string;
  kindLower: string;
  /** Lower camel case, for variable names (`memcached`, `podRoute`); never a reserved word (see {@link kindVariableName}). */
  kindVariable: string;
  /** The import specifier of the kind in the controller and its test: `Memcached`, or `Client as ClientKind` when the kind's name is taken there. */
  kindImport: string;
  /** The name the controller and its test use for the kind (the alias of {@link kindImport}). */
  kindLocal: string;
  /** Import specifiers of the types file, aliased where the kind's own declarations take the name (kind `Condition`). */
  typesImport: Record<TypesFileImport, string>;
  /** The local names of those imports. */
  typesLocal: Record<TypesFileImport, string>;
  namespaced: boolean;
  projectName: string;
  /** The group as a word in prose: the group, or the domain when the group is empty. */
  groupLabel: string;
  layout: ApiLayout;
  /** metadata.name of the sample: `<kind>-sample`, or `<kind>-<version>-sample` for a version added after the first. */
  sampleName: string;
  /** File-name prefix of the admin/editor/viewer roles. */
  rbacRolePrefix: string;
  /** Object-name prefix of the same roles (no underscores in Kubernetes names). */
  rbacRoleName: string;
  /** Relative import (with `.js`) from the controller to the types. */
  typesImportFromController: string;
  /** Relative import (with `.js`) from main.ts to the controller. */
  controllerImportFromMain: string;
  boilerplate: string;
}

/**
 * The file layout of an API. Multigroup adds the group as a directory level
 * (kubebuilder's `api/<group>/<version>` and `internal/controller/<group>`);
 * an API without a group keeps the single-group place even then.
 */
export function apiLayout(
  resource: Pick<ProjectResource, 'group' | 'version' | 'kind'>,
  multigroup: boolean,
): ApiLayout {
  const kindLower = resource.kind.toLowerCase();
  const grouped = multigroup && Boolean(resource.group);
  const typesDir = grouped ? `apis/${resource.group}/${resource.version}` : `apis/${resource.version}`;
  const controllerDir = grouped ? `controllers/${resource.group}` : 'controllers';
  const samplePrefix = resource.group ? `${resource.group}_` : '';
  return {
    typesDir,
    typesFile: `${typesDir}/${kindLower}_types.ts`,
    groupVersionFile: `${typesDir}/groupversion_info.ts`,
    controllerDir,
    controllerFile: `${controllerDir}/${kindLower}_controller.ts`,
    controllerTestFile: `${controllerDir}/${kindLower}_controller.test.ts`,
    rbacRolePrefix: grouped ? `${resource.group}_${kindLower}` : kindLower,
    sampleFile: `config/samples/${samplePrefix}${resource.version}_${kindLower}.yaml`,
  };
}

/** Where a kind's webhook lives: `webhooks/<version>/` (kubebuilder's internal/webhook/<version>/), with the group level when multigroup. */
export interface WebhookLayout {
  webhookDir: string;
  webhookFile: string;
  webhookTestFile: string;
  /** kubebuilder's `config/crd/patches/webhook_in_<plural>.yaml` (`<group>_<plural>` when multigroup). */
  crdPatchFile: string;
}

/** The paths of one kind's webhook files; like {@link apiLayout}, multigroup adds the group level. */
export function webhookLayout(
  resource: Pick<ProjectResource, 'group' | 'version' | 'kind' | 'plural'>,
  multigroup: boolean,
): WebhookLayout {
  const kindLower = resource.kind.toLowerCase();
  const grouped = multigroup && Boolean(resource.group);
  const webhookDir = grouped ? `webhooks/${resource.group}/${resource.version}` : `webhooks/${resource.version}`;
  return {
    webhookDir,
    webhookFile: `${webhookDir}/${kindLower}_webhook.ts`,
    webhookTestFile: `${webhookDir}/${kindLower}_webhook.test.ts`,
    crdPatchFile: `config/crd/patches/webhook_in_${grouped ? `${resource.group}_` : ''}${resource.plural ?? pluralize(resource.kind)}.yaml`,
  };
}

/** A relative ESM import specifier from one project file to another `.ts` file. */
export function relativeImport(fromFile: string, toTsFile: string): string {
  let specifier = posix.relative(posix.dirname(fromFile), toTsFile).replace(/\.ts$/, '.js');
  if (!specifier.startsWith('.')) specifier = `./${specifier}`;
  return specifier;
}

/** What the types template imports; a kind may be named like any of them. */
const TYPES_FILE_IMPORTS = { KubernetesObject: 'K8s', Condition: 'Sdk', GroupVersion: 'Api' } as const;
/** A name the types template imports. */
export type TypesFileImport = keyof typeof TYPES_FILE_IMPORTS;

/**
 * Names the controller and controller test templates import or use as
 * globals. A kind with one of these names (Kubernetes allows `Client` or
 * `Promise` as kinds) is imported under an alias there. An alias
 * `<Kind>Kind` never collides: no name below ends in `Kind`.
 */
const CONSUMER_TEMPLATE_NAMES: ReadonlySet<string> = new Set([
  // ts-operator-sdk and ts-operator-sdk/envtest imports
  'Client',
  'Manager',
  'Reconciler',
  'ReconcileContext',
  'Request',
  'Result',
  'RestClient',
  'Environment',
  // and the webhook templates' (templates/webhook)
  'AdmissionContext',
  'AdmissionDeniedError',
  'AdmissionWarnings',
  'CustomDefaulter',
  'CustomValidator',
  // globals the templates use (async functions need the real Promise)
  'Promise',
  'Error',
  'AbortController',
]);

/**
 * ECMAScript reserved words (also in strict mode and modules) plus names a
 * local in the generated `reconcile` must not shadow. A kind lowercased at
 * its first letter lands here for kinds such as `Function`, `Default`,
 * `Import`, `Package` or `Interface`.
 */
const UNUSABLE_VARIABLE_NAMES: ReadonlySet<string> = new Set([
  'await',
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'implements',
  'import',
  'in',
  'instanceof',
  'interface',
  'let',
  'new',
  'null',
  'package',
  'private',
  'protected',
  'public',
  'return',
  'static',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'arguments',
  'eval',
  'undefined',
  'async',
  // the reconcile method's parameters and locals, and the controller's imports
  'ctx',
  'req',
  'metadata',
  'spec',
  'ignoreNotFound',
  'newControllerManagedBy',
]);

/** The local variable name for one object of a kind: lower camel case, or `<name>Object` where that is unusable. */
export function kindVariableName(kind: string): string {
  const camel = kind.charAt(0).toLowerCase() + kind.slice(1);
  return UNUSABLE_VARIABLE_NAMES.has(camel) ? `${camel}Object` : camel;
}

/** Builds the template data of one API. */
export function apiData(
  resource: ProjectResource,
  options: { multigroup: boolean; projectName: string; boilerplate: string; versionedSample?: boolean },
): ApiData {
  const layout = apiLayout(resource, options.multigroup);
  const kindLower = resource.kind.toLowerCase();
  const kindAliased = CONSUMER_TEMPLATE_NAMES.has(resource.kind);
  const kindLocal = kindAliased ? `${resource.kind}Kind` : resource.kind;
  // The types file declares <Kind>, <Kind>Spec and <Kind>Status;
  // an import with one of those names gets a prefix (which none of them has).
  const declared = new Set(['', 'Spec', 'Status'].map((suffix) => resource.kind + suffix));
  const typesNames = Object.entries(TYPES_FILE_IMPORTS).map(
    ([name, prefix]) => [name, declared.has(name) ? `${prefix}${name}` : name] as const,
  );
  return {
    group: resource.group ?? '',
    version: resource.version,
    kind: resource.kind,
    domain: resource.domain ?? '',
    qualifiedGroup: qualifiedGroup(resource),
    plural: resource.plural ?? pluralize(resource.kind),
    kindLower,
    kindVariable: kindVariableName(resource.kind),
    kindImport: kindAliased ? `${resource.kind} as ${kindLocal}` : resource.kind,
    kindLocal,
    typesImport: Object.fromEntries(
      typesNames.map(([name, local]) => [name, local === name ? name : `${name} as ${local}`]),
    ) as Record<TypesFileImport, string>,
    typesLocal: Object.fromEntries(typesNames) as Record<TypesFileImport, string>,
    namespaced: resource.api ? resource.api.namespaced === true : true,
    projectName: options.projectName,
    groupLabel: resource.group || (resource.domain ?? ''),
    layout,
    sampleName: options.versionedSample ? `${kindLower}-${resource.version}-sample` : `${kindLower}-sample`,
    rbacRolePrefix: layout.rbacRolePrefix,
    rbacRoleName: layout.rbacRolePrefix.replace(/_/g, '-'),
    typesImportFromController: relativeImport(layout.controllerFile, layout.typesFile),
    controllerImportFromMain: relativeImport('main.ts', layout.controllerFile),
    boilerplate: options.boilerplate,
  };
}

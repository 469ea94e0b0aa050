import { kindLayout, relativeImport, type KindLayout } from './layout.js';
import { pluralize } from './names.js';
import { qualifiedGroup, type ProjectResource } from './project.js';

/**
 * Every name and path derived from one kind of a project, computed once:
 * what the API and webhook templates read, and what the commands that
 * scaffold a kind (`create api`, `create webhook`) write at. Kubernetes
 * accepts kinds such as `Function`, `Client` or `Condition`, so the
 * identifiers here are the ones that cannot clash (templates/README.md).
 */
export interface ApiNames {
  group: string;
  version: string;
  kind: string;
  domain: string;
  qualifiedGroup: string;
  /** The group as PascalCase words (`cache` → `Cache`, `route.openshift.io` → `RouteOpenshiftIo`), for aliases. */
  groupIdentifier: string;
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
  /** Where every file of the kind lives. */
  layout: KindLayout;
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
  /** The controller's class, as the controller file exports it. */
  reconcilerName: string;
  /** Relative import (with `.js`) from the kind's webhook file to its types. */
  typesImportFromWebhook: string;
  /** Relative import (with `.js`) from main.ts to the kind's webhook file. */
  webhookImportFromMain: string;
  /** The function the webhook file exports to register the kind's webhooks. */
  setupFunction: string;
  boilerplate: string;
}

/** What of the project the names depend on. */
export interface ApiNamesContext {
  multigroup: boolean;
  projectName: string;
  boilerplate: string;
  /** Whether the sample gets the version in its name (a version added after the first). */
  versionedSample?: boolean;
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

const pascal = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** The names and paths of one kind of the project (see {@link ApiNames}). */
export function apiNames(resource: ProjectResource, context: ApiNamesContext): ApiNames {
  const layout = kindLayout(resource, context.multigroup);
  const kindLower = resource.kind.toLowerCase();
  const kindAliased = CONSUMER_TEMPLATE_NAMES.has(resource.kind);
  const kindLocal = kindAliased ? `${resource.kind}Kind` : resource.kind;
  // The types file declares <Kind>, <Kind>Spec and <Kind>Status;
  // an import with one of those names gets a prefix (which none of them has).
  const declared = new Set(['', 'Spec', 'Status'].map((suffix) => resource.kind + suffix));
  const typesNames = Object.entries(TYPES_FILE_IMPORTS).map(
    ([name, prefix]) => [name, declared.has(name) ? `${prefix}${name}` : name] as const,
  );
  const group = qualifiedGroup(resource);
  return {
    group: resource.group ?? '',
    version: resource.version,
    kind: resource.kind,
    domain: resource.domain ?? '',
    qualifiedGroup: group,
    groupIdentifier: (resource.group || group)
      .split(/[^a-z0-9]+/)
      .filter(Boolean)
      .map(pascal)
      .join(''),
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
    projectName: context.projectName,
    groupLabel: resource.group || (resource.domain ?? ''),
    layout,
    sampleName: context.versionedSample ? `${kindLower}-${resource.version}-sample` : `${kindLower}-sample`,
    rbacRolePrefix: layout.rbacRolePrefix,
    rbacRoleName: layout.rbacRolePrefix.replace(/_/g, '-'),
    typesImportFromController: relativeImport(layout.controllerFile, layout.typesFile),
    controllerImportFromMain: relativeImport('main.ts', layout.controllerFile),
    reconcilerName: `${resource.kind}Reconciler`,
    typesImportFromWebhook: relativeImport(layout.webhookFile, layout.typesFile),
    webhookImportFromMain: relativeImport('main.ts', layout.webhookFile),
    setupFunction: `setup${resource.kind}WebhookWithManager`,
    boilerplate: context.boilerplate,
  };
}

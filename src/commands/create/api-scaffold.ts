/**
 * What `create api` writes for an API, shared by its own kinds (./api.ts) and
 * kinds another project owns (./external-api.ts): its options, its files and
 * the code it inserts at the markers of existing files.
 */
import type { FileSpec, IfExists } from '../../scaffold/files.js';
import { Markers, type Inserter } from '../../scaffold/inserter.js';
import type { ApiData } from '../../scaffold/layout.js';

/** Options of `ts-operator-sdk create api`. */
export interface CreateApiOptions {
  directory: string;
  /** Empty: the API group is the project domain itself. */
  group: string;
  version?: string;
  kind?: string;
  plural?: string;
  /** Undefined when the flag was not given: ask on a terminal, else yes. */
  resource?: boolean;
  controller?: boolean;
  namespaced: boolean;
  force: boolean;
  dryRun: boolean;
  /** Whether stdin is a terminal (prompts are allowed). */
  interactive: boolean;
  /** A kind another project owns: the project directory of its TypeScript types (see ./external-api.ts). */
  externalApiPath?: string;
  externalApiDomain?: string;
  fromCrd?: string;
  fromCluster?: string;
  /** --timeout: how long --from-cluster may take (see ./external-api.ts). */
  timeout?: string;
}

/** The files of one API; `force` turns `error` into `overwrite` for exactly these. */
export function apiFiles(data: ApiData, parts: { resource: boolean; controller: boolean; force: boolean }): FileSpec[] {
  const owned: IfExists = parts.force ? 'overwrite' : 'error';
  const specs: FileSpec[] = [];
  if (parts.resource) {
    specs.push(
      { path: data.layout.groupVersionFile, template: 'api/apis/version/groupversion_info.ts.hbs', ifExists: 'skip' },
      { path: data.layout.typesFile, template: 'api/apis/version/kind_types.ts.hbs', ifExists: owned },
      { path: 'config/crd/kustomization.yaml', template: 'api/config/crd/kustomization.yaml.hbs', ifExists: 'skip' },
      {
        path: 'config/crd/kustomizeconfig.yaml',
        template: 'api/config/crd/kustomizeconfig.yaml.hbs',
        ifExists: 'skip',
      },
      {
        path: 'config/samples/kustomization.yaml',
        template: 'api/config/samples/kustomization.yaml.hbs',
        ifExists: 'skip',
      },
      { path: data.layout.sampleFile, template: 'api/config/samples/group_version_kind.yaml.hbs', ifExists: owned },
    );
    for (const role of ['admin', 'editor', 'viewer']) {
      // One set of roles per kind covers all its versions, so a new version reuses them.
      specs.push({
        path: `config/rbac/${data.rbacRolePrefix}_${role}_role.yaml`,
        template: `api/config/rbac/kind_${role}_role.yaml.hbs`,
        ifExists: parts.force ? 'overwrite' : 'skip',
      });
    }
  }
  if (parts.controller) {
    specs.push(
      { path: data.layout.controllerFile, template: 'api/controllers/kind_controller.ts.hbs', ifExists: owned },
      {
        path: data.layout.controllerTestFile,
        template: 'api/controllers/kind_controller.test.ts.hbs',
        ifExists: owned,
      },
    );
  }
  return specs;
}

/**
 * The name main.ts gives an API's reconciler: `<Kind>Reconciler`, or, when
 * main.ts already imports that name from another group's controller (the
 * same kind in two groups), `<Group><Kind>Reconciler`.
 */
export function reconcilerLocalName(mainTs: string, data: ApiData): string {
  const name = `${data.kind}Reconciler`;
  const importsName = new RegExp(`^import \\{[^}]*\\b${name}\\b[^}]*\\} from '([^']+)';$`, 'm').exec(mainTs);
  if (!importsName || importsName[1] === data.controllerImportFromMain) return name;
  const groupWords = (data.group || data.qualifiedGroup).split(/[^a-z0-9]+/).filter(Boolean);
  return `${groupWords.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')}${name}`;
}

/** The code `create api` adds to files that already exist, at their markers. */
export function apiInserters(
  data: ApiData,
  parts: { resource: boolean; controller: boolean },
  reconcilerName = `${data.kind}Reconciler`,
): Inserter[] {
  const inserters: Inserter[] = [];
  if (parts.resource) {
    inserters.push(
      {
        path: 'config/crd/kustomization.yaml',
        marker: Markers.crdResources,
        fragments: [`- bases/${data.qualifiedGroup}_${data.plural}.yaml`],
      },
      {
        path: 'config/samples/kustomization.yaml',
        marker: Markers.samples,
        fragments: [`- ${data.layout.sampleFile.slice('config/samples/'.length)}`],
      },
      {
        path: 'config/rbac/kustomization.yaml',
        marker: Markers.rbacRoles,
        fragments: ['admin', 'editor', 'viewer'].map((role) => `- ${data.rbacRolePrefix}_${role}_role.yaml`),
      },
    );
  }
  if (parts.controller) {
    inserters.push(
      {
        path: 'main.ts',
        marker: Markers.imports,
        fragments: [
          `import { ${reconcilerName === `${data.kind}Reconciler` ? reconcilerName : `${data.kind}Reconciler as ${reconcilerName}`} } from '${data.controllerImportFromMain}';`,
        ],
      },
      {
        path: 'main.ts',
        marker: Markers.builder,
        fragments: [`new ${reconcilerName}(mgr.getClient()).setupWithManager(mgr);`],
      },
    );
  }
  return inserters;
}

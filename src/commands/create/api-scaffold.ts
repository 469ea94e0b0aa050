/**
 * What `create api` writes for a resolved API (./resolve-api.ts), shared by
 * its own kinds (./api.ts) and kinds another project owns
 * (./external-api.ts): its files and the code it inserts at the markers of
 * existing files. Everything here reads the resolved value; nothing is
 * validated or derived again.
 */
import type { FileSpec, IfExists } from '../../scaffold/files.js';
import type { ApiNames } from '../../scaffold/api-names.js';
import { RBAC_HELPER_ROLES } from '../../scaffold/layout.js';
import { mainInserters, type MainImport } from '../../scaffold/main-imports.js';
import { ScaffoldMarkers } from '../../scaffold/markers.js';
import type { Inserter } from '../../scaffold/inserter.js';

/** The flags of `ts-operator-sdk create api`, as the command line gives them. */
export interface CreateApiFlags {
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
  /** A kind another project owns: the project directory of its TypeScript types (see ./external-api.ts). */
  externalApiPath?: string;
  externalApiDomain?: string;
  fromCrd?: string;
  fromCluster?: string;
  /** --timeout: how long --from-cluster may take (see ./external-api.ts). */
  timeout?: string;
}

/** Options of `ts-operator-sdk create api`: its flags, and where it runs. */
export interface CreateApiOptions extends CreateApiFlags {
  directory: string;
  /** Whether stdin is a terminal (prompts are allowed). */
  interactive: boolean;
}

/** Which parts of an API a run scaffolds, and whether it may overwrite the kind's own files. */
export interface ApiParts {
  resource: boolean;
  controller: boolean;
  force: boolean;
}

/** The files of one API; `force` turns `error` into `overwrite` for exactly these. */
export function apiFiles(names: ApiNames, parts: ApiParts): FileSpec[] {
  const owned: IfExists = parts.force ? 'overwrite' : 'error';
  const { layout } = names;
  const specs: FileSpec[] = [];
  if (parts.resource) {
    specs.push(
      { path: layout.groupVersionFile, template: 'api/apis/version/groupversion_info.ts.hbs', ifExists: 'skip' },
      { path: layout.typesFile, template: 'api/apis/version/kind_types.ts.hbs', ifExists: owned },
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
      { path: layout.sampleFile, template: 'api/config/samples/group_version_kind.yaml.hbs', ifExists: owned },
    );
    for (const role of RBAC_HELPER_ROLES) {
      // One set of roles per kind covers all its versions, so a new version reuses them.
      specs.push({
        path: layout.rbacRoleFiles[role],
        template: `api/config/rbac/kind_${role}_role.yaml.hbs`,
        ifExists: parts.force ? 'overwrite' : 'skip',
      });
    }
  }
  if (parts.controller) {
    specs.push(
      { path: layout.controllerFile, template: 'api/controllers/kind_controller.ts.hbs', ifExists: owned },
      {
        path: layout.controllerTestFile,
        template: 'api/controllers/kind_controller.test.ts.hbs',
        ifExists: owned,
      },
    );
  }
  return specs;
}

/** The lines main.ts gets for a kind's controller: the import, and its setup with the manager. */
export function reconcilerInserters(reconciler: MainImport): Inserter[] {
  return mainInserters(reconciler, [`new ${reconciler.local}(mgr.getClient()).setupWithManager(mgr);`]);
}

/** The code `create api` adds to files that already exist, at their markers. */
export function apiInserters(names: ApiNames, parts: ApiParts, reconciler: MainImport | undefined): Inserter[] {
  const inserters: Inserter[] = [];
  if (parts.resource) {
    inserters.push(
      {
        path: 'config/crd/kustomization.yaml',
        marker: ScaffoldMarkers.crdResources,
        fragments: [`- bases/${names.qualifiedGroup}_${names.plural}.yaml`],
      },
      {
        path: 'config/samples/kustomization.yaml',
        marker: ScaffoldMarkers.samples,
        fragments: [`- ${names.layout.sampleFile.slice('config/samples/'.length)}`],
      },
      {
        path: 'config/rbac/kustomization.yaml',
        marker: ScaffoldMarkers.rbacRoles,
        fragments: RBAC_HELPER_ROLES.map(
          (role) => `- ${names.layout.rbacRoleFiles[role].slice('config/rbac/'.length)}`,
        ),
      },
    );
  }
  if (parts.controller && reconciler) inserters.push(...reconcilerInserters(reconciler));
  return inserters;
}

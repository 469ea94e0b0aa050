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
  /** Lower camel case, for variable names (`memcached`, `podRoute`). */
  kindVariable: string;
  namespaced: boolean;
  projectName: string;
  /** The group as a word in prose: the group, or the domain when the group is empty. */
  groupLabel: string;
  layout: ApiLayout;
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
export function apiLayout(resource: Pick<ProjectResource, 'group' | 'version' | 'kind'>, multigroup: boolean): ApiLayout {
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

/** A relative ESM import specifier from one project file to another `.ts` file. */
export function relativeImport(fromFile: string, toTsFile: string): string {
  let specifier = posix.relative(posix.dirname(fromFile), toTsFile).replace(/\.ts$/, '.js');
  if (!specifier.startsWith('.')) specifier = `./${specifier}`;
  return specifier;
}

/** Builds the template data of one API. */
export function apiData(resource: ProjectResource, options: { multigroup: boolean; projectName: string; boilerplate: string }): ApiData {
  const layout = apiLayout(resource, options.multigroup);
  const kindLower = resource.kind.toLowerCase();
  return {
    group: resource.group ?? '',
    version: resource.version,
    kind: resource.kind,
    domain: resource.domain ?? '',
    qualifiedGroup: qualifiedGroup(resource),
    plural: resource.plural ?? pluralize(resource.kind),
    kindLower,
    kindVariable: resource.kind.charAt(0).toLowerCase() + resource.kind.slice(1),
    namespaced: resource.api ? resource.api.namespaced === true : true,
    projectName: options.projectName,
    groupLabel: resource.group || (resource.domain ?? ''),
    layout,
    rbacRolePrefix: layout.rbacRolePrefix,
    rbacRoleName: layout.rbacRolePrefix.replace(/_/g, '-'),
    typesImportFromController: relativeImport(layout.controllerFile, layout.typesFile),
    controllerImportFromMain: relativeImport('main.ts', layout.controllerFile),
    boilerplate: options.boilerplate,
  };
}

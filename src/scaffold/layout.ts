import { posix } from 'node:path';
import { pluralize } from './names.js';
import type { ProjectResource } from './project.js';

/** The helper roles `create api` writes for each kind (kubebuilder's `<kind>_{admin,editor,viewer}_role.yaml`). */
export const RBAC_HELPER_ROLES = ['admin', 'editor', 'viewer'] as const;
/** One of {@link RBAC_HELPER_ROLES}. */
export type RbacHelperRole = (typeof RBAC_HELPER_ROLES)[number];

/**
 * Where every file of one kind (at one version) lives in a project: its
 * types, controller, sample, RBAC helper roles, webhook and conversion
 * files. The one place that knows the layout: commands scaffold at these
 * paths, `edit --multigroup` moves files between two of these layouts, and
 * generators find the types here.
 */
export interface KindLayout {
  /** Directory of the types, e.g. `apis/v1` or `apis/cache/v1`; PROJECT `path`. */
  typesDir: string;
  typesFile: string;
  groupVersionFile: string;
  /** The conversion functions of this version when it is a spoke of a conversion webhook. */
  conversionFile: string;
  controllerDir: string;
  controllerFile: string;
  controllerTestFile: string;
  /** `config/rbac/<prefix>_{admin,editor,viewer}_role.yaml`. */
  rbacRolePrefix: string;
  /** The file of each helper role, `config/rbac/<prefix>_<role>_role.yaml`. */
  rbacRoleFiles: Record<RbacHelperRole, string>;
  sampleFile: string;
  /** `webhooks/<version>/` (kubebuilder's internal/webhook/<version>/), with the group level when multigroup. */
  webhookDir: string;
  webhookFile: string;
  webhookTestFile: string;
  /** kubebuilder's `config/crd/patches/webhook_in_<plural>.yaml` (`<group>_<plural>` when multigroup). */
  crdPatchFile: string;
}

/** The types file of `kind` in the types directory `dir`. */
export function typesFileIn(dir: string, kind: string): string {
  return `${dir}/${kind.toLowerCase()}_types.ts`;
}

/**
 * The file layout of a kind. Multigroup adds the group as a directory level
 * (kubebuilder's `api/<group>/<version>` and `internal/controller/<group>`);
 * an API without a group keeps the single-group place even then. A kind
 * another project owns keeps its types where PROJECT records them
 * (`--external-api-path`).
 */
export function kindLayout(
  resource: Pick<ProjectResource, 'group' | 'version' | 'kind' | 'plural' | 'external' | 'path'>,
  multigroup: boolean,
): KindLayout {
  const kindLower = resource.kind.toLowerCase();
  const grouped = multigroup && Boolean(resource.group);
  const groupDir = grouped ? `${resource.group}/` : '';
  const typesDir =
    resource.external && resource.path !== undefined ? resource.path : `apis/${groupDir}${resource.version}`;
  const controllerDir = grouped ? `controllers/${resource.group}` : 'controllers';
  const rbacRolePrefix = grouped ? `${resource.group}_${kindLower}` : kindLower;
  const samplePrefix = resource.group ? `${resource.group}_` : '';
  const webhookDir = `webhooks/${groupDir}${resource.version}`;
  return {
    typesDir,
    typesFile: typesFileIn(typesDir, resource.kind),
    groupVersionFile: `${typesDir}/groupversion_info.ts`,
    conversionFile: `${typesDir}/${kindLower}_conversion.ts`,
    controllerDir,
    controllerFile: `${controllerDir}/${kindLower}_controller.ts`,
    controllerTestFile: `${controllerDir}/${kindLower}_controller.test.ts`,
    rbacRolePrefix,
    rbacRoleFiles: Object.fromEntries(
      RBAC_HELPER_ROLES.map((role) => [role, `config/rbac/${rbacRolePrefix}_${role}_role.yaml`]),
    ) as Record<RbacHelperRole, string>,
    sampleFile: `config/samples/${samplePrefix}${resource.version}_${kindLower}.yaml`,
    webhookDir,
    webhookFile: `${webhookDir}/${kindLower}_webhook.ts`,
    webhookTestFile: `${webhookDir}/${kindLower}_webhook.test.ts`,
    crdPatchFile: `config/crd/patches/webhook_in_${grouped ? `${resource.group}_` : ''}${resource.plural ?? pluralize(resource.kind)}.yaml`,
  };
}

/** The types directory of a kind PROJECT records: its `path`, else where {@link kindLayout} puts it. */
export function recordedTypesDir(
  resource: Pick<ProjectResource, 'group' | 'version' | 'kind' | 'external' | 'path'>,
  multigroup: boolean,
): string {
  return resource.path ?? kindLayout(resource, multigroup).typesDir;
}

/** A relative ESM import specifier from one project file to another `.ts` file. */
export function relativeImport(fromFile: string, toTsFile: string): string {
  let specifier = posix.relative(posix.dirname(fromFile), toTsFile).replace(/\.ts$/, '.js');
  if (!specifier.startsWith('.')) specifier = `./${specifier}`;
  return specifier;
}

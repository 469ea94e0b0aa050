import type { KubernetesObject } from './object.js';
import type { V1ClusterRole } from '@kubernetes/client-node/dist/gen/models/V1ClusterRole.js';
import type { V1ClusterRoleBinding } from '@kubernetes/client-node/dist/gen/models/V1ClusterRoleBinding.js';
import type { V1ConfigMap } from '@kubernetes/client-node/dist/gen/models/V1ConfigMap.js';
import type { V1CronJob } from '@kubernetes/client-node/dist/gen/models/V1CronJob.js';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node/dist/gen/models/V1CustomResourceDefinition.js';
import type { V1DaemonSet } from '@kubernetes/client-node/dist/gen/models/V1DaemonSet.js';
import type { V1Deployment } from '@kubernetes/client-node/dist/gen/models/V1Deployment.js';
import type { V1Ingress } from '@kubernetes/client-node/dist/gen/models/V1Ingress.js';
import type { V1Job } from '@kubernetes/client-node/dist/gen/models/V1Job.js';
import type { V1Lease } from '@kubernetes/client-node/dist/gen/models/V1Lease.js';
import type { V1Node } from '@kubernetes/client-node/dist/gen/models/V1Node.js';
import type { V1Namespace } from '@kubernetes/client-node/dist/gen/models/V1Namespace.js';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolumeClaim.js';
import type { V1Pod } from '@kubernetes/client-node/dist/gen/models/V1Pod.js';
import type { V1Role } from '@kubernetes/client-node/dist/gen/models/V1Role.js';
import type { V1RoleBinding } from '@kubernetes/client-node/dist/gen/models/V1RoleBinding.js';
import type { V1Secret } from '@kubernetes/client-node/dist/gen/models/V1Secret.js';
import type { V1Service } from '@kubernetes/client-node/dist/gen/models/V1Service.js';
import type { V1ServiceAccount } from '@kubernetes/client-node/dist/gen/models/V1ServiceAccount.js';
import type { V1StatefulSet } from '@kubernetes/client-node/dist/gen/models/V1StatefulSet.js';
import type { CoreV1Event } from '@kubernetes/client-node/dist/gen/models/CoreV1Event.js';

/**
 * A Kind is the runtime handle for a Kubernetes type: TypeScript erases
 * interfaces, so the builder, cache and client need this value to know the
 * group, version, resource path and scope of `T`.
 *
 * Generated API packages declare one next to the interface of the same name:
 * `export const Memcached = defineKind<Memcached>({...})`.
 */
export interface Kind<T extends KubernetesObject = KubernetesObject> {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural resource name, as in the REST path. */
  readonly plural: string;
  readonly namespaced: boolean;
  /** `group/version`, or just `version` for the core group. */
  readonly apiVersion: string;
  /** Phantom field that carries `T`; never set at run time. */
  readonly __object?: T;
}

/** The object type a Kind stands for. */
export type ObjectOf<K> = K extends Kind<infer T> ? T : never;

/** What {@link defineKind} needs to know about a type: its group, version and kind, and where it is served. */
export interface KindSpec {
  /** The API group; `''` for the core group. */
  group: string;
  /** The API version within the group, e.g. `v1`. */
  version: string;
  /** The kind, e.g. `Memcached`. */
  kind: string;
  /** The resource name in URLs: the CRD's `spec.names.plural`. */
  plural: string;
  /** Whether objects live in a namespace: the CRD's `spec.scope` is `Namespaced`. */
  namespaced: boolean;
}

// Every declared kind, keyed by `apiVersion/Kind`, so the client can map an
// object to its REST path without a discovery round trip.
const declaredKinds = new Map<string, Kind>();

/**
 * Declares the runtime handle for a Kubernetes type and registers it, so the
 * client can resolve objects of this apiVersion and kind without discovery.
 * Declaring the same apiVersion and kind again replaces the earlier entry.
 */
export function defineKind<T extends KubernetesObject>(spec: KindSpec): Kind<T> {
  const apiVersion = spec.group === '' ? spec.version : `${spec.group}/${spec.version}`;
  const kind: Kind<T> = Object.freeze({ ...spec, apiVersion });
  declaredKinds.set(`${apiVersion}/${spec.kind}`, kind);
  return kind;
}

/** The kind declared with `defineKind` for this apiVersion and kind, if any. */
export function declaredKind(apiVersion: string, kind: string): Kind | undefined {
  return declaredKinds.get(`${apiVersion}/${kind}`);
}

/** `group/Kind`, the identity used for owner references (informers are keyed by version too). */
export function groupKindOf(kind: Pick<Kind, 'group' | 'kind'>): string {
  return `${kind.group}/${kind.kind}`;
}

/** Splits an object's apiVersion into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * The REST path of a collection or one object. `namespace` is ignored for
 * cluster-scoped kinds; leaving it out of a namespaced kind lists across all
 * namespaces.
 */
export function resourcePath(kind: Kind, namespace?: string, name?: string, subresource?: string): string {
  let path = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  if (kind.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${kind.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) path += `/${subresource}`;
  return path;
}

/** A reconcile request: which object to look at. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

/** `namespace/name`, or `name` for cluster-scoped objects: the work-queue key. */
export function keyOf(obj: { metadata?: { namespace?: string; name?: string } } | ObjectKey): string {
  const meta = 'metadata' in obj && obj.metadata ? obj.metadata : (obj as ObjectKey);
  const name = meta.name ?? '';
  return meta.namespace ? `${meta.namespace}/${name}` : name;
}

/** The inverse of {@link keyOf}: `namespace/name` or `name` back to an {@link ObjectKey}. */
export function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

// Built-in kinds an operator commonly owns or watches. Any other kind is one
// defineKind() call away.
/** The built-in Namespace kind (core/v1). */
export const Namespace = defineKind<V1Namespace>({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
});
/** The built-in Node kind (core/v1). */
export const Node = defineKind<V1Node>({ group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false });
/** The built-in Pod kind (core/v1). */
export const Pod = defineKind<V1Pod>({ group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true });
/** The built-in Service kind (core/v1). */
export const Service = defineKind<V1Service>({
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  namespaced: true,
});
/** The built-in ConfigMap kind (core/v1). */
export const ConfigMap = defineKind<V1ConfigMap>({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
});
/** The built-in Secret kind (core/v1). */
export const Secret = defineKind<V1Secret>({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
});
/** The built-in ServiceAccount kind (core/v1). */
export const ServiceAccount = defineKind<V1ServiceAccount>({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
});
/** The built-in PersistentVolumeClaim kind (core/v1). */
export const PersistentVolumeClaim = defineKind<V1PersistentVolumeClaim>({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  namespaced: true,
});
/** The built-in Event kind (core/v1). */
export const Event = defineKind<CoreV1Event>({
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
});
/** The built-in Deployment kind (apps/v1). */
export const Deployment = defineKind<V1Deployment>({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
});
/** The built-in StatefulSet kind (apps/v1). */
export const StatefulSet = defineKind<V1StatefulSet>({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  namespaced: true,
});
/** The built-in DaemonSet kind (apps/v1). */
export const DaemonSet = defineKind<V1DaemonSet>({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  plural: 'daemonsets',
  namespaced: true,
});
/** The built-in Job kind (batch/v1). */
export const Job = defineKind<V1Job>({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true });
/** The built-in CronJob kind (batch/v1). */
export const CronJob = defineKind<V1CronJob>({
  group: 'batch',
  version: 'v1',
  kind: 'CronJob',
  plural: 'cronjobs',
  namespaced: true,
});
/** The built-in Ingress kind (networking.k8s.io/v1). */
export const Ingress = defineKind<V1Ingress>({
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'Ingress',
  plural: 'ingresses',
  namespaced: true,
});
/** The built-in Lease kind (coordination.k8s.io/v1). */
export const Lease = defineKind<V1Lease>({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
});
/** The built-in Role kind (rbac.authorization.k8s.io/v1). */
export const Role = defineKind<V1Role>({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'Role',
  plural: 'roles',
  namespaced: true,
});
/** The built-in RoleBinding kind (rbac.authorization.k8s.io/v1). */
export const RoleBinding = defineKind<V1RoleBinding>({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'RoleBinding',
  plural: 'rolebindings',
  namespaced: true,
});
/** The built-in ClusterRole kind (rbac.authorization.k8s.io/v1). */
export const ClusterRole = defineKind<V1ClusterRole>({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRole',
  plural: 'clusterroles',
  namespaced: false,
});
/** The built-in ClusterRoleBinding kind (rbac.authorization.k8s.io/v1). */
export const ClusterRoleBinding = defineKind<V1ClusterRoleBinding>({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
  namespaced: false,
});
/** The built-in CustomResourceDefinition kind (apiextensions.k8s.io/v1). */
export const CustomResourceDefinition = defineKind<V1CustomResourceDefinition>({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

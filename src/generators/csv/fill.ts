import { UsageError } from '../../errors.js';
import type { CollectedManifests, ManifestObject } from '../bundle/input-objects.js';
import { sortKeysDeep } from '../../yaml-output.js';
import type { CsvObject } from './base.js';
import type { OwnedCrdDescription } from './descriptors.js';
import { byteOrder } from '../../byte-order.js';

/** What {@link fillCsv} needs besides the base and the manifests. */
export interface FillOptions {
  packageName: string;
  /** `--version`; when unset the base's name and version are kept. */
  version?: string;
  /** `--extra-service-accounts`: more ServiceAccounts whose bindings fold into the CSV. */
  extraServiceAccounts?: readonly string[];
  /** `operators.operatorframework.io/builder`, e.g. ts-operator-sdk-v0.1.0. */
  builder: string;
  /** `operators.operatorframework.io/project_layout`. */
  projectLayout: string;
}

/** The filled CSV and the objects that still go into the bundle as their own files. */
export interface FilledCsv {
  csv: CsvObject;
  /** Services, RBAC not folded into the CSV, unused ServiceAccounts, and the other objects (kind not yet filtered). */
  leftovers: ManifestObject[];
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RELATED_IMAGE_PREFIX = 'RELATED_IMAGE_';

interface PolicyRule {
  [key: string]: unknown;
}

interface Subject {
  kind?: string;
  name?: string;
}

interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

interface Container {
  name?: string;
  image?: string;
  env?: Array<{ name: string; value?: string; valueFrom?: Record<string, unknown> }>;
  [key: string]: unknown;
}

interface PodSpec {
  serviceAccountName?: string;
  containers?: Container[];
  initContainers?: Container[];
  [key: string]: unknown;
}

/**
 * Fills a base CSV from the collected manifests the way operator-sdk's
 * `generate bundle` does (deployments, RBAC folded through ServiceAccount
 * bindings, owned CRDs, alm-examples, webhook definitions, related images),
 * except that relatedImages in the base are merged, not dropped. The base
 * is not modified. `createdAt` is left to the bundle writer.
 */
export function fillCsv(base: CsvObject, manifests: CollectedManifests, options: FillOptions): FilledCsv {
  const csv = structuredClone(base);
  const spec = csv.spec;
  csv.metadata.annotations = { ...(csv.metadata.annotations ?? {}) };
  if (options.version) {
    csv.metadata.name = `${options.packageName}.v${options.version}`;
    spec['version'] = options.version;
  }
  const install = (spec['install'] ?? {}) as { strategy?: string; spec?: Record<string, unknown> };
  if (!install.strategy) install.strategy = 'deployment';
  const installSpec: Record<string, unknown> = { ...(install.spec ?? {}) };
  install.spec = installSpec;
  spec['install'] = install;

  const deployments = manifests.deployments.map((d) => structuredClone(d));
  for (const deployment of deployments) rewriteWatchNamespace(podSpecOf(deployment));
  installSpec['deployments'] = deployments.map((d) => {
    const entry: Record<string, unknown> = { name: d.metadata.name, spec: d['spec'] ?? {} };
    if (d.metadata.labels && Object.keys(d.metadata.labels).length > 0) entry['label'] = d.metadata.labels;
    return entry;
  });

  const rbac = foldRbac(manifests, deployments, options.extraServiceAccounts ?? []);
  setOrDelete(installSpec, 'permissions', rbac.permissions);
  setOrDelete(installSpec, 'clusterPermissions', rbac.clusterPermissions);

  const crds = (spec['customresourcedefinitions'] ?? {}) as { owned?: OwnedCrdDescription[]; [key: string]: unknown };
  const owned = ownedFromCrds(manifests.crds, crds.owned ?? []);
  crds.owned = owned;
  if (owned.length === 0) delete crds.owned;
  spec['customresourcedefinitions'] = crds;

  if (manifests.customResources.length > 0) {
    csv.metadata.annotations['alm-examples'] = JSON.stringify(
      manifests.customResources.map((cr) => sortKeysDeep(cr)),
      null,
      2,
    );
  }

  const webhookDefinitions = webhookDefinitionsOf(manifests, deployments);
  setOrDelete(spec, 'webhookdefinitions', webhookDefinitions);

  const related = mergeRelatedImages(
    (spec['relatedImages'] as RelatedImage[] | undefined) ?? [],
    relatedImagesFromEnv(deployments),
  );
  setOrDelete(spec, 'relatedImages', related);

  csv.metadata.annotations['operators.operatorframework.io/builder'] = options.builder;
  csv.metadata.annotations['operators.operatorframework.io/project_layout'] = options.projectLayout;

  const leftovers = [
    ...manifests.services,
    ...rbac.leftovers,
    ...manifests.serviceAccounts.filter((sa) => !rbac.usedServiceAccounts.has(sa.metadata.name)),
    ...manifests.others,
  ];
  return { csv, leftovers };
}

function setOrDelete(target: Record<string, unknown>, key: string, list: unknown[]): void {
  if (list.length > 0) target[key] = list;
  else delete target[key];
}

function podSpecOf(deployment: ManifestObject): PodSpec {
  const template = ((deployment['spec'] as Record<string, unknown> | undefined)?.['template'] ?? {}) as {
    spec?: PodSpec;
  };
  return template.spec ?? {};
}

/** OLM tells the operator which namespaces to watch through this annotation. */
function rewriteWatchNamespace(pod: PodSpec): void {
  for (const container of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
    for (const env of container.env ?? []) {
      if (env.name !== 'WATCH_NAMESPACE') continue;
      delete env.value;
      env.valueFrom = { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } };
    }
  }
}

interface FoldedRbac {
  permissions: Array<{ serviceAccountName: string; rules: PolicyRule[] }>;
  clusterPermissions: Array<{ serviceAccountName: string; rules: PolicyRule[] }>;
  leftovers: ManifestObject[];
  usedServiceAccounts: Set<string>;
}

/**
 * Folds Roles and ClusterRoles bound to the operator's ServiceAccounts into
 * permissions (RoleBinding) and clusterPermissions (ClusterRoleBinding).
 * Bindings whose every subject was folded are consumed with the roles they
 * reference; everything else stays a separate bundle file.
 */
export function foldRbac(
  manifests: CollectedManifests,
  deployments: readonly ManifestObject[],
  extraServiceAccounts: readonly string[],
): FoldedRbac {
  const accounts = new Set<string>([
    ...deployments.map((d) => podSpecOf(d).serviceAccountName || 'default'),
    ...extraServiceAccounts,
  ]);
  const roles = new Map(manifests.roles.map((r) => [r.metadata.name, r]));
  const clusterRoles = new Map(manifests.clusterRoles.map((r) => [r.metadata.name, r]));
  const permissions = new Map<string, PolicyRule[]>();
  const clusterPermissions = new Map<string, PolicyRule[]>();
  const consumedRoles = new Set<ManifestObject>();
  const leftovers: ManifestObject[] = [];
  const fold = (binding: ManifestObject, into: Map<string, PolicyRule[]>, allowRole: boolean): void => {
    const ref = (binding['roleRef'] ?? {}) as RoleRef;
    if (ref.apiGroup !== undefined && ref.apiGroup !== '' && ref.apiGroup !== RBAC_GROUP) {
      throw new UsageError(
        `${binding.kind} ${binding.metadata.name} has roleRef.apiGroup "${ref.apiGroup}"`,
        `set it to ${RBAC_GROUP}`,
      );
    }
    const role =
      ref.kind === 'ClusterRole'
        ? clusterRoles.get(ref.name ?? '')
        : allowRole && ref.kind === 'Role'
          ? roles.get(ref.name ?? '')
          : undefined;
    const subjects = (binding['subjects'] as Subject[] | undefined) ?? [];
    const matched = subjects.filter((s) => s.kind === 'ServiceAccount' && accounts.has(s.name ?? ''));
    if (!role || matched.length === 0) {
      leftovers.push(binding);
      return;
    }
    for (const subject of matched) {
      const rules = (role['rules'] as PolicyRule[] | undefined) ?? [];
      into.set(subject.name!, [...(into.get(subject.name!) ?? []), ...rules]);
    }
    if (matched.length === subjects.length) consumedRoles.add(role);
    else leftovers.push(binding);
  };
  for (const binding of manifests.roleBindings) fold(binding, permissions, true);
  for (const binding of manifests.clusterRoleBindings) fold(binding, clusterPermissions, false);
  const unconsumed = [...manifests.roles, ...manifests.clusterRoles].filter((r) => !consumedRoles.has(r));
  const asList = (map: Map<string, PolicyRule[]>): Array<{ serviceAccountName: string; rules: PolicyRule[] }> =>
    [...map.entries()]
      .filter(([, rules]) => rules.length > 0)
      .sort(([a], [b]) => byteOrder(a, b))
      .map(([serviceAccountName, rules]) => ({ serviceAccountName, rules }));
  return {
    permissions: asList(permissions),
    clusterPermissions: asList(clusterPermissions),
    leftovers: [...unconsumed, ...leftovers],
    usedServiceAccounts: accounts,
  };
}

/**
 * One owned entry per CRD name, served version and kind. Base entries with
 * the same key keep their UI metadata; base entries without a CRD are dropped.
 */
function ownedFromCrds(crds: readonly ManifestObject[], base: readonly OwnedCrdDescription[]): OwnedCrdDescription[] {
  const owned: OwnedCrdDescription[] = [];
  for (const crd of crds) {
    const spec = (crd['spec'] ?? {}) as {
      names?: { kind?: string };
      versions?: Array<{ name: string; served?: boolean }>;
      version?: string;
    };
    const kind = spec.names?.kind ?? '';
    const versions =
      spec.versions?.filter((v) => v.served !== false).map((v) => v.name) ?? (spec.version ? [spec.version] : []);
    for (const version of versions) {
      const existing = base.find((b) => b.name === crd.metadata.name && b.version === version && b.kind === kind);
      owned.push(existing ? { ...existing } : ({ kind, name: crd.metadata.name, version } as OwnedCrdDescription));
    }
  }
  return owned.sort(
    (a, b) => byteOrder(a.name, b.name) || byteOrder(a.version, b.version) || byteOrder(a.kind, b.kind),
  );
}

/** A `spec.relatedImages[]` entry. */
export interface RelatedImage {
  name: string;
  image: string;
}

/**
 * `RELATED_IMAGE_<NAME>` env vars of every container become related images
 * named `<name>` (lowercase, `_` → `-`); a name used for two different
 * images is qualified by deployment and container.
 */
export function relatedImagesFromEnv(deployments: readonly ManifestObject[]): RelatedImage[] {
  const found: Array<RelatedImage & { qualified: string }> = [];
  for (const deployment of deployments) {
    const pod = podSpecOf(deployment);
    for (const container of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
      for (const env of container.env ?? []) {
        if (!env.name.startsWith(RELATED_IMAGE_PREFIX)) continue;
        if (env.valueFrom !== undefined || typeof env.value !== 'string' || env.value === '') {
          throw new UsageError(
            `env ${env.name} of container ${container.name} in Deployment ${deployment.metadata.name} has no literal value`,
            'set `value:` to the image reference (OLM needs the image at bundle time, valueFrom is not supported)',
          );
        }
        const name = env.name.slice(RELATED_IMAGE_PREFIX.length).toLowerCase().replace(/_/g, '-');
        found.push({ name, image: env.value, qualified: `${deployment.metadata.name}-${container.name}-${name}` });
      }
    }
  }
  const images: RelatedImage[] = [];
  for (const entry of found) {
    const clash = found.some((other) => other.name === entry.name && other.image !== entry.image);
    const name = clash ? entry.qualified : entry.name;
    if (!images.some((i) => i.name === name && i.image === entry.image)) images.push({ name, image: entry.image });
  }
  return images;
}

/**
 * The base's related images (added by hand for images the operator pulls
 * without an env var) plus the generated ones; a generated entry replaces a
 * base entry of the same name. Sorted by name for stable output.
 */
export function mergeRelatedImages(base: readonly RelatedImage[], generated: readonly RelatedImage[]): RelatedImage[] {
  const byName = new Map<string, RelatedImage>();
  for (const image of base) byName.set(image.name, { name: image.name, image: image.image });
  for (const image of generated) byName.set(image.name, image);
  return [...byName.values()].sort((a, b) => byteOrder(a.name, b.name) || byteOrder(a.image, b.image));
}

interface ServicePort {
  port?: number;
  targetPort?: number | string;
  name?: string;
}

/**
 * Admission webhooks from the webhook configurations and conversion
 * webhooks from CRDs, each tied to the Deployment serving it through the
 * Service's selector, sorted by generateName.
 */
export function webhookDefinitionsOf(
  manifests: CollectedManifests,
  deployments: readonly ManifestObject[],
): Array<Record<string, unknown>> {
  const serviceNamed = (name: string | undefined): ManifestObject | undefined =>
    manifests.services.find((s) => s.metadata.name === name);
  const deploymentFor = (service: ManifestObject | undefined, serviceName: string): string => {
    const selector = (service?.['spec'] as { selector?: Record<string, string> } | undefined)?.selector ?? {};
    const entries = Object.entries(selector);
    if (entries.length > 0) {
      const match = deployments.find((d) => {
        const labels =
          (d['spec'] as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)?.template
            ?.metadata?.labels ?? {};
        return entries.every(([k, v]) => labels[k] === v);
      });
      if (match) return match.metadata.name;
    }
    return serviceName.replace(/-service$/, '');
  };
  const portsOf = (
    service: ManifestObject | undefined,
    port: number,
  ): { containerPort: number; targetPort?: number | string } => {
    const ports = (service?.['spec'] as { ports?: ServicePort[] } | undefined)?.ports ?? [];
    const match = ports.find((p) => p.port === port);
    return match ? { containerPort: port, targetPort: match.targetPort ?? port } : { containerPort: port };
  };
  const definitions: Array<Record<string, unknown>> = [];
  for (const { type, webhook } of manifests.webhooks) {
    const service =
      (webhook['clientConfig'] as { service?: { name?: string; path?: string; port?: number } } | undefined)?.service ??
      {};
    const svc = serviceNamed(service.name);
    const definition: Record<string, unknown> = {
      type,
      generateName: webhook['name'],
      rules: webhook['rules'],
      failurePolicy: webhook['failurePolicy'],
      matchPolicy: webhook['matchPolicy'],
      objectSelector: webhook['objectSelector'],
      sideEffects: webhook['sideEffects'] ?? 'None',
      timeoutSeconds: webhook['timeoutSeconds'],
      admissionReviewVersions: (webhook['admissionReviewVersions'] as string[] | undefined)?.length
        ? webhook['admissionReviewVersions']
        : ['v1beta1'],
      webhookPath: service.path,
      deploymentName: deploymentFor(svc, service.name ?? ''),
      ...portsOf(svc, service.port ?? 443),
    };
    if (type === 'MutatingAdmissionWebhook') definition['reinvocationPolicy'] = webhook['reinvocationPolicy'];
    definitions.push(withoutUndefined(definition));
  }
  const conversions = new Map<
    string,
    { crds: string[]; service: { name?: string; path?: string; port?: number }; versions: string[] }
  >();
  for (const crd of manifests.crds) {
    const conversion =
      (
        crd['spec'] as
          | {
              conversion?: {
                strategy?: string;
                webhook?: {
                  clientConfig?: { service?: { name?: string; path?: string; port?: number } };
                  conversionReviewVersions?: string[];
                };
              };
            }
          | undefined
      )?.conversion ?? {};
    const service = conversion.webhook?.clientConfig?.service;
    if (conversion.strategy !== 'Webhook' || !service) continue;
    const key = `${service.name}:${service.port ?? 443}:${service.path ?? ''}`;
    const group = conversions.get(key) ?? {
      crds: [],
      service,
      versions: conversion.webhook?.conversionReviewVersions ?? [],
    };
    group.crds.push(crd.metadata.name);
    conversions.set(key, group);
  }
  for (const group of conversions.values()) {
    const crdNames = [...group.crds].sort();
    const svc = serviceNamed(group.service.name);
    definitions.push(
      withoutUndefined({
        type: 'ConversionWebhook',
        conversionCRDs: crdNames,
        generateName: `c${crdNames.map((n) => n.split('.')[0]).join('-')}.kb.io`,
        sideEffects: 'None',
        admissionReviewVersions: group.versions.length > 0 ? group.versions : ['v1beta1'],
        webhookPath: group.service.path,
        deploymentName: deploymentFor(svc, group.service.name ?? ''),
        ...portsOf(svc, group.service.port ?? 443),
      }),
    );
  }
  return definitions.sort((a, b) => byteOrder(String(a['generateName']), String(b['generateName'])));
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

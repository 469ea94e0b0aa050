import { UsageError } from '../../errors.js';
import { sortKeysDeep } from '../../yaml-output.js';
import { parseYamlDocuments } from '../../yaml-input.js';
import type { CollectedManifests, ManifestObject } from './input-objects.js';
import { checkManifestShapes } from './shapes.js';
import { isDns1123Label, isDns1123Subdomain, objectNameProblem } from '../../validation/names.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** kustomize's own files (kustomization.yaml, components): build inputs, never objects to ship. */
const KUSTOMIZE_GROUP = 'kustomize.config.k8s.io';

/**
 * Parses multi-document YAML into objects. `source` names the input in
 * errors (a file path or "stdin"). `List` objects are flattened; kustomize
 * Kustomization and Component documents are skipped, as operator-sdk does.
 */
export function parseManifests(text: string, source: string): ManifestObject[] {
  const objects: ManifestObject[] = [];
  const documents = parseYamlDocuments(
    text,
    source,
    (index, reason) =>
      new UsageError(
        `${source} is not valid YAML (document ${index + 1}: ${reason})`,
        'fix the YAML, or check the command that produced it',
      ),
  );
  documents.forEach((value, index) => {
    if (value === null || value === undefined) return;
    const add = (item: unknown): void => {
      const object = item as Partial<ManifestObject> | null;
      if (
        !object ||
        typeof object !== 'object' ||
        Array.isArray(object) ||
        typeof object.kind !== 'string' ||
        typeof object.apiVersion !== 'string'
      ) {
        throw new UsageError(
          `document ${index + 1} of ${source} is not a Kubernetes object (it needs apiVersion and kind)`,
          'pass only Kubernetes manifests, e.g. the output of `kubectl kustomize config/manifests`',
        );
      }
      if (object.apiVersion.startsWith(`${KUSTOMIZE_GROUP}/`)) return;
      if (object.kind === 'List' || (object.kind.endsWith('List') && object['items'] !== undefined)) {
        if (!Array.isArray(object['items'])) {
          throw new UsageError(
            `a ${object.kind} in document ${index + 1} of ${source} has no items list`,
            'give it `items:` with the objects, or pass the objects as separate documents',
          );
        }
        for (const child of object['items'] as unknown[]) add(child);
        return;
      }
      if (
        !object.metadata ||
        typeof object.metadata !== 'object' ||
        typeof object.metadata.name !== 'string' ||
        object.metadata.name === ''
      ) {
        throw new UsageError(`a ${object.kind} in ${source} has no metadata.name`, 'give every object a name');
      }
      checkNamesForFiles(object as ManifestObject, source);
      objects.push(object as ManifestObject);
    };
    add(value);
  });
  return objects;
}

/**
 * The apiVersion, kind and name of an object become the name of its file in
 * the bundle (`<name>_<group>_<version>_<kind>.yaml`, `<group>_<plural>.yaml`
 * for a CRD), so each must be what the API server accepts, which also keeps
 * it a plain file name: a name such as `../../x` is refused here, before any
 * path is made of it.
 */
function checkNamesForFiles(object: ManifestObject, source: string): void {
  const what = `${object.kind} ${JSON.stringify(object.metadata.name)} in ${source}`;
  const fix = 'fix it in the input manifests (the API server would refuse it too)';
  const parts = object.apiVersion.split('/');
  const [group, version] = parts.length === 2 ? parts : ['', parts[0]!];
  if (parts.length > 2 || (group !== '' && !isDns1123Subdomain(group!)) || !isDns1123Label(version!)) {
    throw new UsageError(
      `the apiVersion ${JSON.stringify(object.apiVersion)} of ${what} is not <group>/<version> or <version>`,
      fix,
    );
  }
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(object.kind))
    throw new UsageError(`the kind of ${what} is not a Kubernetes kind (letters and digits)`, fix);
  const nameProblem = objectNameProblem(group!, object.kind, object.metadata.name);
  if (nameProblem !== undefined) throw new UsageError(`the name of ${what} is invalid: it ${nameProblem}`, fix);
  if (group === 'apiextensions.k8s.io' && object.kind === 'CustomResourceDefinition') {
    const spec = (object['spec'] ?? {}) as { group?: unknown; names?: { plural?: unknown } };
    // A missing or mistyped field is the shape check's to report (checkManifestShapes); a present one must be a name.
    const crdGroup = typeof spec.group === 'string' && spec.group !== '' ? spec.group : undefined;
    const plural = typeof spec.names?.plural === 'string' && spec.names.plural !== '' ? spec.names.plural : undefined;
    if (crdGroup !== undefined && !isDns1123Subdomain(crdGroup))
      throw new UsageError(`spec.group ${JSON.stringify(crdGroup)} of ${what} is not a DNS-1123 subdomain`, fix);
    if (plural !== undefined && !isDns1123Label(plural))
      throw new UsageError(`spec.names.plural ${JSON.stringify(plural)} of ${what} is not a DNS-1123 label`, fix);
    if (crdGroup !== undefined && plural !== undefined && object.metadata.name !== `${plural}.${crdGroup}`)
      throw new UsageError(`the name of ${what} must be ${plural}.${crdGroup} (<plural>.<group>)`, fix);
  }
}

/** The API group of an object (`""` for the core group). */
export function groupOf(object: Pick<ManifestObject, 'apiVersion'>): string {
  const slash = object.apiVersion.indexOf('/');
  return slash < 0 ? '' : object.apiVersion.slice(0, slash);
}

/** The API version of an object without its group. */
export function versionOf(object: Pick<ManifestObject, 'apiVersion'>): string {
  return object.apiVersion.slice(object.apiVersion.indexOf('/') + 1);
}

/**
 * Sorts objects by kind, removes exact duplicates (kustomize bases listed
 * twice), and finds the custom resources among the rest.
 */
export function collectManifests(objects: readonly ManifestObject[]): CollectedManifests {
  const collected: CollectedManifests = {
    csvs: [],
    roles: [],
    clusterRoles: [],
    roleBindings: [],
    clusterRoleBindings: [],
    serviceAccounts: [],
    services: [],
    deployments: [],
    crds: [],
    webhooks: [],
    customResources: [],
    others: [],
  };
  const seen = new Set<string>();
  const candidates: ManifestObject[] = [];
  for (const object of objects) {
    // The object itself, in one canonical text: no digest needed to spot a repeat.
    const canonical = JSON.stringify(sortKeysDeep(object));
    if (seen.has(canonical)) continue;
    seen.add(canonical);
    const group = groupOf(object);
    const gk = `${group}/${object.kind}`;
    switch (gk) {
      case 'operators.coreos.com/ClusterServiceVersion':
        collected.csvs.push(object);
        break;
      case `${RBAC_GROUP}/Role`:
        collected.roles.push(object);
        break;
      case `${RBAC_GROUP}/ClusterRole`:
        collected.clusterRoles.push(object);
        break;
      case `${RBAC_GROUP}/RoleBinding`:
        collected.roleBindings.push(object);
        break;
      case `${RBAC_GROUP}/ClusterRoleBinding`:
        collected.clusterRoleBindings.push(object);
        break;
      case '/ServiceAccount':
        collected.serviceAccounts.push(object);
        break;
      case '/Service':
        collected.services.push(object);
        break;
      case 'apps/Deployment':
        collected.deployments.push(object);
        break;
      case 'apiextensions.k8s.io/CustomResourceDefinition':
        collected.crds.push(object);
        break;
      case 'admissionregistration.k8s.io/ValidatingWebhookConfiguration':
      case 'admissionregistration.k8s.io/MutatingWebhookConfiguration': {
        const type =
          object.kind === 'ValidatingWebhookConfiguration' ? 'ValidatingAdmissionWebhook' : 'MutatingAdmissionWebhook';
        const webhooks = object['webhooks'] ?? [];
        if (!Array.isArray(webhooks))
          throw new UsageError(
            `webhooks of ${object.kind} ${object.metadata.name} is not a list`,
            'fix the webhook configuration in the input manifests',
          );
        for (const webhook of webhooks as Record<string, unknown>[]) collected.webhooks.push({ type, webhook });
        break;
      }
      case 'scorecard.operatorframework.io/Configuration':
        if (collected.scorecardConfig) {
          throw new UsageError(
            'the input has more than one scorecard Configuration',
            'keep one (config/scorecard builds exactly one)',
          );
        }
        collected.scorecardConfig = object;
        break;
      default:
        candidates.push(object);
    }
  }
  // Before anything below (or the CSV filler) reads a field as a list or map.
  checkManifestShapes(collected);
  const crdKinds = new Set<string>();
  for (const crd of collected.crds) {
    const spec = (crd['spec'] ?? {}) as {
      group?: string;
      names?: { kind?: string };
      versions?: Array<{ name: string; served?: boolean }>;
      version?: string;
    };
    const versions =
      spec.versions?.filter((v) => v.served !== false).map((v) => v.name) ?? (spec.version ? [spec.version] : []);
    for (const version of versions) crdKinds.add(`${spec.group}/${version}/${spec.names?.kind}`);
  }
  for (const object of candidates) {
    if (crdKinds.has(`${object.apiVersion}/${object.kind}`)) collected.customResources.push(object);
    else collected.others.push(object);
  }
  return collected;
}

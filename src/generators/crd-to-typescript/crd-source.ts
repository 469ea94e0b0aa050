import { UsageError } from '../../errors.js';
import { parseYamlDocuments, readManifestFile } from '../../yaml-input.js';
import { isDns1123Label, isDns1123Subdomain } from '../../validation/names.js';

/** The subset of a CRD's structural OpenAPI v3 schema that shapes a TypeScript type. */
export interface JsonSchema {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  nullable?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** One version of a CustomResourceDefinition, as far as type generation needs it. */
export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  schema: JsonSchema;
}

/** The parts of a CRD (apiextensions.k8s.io/v1) that its TypeScript types are made from. */
export interface CrdModel {
  /** `metadata.name`: `<plural>.<group>`. */
  name: string;
  group: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  versions: CrdVersion[];
  /** The CRD's spec as read, for a copy envtest can install. */
  spec: Record<string, unknown>;
}

/**
 * Reads the CRD that `kind` names (or the only one) from a YAML file, which
 * may hold several documents (an operator's install bundle). `display` is
 * the path as messages print it.
 */
export function readCrdFile(path: string, display: string, kind?: string): CrdModel {
  const text = readManifestFile(path, display);
  const documents = parseYamlDocuments(
    text,
    display,
    (index, reason) =>
      new UsageError(
        `${display} document ${index + 1} is not valid YAML (${reason})`,
        'fix the YAML, or export the CRD again with `kubectl get crd <name> -o yaml`',
      ),
  );
  const crds = documents.filter(isCrdDocument);
  if (crds.length === 0) {
    throw new UsageError(
      `${display} holds no CustomResourceDefinition (apiextensions.k8s.io/v1)`,
      'pass the file of the CRD, e.g. from `kubectl get crd <name> -o yaml`',
    );
  }
  const models = crds.map((crd, index) => crdModel(crd, `${display} CRD ${index + 1}`));
  if (kind === undefined) {
    if (models.length === 1) return models[0]!;
    throw new UsageError(
      `${display} holds ${models.length} CRDs (${models.map((m) => m.kind).join(', ')})`,
      'pass --kind to say which one',
    );
  }
  const match = models.find((m) => m.kind === kind);
  if (!match)
    throw new UsageError(
      `${display} has no CRD of kind ${kind}; it has ${models.map((m) => m.kind).join(', ')}`,
      'pass one of those as --kind, or the file of the right CRD',
    );
  return match;
}

function isCrdDocument(document: unknown): document is Record<string, unknown> {
  if (typeof document !== 'object' || document === null) return false;
  const { apiVersion, kind } = document as Record<string, unknown>;
  return (
    kind === 'CustomResourceDefinition' &&
    typeof apiVersion === 'string' &&
    apiVersion.startsWith('apiextensions.k8s.io/')
  );
}

/**
 * Validates the fields type generation relies on and returns them; `source`
 * names the CRD in errors (a file and index, or `the cluster's <name>`).
 */
export function crdModel(crd: unknown, source: string): CrdModel {
  const bad = (what: string): UsageError =>
    new UsageError(
      `${source} is not a usable CustomResourceDefinition: ${what}`,
      'pass an apiextensions.k8s.io/v1 CRD, e.g. from `kubectl get crd <name> -o yaml`',
    );
  const object = crd as { apiVersion?: unknown; metadata?: { name?: unknown }; spec?: Record<string, unknown> };
  if (object.apiVersion !== 'apiextensions.k8s.io/v1')
    throw bad(`apiVersion is ${JSON.stringify(object.apiVersion ?? null)}, not apiextensions.k8s.io/v1`);
  const spec = object.spec;
  if (typeof spec !== 'object' || spec === null) throw bad('it has no spec');
  const names = spec.names as { kind?: unknown; plural?: unknown } | undefined;
  if (typeof spec.group !== 'string' || spec.group === '') throw bad('spec.group is missing');
  if (typeof names?.kind !== 'string' || typeof names.plural !== 'string')
    throw bad('spec.names.kind or spec.names.plural is missing');
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    throw bad(`spec.scope is ${JSON.stringify(spec.scope ?? null)}, not Namespaced or Cluster`);
  if (!Array.isArray(spec.versions) || spec.versions.length === 0) throw bad('spec.versions is empty');
  const versions = (spec.versions as unknown[]).map((entry, index): CrdVersion => {
    const version = entry as {
      name?: unknown;
      served?: unknown;
      storage?: unknown;
      deprecated?: unknown;
      schema?: { openAPIV3Schema?: unknown };
    };
    if (typeof version.name !== 'string') throw bad(`spec.versions[${index}].name is missing`);
    const schema = version.schema?.openAPIV3Schema;
    if (typeof schema !== 'object' || schema === null)
      throw bad(`version ${version.name} has no schema.openAPIV3Schema`);
    return {
      name: version.name,
      served: version.served === true,
      storage: version.storage === true,
      deprecated: version.deprecated === true,
      schema,
    };
  });
  // The group and plural name the copied CRD's file (config/crd/external/<group>_<plural>.yaml): the API server's rules first.
  if (!isDns1123Subdomain(spec.group)) throw bad(`spec.group "${spec.group}" is not a DNS-1123 subdomain`);
  if (!isDns1123Label(names.plural)) throw bad(`spec.names.plural "${names.plural}" is not a DNS-1123 label`);
  const expectedName = `${names.plural}.${spec.group}`;
  if (object.metadata?.name !== undefined && object.metadata.name !== expectedName)
    throw bad(`metadata.name is ${JSON.stringify(object.metadata.name)}, not ${expectedName} (<plural>.<group>)`);
  const name = expectedName;
  return {
    name,
    group: spec.group,
    kind: names.kind,
    plural: names.plural,
    namespaced: spec.scope === 'Namespaced',
    versions,
    spec,
  };
}

/**
 * The version to generate types for: the one asked for, else the storage
 * version when it is served (what the cluster keeps, so reads need no
 * conversion), else the first served version that is not deprecated.
 */
export function chooseVersion(crd: CrdModel, wanted?: string): CrdVersion {
  if (wanted !== undefined) {
    const version = crd.versions.find((v) => v.name === wanted);
    if (!version)
      throw new UsageError(
        `the CRD ${crd.name} has no version ${wanted}; it has ${crd.versions.map((v) => v.name).join(', ')}`,
        'pass one of those as --version',
      );
    if (!version.served)
      throw new UsageError(
        `version ${wanted} of the CRD ${crd.name} is not served, so the API server has no URL for it`,
        `pass a served version: ${servedNames(crd)}`,
      );
    return version;
  }
  const served = crd.versions.filter((v) => v.served);
  const chosen = served.find((v) => v.storage) ?? served.find((v) => !v.deprecated) ?? served[0];
  if (!chosen)
    throw new UsageError(
      `the CRD ${crd.name} serves no version`,
      'serve a version in the CRD (spec.versions[].served: true) first',
    );
  return chosen;
}

function servedNames(crd: CrdModel): string {
  return (
    crd.versions
      .filter((v) => v.served)
      .map((v) => v.name)
      .join(', ') || 'none is served'
  );
}

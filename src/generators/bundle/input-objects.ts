/**
 * The input manifests of `generate bundle` as objects: what the collector
 * sorts them into, and what the shape checks and the CSV filler read.
 */
import type { UnstructuredObject } from '../../runtime/api/unstructured.js';

/**
 * The runtime's untyped object as `generate bundle` holds it once the
 * collector checked it: apiVersion, kind and metadata.name present.
 */
export type ManifestObject = UnstructuredObject & {
  apiVersion: string;
  kind: string;
  metadata: NonNullable<UnstructuredObject['metadata']> & { name: string };
};

/** One webhook of a Validating/MutatingWebhookConfiguration. */
export interface CollectedWebhook {
  type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook';
  webhook: Record<string, unknown>;
}

/** The input manifests sorted the way operator-sdk's collector sorts them. */
export interface CollectedManifests {
  csvs: ManifestObject[];
  roles: ManifestObject[];
  clusterRoles: ManifestObject[];
  roleBindings: ManifestObject[];
  clusterRoleBindings: ManifestObject[];
  serviceAccounts: ManifestObject[];
  services: ManifestObject[];
  deployments: ManifestObject[];
  crds: ManifestObject[];
  webhooks: CollectedWebhook[];
  scorecardConfig?: ManifestObject;
  /** Instances of the collected CRDs (the samples): the source of alm-examples. */
  customResources: ManifestObject[];
  /** Everything else, written to the bundle when OLM supports its kind. */
  others: ManifestObject[];
}

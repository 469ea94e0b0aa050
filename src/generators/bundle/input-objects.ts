/**
 * The input manifests of `generate bundle` as objects: what the collector
 * sorts them into, and what the shape checks and the CSV filler read.
 */

/** Any Kubernetes object read from the input manifests. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** One webhook of a Validating/MutatingWebhookConfiguration. */
export interface CollectedWebhook {
  type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook';
  webhook: Record<string, unknown>;
}

/** The input manifests sorted the way operator-sdk's collector sorts them. */
export interface CollectedManifests {
  csvs: KubeObject[];
  roles: KubeObject[];
  clusterRoles: KubeObject[];
  roleBindings: KubeObject[];
  clusterRoleBindings: KubeObject[];
  serviceAccounts: KubeObject[];
  services: KubeObject[];
  deployments: KubeObject[];
  crds: KubeObject[];
  webhooks: CollectedWebhook[];
  scorecardConfig?: KubeObject;
  /** Instances of the collected CRDs (the samples): the source of alm-examples. */
  customResources: KubeObject[];
  /** Everything else, written to the bundle when OLM supports its kind. */
  others: KubeObject[];
}

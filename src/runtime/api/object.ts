/**
 * The runtime names client-node's models by their own files
 * (`@kubernetes/client-node/dist/gen/models/<Model>.js`), never by its root,
 * whose declarations reach every API class and model (~850 files): a project
 * type-checking against the SDK parsed all of them, about 40% of its
 * type-check time. The build then points the emitted declarations at copies
 * of the models (scripts/model-declarations.js), because some models reach
 * the root too. client-node declares no `exports` map, so these paths are as
 * reachable as its root.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node/dist/gen/models/V1ObjectMeta.js';

/**
 * What every Kubernetes object has: the base of an API type
 * (`interface Memcached extends KubernetesObject`) and of everything the
 * runtime reads and writes. The same shape as client-node's
 * `KubernetesObject`, so the two are interchangeable; declared here so that
 * importing it does not load client-node's whole API.
 */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

export type { V1ObjectMeta };

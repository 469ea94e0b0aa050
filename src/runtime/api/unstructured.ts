import type { KubernetesObject } from './object.js';

/**
 * A Kubernetes object whose type is known only at run time (controller-runtime's
 * `unstructured.Unstructured`): apiVersion, kind and metadata typed as every
 * object has them, every other field `unknown` until its reader checks it.
 * The SDK's one untyped object: the CLI's cluster commands and bundle
 * generator narrow it to the fields they read rather than declaring their own.
 */
export type UnstructuredObject = KubernetesObject & { [field: string]: unknown };

/**
 * `ts-operator-sdk`: what a Memcached-style operator needs, re-exported from
 * the runtime's packages, as controller-runtime's alias.go does. Everything
 * else lives under a subpath named after its package (README, "The runtime's
 * packages"): `ts-operator-sdk/client`, `/cache`, `/controller`, `/handler`,
 * `/predicate`, `/source`, `/workqueue`, `/leaderelection`, `/metrics`,
 * `/healthz`, `/webhook`, `/builder`, `/manager`, `/controllerutil`, `/api`,
 * `/transport`, `/pod`, `/recorder`, `/log` and `/envtest`.
 *
 * At most 30 names (test/unit/runtime-exports.test.ts counts them): the manager and builders,
 * the reconciler's types, the client, the errors and helpers every reconcile
 * uses, and the field types a kind's types file imports (the CRD generator
 * recognises those by this module's name).
 */
export { Manager, type ManagerOptions } from './manager/index.js';
export { newControllerManagedBy, newWebhookManagedBy } from './builder/index.js';
export type { Reconciler, ReconcileContext, Request, Result } from './controller/index.js';
export { Client } from './client/index.js';
export {
  defineKind,
  Deployment,
  ignoreNotFound,
  isNotFound,
  setStatusCondition,
  type Condition,
  type int32,
  type int64,
  type float64,
  type Quantity,
  type IntOrString,
  type Time,
  type MicroTime,
  type Duration,
  type RawExtension,
} from './api/index.js';
export { setControllerReference, addFinalizer, removeFinalizer, containsFinalizer } from './controllerutil/index.js';
export { createLogger } from './log/index.js';
export { loadKubeConfig } from './transport/index.js';

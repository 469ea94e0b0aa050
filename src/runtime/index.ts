/**
 * ts-operator-sdk runtime: what generated operators import. One module per
 * concept (manager, controller, cache, workqueue, client, leader election,
 * metrics, health, log); this file is only the public surface.
 */
export * from './kinds.js';
export * from './errors.js';
export { RestClient, WatchStalledError, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_MAX_RETRIES, type RestClientOptions, type RequestObserver, type WatchEvent, type RequestOptions, type Query } from './rest.js';
export { loadKubeConfig } from './kubeconfig.js';
export * from './apitypes.js';
export type { Reader, ListOptions, Selector } from './reader.js';
export { createLogger, silentLogger, type Logger, type LoggerOptions } from './log.js';
export { Manager, type ManagerOptions, type Runnable, GRACE_PERIOD_EXCEEDED_MESSAGE, DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS, DEFAULT_METRICS_BIND_ADDRESS, DEFAULT_HEALTH_PROBE_BIND_ADDRESS } from './manager.js';
export { newControllerManagedBy, ControllerBuilder } from './builder.js';
export { Controller, type Reconciler, type ReconcileContext, type Request, type Result, type ControllerOptions } from './controller.js';
export { Cache, type CacheOptions, DEFAULT_CACHE_SYNC_TIMEOUT_MS } from './cache.js';
export { Informer, isResourceVersionTooLarge, jitteredResyncPeriod, DEFAULT_RESYNC_PERIOD_MS, type InformerEventHandler, type InformerOptions, type DeleteInfo, type IndexFunc } from './informer.js';
export { ChannelSource, type EventSource, type SourceEventHandler } from './source.js';
export { WorkQueue, type WorkQueueOptions } from './workqueue.js';
export * from './ratelimiter.js';
export * from './predicates.js';
export { enqueueForObject, enqueueForOwner, enqueueFromMapFunc, type RequestMapper } from './handler.js';
export { parseSelector, matchesLabels, requirementsOf, type LabelSelector, type Requirement } from './labels.js';
export { LeaderElector, LeaderElectionLostError, systemLeaseClock, type LeaseClock, type LeaderElectorOptions, DEFAULT_LEASE_DURATION_MS, DEFAULT_RENEW_DEADLINE_MS, DEFAULT_RETRY_PERIOD_MS } from './leaderelection.js';
export { LeaderForLife, type LeaderForLifeOptions, type LeaderForLifeOutcome, DEFAULT_LEADER_FOR_LIFE_MAX_BACKOFF_MS, SERVICE_ACCOUNT_NAMESPACE_FILE } from './leaderforlife.js';
export { ManagerMetrics } from './metrics.js';
export { HealthProbes, ping, type Checker } from './healthz.js';
export { parseBindAddress } from './serving.js';
// -- client, controllerutil, conditions, events (client modules) --
export {
  Client,
  ApiReader,
  mergePatch,
  jsonPatch,
  strategicMergePatch,
  DEFAULT_LIST_PAGE_SIZE,
  type ClientOptions,
  type Patch,
  type JsonPatchOperation,
  type WriteOptions,
  type PatchOptions,
  type DeleteOptions,
  type DeleteAllOfOptions,
  type StatusWriter,
} from './client.js';
export { RestMapper, NoKindMatchError } from './restmapper.js';
export {
  setControllerReference,
  setOwnerReference,
  removeOwnerReference,
  hasControllerReference,
  addFinalizer,
  removeFinalizer,
  containsFinalizer,
  createOrUpdate,
  AlreadyOwnedError,
  type OperationResult,
} from './controllerutil.js';
export {
  setStatusCondition,
  removeStatusCondition,
  findStatusCondition,
  isStatusConditionTrue,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  toKubernetesTime,
  type ConditionInput,
  type ConditionClock,
} from './conditions.js';
export { newEventRecorder, type EventRecorder, type EventType } from './events.js';
// -- end client modules --

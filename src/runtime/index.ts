/**
 * ts-operator-sdk runtime: what generated operators import. One module per
 * concept (manager, controller, cache, workqueue, client, leader election,
 * metrics, health, log); this file is only the public surface, named export
 * by named export, so that a helper becomes public only by being listed here.
 */

// -- kinds and API types --
export {
  defineKind,
  keyOf,
  parseKey,
  type Kind,
  type KindSpec,
  type ObjectOf,
  type ObjectKey,
  Namespace,
  Node,
  Pod,
  Service,
  ConfigMap,
  Secret,
  ServiceAccount,
  PersistentVolumeClaim,
  Event,
  Deployment,
  StatefulSet,
  DaemonSet,
  Job,
  CronJob,
  Ingress,
  Lease,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
  CustomResourceDefinition,
} from './api/kinds.js';
export type {
  int32,
  int64,
  float64,
  Time,
  MicroTime,
  Duration,
  Quantity,
  IntOrString,
  RawExtension,
  Condition,
} from './api/types.js';

// -- errors --
export {
  ApiError,
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  MethodNotAllowedError,
  ConflictError,
  AlreadyExistsError,
  GoneError,
  InvalidError,
  TooManyRequestsError,
  ServerError,
  ApiConnectionError,
  RequestTimeoutError,
  TerminalError,
  isNotFound,
  isConflict,
  isAlreadyExists,
  isForbidden,
  isGone,
  isInvalid,
  isRequestTimeout,
  isTerminalError,
  ignoreNotFound,
  type StatusBody,
} from './api/errors.js';

// -- transport and configuration --
export {
  RestClient,
  WatchStalledError,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_MAX_RETRIES,
  type UpgradeTarget,
  type WriteFence,
  type RestClientOptions,
  type RequestObserver,
  type WatchEvent,
  type RequestOptions,
  type Query,
} from './transport/rest.js';
export {
  loadKubeConfig,
  inClusterConfig,
  RestConfig,
  type KubeConfigSource,
  type KubeConfigCluster,
  type KubeConfigUser,
  type KubeConfigContext,
} from './transport/kubeconfig.js';
export { toClientNodeKubeConfig } from './transport/credentials.js';
export { createLogger, silentLogger, type Logger, type LoggerOptions, type LogLevel, type LogFn } from './log/log.js';

// -- manager, controllers, events --
export {
  Manager,
  type ManagerOptions,
  GRACE_PERIOD_EXCEEDED_MESSAGE,
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_METRICS_BIND_ADDRESS,
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
} from './manager/manager.js';
export type { Runnable } from './runnable.js';
export { newControllerManagedBy, ControllerBuilder } from './builder/controller.js';
export {
  Controller,
  type Reconciler,
  type ReconcileContext,
  type Request,
  type Result,
  type ControllerOptions,
} from './controller/controller.js';
export { enqueueForObject, enqueueForOwner, enqueueFromMapFunc, type RequestMapper } from './handler/handler.js';
export { ChannelSource, type EventSource, type SourceEventHandler } from './source/source.js';
export {
  newPredicateFuncs,
  GenerationChangedPredicate,
  ResourceVersionChangedPredicate,
  LabelChangedPredicate,
  AnnotationChangedPredicate,
  labelSelectorPredicate,
  and,
  or,
  not,
  type Predicate,
  type WatchedEvent,
} from './predicate/predicate.js';
export { parseSelector, matchesLabels, requirementsOf, type LabelSelector, type Requirement } from './api/labels.js';

// -- cache and work queue --
export { Cache, type CacheOptions, DEFAULT_CACHE_SYNC_TIMEOUT_MS } from './cache/cache.js';
export {
  Informer,
  DEFAULT_RESYNC_PERIOD_MS,
  type InformerEventHandler,
  type InformerOptions,
  type AddInfo,
  type DeleteInfo,
  type IndexFunc,
} from './cache/informer.js';
export { WorkQueue, LOW_PRIORITY, type WorkQueueOptions, type AddOptions, type Taken } from './workqueue/workqueue.js';
export {
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_QPS,
  DEFAULT_BURST,
  type RateLimiter,
} from './workqueue/ratelimiter.js';

// -- leader election, metrics, health --
export {
  LeaderElector,
  LeaderElectionLostError,
  isLeaderElectionLost,
  systemLeaseClock,
  type LeaseClock,
  type LeaderElectorOptions,
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from './leaderelection/lease.js';
export {
  LeaderForLife,
  type LeaderForLifeOptions,
  type LeaderForLifeOutcome,
  DEFAULT_LEADER_FOR_LIFE_MAX_BACKOFF_MS,
} from './leaderelection/leaderforlife.js';
export { ManagerMetrics } from './metrics/metrics.js';
export { ping, type Checker } from './healthz/healthz.js';

// -- webhooks: the HTTPS server, admission (defaulting, validation), conversion --
export type { HttpHandler } from './httpserver/server.js';
export {
  WebhookServer,
  type WebhookServerOptions,
  DEFAULT_WEBHOOK_PORT,
  DEFAULT_WEBHOOK_CERT_DIR,
} from './webhook/server.js';
export { newWebhookManagedBy, WebhookBuilder, mutatingWebhookPath, validatingWebhookPath } from './builder/webhook.js';
export {
  AdmissionDeniedError,
  type AdmissionDeniedOptions,
  type AdmissionContext,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionWarnings,
  type CustomDefaulter,
  type CustomValidator,
  type ValidationResult,
  type GroupVersionKind,
} from './webhook/admission.js';
export { CONVERSION_PATH, type SpokeConversion, type ConversionOptions } from './webhook/conversion.js';

// -- client, controllerutil, conditions, events --
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
} from './client/client.js';
export {
  execInPod,
  execStreamInPod,
  PodExecError,
  CommandNotFoundError,
  ExecOutputTooLargeError,
  ExecTimeoutError,
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_EXEC_MAX_OUTPUT_BYTES,
  type ExecOptions,
  type ExecStreamOptions,
  type ExecCommonOptions,
  type ExecResult,
} from './pod/exec.js';
export { readPodLogs, followPodLogs, type LogOptions } from './pod/logs.js';
export { ContainerNotFoundError, PodNotRunningError, type PodReference } from './pod/subresources.js';
export { type Reader, type ListOptions, type Selector, type Stored, type StoredMetadata } from './client/reader.js';
export { RestMapper, NoKindMatchError } from './transport/restmapper.js';
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
} from './controllerutil/controllerutil.js';
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
} from './api/conditions.js';
export { newEventRecorder, type EventRecorder, type EventType } from './recorder/recorder.js';

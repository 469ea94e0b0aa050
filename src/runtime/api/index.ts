/**
 * `ts-operator-sdk/api`: kinds (`defineKind` and the built-in ones), the
 * untyped object (`UnstructuredObject`), the API's
 * field types (`int32`, `Quantity`, `Condition`...), the API server's errors
 * (`ApiError`, `isNotFound`...), status conditions and label selectors.
 * Imports nothing else of the runtime.
 * This file is only the package's public surface.
 */
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
} from './kinds.js';
export type { KubernetesObject, V1ObjectMeta } from './object.js';
export type { UnstructuredObject } from './unstructured.js';
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
} from './types.js';
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
  NoKindMatchError,
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
} from './errors.js';
export { parseSelector, matchesLabels, requirementsOf, type LabelSelector, type Requirement } from './labels.js';
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

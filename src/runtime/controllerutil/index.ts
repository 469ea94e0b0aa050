/**
 * `ts-operator-sdk/controllerutil`: owner references, finalizers and
 * `createOrUpdate`, as controller-runtime's `pkg/controller/controllerutil`.
 * This file is only the package's public surface.
 */
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

/**
 * `ts-operator-sdk/controller`: `Controller`, the `Reconciler` interface,
 * `Request`, `Result` and `ReconcileContext`.
 * This file is only the package's public surface.
 */
export {
  Controller,
  type Reconciler,
  type ReconcileContext,
  type Request,
  type Result,
  type ControllerOptions,
  type ControllerDefaults,
} from './controller.js';

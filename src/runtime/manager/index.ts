/**
 * `ts-operator-sdk/manager`: `Manager`, which starts the cache, controllers,
 * webhook server, metrics and probes, and leader election together; and
 * `Runnable`, what it starts.
 * This file is only the package's public surface.
 */
export {
  Manager,
  type ManagerOptions,
  GracePeriodExceededError,
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
} from './manager.js';
export type { Runnable } from '../runnable.js';

/**
 * `ts-operator-sdk/metrics`: the manager's Prometheus registry and the
 * controller-runtime metric names (`controller_runtime_reconcile_total`,
 * work-queue and leader-election gauges), and the server that serves them
 * on /metrics (`MetricsServer`, configured by the manager's `metrics` option).
 * This file is only the package's public surface.
 */
export { ManagerMetrics } from './metrics.js';
export {
  MetricsServer,
  type MetricsServerOptions,
  type MetricsServerDependencies,
  DEFAULT_METRICS_BIND_ADDRESS,
} from './server.js';

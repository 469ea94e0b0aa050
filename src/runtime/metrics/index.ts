/**
 * `ts-operator-sdk/metrics`: the manager's Prometheus registry and the
 * controller-runtime metric names (`controller_runtime_reconcile_total`,
 * work-queue and leader-election gauges).
 * This file is only the package's public surface.
 */
export { ManagerMetrics } from './metrics.js';

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from './prometheus.js';

/**
 * controller-runtime's reconcile-time buckets (seconds): fine below one second,
 * where most reconciles land, and coarse up to a minute.
 */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue latency buckets: 10 ns to 10^3 s, decade steps. */
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => 10e-9 * 10 ** i);

/**
 * The Prometheus series a manager exports, under controller-runtime's names
 * and labels so existing dashboards and alerts work unchanged. Each manager
 * has its own registry (two managers in one test process must not collide).
 */
export class ManagerMetrics {
  readonly registry = new Registry();

  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly terminalReconcileErrors = new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly reconcilePanics = new Counter({
    name: 'controller_runtime_reconcile_panics_total',
    help: 'Total number of reconciliation panics per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'] as const,
    buckets: RECONCILE_TIME_BUCKETS,
    registers: [this.registry],
  });
  readonly maxConcurrentReconciles = new Gauge({
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly activeWorkers = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });

  readonly workqueueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue by workqueue and priority',
    labelNames: ['name', 'controller', 'priority'] as const,
    registers: [this.registry],
  });
  readonly workqueueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name', 'controller'] as const,
    registers: [this.registry],
  });
  readonly workqueueQueueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name', 'controller'] as const,
    buckets: WORKQUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly workqueueWorkDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name', 'controller'] as const,
    buckets: WORKQUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly workqueueUnfinishedWork = new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames: ['name', 'controller'] as const,
    registers: [this.registry],
  });
  readonly workqueueLongestRunningProcessor = new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['name', 'controller'] as const,
    registers: [this.registry],
  });
  readonly workqueueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name', 'controller'] as const,
    registers: [this.registry],
  });

  readonly leaderElectionMasterStatus = new Gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  readonly restClientRequests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'] as const,
    registers: [this.registry],
  });
  /** client-go's series: attempts after the first (Retry-After, reset GET), so throttling by the API server shows. */
  readonly restClientRequestRetries = new Counter({
    name: 'rest_client_request_retries_total',
    help: 'Number of request retries, partitioned by status code, verb, and host.',
    labelNames: ['code', 'verb', 'host'] as const,
    registers: [this.registry],
  });

  constructor() {
    // Process and Node.js runtime series, as controller-runtime registers the Go and process collectors.
    collectDefaultMetrics({ register: this.registry });
  }
}

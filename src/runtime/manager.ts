import type { KubeConfig } from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Cache, DEFAULT_CACHE_SYNC_TIMEOUT_MS } from './cache.js';
import { Client } from './client.js';
import type { Controller } from './controller.js';
import { newEventRecorder, type EventRecorder } from './events.js';
import { HealthProbes, ping, type Checker } from './healthz.js';
import { loadKubeConfig } from './kubeconfig.js';
import { LeaderElector } from './leaderelection.js';
import { LeaderForLife } from './leaderforlife.js';
import { createLogger, type Logger } from './log.js';
import { ManagerMetrics } from './metrics.js';
import type { Reader } from './reader.js';
import { RestClient } from './rest.js';
import { parseBindAddress, serveHttp, type RunningServer } from './serving.js';

/** controller-runtime's defaults, kept next to the code that uses them. */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;
export const DEFAULT_METRICS_BIND_ADDRESS = ':8080';
export const DEFAULT_HEALTH_PROBE_BIND_ADDRESS = ':8081';
const IN_CLUSTER_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface ManagerOptions {
  /** Cluster access; loaded with loadKubeConfig() when left out. */
  kubeConfig?: KubeConfig;
  /** Namespaces to watch; undefined or empty watches all (see Manager.namespacesFromEnv). */
  namespaces?: string[];
  /** Where /metrics is served (`:8080` by default); `"0"` turns it off. */
  metricsBindAddress?: string;
  /** Where /healthz and /readyz are served (`:8081` by default); `"0"` turns them off. */
  healthProbeBindAddress?: string;
  /** Run controllers only while holding a Lease, so replicas don't fight. */
  leaderElection?: boolean;
  /** Name of the Lease. Required with leaderElection. */
  leaderElectionID?: string;
  /** Namespace of the Lease; the pod's own namespace in-cluster. */
  leaderElectionNamespace?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /**
   * How replicas elect a leader when `leaderElection` is on.
   * - `'lease'` (the default): a Lease renewed by the leader, as
   *   controller-runtime; failover after the lease duration.
   * - `'leader-for-life'`: operator-lib's `leader.Become`. The leader's Pod
   *   (`POD_NAME`, from the downward API) owns a ConfigMap named
   *   `leaderElectionID` in `leaderElectionNamespace` (default: `POD_NAMESPACE`,
   *   then the service-account namespace file). Nothing renews or releases it:
   *   it goes only when the garbage collector collects it after that Pod is
   *   deleted, so two leaders are impossible, and failover waits for the Pod
   *   to go. Outside a cluster (no namespace found) the manager runs at once
   *   without a lock. The lease timings and `leaderElectionReleaseOnCancel`
   *   do not apply. See {@link LeaderForLife}.
   */
  leaderElectionMode?: 'lease' | 'leader-for-life';
  /** Release the Lease on a clean stop (default true) so a successor takes over at once. */
  leaderElectionReleaseOnCancel?: boolean;
  /** How long in-flight reconciles may run after a stop (30 s by default). */
  gracefulShutdownTimeoutMs?: number;
  /** How long controllers wait for their caches (2 min by default). */
  cacheSyncTimeoutMs?: number;
  /** Keep managedFields in cached objects (stripped by default to save memory). */
  keepManagedFields?: boolean;
  /** Reopen a watch that was silent this long (see Informer). */
  watchIdleTimeoutMs?: number;
  /**
   * How often the cache redelivers every object to the controllers
   * (controller-runtime's SyncPeriod): 10 h by default, jittered ±10 % per
   * informer; 0 turns it off. See InformerOptions.resyncPeriodMs.
   */
  syncPeriodMs?: number;
  /** Reconnect backoff for the cache's watches. */
  watchBackoffInitialMs?: number;
  watchBackoffMaxMs?: number;
  /** Stop on SIGTERM and SIGINT (default true). */
  handleSignals?: boolean;
  /** Field manager for the client's writes. */
  fieldOwner?: string;
  logger?: Logger;
}

/** Something the manager starts and stops with itself (a webhook server, say). */
export interface Runnable {
  /** Runs until `signal` aborts. */
  start(signal: AbortSignal): Promise<void>;
  /** Start only on the elected leader (default false: runs on every replica). */
  needLeaderElection?: boolean;
}

/**
 * Owns everything an operator process runs: the shared cache, the client,
 * controllers, leader election, the metrics and probe servers, and graceful
 * shutdown. `start()` resolves once a stop (SIGTERM, SIGINT or `stop()`) has
 * finished cleanly, and rejects if leadership was lost.
 */
export class Manager {
  readonly rest: RestClient;
  readonly metrics = new ManagerMetrics();
  private readonly cache: Cache;
  private readonly client: Client;
  private readonly log: Logger;
  private readonly probes = new HealthProbes();
  private readonly controllers: Controller[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly stopController = new AbortController();
  private elector?: LeaderElector;
  private leaderForLife?: LeaderForLife;
  private electedResolve!: () => void;
  private readonly electedPromise = new Promise<void>((resolve) => (this.electedResolve = resolve));
  private servers: RunningServer[] = [];
  private started = false;
  private cacheStarted = false;
  private metricsAddress?: string;
  private probeAddress?: string;

  constructor(private readonly options: ManagerOptions = {}) {
    this.log = options.logger ?? createLogger();
    this.rest = new RestClient(options.kubeConfig ?? loadKubeConfig());
    this.rest.observe(({ method, statusCode, attempt }) => {
      const host = hostOf(this.rest.server);
      // client-go's label for an attempt that got no response.
      const code = statusCode ? String(statusCode) : '<error>';
      this.metrics.restClientRequests.inc({ code, method, host });
      if (attempt > 1) this.metrics.restClientRequestRetries.inc({ code, verb: method, host });
    });
    this.cache = new Cache(this.rest, {
      namespaces: options.namespaces,
      logger: this.log,
      stripManagedFields: !options.keepManagedFields,
      watchIdleTimeoutMs: options.watchIdleTimeoutMs,
      backoffInitialMs: options.watchBackoffInitialMs,
      backoffMaxMs: options.watchBackoffMaxMs,
      syncTimeoutMs: options.cacheSyncTimeoutMs,
      resyncPeriodMs: options.syncPeriodMs,
    });
    this.client = new Client({ rest: this.rest, cache: this.cache, fieldOwner: options.fieldOwner });
    this.probes.addHealthzCheck('ping', ping);
    this.probes.addReadyzCheck('cache-sync', () => {
      if (!this.cacheStarted || !this.cache.hasSynced()) throw new Error('caches have not synced yet');
    });
  }

  /**
   * Reads operator-sdk's WATCH_NAMESPACE convention: unset or empty watches
   * all namespaces, `a` one, `a,b` several.
   */
  static namespacesFromEnv(value: string | undefined = process.env.WATCH_NAMESPACE): string[] | undefined {
    const namespaces = (value ?? '').split(',').map((namespace) => namespace.trim()).filter(Boolean);
    return namespaces.length ? namespaces : undefined;
  }

  /** The client: reads from the cache, writes to the API server. */
  getClient(): Client {
    return this.client;
  }

  /** Reads that bypass the cache (controller-runtime's GetAPIReader). */
  getAPIReader(): Reader {
    return this.client.apiReader();
  }

  getCache(): Cache {
    return this.cache;
  }

  getLogger(): Logger {
    return this.log;
  }

  /** An event recorder whose Events name `name` as their source component. */
  getEventRecorderFor(name: string): EventRecorder {
    return newEventRecorder(this.client, name, this.log);
  }

  /** The bound metrics address once started (for `:0`), or undefined when off. */
  getMetricsAddress(): string | undefined {
    return this.metricsAddress;
  }

  /** The bound probe address once started, or undefined when off. */
  getHealthProbeAddress(): string | undefined {
    return this.probeAddress;
  }

  addHealthzCheck(name: string, check: Checker): void {
    this.probes.addHealthzCheck(name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.probes.addReadyzCheck(name, check);
  }

  /** Registers a runnable started with the manager (e.g. a webhook server). */
  add(runnable: Runnable): void {
    this.runnables.push(runnable);
  }

  /** @internal Called by the controller builder. */
  addController(controller: Controller): void {
    if (!controller.options.skipNameValidation && this.controllers.some((existing) => existing.name === controller.name)) {
      throw new Error(`a controller named "${controller.name}" already exists: controller names must be unique, set another with .named()`);
    }
    this.controllers.push(controller);
  }

  /** Resolves when this replica becomes leader (at once without leader election). */
  elected(): Promise<void> {
    return this.electedPromise;
  }

  /** Whether this replica currently runs the controllers. */
  isLeader(): boolean {
    if (this.leaderForLife) return this.leaderForLife.isLeader();
    return this.elector ? this.elector.isLeader() : this.started;
  }

  /** Begins graceful shutdown; `start()` resolves when it is done. */
  stop(): void {
    this.stopController.abort();
  }

  /** Runs until stopped. See the class comment. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) throw new Error('the manager was already started');
    this.started = true;
    const stopping = this.stopController.signal;
    signal?.addEventListener('abort', () => this.stop(), { once: true });
    const removeProcessHooks = this.installProcessHooks();
    const cacheAbort = new AbortController();
    const leaderAbort = new AbortController();
    let lostLeadership: Error | undefined;
    let holding: Promise<void> | undefined;

    try {
      await this.startServers();
      this.cache.start(cacheAbort.signal);
      this.cacheStarted = true;
      for (const runnable of this.runnables.filter((r) => !r.needLeaderElection)) this.runRunnable(runnable, stopping);

      if (this.options.leaderElection && this.options.leaderElectionMode === 'leader-for-life') await this.becomeLeaderForLife(stopping);
      if (this.options.leaderElection && this.options.leaderElectionMode !== 'leader-for-life') {
        this.elector = this.newLeaderElector();
        try {
          await this.elector.acquire(stopping);
        } catch (err) {
          if (!stopping.aborted) throw err;
        }
        if (!stopping.aborted) {
          holding = this.elector.holdUntil(leaderAbort.signal).catch((err: Error) => {
            lostLeadership = err;
            this.log.error({ err }, 'leader election lost');
            this.stop();
          });
        }
      }
      if (!stopping.aborted) {
        this.electedResolve();
        for (const runnable of this.runnables.filter((r) => r.needLeaderElection)) this.runRunnable(runnable, stopping);
        const syncTimeout = this.options.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
        for (const controller of this.controllers) {
          controller.start(stopping, syncTimeout).catch((err: Error) => {
            if (stopping.aborted) return;
            this.log.error({ controller: controller.name, err }, 'controller failed to start');
            this.stop();
          });
        }
      }
      if (!stopping.aborted) await new Promise((resolve) => stopping.addEventListener('abort', resolve, { once: true }));
    } finally {
      await this.shutdown(cacheAbort, leaderAbort, holding);
      removeProcessHooks();
    }
    if (lostLeadership) throw lostLeadership;
  }

  private async shutdown(cacheAbort: AbortController, leaderAbort: AbortController, holding: Promise<void> | undefined): Promise<void> {
    this.log.info('Stopping and waiting for non leader election runnables');
    const timeout = this.options.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS;
    // Controllers first: nothing may reconcile after the lease is released.
    await Promise.all(this.controllers.map((controller) => controller.stop(timeout)));
    leaderAbort.abort();
    await holding;
    cacheAbort.abort();
    await this.cache.stopped();
    await Promise.all(this.servers.map((server) => server.close()));
    this.servers = [];
    this.log.info('Stopped manager');
  }

  private runRunnable(runnable: Runnable, signal: AbortSignal): void {
    runnable.start(signal).catch((err: Error) => {
      this.log.error({ err }, 'runnable failed');
      this.stop();
    });
  }

  /** Waits until this Pod owns the leader-for-life lock; it is never given back (see ManagerOptions.leaderElectionMode). */
  private async becomeLeaderForLife(stopping: AbortSignal): Promise<void> {
    const lockName = this.options.leaderElectionID;
    if (!lockName) throw new Error('leaderElectionID is required when leader election is on: pass a unique name such as 1a2b3c4d.example.com');
    this.leaderForLife = new LeaderForLife({ rest: this.rest, lockName, namespace: this.options.leaderElectionNamespace, logger: this.log, metrics: this.metrics });
    try {
      await this.leaderForLife.become(stopping);
    } catch (err) {
      if (!stopping.aborted) throw err;
    }
  }

  private newLeaderElector(): LeaderElector {
    const name = this.options.leaderElectionID;
    if (!name) throw new Error('leaderElectionID is required when leader election is on: pass a unique name such as 1a2b3c4d.example.com');
    const namespace = this.options.leaderElectionNamespace ?? inClusterNamespace();
    if (!namespace) throw new Error('no leader election namespace: not running in a cluster, so set leaderElectionNamespace (or POD_NAMESPACE)');
    return new LeaderElector({
      rest: this.rest,
      name,
      namespace,
      identity: `${hostname()}_${randomUUID()}`,
      leaseDurationMs: this.options.leaseDurationMs,
      renewDeadlineMs: this.options.renewDeadlineMs,
      retryPeriodMs: this.options.retryPeriodMs,
      releaseOnCancel: this.options.leaderElectionReleaseOnCancel ?? true,
      logger: this.log,
      metrics: this.metrics,
    });
  }

  private async startServers(): Promise<void> {
    const metricsAt = parseBindAddress(this.options.metricsBindAddress ?? DEFAULT_METRICS_BIND_ADDRESS);
    if (metricsAt) {
      const server = await serveHttp(metricsAt, async (req, res) => {
        if (new URL(req.url ?? '/', 'http://metrics').pathname !== '/metrics') {
          res.statusCode = 404;
          res.end('not found\n');
          return;
        }
        for (const controller of this.controllers) controller.queue.updateProgressMetrics();
        res.setHeader('content-type', this.metrics.registry.contentType);
        res.end(await this.metrics.registry.metrics());
      });
      this.servers.push(server);
      this.metricsAddress = server.address;
      this.log.info({ bindAddress: server.address }, 'Serving metrics server');
    }
    const probesAt = parseBindAddress(this.options.healthProbeBindAddress ?? DEFAULT_HEALTH_PROBE_BIND_ADDRESS);
    if (probesAt) {
      const server = await serveHttp(probesAt, (req, res) => this.probes.handle(req, res));
      this.servers.push(server);
      this.probeAddress = server.address;
      this.log.info({ bindAddress: server.address }, 'Starting health probe server');
    }
  }

  /**
   * SIGTERM/SIGINT start a graceful stop; a second signal exits at once, as
   * controller-runtime's signal handler does. A stray rejected promise in user
   * code is logged instead of killing the process.
   */
  private installProcessHooks(): () => void {
    const onSignal = (signal: NodeJS.Signals): void => {
      if (this.stopController.signal.aborted) {
        this.log.error({ signal }, 'second signal received, exiting immediately');
        process.exit(1);
      }
      this.log.info({ signal }, 'shutdown signal received, stopping gracefully');
      this.stop();
    };
    const onRejection = (reason: unknown): void => {
      this.log.error({ err: reason instanceof Error ? reason.message : String(reason) }, 'unhandled promise rejection (the operator keeps running)');
    };
    const handleSignals = this.options.handleSignals ?? true;
    if (handleSignals) {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    process.on('unhandledRejection', onRejection);
    return () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.off('unhandledRejection', onRejection);
    };
  }
}

function inClusterNamespace(): string | undefined {
  if (process.env.POD_NAMESPACE) return process.env.POD_NAMESPACE;
  if (existsSync(IN_CLUSTER_NAMESPACE_FILE)) return readFileSync(IN_CLUSTER_NAMESPACE_FILE, 'utf8').trim();
  return undefined;
}

function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}

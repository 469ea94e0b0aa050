import { Cache, DEFAULT_CACHE_SYNC_TIMEOUT_MS, type CacheOptions } from '../cache/cache.js';
import { Client } from '../client/client.js';
import type { Controller, ControllerDefaults } from '../controller/controller.js';
import { isNotFound, NoKindMatchError } from '../api/errors.js';
import { newEventRecorder, type EventRecorder } from '../recorder/recorder.js';
import { HealthProbes, ping, type Checker } from '../healthz/healthz.js';
import { loadKubeConfig, type KubeConfigSource } from '../transport/kubeconfig.js';
import { newLeaderLock, type LeaderElectionOptions } from '../leaderelection/election.js';
import type { LeaderLock } from '../leaderelection/lock.js';
import { resourcePath } from '../api/kinds.js';
import { createLogger, type Logger } from '../log/log.js';
import { ManagerMetrics } from '../metrics/metrics.js';
import { MetricsServer, type MetricsServerOptions } from '../metrics/server.js';
import type { Reader } from '../client/reader.js';
import type { Runnable } from '../runnable.js';
import { RestClient } from '../transport/rest.js';
import { parseBindAddress, serveHttp, type RunningServer } from '../httpserver/server.js';
import { WebhookServer, type WebhookServerOptions } from '../webhook/server.js';

/** How long a stop waits for reconciles and runnables: controller-runtime's 30 s. */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;
/** Where /healthz and /readyz are served: port 8081, the port the scaffolded probes call. */
export const DEFAULT_HEALTH_PROBE_BIND_ADDRESS = ':8081';

/**
 * Everything a {@link Manager} is configured with. Every option may be left
 * out: each states its default, which follows controller-runtime's
 * manager.Options unless it says why not. Each component's options are
 * nested under its name, as the component's own options type, with the
 * component's own names.
 */
export interface ManagerOptions {
  /** Cluster access. Default: {@link loadKubeConfig}() (KUBECONFIG, in-cluster, then ~/.kube/config). */
  kubeConfig?: KubeConfigSource;
  /**
   * The shared cache: watched namespaces (`Manager.namespacesFromEnv()` reads
   * WATCH_NAMESPACE), resync period, managedFields stripping, sync timeout of
   * a first cached read, watch reconnects. Default: every namespace, with
   * each {@link CacheOptions} default.
   */
  cache?: CacheOptions;
  /**
   * The /metrics server: where it listens, and whether it serves HTTPS to
   * authorized scrapers only. It runs on every replica. Default: plain HTTP
   * on `:8080`.
   */
  metrics?: MetricsServerOptions;
  /**
   * Where the webhook server ({@link Manager.getWebhookServer}) listens and
   * finds its certificate. Default: port 9443 on every interface, with
   * `tls.crt`/`tls.key` from `<os tmpdir>/k8s-webhook-server/serving-certs`.
   * envtest's `env.webhookServerOptions()` gives the values for tests.
   */
  webhookServer?: WebhookServerOptions;
  /** Where /healthz and /readyz are served; `"0"` or `""` turns them off. Default: `:8081`. */
  healthProbeBindAddress?: string;
  /**
   * Run controllers only while leading, so replicas don't reconcile the same
   * objects at once: present turns it on (the generated main.ts passes it
   * for `--leader-elect`). `id` names the lock; `lock` picks a Lease or
   * leader-for-life. Default: off, every replica runs its controllers.
   */
  leaderElection?: LeaderElectionOptions;
  /**
   * Defaults for every controller the builder creates (concurrency, cache
   * sync timeout, name validation); a controller's `withOptions` wins.
   * Default: each {@link ControllerDefaults} default.
   */
  controller?: ControllerDefaults;
  /**
   * How long in-flight reconciles and runnables may run after a stop; if they
   * are still running then, start() rejects. Skipped on lost leadership. Default: 30 s.
   */
  gracefulShutdownTimeoutMs?: number;
  /** Stop gracefully on SIGTERM and SIGINT (a second signal exits at once). Default: true. */
  handleSignals?: boolean;
  /**
   * Field manager of the client's writes. Default: none, so the API server
   * names the manager after the User-Agent, and server-side apply needs one per call.
   */
  fieldOwner?: string;
  /** Where the manager and its controllers log. Default: {@link createLogger}() (JSON at info, to stderr). */
  logger?: Logger;
}

/**
 * What start() rejects with when reconciles or runnables outlive the
 * graceful-shutdown period (controller-runtime's wording).
 */
export class GracePeriodExceededError extends Error {
  constructor(
    /** The grace period that ran out, in ms. */
    readonly gracePeriodMs: number,
  ) {
    super(
      `failed waiting for all runnables to end within grace period of ${gracePeriodMs / 1000}s: ` +
        'raise gracefulShutdownTimeoutMs, or return from reconciles and runnables when their signal aborts',
    );
    this.name = 'GracePeriodExceededError';
  }
}

/**
 * Owns everything an operator process runs: the shared cache, the client,
 * controllers, leader election, the metrics and probe servers, and graceful
 * shutdown. `start()` resolves once a stop (SIGTERM, SIGINT or `stop()`) has
 * finished cleanly, and rejects if leadership was lost.
 */
export class Manager {
  private readonly rest: RestClient;
  private readonly metrics = new ManagerMetrics();
  private readonly cache: Cache;
  private readonly client: Client;
  private readonly log: Logger;
  private readonly probes = new HealthProbes();
  private readonly controllers: Controller[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly stopController = new AbortController();
  /**
   * Aborted once, on lost leadership: the signal of leader-only runnables, and
   * the one record that leadership was lost (it ends any graceful wait).
   */
  private readonly leaderRunnablesAbort = new AbortController();
  /** Leader-only work that has started and must end before the Lease may be released. */
  private readonly leaderWork: Array<Promise<unknown>> = [];
  /** Runnables that run on every replica. */
  private readonly replicaWork: Array<Promise<unknown>> = [];
  /** The first error that made the manager stop; start() rejects with it. */
  private fatal?: Error;
  /** True from election until shutdown: leader-only work added now starts at once. */
  private leading = false;
  /** The lock this replica leads by, from `ManagerOptions.leaderElection`; undefined without leader election. */
  private lock?: LeaderLock;
  private electedResolve!: () => void;
  private readonly electedPromise = new Promise<void>((resolve) => (this.electedResolve = resolve));
  private servers: RunningServer[] = [];
  private readonly metricsServer: MetricsServer;
  private webhookServer?: WebhookServer;
  private started = false;
  private cacheStarted = false;
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
    this.cache = new Cache(this.rest, { ...options.cache, logger: this.log });
    this.metricsServer = new MetricsServer(options.metrics ?? {}, {
      registry: this.metrics.registry,
      rest: this.rest,
      logger: this.log,
      // Queue depth and progress gauges are computed, not kept: bring them up to date for this scrape.
      beforeScrape: () => {
        for (const controller of this.controllers) controller.queue.updateProgressMetrics();
      },
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
    const namespaces = (value ?? '')
      .split(',')
      .map((namespace) => namespace.trim())
      .filter(Boolean);
    return namespaces.length ? namespaces : undefined;
  }

  /** The transport every client, cache and elector of this manager shares, so requests share connections. */
  getRestClient(): RestClient {
    return this.rest;
  }

  /** The controller-runtime metrics served on /metrics; register your own in `getMetrics().registry`. */
  getMetrics(): ManagerMetrics {
    return this.metrics;
  }

  /** The client: reads from the cache, writes to the API server. */
  getClient(): Client {
    return this.client;
  }

  /** Reads that bypass the cache (controller-runtime's GetAPIReader). */
  getAPIReader(): Reader {
    return this.client.apiReader();
  }

  /** The shared informer cache, e.g. to add field indexes before start(). */
  getCache(): Cache {
    return this.cache;
  }

  /** The manager's logger (`ManagerOptions.logger`), to log in the same format. */
  getLogger(): Logger {
    return this.log;
  }

  /** An event recorder whose Events name `name` as their source component. */
  getEventRecorderFor(name: string): EventRecorder {
    return newEventRecorder(this.client, name, this.log);
  }

  /**
   * The HTTPS server for admission and conversion webhooks. The first call
   * creates it from `ManagerOptions.webhookServer` and adds it as a
   * runnable, so a manager without webhooks opens no port. It runs on every
   * replica, leader or not. `newWebhookManagedBy` registers on it.
   */
  getWebhookServer(): WebhookServer {
    if (!this.webhookServer) {
      const server = new WebhookServer(this.options.webhookServer, this.log.child({ component: 'webhook' }));
      this.add(server);
      this.webhookServer = server;
    }
    return this.webhookServer;
  }

  /** The bound metrics address once started (for `:0`), or undefined when off. */
  getMetricsAddress(): string | undefined {
    return this.metricsServer.address;
  }

  /** The defaults every controller the builder creates starts from (`ManagerOptions.controller`). */
  getControllerOptions(): ControllerDefaults {
    return { ...this.options.controller };
  }

  /** The bound probe address once started, or undefined when off. */
  getHealthProbeAddress(): string | undefined {
    return this.probeAddress;
  }

  /** Adds a liveness check served on /healthz; a failing one gets the Pod restarted. */
  addHealthzCheck(name: string, check: Checker): void {
    this.probes.addHealthzCheck(name, check);
  }

  /** Adds a readiness check served on /readyz; a failing one takes the Pod out of Service endpoints. */
  addReadyzCheck(name: string, check: Checker): void {
    this.probes.addReadyzCheck(name, check);
  }

  /**
   * Registers a runnable started with the manager (e.g. a webhook server).
   * Added after start(), it starts at once, or on election if it is
   * leader-only, as controller-runtime does. Throws once the manager stops.
   */
  add(runnable: Runnable): void {
    this.assertNotStopping('runnable');
    this.runnables.push(runnable);
    if (!this.started) return;
    if (!needsLeaderElection(runnable)) this.runRunnable(runnable, this.replicaWork, this.stopController.signal);
    else if (this.leading) this.runRunnable(runnable, this.leaderWork, this.leaderRunnablesSignal());
  }

  /**
   * @internal Called by the controller builder. A controller added after
   * start() starts at once if this replica leads, or on election.
   */
  addController(controller: Controller): void {
    this.assertNotStopping('controller');
    if (
      !controller.options.skipNameValidation &&
      this.controllers.some((existing) => existing.name === controller.name)
    ) {
      throw new Error(
        `a controller named "${controller.name}" already exists: controller names must be unique, set another with .named()`,
      );
    }
    this.controllers.push(controller);
    if (this.leading) this.startController(controller);
  }

  /** Resolves when this replica becomes leader (at once without leader election). */
  elected(): Promise<void> {
    return this.electedPromise;
  }

  /** Whether this replica currently runs the controllers. */
  isLeader(): boolean {
    // With leader election, not before the lock is held (it is made once start() gets to the election).
    if (this.options.leaderElection) return this.lock?.isLeader() ?? false;
    return this.started;
  }

  /** Begins graceful shutdown; `start()` resolves when it is done. */
  stop(): void {
    this.stopController.abort();
  }

  /**
   * Runs until stopped. Resolves after a clean stop (SIGTERM, SIGINT, `stop()`
   * or `signal`). Rejects with the first fatal error: leadership lost
   * ("leader election lost: ..."), a controller whose caches never synced, a
   * runnable that threw, or runnables still running when the grace period
   * ran out ("failed waiting for all runnables to end within grace period").
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) throw new Error('the manager was already started');
    this.started = true;
    const stopping = this.stopController.signal;
    signal?.addEventListener('abort', () => this.stop(), { once: true });
    const removeProcessHooks = this.installProcessHooks();
    const cacheAbort = new AbortController();
    const leaderAbort = new AbortController();
    let holding: Promise<void> | undefined;

    try {
      await this.startServers();
      this.cache.start(cacheAbort.signal);
      this.cacheStarted = true;
      for (const runnable of this.runnables.filter((r) => !needsLeaderElection(r)))
        this.runRunnable(runnable, this.replicaWork, stopping);

      const election = this.options.leaderElection;
      if (election && !stopping.aborted) {
        this.lock = newLeaderLock(election, { rest: this.rest, logger: this.log, metrics: this.metrics });
        try {
          await this.lock.acquire(stopping);
        } catch (err) {
          if (!stopping.aborted) throw err;
        }
        if (!stopping.aborted) {
          holding = this.lock.holdUntil(leaderAbort.signal).catch((err: Error) => this.loseLeadership(err));
        }
      }
      if (!stopping.aborted) {
        this.leading = true;
        this.electedResolve();
        for (const runnable of this.runnables.filter(needsLeaderElection))
          this.runRunnable(runnable, this.leaderWork, this.leaderRunnablesSignal());
        for (const controller of this.controllers) this.startController(controller);
      }
      if (!stopping.aborted)
        await new Promise((resolve) => stopping.addEventListener('abort', resolve, { once: true }));
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    } finally {
      await this.shutdown(cacheAbort, leaderAbort, holding);
      removeProcessHooks();
    }
    if (this.fatal) throw this.fatal;
  }

  /** Records the first fatal error and stops. */
  private fail(err: Error): void {
    this.fatal ??= err;
    this.stop();
  }

  /**
   * controller-runtime's OnStoppedLeading: another replica may lead from
   * now on, so every reconcile's signal aborts at once, nothing new starts,
   * and shutdown skips the graceful wait.
   */
  private loseLeadership(err: Error): void {
    this.leading = false;
    this.log.error({ err }, 'leader election lost');
    for (const controller of this.controllers) controller.abort(err);
    this.leaderRunnablesAbort.abort(err);
    this.fail(err);
  }

  /** Whether leadership was lost; it can turn true during shutdown, so read it where it is used. */
  private get leadershipLost(): boolean {
    return this.leaderRunnablesAbort.signal.aborted;
  }

  private leaderRunnablesSignal(): AbortSignal {
    return AbortSignal.any([this.stopController.signal, this.leaderRunnablesAbort.signal]);
  }

  private startController(controller: Controller): void {
    const stopping = this.stopController.signal;
    // A controller the builder made already carries the defaults; one added by hand gets this one.
    const syncTimeout = this.options.controller?.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
    const started = controller.start(stopping, syncTimeout).catch(async (err: Error) => {
      if (stopping.aborted) return;
      const explained = await this.explainSyncFailure(controller, err);
      this.log.error({ controller: controller.name, err: explained }, 'controller failed to start');
      this.fail(explained);
    });
    this.leaderWork.push(started);
  }

  /**
   * A cache that never synced usually means the kind is not served (its CRD
   * is not installed) or not listable (RBAC). Ask the server once, so the
   * error says which, in controller-runtime's words for a missing kind.
   */
  private async explainSyncFailure(controller: Controller, err: Error): Promise<Error> {
    if (err.message.startsWith('no matches for kind')) return err;
    for (const kind of controller.watchedKinds()) {
      try {
        await this.rest.request('GET', resourcePath(kind, undefined), {
          query: { limit: 1 },
          signal: AbortSignal.timeout(10_000),
        });
      } catch (listErr) {
        if (isNotFound(listErr)) return new NoKindMatchError(kind.apiVersion, kind.kind);
        if (listErr instanceof Error && !listErr.name.includes('Abort') && !listErr.name.includes('Timeout')) {
          return new Error(`${err.message}: listing ${kind.kind} failed: ${listErr.message}`, { cause: err });
        }
      }
    }
    return err;
  }

  private async shutdown(
    cacheAbort: AbortController,
    leaderAbort: AbortController,
    holding: Promise<void> | undefined,
  ): Promise<void> {
    this.leading = false;
    this.stop();
    // Lost leadership skips the graceful wait: another replica may already lead.
    const graceMs = this.leadershipLost
      ? 0
      : (this.options.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS);
    const deadline = performance.now() + graceMs;
    this.log.info('Stopping and waiting for leader election runnables');
    // Leader-only work first, still renewing the lease: nothing may reconcile after it is released.
    const leaderWorkEnded = await Promise.race([
      Promise.all(this.controllers.map((controller) => controller.stop(graceMs))).then(
        async (stopped) =>
          !stopped.includes(false) && (await settledWithin(this.leaderWork, deadline - performance.now())),
      ),
      whenAborted(this.leaderRunnablesAbort.signal).then(() => false),
    ]);
    const overran = !this.leadershipLost && !leaderWorkEnded;

    leaderAbort.abort();
    await holding;
    if (this.lock) {
      // Release only when provably nothing of ours still reconciles; otherwise let the lease expire.
      if (!this.leadershipLost && !overran && (this.options.leaderElection?.releaseOnCancel ?? true))
        await this.lock.release();
      else this.lock.abandon();
    }

    this.log.info('Stopping and waiting for non leader election runnables');
    const replicaWorkEnded = await settledWithin(
      this.replicaWork,
      this.leadershipLost ? 0 : deadline - performance.now(),
    );
    if ((overran || !replicaWorkEnded) && !this.leadershipLost) {
      const overrun = new GracePeriodExceededError(graceMs);
      this.log.error({ gracePeriodMs: graceMs }, overrun.message);
      this.fatal ??= overrun;
    }
    cacheAbort.abort();
    await this.cache.stopped();
    await Promise.all([this.metricsServer.close(), ...this.servers.map((server) => server.close())]);
    this.servers = [];
    // No connection (or HTTP/2 session) of ours may outlive the manager and fail later as an uncaught error.
    await this.rest.close();
    this.log.info('Stopped manager');
  }

  private runRunnable(runnable: Runnable, group: Array<Promise<unknown>>, signal: AbortSignal): void {
    const running = Promise.resolve()
      .then(() => runnable.start(signal))
      .catch((err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        this.log.error({ err: error }, 'runnable failed');
        this.fail(error);
      });
    group.push(running);
  }

  private assertNotStopping(what: string): void {
    if (this.stopController.signal.aborted) throw new Error(`cannot add a ${what}: the manager is stopping`);
  }

  private async startServers(): Promise<void> {
    await this.metricsServer.start();
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
   * controller-runtime's signal handler does. What to do with an unhandled
   * promise rejection is the application's call (see the generated main.ts),
   * so the library installs no handler for it.
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
    const handleSignals = this.options.handleSignals ?? true;
    if (handleSignals) {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    return () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    };
  }
}

/** Leader-only unless the runnable says otherwise (controller-runtime's default). */
function needsLeaderElection(runnable: Runnable): boolean {
  return runnable.needLeaderElection?.() ?? true;
}

/** Whether every promise settled within `ms` (they are never rejected: runRunnable catches). */
async function settledWithin(promises: Array<Promise<unknown>>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const all = Promise.allSettled(promises).then(() => true);
  const result = await Promise.race([
    all,
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms)))),
  ]);
  clearTimeout(timer);
  return result;
}

function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}

/** Resolves when `signal` aborts (at once if it already has). */
function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

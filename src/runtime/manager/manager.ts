import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Cache, DEFAULT_CACHE_SYNC_TIMEOUT_MS } from '../cache/cache.js';
import { Client } from '../client/client.js';
import type { Controller } from '../controller/controller.js';
import { isNotFound, NoKindMatchError } from '../api/errors.js';
import { newEventRecorder, type EventRecorder } from '../recorder/recorder.js';
import { HealthProbes, ping, type Checker } from '../healthz/healthz.js';
import { loadKubeConfig, type KubeConfigSource } from '../transport/kubeconfig.js';
import { LeaderElector, type LeaseClock } from '../leaderelection/lease.js';
import { LeaderForLife } from '../leaderelection/leaderforlife.js';
import { resourcePath } from '../api/kinds.js';
import { createLogger, type Logger } from '../log/log.js';
import { ManagerMetrics } from '../metrics/metrics.js';
import { MetricsAuthFilter } from '../metrics/auth.js';
import type { Reader } from '../client/reader.js';
import type { Runnable } from '../runnable.js';
import { RestClient } from '../transport/rest.js';
import { selfSignedCertificate } from '../certs/self-signed.js';
import { parseBindAddress, serveHttp, serveHttps, type HttpHandler, type RunningServer } from '../httpserver/server.js';
import { CertWatcher } from '../certs/certwatcher.js';
import { DEFAULT_CERT_NAME, DEFAULT_KEY_NAME, WebhookServer, type WebhookServerOptions } from '../webhook/server.js';

/** How long a stop waits for reconciles and runnables: controller-runtime's 30 s. */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;
/** Where /metrics is served: port 8080 on every interface, where kubebuilder's scaffolded Service points. */
export const DEFAULT_METRICS_BIND_ADDRESS = ':8080';
/** Where /healthz and /readyz are served: port 8081, the port the scaffolded probes call. */
export const DEFAULT_HEALTH_PROBE_BIND_ADDRESS = ':8081';
const IN_CLUSTER_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * Everything a {@link Manager} is configured with. Every option may be left
 * out: each states its default, which follows controller-runtime's
 * manager.Options unless it says why not.
 */
export interface ManagerOptions {
  /** Cluster access. Default: {@link loadKubeConfig}() (KUBECONFIG, in-cluster, then ~/.kube/config). */
  kubeConfig?: KubeConfigSource;
  /**
   * Namespaces the cache watches, to need only namespaced RBAC. Default: all
   * (undefined or empty); {@link Manager.namespacesFromEnv} reads WATCH_NAMESPACE.
   */
  namespaces?: string[];
  /** Where /metrics is served, as `host:port` or `:port`; `"0"` or `""` turns it off. Default: `:8080`. */
  metricsBindAddress?: string;
  /**
   * Serve /metrics over HTTPS, only to callers whose bearer token the API
   * server authenticates (TokenReview) and authorizes for `get` on the
   * non-resource URL `/metrics` (SubjectAccessReview), with
   * controller-runtime's caching. kubebuilder's `--metrics-secure` (true in
   * the generated main.ts), served on `:8443` by `config/default`. The
   * manager's identity needs `create` on tokenreviews and
   * subjectaccessreviews (`metrics_auth_role`). Default: false, plain HTTP,
   * as controller-runtime's SecureServing.
   */
  metricsSecure?: boolean;
  /**
   * With `metricsSecure`, the directory holding the serving `tls.crt` and
   * `tls.key` (kubebuilder's `--metrics-cert-path`, mounted from a
   * cert-manager Secret); rotated files are picked up without a restart.
   * Default: none, so a self-signed certificate is made at start.
   */
  metricsCertDir?: string;
  /** Certificate file name in `metricsCertDir` (kubebuilder's `--metrics-cert-name`). Default: `tls.crt`. */
  metricsCertName?: string;
  /** Private key file name in `metricsCertDir` (kubebuilder's `--metrics-cert-key`). Default: `tls.key`. */
  metricsKeyName?: string;
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
   * objects at once. With a Lease, the leader's writes are fenced as well:
   * once it has acquired the Lease, every write of this manager (its client,
   * Events, exec) leaves only while the Lease is held by the monotonic clock
   * (see LeaderElector.assertHoldsLease). Default: false.
   */
  leaderElection?: boolean;
  /** Name of the Lease (or leader-for-life ConfigMap). Required when `leaderElection` is on; no default. */
  leaderElectionID?: string;
  /**
   * Namespace of the lock. Default: `POD_NAMESPACE`, then the service-account
   * namespace file; outside a cluster lease mode fails without it (leader-for-life runs unlocked).
   */
  leaderElectionNamespace?: string;
  /** How long a rival waits after the leader's last observed renewal before taking over. Default: 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading. Default: 10 s. */
  renewDeadlineMs?: number;
  /** Wait between renewals and between attempts to acquire. Default: 2 s. */
  retryPeriodMs?: number;
  /**
   * How replicas elect a leader when `leaderElection` is on.
   * - `'lease'`: a Lease renewed by the leader, as
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
   *
   * Default: `'lease'`.
   */
  leaderElectionMode?: 'lease' | 'leader-for-life';
  /**
   * Release the Lease on a clean stop so a successor takes over at once
   * instead of waiting for it to expire. Default: true, unlike
   * controller-runtime's false, because here it is safe: the Manager releases
   * only after every leader-only runnable has returned and every in-flight
   * reconcile has finished. It never releases after lost leadership, after a
   * grace-period overrun, or while any reconcile may still run; then the
   * Lease simply expires.
   */
  leaderElectionReleaseOnCancel?: boolean;
  /** Clock for leader election, so tests can step the wall clock (see LeaseClock). Default: `systemLeaseClock`. */
  leaderElectionClock?: LeaseClock;
  /**
   * How long in-flight reconciles and runnables may run after a stop; if they
   * are still running then, start() rejects. Skipped on lost leadership. Default: 30 s.
   */
  gracefulShutdownTimeoutMs?: number;
  /** How long controllers (and a first cached read of a new kind) wait for caches to sync. Default: 2 min. */
  cacheSyncTimeoutMs?: number;
  /** Keep managedFields in cached objects; they are stripped to save memory and no controller reads them. Default: false. */
  keepManagedFields?: boolean;
  /** Reopen a watch that delivered nothing this long, to catch half-open connections. Default: 2 min. */
  watchIdleTimeoutMs?: number;
  /**
   * How often the cache redelivers every object to the controllers, so they
   * correct drift they missed (controller-runtime's SyncPeriod); jittered ±10 %
   * per informer, 0 turns it off. Default: 10 h.
   */
  syncPeriodMs?: number;
  /** First wait before a failed watch or list is retried; it doubles per failure, with jitter. Default: 800 ms. */
  watchBackoffInitialMs?: number;
  /** Cap on that doubling wait, so a long outage is still retried every 15–30 s. Default: 30 s. */
  watchBackoffMaxMs?: number;
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
  private elector?: LeaderElector;
  private leaderForLife?: LeaderForLife;
  private electedResolve!: () => void;
  private readonly electedPromise = new Promise<void>((resolve) => (this.electedResolve = resolve));
  private servers: RunningServer[] = [];
  private webhookServer?: WebhookServer;
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
    return this.metricsAddress;
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
    if (this.leaderForLife) return this.leaderForLife.isLeader();
    return this.elector ? this.elector.isLeader() : this.started;
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

      if (this.options.leaderElection && this.options.leaderElectionMode === 'leader-for-life')
        await this.becomeLeaderForLife(stopping);
      if (this.options.leaderElection && this.options.leaderElectionMode !== 'leader-for-life' && !stopping.aborted) {
        this.elector = this.newLeaderElector();
        try {
          await this.elector.acquire(stopping);
        } catch (err) {
          if (!stopping.aborted) throw err;
        }
        if (!stopping.aborted) {
          holding = this.elector.holdUntil(leaderAbort.signal).catch((err: Error) => this.loseLeadership(err));
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
    const syncTimeout = this.options.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
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
    if (this.elector) {
      // Release only when provably nothing of ours still reconciles; otherwise let the lease expire.
      if (!this.leadershipLost && !overran && (this.options.leaderElectionReleaseOnCancel ?? true))
        await this.elector.release();
      else this.elector.abandon();
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
    await Promise.all(this.servers.map((server) => server.close()));
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

  /** Waits until this Pod owns the leader-for-life lock; it is never given back (see ManagerOptions.leaderElectionMode). */
  private async becomeLeaderForLife(stopping: AbortSignal): Promise<void> {
    const lockName = this.options.leaderElectionID;
    if (!lockName)
      throw new Error(
        'leaderElectionID is required when leader election is on: pass a unique name such as 1a2b3c4d.example.com',
      );
    this.leaderForLife = new LeaderForLife({
      rest: this.rest,
      lockName,
      namespace: this.options.leaderElectionNamespace,
      logger: this.log,
      metrics: this.metrics,
    });
    try {
      await this.leaderForLife.become(stopping);
    } catch (err) {
      if (!stopping.aborted) throw err;
    }
  }

  private newLeaderElector(): LeaderElector {
    const name = this.options.leaderElectionID;
    if (!name)
      throw new Error(
        'leaderElectionID is required when leader election is on: pass a unique name such as 1a2b3c4d.example.com',
      );
    const namespace = this.options.leaderElectionNamespace ?? inClusterNamespace();
    if (!namespace)
      throw new Error(
        'no leader election namespace: not running in a cluster, so set leaderElectionNamespace (or POD_NAMESPACE)',
      );
    return new LeaderElector({
      rest: this.rest,
      name,
      namespace,
      identity: `${hostname()}_${randomUUID()}`,
      leaseDurationMs: this.options.leaseDurationMs,
      renewDeadlineMs: this.options.renewDeadlineMs,
      retryPeriodMs: this.options.retryPeriodMs,
      clock: this.options.leaderElectionClock,
      logger: this.log,
      metrics: this.metrics,
    });
  }

  private async startServers(): Promise<void> {
    const metricsAt = parseBindAddress(this.options.metricsBindAddress ?? DEFAULT_METRICS_BIND_ADDRESS);
    if (metricsAt) {
      const serveMetrics: HttpHandler = async (req, res) => {
        if (new URL(req.url ?? '/', 'http://metrics').pathname !== '/metrics') {
          res.statusCode = 404;
          res.end('not found\n');
          return;
        }
        for (const controller of this.controllers) controller.queue.updateProgressMetrics();
        res.setHeader('content-type', this.metrics.registry.contentType);
        res.end(await this.metrics.registry.metrics());
      };
      const server = this.options.metricsSecure
        ? await this.serveSecureMetrics(metricsAt, serveMetrics)
        : await serveHttp(metricsAt, serveMetrics);
      this.servers.push(server);
      this.metricsAddress = server.address;
      this.log.info(
        { bindAddress: server.address, secure: this.options.metricsSecure ?? false },
        'Serving metrics server',
      );
    }
    const probesAt = parseBindAddress(this.options.healthProbeBindAddress ?? DEFAULT_HEALTH_PROBE_BIND_ADDRESS);
    if (probesAt) {
      const server = await serveHttp(probesAt, (req, res) => this.probes.handle(req, res));
      this.servers.push(server);
      this.probeAddress = server.address;
      this.log.info({ bindAddress: server.address }, 'Starting health probe server');
    }
  }

  /** /metrics over HTTPS behind TokenReview + SubjectAccessReview (see ManagerOptions.metricsSecure). */
  private async serveSecureMetrics(
    address: { host?: string; port: number },
    serveMetrics: HttpHandler,
  ): Promise<RunningServer> {
    const filter = new MetricsAuthFilter(this.rest, this.log.child({ component: 'metrics' }));
    const guarded: HttpHandler = async (req, res) => {
      const verdict = await filter.check(req);
      if (verdict.status !== 200) {
        res.statusCode = verdict.status;
        res.setHeader('content-type', 'text/plain; charset=utf-8');
        res.end(`${verdict.message}\n`);
        return;
      }
      await serveMetrics(req, res);
    };
    const certDir = this.options.metricsCertDir;
    if (!certDir) {
      this.log.info('metrics: no metricsCertDir given, serving a self-signed certificate');
      return serveHttps(address, await selfSignedCertificate(), guarded);
    }
    // Assigned once the certificate is loaded; the watcher's callback, made before, reads it.
    // eslint-disable-next-line prefer-const -- const would need the callback after the server, which needs the watcher
    let server: (RunningServer & { setCertificate(pair: { cert: Buffer; key: Buffer }): void }) | undefined;
    const watcher = new CertWatcher(
      join(certDir, this.options.metricsCertName ?? DEFAULT_CERT_NAME),
      join(certDir, this.options.metricsKeyName ?? DEFAULT_KEY_NAME),
      (pair) => server?.setCertificate(pair),
      this.log.child({ component: 'metrics' }),
    );
    const pair = await watcher.load().catch((err: Error) => {
      throw new Error(`metrics server: ${err.message}`);
    });
    server = await serveHttps(address, pair, guarded);
    watcher.start(this.stopController.signal);
    const running = server;
    return {
      address: running.address,
      close: async () => {
        watcher.stop();
        await running.close();
      },
    };
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

/** Resolves when `signal` aborts (at once if it already has). */
function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

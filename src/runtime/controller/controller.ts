import type { KubernetesObject } from '../api/object.js';
import { randomUUID } from 'node:crypto';
import { isReconcilePanic, isTerminalError } from '../api/errors.js';
import { isLeaderElectionLost } from '../leaderelection/lease.js';
import { keyOf, parseKey, type Kind, type ObjectKey } from '../api/kinds.js';
import type { Logger } from '../log/log.js';
import type { ManagerMetrics } from '../metrics/metrics.js';
import { admits, type Predicate, type WatchedEvent } from '../predicate/predicate.js';
import type { RequestMapper } from '../handler/handler.js';
import type { RateLimiter } from '../workqueue/ratelimiter.js';
import type { EventSource } from '../source/source.js';
import { LOW_PRIORITY, WorkQueue } from '../workqueue/workqueue.js';
import { runWithCallSignal } from '../client/call.js';

/** What to reconcile: controller-runtime's reconcile.Request. */
export type Request = ObjectKey;

/**
 * What the reconcile asks for next. To retry with backoff, throw; to run
 * again later, set `requeueAfterMs` (controller-runtime deprecated
 * Result.Requeue in favour of these two).
 */
export interface Result {
  /**
   * Reconcile again after this many milliseconds (controller-runtime's
   * RequeueAfter). Every duration in the runtime carries its unit: `Ms`.
   */
  requeueAfterMs?: number;
  /**
   * The priority of the requeue (controller-runtime's Result.Priority): higher
   * is reconciled first. Default: the priority the key was queued at.
   */
  priority?: number;
}

/** The requeue delay a result asks for, in milliseconds (0 for none). */
export function requeueDelayMs(result: Result | void): number {
  const delay = result?.requeueAfterMs ?? 0;
  return delay > 0 ? delay : 0;
}

/** Per-reconcile context: cancellation and a logger that already names the object. */
export interface ReconcileContext {
  /**
   * Aborted when the manager's graceful-shutdown period runs out, and at once
   * when leadership is lost. Client calls made during the reconcile already
   * carry it (a hung write is abandoned when it aborts); pass it to other
   * waits (timers, fetch).
   */
  signal: AbortSignal;
  /** Carries controller, namespace, name and reconcileID fields. */
  log: Logger;
  /** Unique per reconcile, to correlate log lines. */
  reconcileID: string;
  /** The controller's name. */
  controller: string;
}

/**
 * The one method an operator implements: bring the cluster state for `req`
 * toward its spec. Throwing requeues with backoff; throwing a TerminalError
 * (or an error whose `cause` chain holds one) logs and gives up until the
 * next change. A thrown TypeError, ReferenceError or RangeError is a bug
 * and is also counted as a panic (see `isReconcilePanic`).
 */
export interface Reconciler {
  /** Reconciles one object by key; it may be gone, so handle NotFound. Resolve with a Result to requeue. */
  reconcile(ctx: ReconcileContext, req: Request): Promise<Result | void>;
}

/** How one controller runs its reconciles; set with the builder's `withOptions`. */
export interface ControllerOptions {
  /** Keys reconciled in parallel (a key is never reconciled twice at once); values below 1 mean 1. Default: 1, as controller-runtime. */
  maxConcurrentReconciles?: number;
  /**
   * Delay before a failed or requeued key is retried. Default: 5 ms → 1000 s
   * per key, as controller-runtime's priority queue; `defaultControllerRateLimiter()`
   * adds client-go's overall 10 qps / 100 burst cap.
   */
  rateLimiter?: RateLimiter;
  /** How long to wait for this controller's caches before start fails. Default: the manager's `controller.cacheSyncTimeoutMs`, else 2 min. */
  cacheSyncTimeoutMs?: number;
  /** Skip the check that controller names are unique (their metrics and logs are keyed by name); for tests. Default: false. */
  skipNameValidation?: boolean;
}

/**
 * Defaults for every controller the builder creates: the manager's
 * `controller` option (controller-runtime's config.Controller), under the
 * controller's own names. What a controller sets with `withOptions` wins.
 * The rate limiter is not among them: it keeps per-key state, so each
 * controller needs its own.
 */
export type ControllerDefaults = Omit<ControllerOptions, 'rateLimiter'>;

/** Where a controller's events come from (an informer, a ChannelSource) and how they map to requests. */
export interface WatchSource {
  source: EventSource;
  mapper: RequestMapper;
  predicates: Predicate[];
}

/**
 * Runs a reconciler over a work queue fed by informer events: the loop of
 * controller-runtime's internal controller, with its metrics and logging.
 */
export class Controller {
  readonly queue: WorkQueue;
  private readonly sources: WatchSource[] = [];
  private readonly maxConcurrentReconciles: number;
  private readonly log: Logger;
  private workers: Promise<void>[] = [];
  private readonly reconcileAbort = new AbortController();
  private started = false;

  constructor(
    readonly name: string,
    private readonly reconciler: Reconciler,
    forKind: Kind | undefined,
    logger: Logger,
    private readonly metrics: ManagerMetrics,
    readonly options: ControllerOptions = {},
  ) {
    this.maxConcurrentReconciles = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.queue = new WorkQueue({ name, rateLimiter: options.rateLimiter, metrics });
    this.log = logger.child({
      controller: name,
      ...(forKind ? { controllerGroup: forKind.group, controllerKind: forKind.kind } : {}),
    });
    metrics.maxConcurrentReconciles.set({ controller: name }, this.maxConcurrentReconciles);
    metrics.activeWorkers.set({ controller: name }, 0);
    for (const result of ['success', 'error', 'requeue', 'requeue_after'])
      metrics.reconcileTotal.inc({ controller: name, result }, 0);
    metrics.reconcileErrors.inc({ controller: name }, 0);
    metrics.terminalReconcileErrors.inc({ controller: name }, 0);
    metrics.reconcilePanics.inc({ controller: name }, 0);
  }

  /**
   * Feeds events of `watch.source` into the queue through its predicates and
   * mapper. An update maps the old and the new object and queues the union.
   */
  watch(watch: WatchSource): void {
    this.sources.push(watch);
    // The union is built before queueing, so one event queues each key once.
    const add = (results: ObjectKey[][], priority: number): void => {
      const keys = new Set<string>();
      for (const requests of results) for (const request of requests) if (request.name) keys.add(keyOf(request));
      for (const key of keys) this.queue.add(key, priority);
    };
    const failed = (err: unknown): void => {
      this.log.error({ err }, 'mapping a watched event to requests failed; the event is dropped');
    };
    // As controller-runtime's handlers: what the initial list found, and a resync that changed
    // nothing, wait behind real changes (LowPriority), so a restart serves new work first.
    const enqueue = (event: WatchedEvent, priority = 0): void => {
      if (!watch.predicates.every((predicate) => admits(predicate, event))) return;
      const objects = event.type === 'update' ? [event.oldObject, event.object] : [event.object];
      let mapped: Array<ObjectKey[] | Promise<ObjectKey[]>>;
      try {
        mapped = objects.map((object) => watch.mapper(object));
      } catch (err) {
        failed(err);
        return;
      }
      // Synchronous mappers (owners, the object itself) enqueue at once; async ones when they resolve.
      if (mapped.some((result) => result instanceof Promise)) {
        // Promise.resolve, as Promise.all would: the results mix lists and promises of lists.
        Promise.all(mapped.map((result) => Promise.resolve(result))).then((results) => add(results, priority), failed);
      } else {
        add(mapped as ObjectKey[][], priority);
      }
    };
    watch.source.addEventHandler({
      onAdd: (object: KubernetesObject, info) =>
        enqueue({ type: 'create', object }, info.isInInitialList ? LOW_PRIORITY : 0),
      onUpdate: (oldObject: KubernetesObject, object: KubernetesObject) =>
        enqueue(
          { type: 'update', oldObject, object },
          oldObject.metadata?.resourceVersion === object.metadata?.resourceVersion ? LOW_PRIORITY : 0,
        ),
      onDelete: (object: KubernetesObject, info) =>
        enqueue({ type: 'delete', object, finalStateUnknown: info.finalStateUnknown }),
      onGeneric: (object: KubernetesObject) => enqueue({ type: 'generic', object }),
    });
  }

  /** Waits for the sources' caches, then starts the workers. */
  async start(signal: AbortSignal, defaultSyncTimeoutMs: number): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} was already started`);
    this.started = true;
    this.log.info('Starting Controller');
    const timeout = this.options.cacheSyncTimeoutMs ?? defaultSyncTimeoutMs;
    await Promise.all(this.sources.map((watch) => watch.source.waitForSync(timeout, signal)));
    // Stopped or aborted while the caches synced: start no worker, or it would drain the queue.
    if (signal.aborted || this.queue.isShuttingDown()) return;
    this.log.info({ workerCount: this.maxConcurrentReconciles }, 'Starting workers');
    this.workers = Array.from({ length: this.maxConcurrentReconciles }, () => this.work());
  }

  /** The kinds this controller watches (to explain a cache that never synced). */
  watchedKinds(): Kind[] {
    return this.sources.flatMap(({ source }) => (source.kind ? [source.kind] : []));
  }

  /**
   * Stops at once, as on lost leadership: aborts every in-flight reconcile's
   * signal and starts no further reconcile, not even for keys still queued.
   * Does not wait for the reconciles to return.
   */
  abort(reason: Error): void {
    this.queue.shutDown();
    if (!this.reconcileAbort.signal.aborted) this.reconcileAbort.abort(reason);
  }

  /**
   * Stops taking work and waits for in-flight reconciles; after `timeoutMs`
   * their abort signal fires and we stop waiting. Resolves false if they
   * were still running then.
   */
  async stop(timeoutMs: number): Promise<boolean> {
    this.queue.shutDown();
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      Promise.all(this.workers).then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) {
      this.reconcileAbort.abort(new Error('graceful shutdown period expired'));
      this.log.error({ timeoutMs }, 'in-flight reconciles did not finish within the graceful shutdown period');
    }
    this.log.info('All workers finished');
    return finished;
  }

  private async work(): Promise<void> {
    for (;;) {
      const taken = await this.queue.getWithPriority();
      if (taken === undefined) return;
      const { key, priority } = taken;
      if (this.reconcileAbort.signal.aborted) {
        this.queue.done(key);
        return;
      }
      this.metrics.activeWorkers.inc({ controller: this.name });
      try {
        await this.reconcileKey(key, priority);
      } finally {
        this.metrics.activeWorkers.dec({ controller: this.name });
        this.queue.done(key);
      }
    }
  }

  /** Reconciles one key; a requeue keeps `priority` unless the result names another. */
  private async reconcileKey(key: string, priority: number): Promise<void> {
    const request = parseKey(key);
    const reconcileID = randomUUID();
    const log = this.log.child({ namespace: request.namespace ?? '', name: request.name, reconcileID });
    const labels = { controller: this.name };
    const started = performance.now();
    let result: Result | void;
    try {
      const signal = this.reconcileAbort.signal;
      // Every Client call the reconcile makes carries its signal (client/call.ts), as controller-runtime passes ctx.
      result = await runWithCallSignal(signal, () =>
        this.reconciler.reconcile({ signal, log, reconcileID, controller: this.name }, request),
      );
    } catch (err) {
      this.metrics.reconcileTime.observe(labels, (performance.now() - started) / 1000);
      // `{ err }`: the logger's err serializer keeps the stack (and the cause chain), so a reconciler's bug arrives with its trace.
      // A write refused for lost leadership is not retried here: another replica leads now.
      const leadershipLost = isLeaderElectionLost(err);
      if (leadershipLost || isTerminalError(err)) {
        this.queue.forget(key);
        if (!leadershipLost) this.metrics.terminalReconcileErrors.inc(labels);
        this.metrics.reconcileErrors.inc(labels);
        this.metrics.reconcileTotal.inc({ ...labels, result: 'error' });
        log.error(
          { err },
          leadershipLost
            ? 'Reconciler error (leadership lost, not retried)'
            : 'Reconciler error (terminal, not retried)',
        );
        return;
      }
      this.queue.addRateLimited(key, priority);
      this.metrics.reconcileErrors.inc(labels);
      this.metrics.reconcileTotal.inc({ ...labels, result: 'error' });
      const panic = isReconcilePanic(err);
      if (panic) this.metrics.reconcilePanics.inc(labels);
      log.error(
        { err, retries: this.queue.numRequeues(key), ...(panic ? { panic } : {}) },
        panic ? 'Observed a panic in reconciler' : 'Reconciler error',
      );
      return;
    }
    this.metrics.reconcileTime.observe(labels, (performance.now() - started) / 1000);
    const requeueAfterMs = requeueDelayMs(result);
    const requeuePriority = result?.priority ?? priority;
    if (requeueAfterMs > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, requeueAfterMs, requeuePriority);
      this.metrics.reconcileTotal.inc({ ...labels, result: 'requeue_after' });
    } else {
      this.queue.forget(key);
      this.metrics.reconcileTotal.inc({ ...labels, result: 'success' });
    }
  }
}

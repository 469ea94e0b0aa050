import type { KubernetesObject } from '../api/object.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, apiErrorFrom, GoneError, isGone, type StatusBody } from '../api/errors.js';
import { keyOf, resourcePath, type Kind } from '../api/kinds.js';
import type { Logger } from '../log/log.js';
import type { RestClient } from '../transport/rest.js';

/** What a delete event knows besides the object. */
export interface DeleteInfo {
  /**
   * True when the delete was not seen on the watch but inferred by a relist
   * (the object was gone from a fresh list). The object is then the last state
   * the cache knew, which may be older than the state it was deleted in:
   * client-go's DeletedFinalStateUnknown, controller-runtime's DeleteStateUnknown.
   */
  finalStateUnknown: boolean;
}

/** What an add event knows besides the object. */
export interface AddInfo {
  /**
   * True when the object came from the informer's first list (or was replayed
   * from the store to a handler added later), not from a change seen on the
   * watch: client-go's isInInitialList. Controllers queue such keys at low priority.
   */
  isInInitialList: boolean;
}

const INITIAL_LIST: AddInfo = Object.freeze({ isInInitialList: true });
const WATCHED: AddInfo = Object.freeze({ isInInitialList: false });

/**
 * Reacts to changes in an informer's store. On a resync (see
 * `InformerOptions.resyncPeriodMs`) every stored object is delivered to
 * `onUpdate` with the same object as old and new.
 */
export interface InformerEventHandler<T extends KubernetesObject = KubernetesObject> {
  /** An object entered the store (also replayed for every stored object when the handler is added). */
  onAdd?(object: T, info: AddInfo): void;
  /** An object changed, or a resync redelivered it unchanged. */
  onUpdate?(oldObject: T, newObject: T): void;
  /** An object left the store; see {@link DeleteInfo} for whether its final state is known. */
  onDelete?(object: T, info: DeleteInfo): void;
}

/**
 * Computes the values a field index files an object under (controller-runtime's
 * IndexerFunc). Return `[]` to leave the object out of the index.
 */
export type IndexFunc<T extends KubernetesObject = KubernetesObject> = (object: T) => string[];

/** How an {@link Informer} lists, watches and recovers. Only `logger` is required. */
export interface InformerOptions {
  /** Namespaces to watch, one watch each; cluster-scoped kinds always watch all. Default: all (undefined or empty). */
  namespaces?: string[];
  /** Where watch errors and reconnects are logged. Required. */
  logger: Logger;
  /** Drop metadata.managedFields before storing: 20–25 % of a cached object, never read by controllers. Default: true. */
  stripManagedFields?: boolean;
  /**
   * A watch that delivers nothing (not even a bookmark) for this long is
   * treated as dead and reopened from the last resourceVersion. Cheap when
   * wrong, and it catches half-open connections that never error. Default: 2 min.
   */
  watchIdleTimeoutMs?: number;
  /** First wait before a failed list or watch is retried; it doubles per failure, with jitter. Default: 800 ms. */
  backoffInitialMs?: number;
  /** Cap on that wait, so an outage is still retried every 15–30 s. Default: 30 s. */
  backoffMaxMs?: number;
  /** Page size of the initial and recovery lists, to bound the memory of one response. Default: 500. */
  listPageSize?: number;
  /**
   * How often every cached object is redelivered to the handlers as an update
   * with old === new, so controllers correct drift they missed (controller-runtime's
   * SyncPeriod). Each informer picks its period once, at random in
   * [0.9, 1.1) × this value, so informers don't resync in lock-step.
   * 0 turns resync off. Default: DEFAULT_RESYNC_PERIOD_MS (10 h).
   */
  resyncPeriodMs?: number;
}

/** Defaults: reconnect backoff as kube-rs' watcher (0.8 s → 30 s); a silent watch is reopened after 2 min. */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 2 * 60 * 1000;
export const DEFAULT_BACKOFF_INITIAL_MS = 800;
export const DEFAULT_BACKOFF_MAX_MS = 30 * 1000;
/** controller-runtime's default SyncPeriod: 10 hours (jittered ±10 % per informer). */
export const DEFAULT_RESYNC_PERIOD_MS = 10 * 60 * 60 * 1000;
const LIST_PAGE_SIZE = 500;
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * A watch that ends sooner than this without a single event is an error, not a
 * normal close (client-go's reflector says "very short watch"): a server or
 * proxy that closes every watch at once would otherwise be hammered in a loop.
 */
const MIN_WATCH_DURATION_MS = 1000;
/** Server-side watch timeout is randomised in [5, 10) minutes, as client-go does, so watches don't all reconnect at once. */
const MIN_WATCH_TIMEOUT_SECONDS = 5 * 60;
/** A watch that stayed up this long counts as healthy and resets the backoff. */
const HEALTHY_WATCH_MS = 60 * 1000;

/**
 * One kind's shared list+watch and its store of objects. Unlike client-node's
 * informer it never stops on an error: it relists on 410 Gone, reconnects
 * with backoff after any other failure, requests bookmarks so reconnects
 * resume near the head, and reopens watches that went silent.
 */
export class Informer<T extends KubernetesObject = KubernetesObject> {
  private readonly store = new Map<string, T>();
  /** namespace → key → object, so a namespaced list reads only its namespace. Cluster-scoped objects are not in it. */
  private readonly byNamespace = new Map<string, Map<string, T>>();
  private readonly indexes = new Map<string, FieldIndex<T>>();
  private readonly handlers: InformerEventHandler<T>[] = [];
  private readonly reflectors: Reflector<T>[];
  private syncedCount = 0;
  private readonly syncWaiters: Array<() => void> = [];
  private running?: Promise<void>;

  constructor(
    rest: RestClient,
    readonly kind: Kind<T>,
    private readonly options: InformerOptions,
  ) {
    const scopes = kind.namespaced && options.namespaces?.length ? options.namespaces : [undefined];
    this.reflectors = scopes.map((namespace) => new Reflector<T>(rest, kind, namespace, this, options));
  }

  /** Registers a handler; objects already in the store are replayed to it as adds. */
  addEventHandler(handler: InformerEventHandler<T>): void {
    this.handlers.push(handler);
    for (const object of this.store.values()) handler.onAdd?.(object, INITIAL_LIST);
  }

  /** Starts every list+watch loop, and the resync timer; they run until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (this.running) return;
    this.running = Promise.all(this.reflectors.map((reflector) => reflector.run(signal))).then(() => undefined);
    const period = jitteredResyncPeriod(this.options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS);
    if (period > 0 && !signal.aborted) {
      const timer = setInterval(() => this.resync(), period);
      timer.unref();
      signal.addEventListener('abort', () => clearInterval(timer), { once: true });
    }
  }

  /**
   * Adds a field index: `fn` names the values each object is filed under, and
   * `byIndex(name, value)` returns the objects filed under `value`. Objects
   * already cached are indexed at once, so it may be called at any time.
   */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.has(name))
      throw new Error(
        `the ${this.kind.kind} cache already has an index named "${name}": index names must be unique per kind`,
      );
    const index = new FieldIndex<T>(fn);
    for (const [key, object] of this.store) index.add(key, object);
    this.indexes.set(name, index);
  }

  /** Whether an index of this name exists. */
  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  /** Objects filed under `value` by the index `name`, optionally of one namespace. */
  byIndex(name: string, value: string, namespace?: string): T[] {
    const index = this.indexes.get(name);
    if (!index)
      throw new Error(
        `the ${this.kind.kind} cache has no index named "${name}": call cache.indexField(${this.kind.kind}, '${name}', fn) before reading`,
      );
    const objects: T[] = [];
    for (const key of index.keysFor(value)) {
      const object = this.store.get(key);
      if (object && (namespace === undefined || object.metadata?.namespace === namespace)) objects.push(object);
    }
    return objects;
  }

  /** Whether `object` is filed under `value` by the index `name`. */
  indexedUnder(name: string, object: T, value: string): boolean {
    return this.indexes.get(name)?.valuesOf(keyOf(object)).includes(value) ?? false;
  }

  /** Resolves when the loops have ended after the abort. */
  async stopped(): Promise<void> {
    await this.running;
  }

  /** Whether every namespace has been listed once, so reads see the whole state. */
  hasSynced(): boolean {
    return this.syncedCount === this.reflectors.length;
  }

  /** Waits until every namespace has been listed once. */
  waitForSync(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out after ${timeoutMs / 1000}s waiting for the ${this.kind.kind} cache to sync`)),
        timeoutMs,
      );
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new Error(`stopped while waiting for the ${this.kind.kind} cache to sync`));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** The cached object, or undefined. */
  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /** Cached objects, optionally of one namespace (read from the namespace index, not a scan). */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.store.values()];
    return [...(this.byNamespace.get(namespace)?.values() ?? [])];
  }

  /** Number of cached objects. */
  size(): number {
    return this.store.size;
  }

  /** @internal Called by a reflector after its first full list. */
  markSynced(): void {
    this.syncedCount++;
    if (this.hasSynced()) for (const waiter of this.syncWaiters.splice(0)) waiter();
  }

  /** @internal Inserts or replaces an object, notifying handlers; `initialList` when the reflector's first list found it. */
  upsert(object: T, initialList = false): void {
    const key = keyOf(object);
    const previous = this.store.get(key);
    this.store.set(key, object);
    this.indexObject(key, object, previous);
    if (!previous) {
      const info = initialList ? INITIAL_LIST : WATCHED;
      for (const handler of this.handlers) safely(() => handler.onAdd?.(object, info), this.options.logger);
    } else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
      for (const handler of this.handlers) safely(() => handler.onUpdate?.(previous, object), this.options.logger);
    }
  }

  /**
   * @internal Removes an object, notifying handlers. `lastKnown` is the object
   * from a DELETED event; without it (a relist found the object gone) the
   * cached copy is delivered, flagged `finalStateUnknown`.
   */
  remove(key: string, lastKnown?: T): void {
    const previous = this.store.get(key);
    if (!previous && !lastKnown) return;
    this.store.delete(key);
    if (previous) this.unindexObject(key, previous);
    const object = lastKnown ?? previous!;
    const info: DeleteInfo = { finalStateUnknown: lastKnown === undefined };
    for (const handler of this.handlers) safely(() => handler.onDelete?.(object, info), this.options.logger);
  }

  /** @internal Keys currently stored for one reflector's scope. */
  keysIn(namespace: string | undefined): string[] {
    if (namespace === undefined) return [...this.store.keys()];
    return [...(this.byNamespace.get(namespace)?.keys() ?? [])];
  }

  /** Redelivers every cached object as an update with old === new (see resyncPeriodMs). */
  private resync(): void {
    for (const object of this.store.values()) {
      for (const handler of this.handlers) safely(() => handler.onUpdate?.(object, object), this.options.logger);
    }
  }

  private indexObject(key: string, object: T, previous: T | undefined): void {
    if (previous) this.unindexObject(key, previous);
    const namespace = object.metadata?.namespace;
    if (namespace) {
      let objects = this.byNamespace.get(namespace);
      if (!objects) this.byNamespace.set(namespace, (objects = new Map<string, T>()));
      objects.set(key, object);
    }
    for (const index of this.indexes.values()) index.add(key, object);
  }

  private unindexObject(key: string, object: T): void {
    const namespace = object.metadata?.namespace;
    const objects = namespace ? this.byNamespace.get(namespace) : undefined;
    if (objects) {
      objects.delete(key);
      if (objects.size === 0) this.byNamespace.delete(namespace!);
    }
    for (const index of this.indexes.values()) index.remove(key);
  }
}

/** One field index: value → keys, and key → values so an update can unfile the old values. */
class FieldIndex<T extends KubernetesObject> {
  private readonly keysByValue = new Map<string, Set<string>>();
  private readonly valuesByKey = new Map<string, string[]>();

  constructor(private readonly fn: IndexFunc<T>) {}

  add(key: string, object: T): void {
    const values = [...new Set(this.fn(object))];
    if (!values.length) return;
    this.valuesByKey.set(key, values);
    for (const value of values) {
      let keys = this.keysByValue.get(value);
      if (!keys) this.keysByValue.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  remove(key: string): void {
    for (const value of this.valuesByKey.get(key) ?? []) {
      const keys = this.keysByValue.get(value);
      keys?.delete(key);
      if (keys?.size === 0) this.keysByValue.delete(value);
    }
    this.valuesByKey.delete(key);
  }

  keysFor(value: string): Iterable<string> {
    return this.keysByValue.get(value) ?? [];
  }

  valuesOf(key: string): string[] {
    return this.valuesByKey.get(key) ?? [];
  }
}

/** The resync period one informer uses: `periodMs` × a factor in [0.9, 1.1), as controller-runtime jitters SyncPeriod. */
export function jitteredResyncPeriod(periodMs: number): number {
  if (!(periodMs > 0)) return 0;
  // Node timers overflow past 2^31-1 ms (~24.8 days) and would then fire at once, in a loop.
  return Math.min(MAX_TIMER_MS, Math.round(periodMs * (0.9 + Math.random() / 5)));
}

/** The list+watch loop for one namespace (or all). */
class Reflector<T extends KubernetesObject> {
  private resourceVersion?: string;
  private synced = false;
  private readonly log: Logger;

  constructor(
    private readonly rest: RestClient,
    private readonly kind: Kind<T>,
    private readonly namespace: string | undefined,
    private readonly informer: Informer<T>,
    private readonly options: InformerOptions,
  ) {
    this.log = options.logger.child({ informer: kind.kind, ...(namespace ? { watchNamespace: namespace } : {}) });
  }

  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      // Durations on the monotonic clock: a wall-clock step must not look like a long or short watch.
      const started = performance.now();
      try {
        if (this.resourceVersion === undefined) await this.relist(signal);
        const watchStarted = performance.now();
        const events = await this.watch(signal);
        const watchedMs = performance.now() - watchStarted;
        if (events === 0 && watchedMs < MIN_WATCH_DURATION_MS && !signal.aborted) {
          throw new Error(
            `very short watch: the server closed the ${this.kind.kind} watch after ${Math.round(watchedMs)} ms without any event`,
          );
        }
        // A clean close is the server's timeout; reopen at once from the last resourceVersion.
        if (performance.now() - started >= HEALTHY_WATCH_MS) failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          this.log.info({ resourceVersion: this.resourceVersion }, 'resourceVersion expired (410 Gone); relisting');
          this.resourceVersion = undefined;
          continue;
        }
        if (isResourceVersionTooLarge(err)) {
          // The server has not caught up with our resourceVersion (say, after an etcd restore or on a lagging
          // API server). Retrying it never helps; client-go relists from scratch, with a consistent read.
          this.log.info(
            { resourceVersion: this.resourceVersion },
            'resourceVersion too large for the server; relisting from scratch',
          );
          this.resourceVersion = undefined;
        }
        if (performance.now() - started >= HEALTHY_WATCH_MS) failures = 0;
        const delay = this.backoff(failures++);
        this.log.warn({ err, retryInMs: delay, attempt: failures }, 'list/watch failed; reconnecting after backoff');
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  private backoff(failures: number): number {
    const initial = this.options.backoffInitialMs ?? DEFAULT_BACKOFF_INITIAL_MS;
    const max = this.options.backoffMaxMs ?? DEFAULT_BACKOFF_MAX_MS;
    const base = Math.min(max, initial * 2 ** failures);
    return Math.round(base / 2 + Math.random() * (base / 2));
  }

  private async relist(signal: AbortSignal): Promise<void> {
    const path = resourcePath(this.kind, this.namespace);
    const fresh = new Map<string, T>();
    let continueToken: string | undefined;
    let listVersion = '';
    do {
      const page = await this.rest.request<{ metadata?: { resourceVersion?: string; continue?: string }; items?: T[] }>(
        'GET',
        path,
        {
          query: { limit: this.options.listPageSize ?? LIST_PAGE_SIZE, continue: continueToken },
          signal,
        },
      );
      for (const item of page.items ?? []) {
        const object = this.prepare(item);
        fresh.set(keyOf(object), object);
      }
      continueToken = page.metadata?.continue || undefined;
      listVersion = page.metadata?.resourceVersion ?? listVersion;
    } while (continueToken);

    // Replace this scope's contents: deletions we missed while disconnected become delete events,
    // flagged finalStateUnknown because we never saw the object's last state.
    for (const key of this.informer.keysIn(this.namespace)) {
      if (!fresh.has(key)) this.informer.remove(key);
    }
    for (const object of fresh.values()) this.informer.upsert(object, !this.synced);
    this.resourceVersion = listVersion;
    this.log.debug({ count: fresh.size, resourceVersion: listVersion }, 'listed');
    if (!this.synced) {
      this.synced = true;
      this.informer.markSynced();
    }
  }

  /** Runs one watch until it ends; returns how many events (bookmarks included) it delivered. */
  private async watch(signal: AbortSignal): Promise<number> {
    let received = 0;
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + Math.random()));
    const idleTimeout = this.options.watchIdleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
    const events = this.rest.watch<T>(
      resourcePath(this.kind, this.namespace),
      { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      signal,
      idleTimeout,
    );
    for await (const event of events) {
      received++;
      switch (event.type) {
        case 'ADDED':
        case 'MODIFIED':
          this.informer.upsert(this.prepare(event.object));
          break;
        case 'DELETED': {
          const object = this.prepare(event.object);
          this.informer.remove(keyOf(object), object);
          break;
        }
        case 'BOOKMARK':
          break;
        case 'ERROR': {
          const status = event.object as unknown as StatusBody;
          const code = status.code ?? 500;
          if (code === 410)
            throw new GoneError(410, status.reason ?? 'Expired', status.message ?? 'too old resource version', status);
          throw apiErrorFrom(code, status, `watch ${this.kind.kind}`);
        }
      }
      const version = event.object?.metadata?.resourceVersion;
      if (version) this.resourceVersion = version;
    }
    return received;
  }

  private prepare(object: T): T {
    // List items come without apiVersion/kind; controllers and owner references need them.
    object.apiVersion ??= this.kind.apiVersion;
    object.kind ??= this.kind.kind;
    if (this.options.stripManagedFields !== false && object.metadata?.managedFields)
      delete object.metadata.managedFields;
    return object;
  }
}

/**
 * A 504 whose cause is ResourceVersionTooLarge (or, from older servers, whose
 * message says "Too large resource version"), as client-go's reflector detects it.
 */
export function isResourceVersionTooLarge(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.status?.details?.causes?.some((cause) => cause.reason === 'ResourceVersionTooLarge')) return true;
  return err.statusCode === 504 && /too large resource version/i.test(err.message);
}

/** A handler that throws must not break the store or the other handlers. */
function safely(fn: () => void, log: Logger): void {
  try {
    fn();
  } catch (err) {
    log.error({ err }, 'informer event handler threw');
  }
}

import type { KubernetesObject } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiErrorFrom, GoneError, isGone, type StatusBody } from './errors.js';
import { keyOf, resourcePath, type Kind } from './kinds.js';
import type { Logger } from './log.js';
import type { RestClient } from './rest.js';

/** Reacts to changes in an informer's store. */
export interface InformerEventHandler<T extends KubernetesObject = KubernetesObject> {
  onAdd?(object: T): void;
  onUpdate?(oldObject: T, newObject: T): void;
  onDelete?(object: T): void;
}

export interface InformerOptions {
  /** Namespaces to watch; undefined watches all (cluster-scoped kinds always watch all). */
  namespaces?: string[];
  logger: Logger;
  /** Drop metadata.managedFields before storing: 20–25 % of a cached object, never read by controllers. */
  stripManagedFields?: boolean;
  /**
   * A watch that delivers nothing (not even a bookmark) for this long is
   * treated as dead and reopened from the last resourceVersion. Cheap when
   * wrong, and it catches half-open connections that never error.
   */
  watchIdleTimeoutMs?: number;
  /** Reconnect backoff after any error: exponential with jitter. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Page size of the initial and recovery lists. */
  listPageSize?: number;
}

/** Defaults: reconnect backoff as kube-rs' watcher (0.8 s → 30 s); a silent watch is reopened after 2 min. */
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 2 * 60 * 1000;
export const DEFAULT_BACKOFF_INITIAL_MS = 800;
export const DEFAULT_BACKOFF_MAX_MS = 30 * 1000;
const LIST_PAGE_SIZE = 500;
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
    for (const object of this.store.values()) handler.onAdd?.(object);
  }

  /** Starts every list+watch loop; they run until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (this.running) return;
    this.running = Promise.all(this.reflectors.map((reflector) => reflector.run(signal))).then(() => undefined);
  }

  /** Resolves when the loops have ended after the abort. */
  async stopped(): Promise<void> {
    await this.running;
  }

  hasSynced(): boolean {
    return this.syncedCount === this.reflectors.length;
  }

  /** Waits until every namespace has been listed once. */
  waitForSync(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000}s waiting for the ${this.kind.kind} cache to sync`)), timeoutMs);
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

  /** Cached objects, optionally of one namespace. */
  list(namespace?: string): T[] {
    const all = [...this.store.values()];
    return namespace === undefined ? all : all.filter((object) => object.metadata?.namespace === namespace);
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

  /** @internal Inserts or replaces an object, notifying handlers. */
  upsert(object: T): void {
    const key = keyOf(object);
    const previous = this.store.get(key);
    this.store.set(key, object);
    if (!previous) {
      for (const handler of this.handlers) safely(() => handler.onAdd?.(object), this.options.logger);
    } else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
      for (const handler of this.handlers) safely(() => handler.onUpdate?.(previous, object), this.options.logger);
    }
  }

  /** @internal Removes an object, notifying handlers. */
  remove(key: string, lastKnown?: T): void {
    const previous = this.store.get(key);
    if (!previous && !lastKnown) return;
    this.store.delete(key);
    const object = lastKnown ?? previous!;
    for (const handler of this.handlers) safely(() => handler.onDelete?.(object), this.options.logger);
  }

  /** @internal Keys currently stored for one reflector's scope. */
  keysIn(namespace: string | undefined): string[] {
    if (namespace === undefined) return [...this.store.keys()];
    return [...this.store.entries()].filter(([, object]) => object.metadata?.namespace === namespace).map(([key]) => key);
  }
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
      const started = Date.now();
      try {
        if (this.resourceVersion === undefined) await this.relist(signal);
        await this.watch(signal);
        // A clean close is the server's timeout; reopen at once from the last resourceVersion.
        if (Date.now() - started >= HEALTHY_WATCH_MS) failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          this.log.info({ resourceVersion: this.resourceVersion }, 'resourceVersion expired (410 Gone); relisting');
          this.resourceVersion = undefined;
          continue;
        }
        if (Date.now() - started >= HEALTHY_WATCH_MS) failures = 0;
        const delay = this.backoff(failures++);
        this.log.warn({ err: describe(err), retryInMs: delay, attempt: failures }, 'list/watch failed; reconnecting after backoff');
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
      const page = await this.rest.request<{ metadata?: { resourceVersion?: string; continue?: string }; items?: T[] }>('GET', path, {
        query: { limit: this.options.listPageSize ?? LIST_PAGE_SIZE, continue: continueToken },
        signal,
      });
      for (const item of page.items ?? []) {
        const object = this.prepare(item);
        fresh.set(keyOf(object), object);
      }
      continueToken = page.metadata?.continue || undefined;
      listVersion = page.metadata?.resourceVersion ?? listVersion;
    } while (continueToken);

    // Replace this scope's contents: deletions we missed while disconnected become delete events.
    for (const key of this.informer.keysIn(this.namespace)) {
      if (!fresh.has(key)) this.informer.remove(key);
    }
    for (const object of fresh.values()) this.informer.upsert(object);
    this.resourceVersion = listVersion;
    this.log.debug({ count: fresh.size, resourceVersion: listVersion }, 'listed');
    if (!this.synced) {
      this.synced = true;
      this.informer.markSynced();
    }
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + Math.random()));
    const idleTimeout = this.options.watchIdleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
    const events = this.rest.watch<T>(
      resourcePath(this.kind, this.namespace),
      { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      signal,
      idleTimeout,
    );
    for await (const event of events) {
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
          if (code === 410) throw new GoneError(410, status.reason ?? 'Expired', status.message ?? 'too old resource version', status);
          throw apiErrorFrom(code, status, `watch ${this.kind.kind}`);
        }
      }
      const version = event.object?.metadata?.resourceVersion;
      if (version) this.resourceVersion = version;
    }
  }

  private prepare(object: T): T {
    // List items come without apiVersion/kind; controllers and owner references need them.
    object.apiVersion ??= this.kind.apiVersion;
    object.kind ??= this.kind.kind;
    if (this.options.stripManagedFields !== false && object.metadata?.managedFields) delete object.metadata.managedFields;
    return object;
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}

/** A handler that throws must not break the store or the other handlers. */
function safely(fn: () => void, log: Logger): void {
  try {
    fn();
  } catch (err) {
    log.error({ err: describe(err) }, 'informer event handler threw');
  }
}

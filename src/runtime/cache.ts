import type { KubernetesObject } from '@kubernetes/client-node';
import { NotFoundError } from './errors.js';
import { groupKindOf, keyOf, type Kind, type ObjectKey } from './kinds.js';
import { matchesLabels, parseSelector } from './labels.js';
import type { Logger } from './log.js';
import { selectorString, type ListOptions, type Reader } from './reader.js';
import type { RestClient } from './rest.js';
import { Informer, type InformerOptions } from './informer.js';

export interface CacheOptions extends Omit<InformerOptions, 'logger' | 'namespaces'> {
  /** Watched namespaces; undefined or empty watches all. */
  namespaces?: string[];
  logger: Logger;
  /** How long a lazily started informer may take to sync on first read. */
  syncTimeoutMs?: number;
}

/** controller-runtime's CacheSyncTimeout default. */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 2 * 60 * 1000;

/**
 * The shared informer cache: one list+watch per kind, shared by every
 * controller, and the source of the client's reads. Reading a kind nobody
 * watches yet starts its informer and waits for it, as controller-runtime does.
 */
export class Cache implements Reader {
  private readonly informers = new Map<string, Informer>();
  private signal?: AbortSignal;
  readonly namespaces?: string[];

  constructor(
    private readonly rest: RestClient,
    private readonly options: CacheOptions,
  ) {
    this.namespaces = options.namespaces?.length ? [...options.namespaces] : undefined;
  }

  /** The informer for `kind`, created (and started, if the cache runs) on first use. */
  informerFor<T extends KubernetesObject>(kind: Kind<T>): Informer<T> {
    const id = groupKindOf(kind);
    let informer = this.informers.get(id) as Informer<T> | undefined;
    if (!informer) {
      informer = new Informer<T>(this.rest, kind, { ...this.options, namespaces: this.namespaces });
      this.informers.set(id, informer as unknown as Informer);
      if (this.signal) informer.start(this.signal);
    }
    return informer;
  }

  /** Starts every informer created so far and any created later; runs until `signal` aborts. */
  start(signal: AbortSignal): void {
    this.signal = signal;
    for (const informer of this.informers.values()) informer.start(signal);
  }

  /** Resolves once every informer has ended after the abort. */
  async stopped(): Promise<void> {
    await Promise.all([...this.informers.values()].map((informer) => informer.stopped()));
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((informer) => informer.hasSynced());
  }

  /** Waits until every informer has synced. */
  async waitForCacheSync(timeoutMs = this.options.syncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS, signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((informer) => informer.waitForSync(timeoutMs, signal)));
  }

  /** Total objects cached across kinds (for benchmarks and debugging). */
  objectCount(): number {
    let total = 0;
    for (const informer of this.informers.values()) total += informer.size();
    return total;
  }

  async get<T extends KubernetesObject>(kind: Kind<T>, key: ObjectKey): Promise<T> {
    this.checkNamespace(kind, key.namespace, `get ${kind.kind} ${keyOf(key)}`);
    const informer = await this.synced(kind);
    const object = informer.get(keyOf(kind.namespaced ? key : { name: key.name }));
    if (!object) throw new NotFoundError(404, 'NotFound', `${kind.plural}.${kind.group || 'core'} "${key.name}" not found`);
    return structuredClone(object);
  }

  async list<T extends KubernetesObject>(kind: Kind<T>, options: ListOptions = {}): Promise<T[]> {
    this.checkNamespace(kind, options.namespace, `list ${kind.kind}`);
    const informer = await this.synced(kind);
    const labels = selectorString(options.labelSelector);
    const labelRequirements = labels ? parseSelector(labels) : [];
    const fieldMatch = fieldMatcher(selectorString(options.fieldSelector));
    return informer
      .list(kind.namespaced ? options.namespace : undefined)
      .filter((object) => matchesLabels(labelRequirements, object.metadata?.labels) && fieldMatch(object))
      .map((object) => structuredClone(object));
  }

  private async synced<T extends KubernetesObject>(kind: Kind<T>): Promise<Informer<T>> {
    const informer = this.informerFor(kind);
    if (!informer.hasSynced()) {
      if (!this.signal) throw new Error(`the cache is not started: read ${kind.kind} after mgr.start(), or use mgr.getAPIReader()`);
      await informer.waitForSync(this.options.syncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS, this.signal);
    }
    return informer;
  }

  private checkNamespace(kind: Kind, namespace: string | undefined, what: string): void {
    // Without a namespace a list spans every watched namespace, which is fine.
    if (!kind.namespaced || !this.namespaces || namespace === undefined) return;
    if (!this.namespaces.includes(namespace)) {
      throw new Error(`cannot ${what}: namespace "${namespace}" is not watched by the cache (watched: ${this.namespaces.join(', ')}); add it to WATCH_NAMESPACE or use mgr.getAPIReader()`);
    }
  }
}

/** The cache can only match fields it can read without an index: name and namespace. */
function fieldMatcher(selector: string | undefined): (object: KubernetesObject) => boolean {
  if (!selector) return () => true;
  const tests = selector.split(',').map((term) => {
    const match = term.trim().match(/^(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(.*)$/);
    if (!match) throw new Error(`the cache cannot filter by field selector "${term.trim()}": only metadata.name and metadata.namespace are supported; use mgr.getAPIReader() for other fields`);
    const [, field, op, value] = match;
    return (object: KubernetesObject): boolean => {
      const actual = field === 'metadata.name' ? object.metadata?.name : object.metadata?.namespace;
      return op === '!=' ? actual !== value : actual === value;
    };
  });
  return (object) => tests.every((test) => test(object));
}

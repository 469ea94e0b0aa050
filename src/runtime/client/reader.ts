import type { KubernetesObject, V1ObjectMeta } from '../api/object.js';
import type { Kind, ObjectKey } from '../api/kinds.js';
import type { CallOptions } from './call.js';

/**
 * The metadata fields the API server sets on every object it stores, so every
 * object read back has them. (namespace is not among them: it is set only for
 * namespaced kinds, which a Kind's type does not tell apart.) Note that
 * creationTimestamp keeps @kubernetes/client-node's `Date` type, but holds the
 * RFC 3339 string the server sent: pass it to `new Date(...)` before using it as a date.
 */
export type StoredMetadata = V1ObjectMeta &
  Required<Pick<V1ObjectMeta, 'name' | 'uid' | 'resourceVersion' | 'creationTimestamp'>>;

/**
 * An object as read from (or written to) the API server or the cache: `T` with apiVersion,
 * kind and the {@link StoredMetadata} fields present, so code that reads an
 * object needs no `obj.metadata!.name!`. A `Stored<T>` is still a `T`, so it
 * can be passed to any write.
 */
export type Stored<T extends KubernetesObject> = T & { apiVersion: string; kind: string; metadata: StoredMetadata };

/** Label or field selector, as the API's string form or as equality pairs. */
export type Selector = string | Record<string, string>;

/** Options for `get`: only the {@link CallOptions} (`signal`, `timeoutMs`). */
export type GetOptions = CallOptions;

/** Which objects `list` returns (and `deleteAllOf` deletes), and the call's `signal` and `timeoutMs`. */
export interface ListOptions extends CallOptions {
  /** Only this namespace. Default: every namespace (the cache's watched ones when read from the cache). */
  namespace?: string;
  /** Only objects whose labels match, e.g. `app=web,tier!=db` or `{ app: 'web' }`. Default: no label filter. */
  labelSelector?: Selector;
  /** Only objects whose fields match, e.g. `status.phase=Running`; the cache answers only indexed fields and metadata.name/namespace. Default: no field filter. */
  fieldSelector?: Selector;
  /**
   * Field values to match exactly, as controller-runtime's MatchingFields. The
   * cache answers them from indexes added with `cache.indexField(kind, field, fn)`
   * (and fails for a field without one, except metadata.name and
   * metadata.namespace, which it reads directly); the API reader sends them as a field
   * selector, so there they must be fields the API server can select on.
   * Default: none.
   */
  matchingFields?: Record<string, string>;
}

/**
 * Read access to objects. Both the informer cache and the uncached API reader
 * implement it, so the client can read from either with the same calls.
 */
export interface Reader {
  /** Returns the object or throws NotFoundError. */
  get<T extends KubernetesObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<Stored<T>>;
  /** Returns every object of `kind` that `options` selects (an empty array when none). */
  list<T extends KubernetesObject>(kind: Kind<T>, options?: ListOptions): Promise<Stored<T>[]>;
}

/** The field selector to send to the API server: `fieldSelector` and `matchingFields` together. */
export function fieldSelectorOf(options: Pick<ListOptions, 'fieldSelector' | 'matchingFields'>): string | undefined {
  const parts = [selectorString(options.fieldSelector), selectorString(options.matchingFields)].filter(Boolean);
  return parts.length ? parts.join(',') : undefined;
}

/** The string form the API expects for a selector. */
export function selectorString(selector: Selector | undefined): string | undefined {
  if (selector === undefined) return undefined;
  if (typeof selector === 'string') return selector || undefined;
  const parts = Object.entries(selector).map(([key, value]) => `${key}=${value}`);
  return parts.length ? parts.join(',') : undefined;
}

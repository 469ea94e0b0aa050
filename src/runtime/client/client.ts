import type { KubernetesObject } from '../api/object.js';
import { resourcePath, type Kind, type ObjectKey } from '../api/kinds.js';
import { callSignal, requestBounds, type CallOptions } from './call.js';
import {
  fieldSelectorOf,
  selectorString,
  type GetOptions,
  type ListOptions,
  type Reader,
  type Stored,
} from './reader.js';
import { execInPod, execStreamInPod, type ExecOptions, type ExecResult, type ExecStreamOptions } from '../pod/exec.js';
import { followPodLogs, readPodLogs, type LogOptions } from '../pod/logs.js';
import type { PodReference } from '../pod/subresources.js';
import type { Query, RestClient } from '../transport/rest.js';
import { RestMapper } from '../transport/restmapper.js';

/**
 * Items per list request; the rest come through `continue` tokens. 500 is
 * what client-go's pager asks for: large enough for few round trips, small
 * enough that one response never holds a huge namespace at once.
 */
export const DEFAULT_LIST_PAGE_SIZE = 500;

/** One RFC 6902 JSON Patch operation. */
export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  /** JSON Pointer to the target, e.g. `/spec/replicas` or `/metadata/labels/app~1name`. */
  path: string;
  value?: unknown;
  /** Source pointer for `move` and `copy`. */
  from?: string;
}

/**
 * How `patch` changes an object. `apply` is server-side apply of the object
 * passed to `patch` itself, as the field manager's applied configuration.
 */
export type Patch =
  | { type: 'merge'; data: unknown }
  | { type: 'json'; ops: JsonPatchOperation[] }
  | { type: 'strategic'; data: unknown }
  | { type: 'apply' };

/** An RFC 7386 JSON merge patch: `null` deletes a field, lists are replaced whole. */
export function mergePatch(data: unknown): Patch {
  return { type: 'merge', data };
}

/** An RFC 6902 JSON patch: a list of operations, applied in order. */
export function jsonPatch(ops: JsonPatchOperation[]): Patch {
  return { type: 'json', ops };
}

/**
 * A strategic merge patch, which merges lists by key (containers by name).
 * Only built-in kinds support it; custom resources answer 415.
 */
export function strategicMergePatch(data: unknown): Patch {
  return { type: 'strategic', data };
}

const PATCH_CONTENT_TYPES: Record<Patch['type'], string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  // JSON is YAML, so the object is sent as is.
  apply: 'application/apply-patch+yaml',
};

/** Options shared by every write, with the call's `signal` and `timeoutMs`. */
export interface WriteOptions extends CallOptions {
  /** Validate and admit the write without persisting it, to preview what the server would store. Default: a real write. */
  dryRun?: 'All';
  /** Field manager recorded in managedFields. Default: the client's `fieldOwner`. */
  fieldManager?: string;
}

/** Options for `patch` and `apply`. */
export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of fields other managers own instead of failing with 409. Default: false. */
  force?: boolean;
}

/** Options for `delete`, with the call's `signal` and `timeoutMs`. */
export interface DeleteOptions extends CallOptions {
  /** What happens to dependents. Default: the kind's own policy (usually Background). */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Seconds a Pod gets to shut down before it is killed; 0 deletes at once. Default: the object's own (a Pod's terminationGracePeriodSeconds). */
  gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid and/or resourceVersion (409 otherwise). Default: no precondition. */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Check that the delete would succeed without deleting anything. Default: a real delete. */
  dryRun?: 'All';
}

/**
 * Which objects `deleteAllOf` deletes, and how. Unlike `list`, `namespace`
 * is required for a namespaced kind: the API cannot delete across namespaces.
 */
export interface DeleteAllOfOptions extends ListOptions, DeleteOptions {}

/** Writes to an object's `/status` subresource (controller-runtime's StatusWriter). */
export interface StatusWriter {
  /** Replaces the status; the server ignores changes outside `status`. Returns the object as stored. */
  update<T extends KubernetesObject>(obj: T, options?: WriteOptions): Promise<Stored<T>>;
  /** Patches the status; with `{ type: 'apply' }` the object is the applied status. Returns the object as stored. */
  patch<T extends KubernetesObject>(obj: T, patch: Patch, options?: PatchOptions): Promise<Stored<T>>;
}

/** Construction options for `Client`. */
export interface ClientOptions {
  /** The transport every write (and every uncached read) goes through. Required. */
  rest: RestClient;
  /** Where `get` and `list` read from (the shared informer cache, to spare the API server). Default: the API server. */
  cache?: Reader;
  /** Field manager of writes that name none; server-side apply needs one here or per call. Default: none. */
  fieldOwner?: string;
  /** Items per page for uncached lists (a positive integer). Default: DEFAULT_LIST_PAGE_SIZE (500). */
  listPageSize?: number;
}

/**
 * Reads straight from the API server (controller-runtime's API reader): for
 * the rare read that must not be stale, or kinds the cache does not hold.
 */
export class ApiReader implements Reader {
  constructor(
    private readonly rest: RestClient,
    private readonly pageSize = DEFAULT_LIST_PAGE_SIZE,
  ) {
    if (!Number.isInteger(pageSize) || pageSize < 1)
      throw new Error(`list page size ${pageSize} is not valid: use a positive integer`);
  }

  async get<T extends KubernetesObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<Stored<T>> {
    // Without a name the path would be the collection, and a list would come back as the object.
    if (!key.name) throw new Error(`get ${kind.kind}: the key has no name; pass { namespace, name }`);
    if (kind.namespaced && !key.namespace)
      throw new Error(
        `get ${kind.kind} "${key.name}": the key has no namespace; ${kind.kind} is namespaced, so pass { namespace, name }`,
      );
    const obj = await this.rest.request<Stored<T>>(
      'GET',
      resourcePath(kind, key.namespace, key.name),
      requestBounds(options),
    );
    return withTypeMeta(obj, kind);
  }

  /** Lists every page (following `continue`) and sets apiVersion and kind on each item, which lists leave out. */
  async list<T extends KubernetesObject>(kind: Kind<T>, options: ListOptions = {}): Promise<Stored<T>[]> {
    const path = resourcePath(kind, options.namespace);
    const items: Stored<T>[] = [];
    const bounds = requestBounds(options);
    let continueToken: string | undefined;
    do {
      const page = await this.rest.request<{ items?: Stored<T>[]; metadata?: { continue?: string } }>('GET', path, {
        ...bounds,
        query: {
          labelSelector: selectorString(options.labelSelector),
          fieldSelector: fieldSelectorOf(options),
          limit: this.pageSize,
          continue: continueToken,
        },
      });
      for (const item of page.items ?? []) items.push(withTypeMeta(item, kind));
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return items;
  }
}

/**
 * Reads and writes Kubernetes objects (controller-runtime's client.Client:
 * Reader + Writer + StatusClient). Reads go to the cache when one is given;
 * writes always go to the API server.
 *
 * Consistency, as with controller-runtime's client:
 * - Cached reads (`get`, `list` on a manager's client) are eventually
 *   consistent. The cache learns of a write only when its watch delivers the
 *   event, so a `get` right after your own `create` can throw NotFoundError,
 *   and a read after an `update` can return the older object. Reconcile from
 *   what you read and let the next event (or a requeue) catch up; do not
 *   poll the cache for your own write. For the rare read that must see the
 *   latest state, use `apiReader()` (the manager's `getAPIReader()`).
 * - Writes return a new object, the server's answer (with its
 *   resourceVersion, uid, defaults and status), typed `Stored<T>` as reads
 *   are. The object passed in is
 *   never modified: use the returned object for a following update, or it
 *   will fail with ConflictError on a stale resourceVersion.
 * - `update` is optimistic: it sends the resourceVersion it was given.
 *
 * Requests go through the RestClient, which retries API Priority and
 * Fairness throttling (429 with Retry-After) and bounds each call with its
 * request timeout.
 *
 * Writes find an object's kind from its apiVersion and kind: declared kinds
 * first, then API discovery.
 */
export class Client implements Reader {
  /** The transport every write (and every uncached read) goes through. */
  readonly rest: RestClient;
  /** Resolves objects to kinds; shared with helpers such as createOrUpdate. */
  readonly restMapper: RestMapper;
  /** Field manager used when a write names none. */
  readonly fieldOwner?: string;
  private readonly reader: Reader;
  private readonly uncached: ApiReader;

  constructor(options: ClientOptions) {
    this.rest = options.rest;
    this.fieldOwner = options.fieldOwner;
    this.restMapper = new RestMapper(options.rest);
    this.uncached = new ApiReader(options.rest, options.listPageSize);
    this.reader = options.cache ?? this.uncached;
  }

  /** A reader that always asks the API server, bypassing the cache. */
  apiReader(): Reader {
    return this.uncached;
  }

  /** Returns the object or throws NotFoundError. */
  get<T extends KubernetesObject>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<Stored<T>> {
    return this.reader.get(kind, key, options);
  }

  /** Lists objects of a kind, optionally in one namespace and filtered by label and field selectors. */
  list<T extends KubernetesObject>(kind: Kind<T>, options?: ListOptions): Promise<Stored<T>[]> {
    return this.reader.list(kind, options);
  }

  /** Creates the object; throws AlreadyExistsError if it exists. */
  async create<T extends KubernetesObject>(obj: T, options: WriteOptions = {}): Promise<Stored<T>> {
    const kind = await this.kindForObject(obj, options);
    const created = await this.rest.request<Stored<T>>('POST', resourcePath(kind, namespaceOf(kind, obj, 'create')), {
      ...requestBounds(options),
      query: this.writeQuery(options),
      body: obj,
    });
    return withTypeMeta(created, kind);
  }

  /**
   * Replaces the object. Its resourceVersion makes this an optimistic write:
   * ConflictError if the object changed since it was read.
   */
  async update<T extends KubernetesObject>(obj: T, options: WriteOptions = {}): Promise<Stored<T>> {
    return this.put(obj, options, undefined);
  }

  /** Patches the object with a merge, JSON, strategic merge or server-side apply patch. */
  async patch<T extends KubernetesObject>(obj: T, patch: Patch, options: PatchOptions = {}): Promise<Stored<T>> {
    return this.sendPatch(obj, patch, options, undefined);
  }

  /**
   * Server-side apply of `obj` as this field manager's whole intent: fields it
   * leaves out that the manager set before are removed. Throws ConflictError
   * when another manager owns a field it sets, unless `force` is true.
   *
   * Build `obj` fresh with only the fields you manage. An object read from
   * the server works too (its managedFields are dropped), but then this
   * manager claims every field it carries, and its resourceVersion makes the
   * apply fail with ConflictError if the object changed since the read.
   */
  apply<T extends KubernetesObject>(obj: T, options: PatchOptions = {}): Promise<Stored<T>> {
    return this.sendPatch(obj, { type: 'apply' }, options, undefined);
  }

  /** Deletes the object; NotFoundError if it is already gone. */
  async delete<T extends KubernetesObject>(obj: T, options: DeleteOptions = {}): Promise<void> {
    const kind = await this.kindForObject(obj, options);
    const name = nameOf(obj, 'delete');
    await this.rest.request('DELETE', resourcePath(kind, namespaceOf(kind, obj, 'delete'), name), {
      ...requestBounds(options),
      body: deleteOptionsBody(options),
    });
  }

  /** Deletes every object of a kind in a namespace that matches the selectors, in one request. */
  async deleteAllOf<T extends KubernetesObject>(kind: Kind<T>, options: DeleteAllOfOptions = {}): Promise<void> {
    if (kind.namespaced && !options.namespace) {
      throw new Error(
        `deleteAllOf(${kind.kind}) needs a namespace: ${kind.kind} is namespaced and the API cannot delete it across all namespaces at once`,
      );
    }
    await this.rest.request('DELETE', resourcePath(kind, options.namespace), {
      ...requestBounds(options),
      query: { labelSelector: selectorString(options.labelSelector), fieldSelector: fieldSelectorOf(options) },
      body: deleteOptionsBody(options),
    });
  }

  /** Writes to the `/status` subresource. */
  status(): StatusWriter {
    return {
      update: (obj, options = {}) => this.put(obj, options, 'status'),
      patch: (obj, patch, options = {}) => this.sendPatch(obj, patch, options, 'status'),
    };
  }

  /**
   * Runs `command` in a container of `pod` over the `pods/exec` subresource
   * and returns `{ stdout, stderr, exitCode }`; a non-zero exit code is a
   * result, not an error. `container` may be undefined for a one-container
   * pod. Needs `// +kubebuilder:rbac:groups="",resources=pods/exec,verbs=create;get`.
   * See {@link execInPod} for what it throws.
   */
  exec(
    pod: PodReference,
    container: string | undefined,
    command: readonly string[],
    options?: ExecOptions,
  ): Promise<ExecResult> {
    return execInPod(this.rest, pod, container, command, { ...options, signal: callSignal(options) });
  }

  /** As {@link Client.exec}, streaming stdout and stderr into writables and stdin from an async iterable; resolves with the exit code. */
  execStream(
    pod: PodReference,
    container: string | undefined,
    command: readonly string[],
    options?: ExecStreamOptions,
  ): Promise<{ exitCode: number }> {
    return execStreamInPod(this.rest, pod, container, command, { ...options, signal: callSignal(options) });
  }

  /**
   * Reads a container's log over `pods/log` (tailLines, sinceSeconds,
   * previous, timestamps, limitBytes). Needs
   * `// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get`.
   */
  logs(pod: PodReference, options?: LogOptions): Promise<string> {
    return readPodLogs(this.rest, pod, { ...options, signal: callSignal(options) });
  }

  /** Follows a container's log, line by line, until the container stops or `options.signal` aborts. */
  followLogs(pod: PodReference, options?: LogOptions): AsyncGenerator<string> {
    return followPodLogs(this.rest, pod, { ...options, signal: callSignal(options) });
  }

  private async put<T extends KubernetesObject>(
    obj: T,
    options: WriteOptions,
    subresource: string | undefined,
  ): Promise<Stored<T>> {
    const kind = await this.kindForObject(obj, options);
    const what = subresource ? 'status().update' : 'update';
    const updated = await this.rest.request<Stored<T>>(
      'PUT',
      resourcePath(kind, namespaceOf(kind, obj, what), nameOf(obj, what), subresource),
      {
        ...requestBounds(options),
        query: this.writeQuery(options),
        body: obj,
      },
    );
    return withTypeMeta(updated, kind);
  }

  private async sendPatch<T extends KubernetesObject>(
    obj: T,
    patch: Patch,
    options: PatchOptions,
    subresource: string | undefined,
  ): Promise<Stored<T>> {
    const kind = await this.kindForObject(obj, options);
    const what = subresource ? 'status().patch' : 'patch';
    const query = this.writeQuery(options);
    let body: unknown;
    switch (patch.type) {
      case 'merge':
      case 'strategic':
        body = patch.data;
        break;
      case 'json':
        body = patch.ops;
        break;
      case 'apply':
        if (!query.fieldManager) {
          throw new Error(
            'server-side apply needs a field manager: pass { fieldManager } or construct the Client with fieldOwner',
          );
        }
        if (options.force) query.force = true;
        body = appliedConfiguration(obj);
        break;
      default:
        throw new Error(
          `unknown patch type ${JSON.stringify((patch as { type?: unknown }).type)}: use mergePatch, jsonPatch, strategicMergePatch or { type: 'apply' }`,
        );
    }
    if (options.force && patch.type !== 'apply') {
      throw new Error(`force applies only to server-side apply, not to a ${patch.type} patch: drop the force option`);
    }
    const patched = await this.rest.request<Stored<T>>(
      'PATCH',
      resourcePath(kind, namespaceOf(kind, obj, what), nameOf(obj, what), subresource),
      {
        ...requestBounds(options),
        query,
        body,
        contentType: PATCH_CONTENT_TYPES[patch.type],
      },
    );
    return withTypeMeta(patched, kind);
  }

  /**
   * The object's kind. A kind not declared may need a discovery request,
   * which is not abandoned with the call (other calls share it): the call
   * rejects at once all the same.
   */
  private async kindForObject<T extends KubernetesObject>(obj: T, options: CallOptions): Promise<Kind<T>> {
    const signal = callSignal(options);
    if (!signal) return this.restMapper.kindForObject(obj);
    signal.throwIfAborted();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([this.restMapper.kindForObject(obj), aborted]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private writeQuery(options: WriteOptions): Query {
    return { dryRun: options.dryRun, fieldManager: options.fieldManager ?? this.fieldOwner };
  }
}

/** The server rejects an applied configuration that carries managedFields, and read objects always do. */
function appliedConfiguration<T extends KubernetesObject>(obj: T): T {
  if (!obj.metadata?.managedFields) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

function deleteOptionsBody(options: DeleteOptions): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    propagationPolicy: options.propagationPolicy,
    gracePeriodSeconds: options.gracePeriodSeconds,
    preconditions: options.preconditions,
    dryRun: options.dryRun ? [options.dryRun] : undefined,
  };
}

function nameOf(obj: KubernetesObject, what: string): string {
  const name = obj.metadata?.name;
  if (!name)
    throw new Error(`${what} ${obj.kind ?? 'object'}: metadata.name is empty; set the name of the object to ${what}`);
  return name;
}

function namespaceOf(kind: Kind, obj: KubernetesObject, what: string): string | undefined {
  if (!kind.namespaced) return undefined;
  const namespace = obj.metadata?.namespace;
  if (!namespace) {
    throw new Error(
      `${what} ${kind.kind} "${obj.metadata?.name ?? ''}": metadata.namespace is empty; ${kind.kind} is namespaced, so set the object's namespace`,
    );
  }
  return namespace;
}

/** Single reads and write responses carry apiVersion and kind, but list items do not; make every returned object complete. */
function withTypeMeta<T extends KubernetesObject>(obj: T, kind: Kind): T {
  if (obj.apiVersion && obj.kind) return obj;
  return { ...obj, apiVersion: kind.apiVersion, kind: kind.kind };
}

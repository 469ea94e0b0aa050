/**
 * Owner references, finalizers and create-or-update (controller-runtime's
 * controllerutil). The owner-reference and finalizer helpers only edit the
 * object in memory; write it with the client afterwards.
 */
import type { KubernetesObject } from '../api/object.js';
import type { V1OwnerReference } from '@kubernetes/client-node/dist/gen/models/V1OwnerReference.js';
import type { Client } from '../client/client.js';
import { isNotFound } from '../api/errors.js';
import { parseApiVersion } from '../api/kinds.js';
import { isDeepStrictEqual } from '../node-builtins.js';

/** The object already has a different controller; an object can have only one. */
export class AlreadyOwnedError extends Error {
  constructor(
    readonly object: KubernetesObject,
    readonly owner: V1OwnerReference,
  ) {
    super(
      `${object.kind ?? 'object'} "${object.metadata?.name ?? ''}" is already controlled by ${owner.kind} "${owner.name}": ` +
        'an object can have only one controller; use setOwnerReference for a non-controller owner',
    );
    this.name = 'AlreadyOwnedError';
  }
}

/**
 * Makes `owner` the controller of `object`: the owner reference has
 * controller and blockOwnerDeletion set, so garbage collection deletes the
 * object with its owner and `owns()` watches map it back to the owner.
 * Throws AlreadyOwnedError if another object is the controller.
 */
export function setControllerReference(owner: KubernetesObject, object: KubernetesObject): void {
  const ref: V1OwnerReference = { ...ownerReferenceTo(owner, object), blockOwnerDeletion: true, controller: true };
  const current = (object.metadata?.ownerReferences ?? []).find((existing) => existing.controller === true);
  if (current && !sameOwner(current, ref)) throw new AlreadyOwnedError(object, current);
  upsertOwnerReference(object, ref);
}

/**
 * Adds `owner` as a non-controller owner of `object`, or refreshes the
 * reference if it is there already (keeping its controller and
 * blockOwnerDeletion flags).
 */
export function setOwnerReference(owner: KubernetesObject, object: KubernetesObject): void {
  const ref = ownerReferenceTo(owner, object);
  const existing = (object.metadata?.ownerReferences ?? []).find((candidate) => sameOwner(candidate, ref));
  if (existing?.controller !== undefined) ref.controller = existing.controller;
  if (existing?.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = existing.blockOwnerDeletion;
  upsertOwnerReference(object, ref);
}

/** Removes `owner` from `object`'s owner references; returns whether it was there. */
export function removeOwnerReference(owner: KubernetesObject, object: KubernetesObject): boolean {
  const refs = object.metadata?.ownerReferences;
  if (!refs || !owner.apiVersion || !owner.kind || !owner.metadata?.name) return false;
  const target = {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
  };
  const kept = refs.filter((ref) => !sameOwner(ref, target));
  if (kept.length === refs.length) return false;
  object.metadata!.ownerReferences = kept;
  return true;
}

/** Whether `object` has a controller owner reference (to anything). */
export function hasControllerReference(object: KubernetesObject): boolean {
  return (object.metadata?.ownerReferences ?? []).some((ref) => ref.controller === true);
}

/** Adds the finalizer if missing; returns whether the object changed. */
export function addFinalizer(obj: KubernetesObject, finalizer: string): boolean {
  if (containsFinalizer(obj, finalizer)) return false;
  obj.metadata ??= {};
  obj.metadata.finalizers = [...(obj.metadata.finalizers ?? []), finalizer];
  return true;
}

/** Removes every copy of the finalizer; returns whether the object changed. */
export function removeFinalizer(obj: KubernetesObject, finalizer: string): boolean {
  const finalizers = obj.metadata?.finalizers;
  if (!finalizers?.includes(finalizer)) return false;
  obj.metadata!.finalizers = finalizers.filter((existing) => existing !== finalizer);
  return true;
}

/** Whether the object carries the finalizer. */
export function containsFinalizer(obj: KubernetesObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** What `createOrUpdate` did. */
export type OperationResult = 'created' | 'updated' | 'unchanged';

/**
 * Makes the object on the server match what `mutate` sets: reads the object
 * named by `obj`; if absent, runs `mutate` on `obj` and creates it; otherwise
 * runs `mutate` on the fetched object and updates only if that changed it.
 *
 * `mutate` must set the desired state without changing name or namespace.
 * As in controller-runtime, `obj` is overwritten in place with the server's
 * object, so the caller can read what was written.
 */
export async function createOrUpdate<T extends KubernetesObject>(
  client: Client,
  obj: T,
  mutate: (obj: T) => void | Promise<void>,
): Promise<OperationResult> {
  const kind = await client.restMapper.kindForObject(obj);
  const key = { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' };
  if (!key.name)
    throw new Error(
      `createOrUpdate ${obj.kind}: metadata.name is empty; set the name of the object to create or update`,
    );
  let existing: T;
  try {
    // A copy: the cache may hand out its own object, which must stay untouched.
    existing = structuredClone(await client.get(kind, key));
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await mutateKeepingKey(obj, key, mutate);
    replaceContents(obj, await client.create(obj));
    return 'created';
  }
  const before = structuredClone(existing);
  await mutateKeepingKey(existing, key, mutate);
  if (isDeepStrictEqual(before, existing)) {
    replaceContents(obj, existing);
    return 'unchanged';
  }
  replaceContents(obj, await client.update(existing));
  return 'updated';
}

async function mutateKeepingKey<T extends KubernetesObject>(
  obj: T,
  key: { namespace?: string; name: string },
  mutate: (obj: T) => void | Promise<void>,
): Promise<void> {
  await mutate(obj);
  if (obj.metadata?.name !== key.name || obj.metadata?.namespace !== key.namespace) {
    throw new Error(
      `createOrUpdate: the mutate function changed the object's name or namespace (from ${key.namespace ?? ''}/${key.name} to ` +
        `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}); set name and namespace before calling, not inside mutate`,
    );
  }
}

function replaceContents<T extends object>(target: T, source: T): void {
  if (target === source) return;
  for (const key of Object.keys(target)) delete (target as Record<string, unknown>)[key];
  Object.assign(target, source);
}

function ownerReferenceTo(owner: KubernetesObject, object: KubernetesObject): V1OwnerReference {
  const missing = [
    !owner.apiVersion && 'apiVersion',
    !owner.kind && 'kind',
    !owner.metadata?.name && 'metadata.name',
    !owner.metadata?.uid && 'metadata.uid',
  ].filter(Boolean);
  if (missing.length) {
    throw new Error(
      `owner ${owner.kind ?? 'object'} "${owner.metadata?.name ?? ''}" has no ${missing.join(', ')}: use an owner read from the API server, which has all of them`,
    );
  }
  const ownerNamespace = owner.metadata!.namespace;
  const objectNamespace = object.metadata?.namespace;
  // Scope is judged from the objects themselves: a namespaced object always
  // carries its namespace, a cluster-scoped one never does.
  if (ownerNamespace) {
    if (!objectNamespace) {
      throw new Error(
        `cluster-scoped ${object.kind ?? 'object'} "${object.metadata?.name ?? ''}" cannot have namespaced owner ${owner.kind} "${owner.metadata!.name}": use a cluster-scoped owner`,
      );
    }
    if (objectNamespace !== ownerNamespace) {
      throw new Error(
        `cross-namespace owner references are not allowed: owner ${owner.kind} "${owner.metadata!.name}" is in namespace "${ownerNamespace}", ` +
          `${object.kind ?? 'object'} "${object.metadata?.name ?? ''}" in "${objectNamespace}"; create the object in its owner's namespace`,
      );
    }
  }
  return { apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata!.name!, uid: owner.metadata!.uid! };
}

/** Same owner: same group, kind and name (the version may differ, as in controller-runtime). */
function sameOwner(a: V1OwnerReference, b: V1OwnerReference): boolean {
  return (
    parseApiVersion(a.apiVersion).group === parseApiVersion(b.apiVersion).group &&
    a.kind === b.kind &&
    a.name === b.name
  );
}

function upsertOwnerReference(object: KubernetesObject, ref: V1OwnerReference): void {
  object.metadata ??= {};
  const refs = object.metadata.ownerReferences ?? [];
  const index = refs.findIndex((existing) => sameOwner(existing, ref));
  object.metadata.ownerReferences =
    index < 0 ? [...refs, ref] : refs.map((existing, i) => (i === index ? ref : existing));
}

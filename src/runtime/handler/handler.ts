import type { KubernetesObject } from '../api/object.js';
import { parseApiVersion, type Kind, type ObjectKey } from '../api/kinds.js';

/**
 * Maps one object of a watched event to the reconcile requests it causes, as
 * controller-runtime's handler package. It may be async (a map function that
 * reads the cache, say); the controller queues the requests when it resolves.
 *
 * On an update the controller maps both the old and the new object and
 * queues the union, as controller-runtime's handlers do: an owner reference
 * moved from `a` to `b` reconciles both, an orphaned object reconciles its
 * former owner, and a map function whose answer changed reconciles the old
 * targets as well as the new ones.
 */
export type RequestMapper = (object: KubernetesObject) => ObjectKey[] | Promise<ObjectKey[]>;

/** For(kind): the object itself. */
export function enqueueForObject(): RequestMapper {
  return (object) => [{ namespace: object.metadata?.namespace || undefined, name: object.metadata?.name ?? '' }];
}

/**
 * Owns(kind): the owner named by the object's controller ownerReference, if
 * that owner is of `ownerKind`. Owner references carry no namespace: a
 * namespaced owner lives in the object's namespace.
 */
export function enqueueForOwner(ownerKind: Kind, options: { onlyController?: boolean } = {}): RequestMapper {
  const onlyController = options.onlyController ?? true;
  return (object) =>
    (object.metadata?.ownerReferences ?? [])
      .filter(
        (ref) =>
          (!onlyController || ref.controller === true) &&
          ref.kind === ownerKind.kind &&
          parseApiVersion(ref.apiVersion).group === ownerKind.group,
      )
      .map((ref) => ({ namespace: ownerKind.namespaced ? object.metadata?.namespace : undefined, name: ref.name }));
}

/** Watches(kind, mapFn): whatever the user's function returns (or resolves to). */
export function enqueueFromMapFunc<T extends KubernetesObject>(
  mapFn: (object: T) => ObjectKey[] | Promise<ObjectKey[]>,
): RequestMapper {
  return (object) => mapFn(object as T);
}

import type { KubernetesObject } from '@kubernetes/client-node';
import { parseApiVersion, type Kind, type ObjectKey } from './kinds.js';

/**
 * Maps an event on a watched object to the reconcile requests it causes, as
 * controller-runtime's handler package. The controller queues each request.
 */
export type RequestMapper = (object: KubernetesObject) => ObjectKey[];

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
      .filter((ref) => (!onlyController || ref.controller === true) && ref.kind === ownerKind.kind && parseApiVersion(ref.apiVersion).group === ownerKind.group)
      .map((ref) => ({ namespace: ownerKind.namespaced ? object.metadata?.namespace : undefined, name: ref.name }));
}

/** Watches(kind, mapFn): whatever the user's function returns. */
export function enqueueFromMapFunc<T extends KubernetesObject>(mapFn: (object: T) => ObjectKey[]): RequestMapper {
  return (object) => mapFn(object as T);
}

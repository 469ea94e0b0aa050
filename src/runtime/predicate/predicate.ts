import type { KubernetesObject } from '../api/object.js';
import type { DeleteInfo } from '../cache/informer.js';
import { matchesLabels, parseSelector, requirementsOf, type LabelSelector } from '../api/labels.js';

/**
 * Event filters, as controller-runtime's predicate package: each callback
 * decides whether an event may enqueue a reconcile. A missing callback lets
 * that event type through.
 */
export interface Predicate<T extends KubernetesObject = KubernetesObject> {
  /** Whether a create event is reconciled; left out, it is. */
  create?(object: T): boolean;
  /** Whether an update event is reconciled; left out, it is. */
  update?(oldObject: T, newObject: T): boolean;
  /** `info.finalStateUnknown` is true when a relist, not the watch, found the object gone. */
  delete?(object: T, info: DeleteInfo): boolean;
  /** Whether a generic event (from a ChannelSource) is reconciled; left out, it is. */
  generic?(object: T): boolean;
}

/** Applies one predicate to one event. */
export function admits(predicate: Predicate, event: WatchedEvent): boolean {
  switch (event.type) {
    case 'create':
      return predicate.create?.(event.object) ?? true;
    case 'update':
      return predicate.update?.(event.oldObject, event.object) ?? true;
    case 'delete':
      return predicate.delete?.(event.object, { finalStateUnknown: event.finalStateUnknown ?? false }) ?? true;
    case 'generic':
      return predicate.generic?.(event.object) ?? true;
  }
}

/** An informer event as the controller sees it. */
export type WatchedEvent =
  | { type: 'create' | 'generic'; object: KubernetesObject }
  | { type: 'delete'; object: KubernetesObject; finalStateUnknown?: boolean }
  | { type: 'update'; oldObject: KubernetesObject; object: KubernetesObject };

/** A predicate that applies the same test to the object of every event (the new object on update). */
export function newPredicateFuncs(filter: (object: KubernetesObject) => boolean): Predicate {
  return { create: filter, update: (_old, newer) => filter(newer), delete: filter, generic: filter };
}

/**
 * Passes updates that change metadata.generation, i.e. spec changes for
 * types with a status subresource, so status-only writes don't retrigger.
 */
export const generationChangedPredicate: Predicate = {
  update: (oldObject, newObject) => oldObject.metadata?.generation !== newObject.metadata?.generation,
};

/** Passes updates whose resourceVersion changed (drops resync no-ops). */
export const resourceVersionChangedPredicate: Predicate = {
  update: (oldObject, newObject) => oldObject.metadata?.resourceVersion !== newObject.metadata?.resourceVersion,
};

/** Passes updates that change labels. */
export const labelChangedPredicate: Predicate = {
  update: (oldObject, newObject) => !sameMap(oldObject.metadata?.labels, newObject.metadata?.labels),
};

/** Passes updates that change annotations. */
export const annotationChangedPredicate: Predicate = {
  update: (oldObject, newObject) => !sameMap(oldObject.metadata?.annotations, newObject.metadata?.annotations),
};

/** Passes events for objects whose labels match the selector (string or LabelSelector). */
export function labelSelectorPredicate(selector: string | LabelSelector): Predicate {
  const requirements = typeof selector === 'string' ? parseSelector(selector) : requirementsOf(selector);
  return newPredicateFuncs((object) => matchesLabels(requirements, object.metadata?.labels));
}

/** Passes an event only if every predicate does. */
export function and(...predicates: Predicate[]): Predicate {
  return combine((event) => predicates.every((predicate) => admits(predicate, event)));
}

/** Passes an event if any predicate does. */
export function or(...predicates: Predicate[]): Predicate {
  return combine((event) => predicates.some((predicate) => admits(predicate, event)));
}

/** Inverts a predicate. */
export function not(predicate: Predicate): Predicate {
  return combine((event) => !admits(predicate, event));
}

function combine(test: (event: WatchedEvent) => boolean): Predicate {
  return {
    create: (object) => test({ type: 'create', object }),
    update: (oldObject, object) => test({ type: 'update', oldObject, object }),
    delete: (object, info) => test({ type: 'delete', object, finalStateUnknown: info?.finalStateUnknown }),
    generic: (object) => test({ type: 'generic', object }),
  };
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => left[key] === right[key]);
}

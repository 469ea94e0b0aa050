import type { KubernetesObject } from '../api/object.js';
import type { InformerEventHandler } from '../cache/informer.js';
import type { Kind } from '../api/kinds.js';

/**
 * Receives a source's events. Informers call onAdd, onUpdate and onDelete; a
 * ChannelSource calls onGeneric.
 */
export interface SourceEventHandler<T extends KubernetesObject = KubernetesObject> extends InformerEventHandler<T> {
  /** An object pushed by a ChannelSource, not by a watch. */
  onGeneric?(object: T): void;
}

/**
 * Where a controller's events come from (controller-runtime's source.Source).
 * An Informer is one; a ChannelSource is another.
 */
export interface EventSource<T extends KubernetesObject = KubernetesObject> {
  /** Delivers this source's events to `handler` from now on. */
  addEventHandler(handler: SourceEventHandler<T>): void;
  /** Resolves when the source is ready to deliver; the controller waits for it before starting workers. */
  waitForSync(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** The kind listed and watched, for sources that list one (informers); a ChannelSource has none. */
  readonly kind?: Kind;
}

/**
 * A source of generic events that the operator sends itself, for changes that
 * happen outside the cluster (a webhook from an external system, a timer, a
 * message queue): controller-runtime's source.Channel, used with
 * `builder.watchesRawSource(channel)`. Each `send(object)` becomes a generic
 * event, which the controller maps to requests (by default, the object's own
 * namespace/name) after its predicates' `generic` callbacks admit it.
 *
 * Objects sent before any controller watches the channel are kept and
 * delivered to the first one that does; after that, every watching
 * controller gets every object.
 */
export class ChannelSource<T extends KubernetesObject = KubernetesObject> implements EventSource<T> {
  private readonly handlers: SourceEventHandler<T>[] = [];
  private pending: T[] = [];

  /** Emits a generic event for `object`. */
  send(object: T): void {
    if (!this.handlers.length) {
      this.pending.push(object);
      return;
    }
    for (const handler of this.handlers) handler.onGeneric?.(object);
  }

  /** Subscribes a controller; the first one also receives the objects sent before it. */
  addEventHandler(handler: SourceEventHandler<T>): void {
    this.handlers.push(handler);
    const pending = this.pending;
    this.pending = [];
    for (const object of pending) handler.onGeneric?.(object);
  }

  /** A channel has nothing to sync: it is ready at once. */
  waitForSync(): Promise<void> {
    return Promise.resolve();
  }
}

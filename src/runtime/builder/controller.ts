import type { KubernetesObject } from '../api/object.js';
import {
  Controller,
  type ControllerDefaults,
  type ControllerOptions,
  type Reconciler,
} from '../controller/controller.js';
import { enqueueForObject, enqueueForOwner, enqueueFromMapFunc, type RequestMapper } from '../handler/handler.js';
import type { Kind, ObjectKey } from '../api/kinds.js';
import type { Manager } from '../manager/manager.js';
import type { Predicate } from '../predicate/predicate.js';
import type { EventSource } from '../source/source.js';

interface PendingWatch {
  /** The watched kind, whose informer the cache provides; or a source given as is. */
  kind?: Kind;
  source?: EventSource;
  /** Builds the event → requests mapping once the For kind is known. */
  mapper: (forKind: Kind | undefined) => RequestMapper;
  predicates: Predicate[];
}

/**
 * controller-runtime's builder: `newControllerManagedBy(mgr).for(Memcached)
 * .owns(Deployment).complete(reconciler)`. Every watched kind shares the
 * manager's cache, so two controllers watching Deployments use one watch.
 */
export class ControllerBuilder {
  private forWatch?: PendingWatch & { kind: Kind };
  private readonly otherWatches: PendingWatch[] = [];
  private readonly globalPredicates: Predicate[] = [];
  private options: ControllerOptions = {};
  private name?: string;

  constructor(private readonly mgr: Manager) {}

  /** The kind this controller reconciles; its events enqueue the object itself. */
  for<T extends KubernetesObject>(kind: Kind<T>, options: { predicates?: Predicate[] } = {}): this {
    if (this.forWatch)
      throw new Error(`for() was already called with ${this.forWatch.kind.kind}: a controller reconciles one kind`);
    this.forWatch = { kind, mapper: () => enqueueForObject(), predicates: options.predicates ?? [] };
    return this;
  }

  /** A kind this controller creates; its events enqueue the owner named by the controller ownerReference. */
  owns<T extends KubernetesObject>(
    kind: Kind<T>,
    options: { predicates?: Predicate[]; onlyController?: boolean } = {},
  ): this {
    this.otherWatches.push({
      kind,
      mapper: (forKind) => {
        if (!forKind) throw new Error(`owns(${kind.kind}) needs for(kind): the owner is the For kind`);
        return enqueueForOwner(forKind, { onlyController: options.onlyController });
      },
      predicates: options.predicates ?? [],
    });
    return this;
  }

  /**
   * Any kind, mapped to requests by `mapFn`. The function may be async and
   * may read the cache (`mgr.getClient().list(...)`). On an update it is
   * called for the old and the new object, and both answers are reconciled.
   */
  watches<T extends KubernetesObject>(
    kind: Kind<T>,
    mapFn: (object: T) => ObjectKey[] | Promise<ObjectKey[]>,
    options: { predicates?: Predicate[] } = {},
  ): this {
    this.otherWatches.push({ kind, mapper: () => enqueueFromMapFunc(mapFn), predicates: options.predicates ?? [] });
    return this;
  }

  /**
   * Events from a source other than the cache, such as a ChannelSource the
   * operator sends objects into (controller-runtime's WatchesRawSource with
   * source.Channel). Each object maps to requests through `mapFn`; by default,
   * to the object's own namespace/name.
   */
  watchesRawSource<T extends KubernetesObject>(
    source: EventSource<T>,
    mapFn?: (object: T) => ObjectKey[] | Promise<ObjectKey[]>,
    options: { predicates?: Predicate[] } = {},
  ): this {
    this.otherWatches.push({
      source,
      mapper: () => (mapFn ? enqueueFromMapFunc(mapFn) : enqueueForObject()),
      predicates: options.predicates ?? [],
    });
    return this;
  }

  /** Predicates applied to every watched kind's events. */
  withEventFilter(...predicates: Predicate[]): this {
    this.globalPredicates.push(...predicates);
    return this;
  }

  /** Sets controller options (concurrency, rate limiter...); merged over any set before. */
  withOptions(options: ControllerOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /** The controller's name (metrics label, logs); defaults to the lower-cased For kind. */
  named(name: string): this {
    this.name = name;
    return this;
  }

  /** Builds the controller, wires its watches into the shared cache and registers it with the manager. */
  complete(reconciler: Reconciler): Controller {
    if (!this.forWatch && !this.name) throw new Error('call for(kind) or named(name) before complete()');
    const name = this.name ?? this.forWatch!.kind.kind.toLowerCase();
    if (!/^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/.test(name)) {
      throw new Error(`invalid controller name "${name}": use lower-case letters, digits, '-', '_' or '.'`);
    }
    const forKind = this.forWatch?.kind;
    const watches = [...(this.forWatch ? [this.forWatch] : []), ...this.otherWatches];
    const mappers = watches.map((watch) => watch.mapper(forKind));
    const controller = new Controller(
      name,
      reconciler,
      forKind,
      this.mgr.getLogger(),
      this.mgr.getMetrics(),
      withDefaults(this.options, this.mgr.getControllerOptions()),
    );
    watches.forEach((watch, index) => {
      controller.watch({
        source: watch.source ?? this.mgr.getCache().informerFor(watch.kind!),
        mapper: mappers[index]!,
        predicates: [...this.globalPredicates, ...watch.predicates],
      });
    });
    this.mgr.addController(controller);
    return controller;
  }
}

/** `options`, with each option it leaves undefined taken from the manager's controller defaults. */
function withDefaults(options: ControllerOptions, defaults: ControllerDefaults): ControllerOptions {
  const merged: Record<string, unknown> = { ...options };
  for (const [name, value] of Object.entries(defaults)) merged[name] ??= value;
  return merged;
}

/** Starts a controller definition for `mgr`. */
export function newControllerManagedBy(mgr: Manager): ControllerBuilder {
  return new ControllerBuilder(mgr);
}

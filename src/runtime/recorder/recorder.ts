/**
 * Kubernetes Events about objects (client-go's record.EventRecorder), so
 * `kubectl describe` shows what the operator did. Recording is best effort:
 * a failure is logged, never thrown into the reconcile.
 */
import { hostname } from 'node:os';
import type { KubernetesObject } from '../api/object.js';
import type { CoreV1Event } from '@kubernetes/client-node/dist/gen/models/CoreV1Event.js';
import { Client } from '../client/client.js';
import { toKubernetesTime } from '../api/conditions.js';
import { NotFoundError } from '../api/errors.js';
import { resourcePath, Event } from '../api/kinds.js';
import { silentLogger, type Logger } from '../log/log.js';
import { format } from '../node-builtins.js';
import type { RestClient } from '../transport/rest.js';

/** The two event types the API accepts. */
export type EventType = 'Normal' | 'Warning';

/** Records Events about objects on behalf of one component (controller). */
export interface EventRecorder {
  /**
   * Records an Event about `obj`. The returned promise settles once the
   * Event is written or the failure logged; it never rejects, so callers may
   * ignore it.
   */
  event(obj: KubernetesObject, type: EventType, reason: string, message: string): Promise<void>;
  /** Like `event`, with a printf-style message (`%s`, `%d`, `%j`, and Go's `%v`). */
  eventf(
    obj: KubernetesObject,
    type: EventType,
    reason: string,
    messageFormat: string,
    ...args: unknown[]
  ): Promise<void>;
}

/** Cluster-scoped objects have no namespace of their own; their Events go here, as client-go does. */
const CLUSTER_SCOPED_EVENT_NAMESPACE = 'default';

/**
 * An EventRecorder that writes core/v1 Events with `component` as their
 * source. Recording the same event about the same object again increments
 * the existing Event's count instead of creating another (client-go's
 * correlator does the same); there is no rate limiting.
 */
export function newEventRecorder(
  client: Client | RestClient,
  component: string,
  logger: Logger = silentLogger,
): EventRecorder {
  const rest = client instanceof Client ? client.rest : client;
  return new CoreEventRecorder(rest, component, logger);
}

/** Events remembered for counting repeats; client-go's correlator keeps the same number. */
const MAX_REMEMBERED_EVENTS = 4096;

/** An Event this recorder wrote, so a repeat bumps its count instead of creating another. */
interface RememberedEvent {
  name: string;
  namespace: string;
  count: number;
  /** Writes for one key run one after another, so a repeat never races the create it patches. */
  tail: Promise<void>;
}

class CoreEventRecorder implements EventRecorder {
  private readonly host = hostname();
  private readonly remembered = new Map<string, RememberedEvent>();

  constructor(
    private readonly rest: RestClient,
    private readonly component: string,
    private readonly log: Logger,
  ) {}

  eventf(
    obj: KubernetesObject,
    type: EventType,
    reason: string,
    messageFormat: string,
    ...args: unknown[]
  ): Promise<void> {
    // Operators ported from Go use %v; Node's format does not know it.
    return this.event(obj, type, reason, format(messageFormat.replace(/(?<!%)%v/g, '%s'), ...args));
  }

  event(obj: KubernetesObject, type: EventType, reason: string, message: string): Promise<void> {
    const meta = obj.metadata ?? {};
    const fields = { kind: obj.kind, name: meta.name, namespace: meta.namespace, reason, type };
    if (type !== 'Normal' && type !== 'Warning') {
      this.fail(fields, new Error(`event type ${JSON.stringify(type)} is not valid: use 'Normal' or 'Warning'`));
      return Promise.resolve();
    }
    if (!obj.apiVersion || !obj.kind || !meta.name) {
      this.fail(
        fields,
        new Error(
          'the object has no apiVersion, kind or metadata.name: record events about objects read from the API server',
        ),
      );
      return Promise.resolve();
    }
    const key = JSON.stringify([obj.apiVersion, obj.kind, meta.namespace, meta.name, meta.uid, type, reason, message]);
    let entry = this.remembered.get(key);
    if (entry) {
      // Re-insert so the Map's insertion order doubles as least-recently-used order.
      this.remembered.delete(key);
    } else {
      entry = {
        name: '',
        namespace: meta.namespace || CLUSTER_SCOPED_EVENT_NAMESPACE,
        count: 0,
        tail: Promise.resolve(),
      };
      if (this.remembered.size >= MAX_REMEMBERED_EVENTS) this.remembered.delete(this.remembered.keys().next().value!);
    }
    this.remembered.set(key, entry);
    const remembered = entry;
    remembered.tail = remembered.tail
      .then(() => this.write(obj, type, reason, message, remembered))
      .catch((err: unknown) => this.fail(fields, err));
    return remembered.tail;
  }

  /**
   * Creates the Event, or for a repeat of one already written bumps its
   * count and lastTimestamp, as client-go does, so a reconcile loop that
   * keeps failing the same way leaves one Event, not thousands.
   */
  private async write(
    obj: KubernetesObject,
    type: EventType,
    reason: string,
    message: string,
    entry: RememberedEvent,
  ): Promise<void> {
    const now = new Date();
    const timestamp = toKubernetesTime(now);
    if (entry.count > 0) {
      try {
        await this.rest.request('PATCH', resourcePath(Event, entry.namespace, entry.name), {
          body: { count: entry.count + 1, lastTimestamp: timestamp },
          contentType: 'application/merge-patch+json',
        });
        entry.count++;
        return;
      } catch (err) {
        // Events expire (an hour by default); start a new one.
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    const meta = obj.metadata!;
    const event: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${meta.name}.${uniqueHexNanos(now)}`, namespace: entry.namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      reason,
      message,
      type,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
      // The generated model types these as Date; the API wants metav1.Time strings.
      firstTimestamp: timestamp as unknown as Date,
      lastTimestamp: timestamp as unknown as Date,
      count: 1,
    };
    await this.rest.request('POST', resourcePath(Event, entry.namespace), { body: event });
    entry.name = event.metadata.name!;
    entry.count = 1;
  }

  private fail(fields: Record<string, unknown>, err: unknown): void {
    this.log.error({ ...fields, err }, 'unable to record event');
  }
}

let lastNanos = 0n;

/**
 * client-go names Events `<object>.<unix nanoseconds in hex>`. Date has only
 * milliseconds, so the sub-millisecond part is a counter that keeps names
 * from one process unique.
 */
function uniqueHexNanos(now: Date): string {
  let nanos = BigInt(now.getTime()) * 1_000_000n;
  if (nanos <= lastNanos) nanos = lastNanos + 1n;
  lastNanos = nanos;
  return nanos.toString(16);
}

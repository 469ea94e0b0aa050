/**
 * Kubernetes Events about objects (client-go's record.EventRecorder), so
 * `kubectl describe` shows what the operator did. Recording is best effort:
 * a failure is logged, never thrown into the reconcile.
 */
import { hostname } from 'node:os';
import { format } from 'node:util';
import type { CoreV1Event, KubernetesObject } from '@kubernetes/client-node';
import { Client } from './client.js';
import { toKubernetesTime } from './conditions.js';
import { resourcePath, Event } from './kinds.js';
import { silentLogger, type Logger } from './log.js';
import type { RestClient } from './rest.js';

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
  eventf(obj: KubernetesObject, type: EventType, reason: string, messageFormat: string, ...args: unknown[]): Promise<void>;
}

/** Cluster-scoped objects have no namespace of their own; their Events go here, as client-go does. */
const CLUSTER_SCOPED_EVENT_NAMESPACE = 'default';

/**
 * An EventRecorder that writes core/v1 Events with `component` as their
 * source. Each call creates one Event (count 1); Events are not aggregated
 * or rate-limited as client-go's broadcaster does.
 */
export function newEventRecorder(client: Client | RestClient, component: string, logger: Logger = silentLogger): EventRecorder {
  const rest = client instanceof Client ? client.rest : client;
  return new CoreEventRecorder(rest, component, logger);
}

class CoreEventRecorder implements EventRecorder {
  private readonly host = hostname();

  constructor(
    private readonly rest: RestClient,
    private readonly component: string,
    private readonly log: Logger,
  ) {}

  eventf(obj: KubernetesObject, type: EventType, reason: string, messageFormat: string, ...args: unknown[]): Promise<void> {
    // Operators ported from Go use %v; Node's format does not know it.
    return this.event(obj, type, reason, format(messageFormat.replace(/(?<!%)%v/g, '%s'), ...args));
  }

  async event(obj: KubernetesObject, type: EventType, reason: string, message: string): Promise<void> {
    const meta = obj.metadata ?? {};
    const fields = { kind: obj.kind, name: meta.name, namespace: meta.namespace, reason, type };
    try {
      if (type !== 'Normal' && type !== 'Warning') {
        throw new Error(`event type ${JSON.stringify(type)} is not valid: use 'Normal' or 'Warning'`);
      }
      if (!obj.apiVersion || !obj.kind || !meta.name) {
        throw new Error('the object has no apiVersion, kind or metadata.name: record events about objects read from the API server');
      }
      const namespace = meta.namespace || CLUSTER_SCOPED_EVENT_NAMESPACE;
      const now = new Date();
      const timestamp = toKubernetesTime(now);
      const event: CoreV1Event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${meta.name}.${uniqueHexNanos(now)}`, namespace },
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
      await this.rest.request('POST', resourcePath(Event, namespace), { body: event });
    } catch (err) {
      this.log.error({ ...fields, err }, 'unable to record event');
    }
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

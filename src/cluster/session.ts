/**
 * The cluster session shared by `olm`, `run bundle`, `cleanup` and `create api
 * --from-cluster`: one REST client from the kubeconfig, bounded by the
 * command's --timeout (./connection.ts), object paths found through
 * discovery, and the polling wait these commands use (they wait on a few
 * objects for minutes at most, so a poll every second is simpler than
 * watches and as good).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import { ApiConnectionError, NoKindMatchError, NotFoundError, RequestTimeoutError } from '../runtime/api/errors.js';
import { resourcePath } from '../runtime/api/kinds.js';
import { loadKubeConfig, type KubeConfigSource } from '../runtime/transport/kubeconfig.js';
import type { KubernetesObject } from '../runtime/api/object.js';
import type { UnstructuredObject } from '../runtime/api/unstructured.js';
import { RestMapper } from '../runtime/transport/restmapper.js';
import {
  BoundedRestClient,
  CommandTimeoutError,
  explainFailure,
  probeApiServer,
  serverOf,
  type KubeconfigHint,
} from './connection.js';

/**
 * The runtime's untyped object as the cluster commands read it from or send it
 * to the API server: the spec and status fields they read by name typed.
 */
export type ClusterObject = UnstructuredObject & {
  spec?: ObjectSpec;
  status?: ObjectStatus;
};

/** The spec fields the cluster commands read by name, typed as every kind they read has them. */
interface ObjectSpec {
  version?: string;
  replicas?: number;
  [field: string]: unknown;
}

/** The status fields the cluster commands read by name (CSV, InstallPlan, Subscription, Pod, Deployment). */
interface ObjectStatus {
  phase?: string;
  reason?: string;
  message?: string;
  state?: string;
  availableReplicas?: number;
  [field: string]: unknown;
}

/** The API group OLM's kinds live in. */
export const OLM_GROUP = 'operators.coreos.com';
export const OLM_V1ALPHA1 = `${OLM_GROUP}/v1alpha1`;
export const OLM_V1 = `${OLM_GROUP}/v1`;
/** How often waits look again. */
const POLL_MS = 1000;

/** Parses operator-sdk's duration flags (`2m`, `90s`, `1m30s`, `500ms`) into milliseconds. */
export function parseDuration(flag: string, text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  const rest = text.replace(/(\d+(?:\.\d+)?)(ms|s|m|h)/g, (_all, value: string, unit: string) => {
    total += Number(value) * units[unit]!;
    return '';
  });
  if (text === '' || rest !== '' || total <= 0)
    throw new UsageError(`${flag} ${text} is not a duration`, `pass a Go-style duration such as 2m, 90s or 1m30s`);
  return total;
}

/** How a command opens its session. */
export interface SessionOptions {
  /** --kubeconfig; undefined: KUBECONFIG, in-cluster, ~/.kube/config (kubectl's order). */
  kubeconfig?: string;
  /** An already loaded kubeconfig, instead of `kubeconfig`. */
  config?: KubeConfigSource;
  /** --timeout: the whole command's time, every request and wait included. */
  timeoutMs: number;
  /** How the user names the kubeconfig in fixes. Default: `--kubeconfig or KUBECONFIG`. */
  hint?: KubeconfigHint;
}

/**
 * A connection to the cluster for one command run, bounded by the command's
 * --timeout (see ./connection.ts). Call `close()` when done.
 */
export class KubeSession {
  readonly rest: BoundedRestClient;
  readonly mapper: RestMapper;
  private readonly hint: KubeconfigHint;

  private constructor(rest: BoundedRestClient, hint: KubeconfigHint) {
    this.rest = rest;
    this.hint = hint;
    this.mapper = new RestMapper(rest);
  }

  /**
   * Loads the kubeconfig as kubectl and operator-sdk do (--kubeconfig,
   * KUBECONFIG, in-cluster, ~/.kube/config), starts the command's clock, and
   * checks that the server answers and is a Kubernetes API server; a one-line
   * UsageError otherwise.
   */
  static async connect(options: SessionOptions): Promise<KubeSession> {
    const hint = options.hint ?? '--kubeconfig or KUBECONFIG';
    let config = options.config;
    if (!config) {
      try {
        config = loadKubeConfig(options.kubeconfig);
      } catch (err) {
        const message = (err as Error).message;
        // The loader's messages read `<problem>: <fix>` when they carry a fix.
        const noContext = /^(.* has no current-context): (.+)$/.exec(message);
        if (noContext) throw new UsageError(noContext[1]!, noContext[2]!, { cause: err });
        throw new UsageError(
          `cannot load a kubeconfig: ${message.replace(/:.*$/, '')}`,
          `pass --kubeconfig <file> or set KUBECONFIG to your cluster's kubeconfig`,
          { cause: err },
        );
      }
    }
    const session = new KubeSession(new BoundedRestClient(config, options.timeoutMs), hint);
    try {
      await probeApiServer(session.rest, hint);
    } catch (err) {
      await session.close();
      throw err;
    }
    return session;
  }

  /** The API server's URL. */
  get server(): string {
    return serverOf(this.rest, this.hint);
  }

  /** Aborts when the command's time ends: for work other than API requests (downloads, registry pulls). */
  get signal(): AbortSignal {
    return this.rest.signal;
  }

  /**
   * Grants `ms` more from now, once the command's time ran out or it failed:
   * to say what blocked it and to delete what it created. The first request
   * the server does not answer in overtime ends it.
   */
  overtime(ms: number): void {
    this.rest.overtime(ms);
  }

  /**
   * Polls `probe` until it returns a value, or until the session's time (or
   * the earlier `until`, epoch ms) runs out: then undefined, and the caller
   * names what it was waiting for. A probe cut off by the end of the time
   * counts as not done yet.
   */
  async pollUntil<T>(probe: () => Promise<T | undefined>, until = this.rest.endsAt): Promise<T | undefined> {
    for (;;) {
      if (this.rest.expired || Date.now() >= until) return undefined;
      let value: T | undefined;
      try {
        value = await probe();
      } catch (err) {
        if (this.rest.expired && err instanceof CommandTimeoutError) return undefined;
        throw err;
      }
      if (value !== undefined) return value;
      const left = Math.min(until, this.rest.endsAt) - Date.now();
      if (left <= 0) return undefined;
      await sleep(Math.min(POLL_MS, left));
    }
  }

  /** The CLI's one line for a failure while `doing` something (see explainFailure). */
  failure(err: unknown, doing: string): unknown {
    return explainFailure(err, this.rest, this.hint, doing);
  }

  /** The namespace of the kubeconfig's current context, else `default` (operator-sdk's -n default). */
  defaultNamespace(): string {
    const config = this.rest.kubeConfig as {
      getCurrentContext?: () => string;
      getContextObject?: (name: string) => { namespace?: string } | null;
    };
    const context =
      config.getCurrentContext && config.getContextObject ? config.getContextObject(config.getCurrentContext()) : null;
    return context?.namespace || 'default';
  }

  /** The REST path of an object (its collection when `withName` is false). */
  async pathOf(obj: KubernetesObject, withName = true): Promise<string> {
    const kind = await this.mapper.kindFor(obj.apiVersion!, obj.kind!);
    return resourcePath(
      kind,
      kind.namespaced ? obj.metadata?.namespace : undefined,
      withName ? obj.metadata?.name : undefined,
    );
  }

  /** Whether the server serves this kind (false when its CRD is missing). */
  async serves(apiVersion: string, kind: string): Promise<boolean> {
    try {
      await this.mapper.kindFor(apiVersion, kind);
      return true;
    } catch (err) {
      if (err instanceof NoKindMatchError) return false;
      throw err;
    }
  }

  async create<T extends ClusterObject>(obj: T): Promise<T> {
    return this.rest.request<T>('POST', await this.pathOf(obj, false), { body: obj });
  }

  async mergePatch<T extends ClusterObject>(obj: KubernetesObject, patch: unknown, subresource?: string): Promise<T> {
    return this.rest.request<T>('PATCH', (await this.pathOf(obj)) + (subresource ? `/${subresource}` : ''), {
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }

  /** The object, or undefined when it (or its kind) does not exist. */
  async get<T extends ClusterObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    try {
      return await this.rest.request<T>('GET', await this.pathOf({ apiVersion, kind, metadata: { name, namespace } }));
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof NoKindMatchError) return undefined;
      throw err;
    }
  }

  /** Every object of a kind (in a namespace, with a label selector); empty when the kind is not served. */
  async list<T extends ClusterObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
    labelSelector?: string,
  ): Promise<T[]> {
    let path: string;
    try {
      path = await this.pathOf({ apiVersion, kind, metadata: { namespace } }, false);
    } catch (err) {
      if (err instanceof NoKindMatchError) return [];
      throw err;
    }
    const list = await this.rest.request<{ items?: T[] }>('GET', path, { query: { labelSelector } });
    return (list.items ?? []).map((item) => ({ ...item, apiVersion, kind }));
  }

  /** Deletes the object (foreground for owned objects); true if it was there. */
  async delete(obj: KubernetesObject): Promise<boolean> {
    try {
      await this.rest.request('DELETE', await this.pathOf(obj), {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
      });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof NoKindMatchError) return false;
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.rest.close();
  }
}

/** Whether `err` means the server gave no answer in time or no answer at all (as opposed to refusing a request). */
export function isUnanswered(err: unknown): boolean {
  return err instanceof CommandTimeoutError || err instanceof RequestTimeoutError || err instanceof ApiConnectionError;
}

/** `kind/name` or `kind namespace/name`, for messages. */
export function describeObject(obj: KubernetesObject): string {
  return `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;
}

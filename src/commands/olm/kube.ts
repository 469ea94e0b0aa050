/**
 * The cluster side shared by `olm`, `run bundle` and `cleanup`: one REST
 * client from the kubeconfig, object paths found through discovery, and the
 * polling wait these commands use (they wait on a few objects for minutes at
 * most, so a poll every second is simpler than watches and as good).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../../errors.js';
import { ApiConnectionError, ApiError, NotFoundError } from '../../runtime/errors.js';
import { resourcePath } from '../../runtime/kinds.js';
import { loadKubeConfig } from '../../runtime/kubeconfig.js';
import { RestClient } from '../../runtime/rest.js';
import { NoKindMatchError, RestMapper } from '../../runtime/restmapper.js';

/** A Kubernetes object as read from or sent to the API server, untyped. */
export type KubeObject = KubernetesObject & { spec?: Record<string, any>; status?: Record<string, any>; [key: string]: unknown };

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
  if (text === '' || rest !== '' || total <= 0) throw new UsageError(`${flag} ${text} is not a duration`, `pass a Go-style duration such as 2m, 90s or 1m30s`);
  return total;
}

/** A connection to the cluster for one command run. Call `close()` when done. */
export class KubeSession {
  readonly rest: RestClient;
  readonly mapper: RestMapper;

  private constructor(rest: RestClient) {
    this.rest = rest;
    this.mapper = new RestMapper(rest);
  }

  /** Loads the kubeconfig as kubectl and operator-sdk do (--kubeconfig, KUBECONFIG, in-cluster, ~/.kube/config). */
  static open(kubeconfig: string | undefined): KubeSession {
    try {
      return new KubeSession(new RestClient(loadKubeConfig(kubeconfig), { userAgent: 'ts-operator-sdk', timeoutMs: 30_000, maxRetries: 3 }));
    } catch (err) {
      throw new UsageError(`cannot load a kubeconfig: ${(err as Error).message.replace(/:.*$/, '')}`, 'pass --kubeconfig <file> or set KUBECONFIG to your cluster\'s kubeconfig', { cause: err });
    }
  }

  /** The namespace of the kubeconfig's current context, else `default` (operator-sdk's -n default). */
  defaultNamespace(): string {
    const config = this.rest.kubeConfig as { getCurrentContext?: () => string; getContextObject?: (name: string) => { namespace?: string } | null };
    const context = config.getCurrentContext && config.getContextObject ? config.getContextObject(config.getCurrentContext()) : null;
    return context?.namespace || 'default';
  }

  /** The REST path of an object (its collection when `withName` is false). */
  async pathOf(obj: KubernetesObject, withName = true): Promise<string> {
    const kind = await this.mapper.kindFor(obj.apiVersion!, obj.kind!);
    return resourcePath(kind, kind.namespaced ? obj.metadata?.namespace : undefined, withName ? obj.metadata?.name : undefined);
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

  async create<T extends KubeObject>(obj: T): Promise<T> {
    return this.rest.request<T>('POST', await this.pathOf(obj, false), { body: obj });
  }

  async mergePatch<T extends KubeObject>(obj: KubernetesObject, patch: unknown, subresource?: string): Promise<T> {
    return this.rest.request<T>('PATCH', (await this.pathOf(obj)) + (subresource ? `/${subresource}` : ''), { body: patch, contentType: 'application/merge-patch+json' });
  }

  /** The object, or undefined when it (or its kind) does not exist. */
  async get<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | undefined> {
    try {
      return await this.rest.request<T>('GET', await this.pathOf({ apiVersion, kind, metadata: { name, namespace } }));
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof NoKindMatchError) return undefined;
      throw err;
    }
  }

  /** Every object of a kind (in a namespace, with a label selector); empty when the kind is not served. */
  async list<T extends KubeObject>(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<T[]> {
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
      await this.rest.request('DELETE', await this.pathOf(obj), { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } });
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

/**
 * Polls `probe` until it returns a value, or until `deadline` (epoch ms).
 * On timeout returns undefined; the caller names what it was waiting for.
 */
export async function pollUntil<T>(deadline: number, probe: () => Promise<T | undefined>): Promise<T | undefined> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) return undefined;
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
  }
}

/** `kind/name` or `kind namespace/name`, for messages. */
export function describeObject(obj: KubernetesObject): string {
  return `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;
}

/**
 * Turns an API failure into the CLI's one line: the server being unreachable
 * or refusing us are the user's to fix; anything else is passed on.
 */
export function clusterError(err: unknown, doing: string): unknown {
  if (err instanceof UsageError) return err;
  if (err instanceof ApiConnectionError) return new UsageError(`cannot reach the cluster while ${doing}: ${err.message.split('\n')[0]}`, 'check that the cluster is up and that --kubeconfig or KUBECONFIG points at it', { cause: err });
  if (err instanceof ApiError) {
    const status = err.statusCode;
    const fix = status === 401 || status === 403 ? 'use a kubeconfig whose user may manage these objects (cluster-admin for OLM)' : 'check the cluster state with kubectl and run the command again';
    return new UsageError(`the API server refused a request while ${doing}: ${err.message.split('\n')[0]}`, fix, { cause: err });
  }
  return err;
}

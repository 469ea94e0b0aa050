import type { KubeConfigSource } from '../../src/runtime/transport/index.js';
import { Agent, fetch } from 'undici';

/** A response with its headers: the runtime's RestClient returns bodies only, and some tests need `Warning` headers. */
export interface RawResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/**
 * Sends one request to the API server with the kubeconfig's client
 * certificate (envtest users authenticate by certificate), and returns
 * status, headers and the parsed body.
 */
export function rawClient(kubeConfig: KubeConfigSource): {
  request(method: string, path: string, body?: unknown): Promise<RawResponse>;
  close(): Promise<void>;
} {
  const cluster = kubeConfig.getCurrentCluster();
  const user = kubeConfig.getCurrentUser();
  if (!cluster || !user?.certData || !user.keyData || !cluster.caData)
    throw new Error('rawClient needs a kubeconfig with a client certificate and a CA');
  const decode = (data: string): string => Buffer.from(data, 'base64').toString('utf8');
  const agent = new Agent({
    connect: { ca: decode(cluster.caData), cert: decode(user.certData), key: decode(user.keyData) },
  });
  return {
    async request(method, path, body) {
      const response = await fetch(`${cluster.server}${path}`, {
        method,
        dispatcher: agent,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers as unknown as Headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
    },
    close: () => agent.close(),
  };
}

/** The texts of the `Warning: 299 - "..."` headers the API server relays from admission webhooks. */
export function warningsOf(headers: Headers): string[] {
  const raw = headers.get('warning');
  if (!raw) return [];
  return [...raw.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((match) => (match[1] ?? '').replace(/\\(.)/g, '$1'));
}

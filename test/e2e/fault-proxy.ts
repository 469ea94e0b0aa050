/**
 * A fault injector, not a mock: a plain-HTTP proxy on loopback in front of the
 * real kube-apiserver of an envtest Environment. Every request that no rule
 * faults is forwarded to the real server, which answers it; the proxy adds the
 * upstream credentials itself (as `kubectl proxy` does), so a client's
 * kubeconfig needs none.
 *
 * It exists for the failures a healthy API server cannot produce on demand:
 * a request that hangs, API Priority and Fairness throttling (429 with
 * Retry-After), a watch the server closes at once or that goes silent, 5xx
 * answers, reset or refused connections, and "too large resource version". Tests choose which requests are faulted with
 * rules, so one replica's Lease requests can be black-holed while the rest
 * of its traffic, and every other process's, reaches the server untouched.
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { RestConfig, type KubeConfigSource } from '../../src/runtime/transport/index.js';

/** Which requests a rule applies to; every given field must match. */
export interface RequestMatch {
  method?: string;
  /** Tested against the URL path without the query, e.g. `/\/leases\//`. */
  path?: RegExp;
  /** true: only watch requests (`?watch=true`); false: only the others. */
  watch?: boolean;
  /** Tested against the raw query string (without `?`). */
  query?: RegExp;
}

/** What the proxy does with a matching request instead of (or before) forwarding it. */
export type FaultAction =
  /** Never answered, until the rule is removed or the proxy stops; then the client's socket is destroyed. */
  | { type: 'hang' }
  /** Answered by the proxy with this status; `body` defaults to a metav1.Status for the code. */
  | { type: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** A watch that the server closes at once: 200 with watch headers, then the end of the stream, no events. */
  | { type: 'close-watch' }
  /** A watch that carries one ERROR event with `status` and then ends. */
  | { type: 'watch-error'; status: object }
  /** A watch that is answered (200, watch headers) and then never carries a byte, as over a half-open connection; held until the rule is removed. */
  | { type: 'silent-watch' }
  /** Forwarded to the real server after a delay. */
  | { type: 'delay'; ms: number }
  /** The client's socket is destroyed without an answer. */
  | { type: 'reset' };

export interface FaultRule {
  match: RequestMatch;
  action: FaultAction;
  /** Fault only the first N matching requests; later ones pass through. Unlimited when omitted. */
  times?: number;
}

/** One request as the proxy saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  watch: boolean;
  /** When it arrived, on the `performance.now()` clock. */
  at: number;
  /** The action type of the rule that faulted it, if any. */
  fault?: FaultAction['type'];
  /** The status code the client got, once known (absent for hung or reset requests). */
  status?: number;
  /** Which client connection it came on: 1 for the proxy's first, 2 for its second, and so on. */
  connection: number;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** A KubeConfig that points at the proxy; it needs no credentials. */
  readonly kubeConfig: RestConfig;
  /** The same KubeConfig written to a file, for child processes (`KUBECONFIG=...`). */
  kubeConfigPath(): string;
  /** Adds a rule (rules are tried in the order added); returns its remover. */
  addRule(rule: FaultRule): () => void;
  /** Removes every rule and destroys the requests they hold hung. */
  clearRules(): void;
  /** Stops accepting connections and destroys the open ones, so every request fails at once with ECONNREFUSED. */
  refuseConnections(): Promise<void>;
  /** Every request seen, in arrival order. */
  readonly requests: readonly SeenRequest[];
  /** How many requests seen so far match. */
  count(match?: RequestMatch): number;
  /** Stops listening and destroys every open connection. */
  stop(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The upstream identity; the admin (`env.kubeConfig`) by default. */
  user?: KubeConfigSource;
}

/** A metav1.Status for "too large resource version", as the API server sends it (code 504, cause ResourceVersionTooLarge). */
export function tooLargeResourceVersion(): object {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Timeout: Too large resource version: 999999999, current: 1000',
    reason: 'Timeout',
    details: {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    },
    code: 504,
  };
}

const REASONS: Record<number, string> = {
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function statusBody(code: number): object {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `injected by the fault proxy: ${code}`,
    reason: REASONS[code] ?? 'Unknown',
    code,
  };
}

function isWatch(query: URLSearchParams): boolean {
  const value = query.get('watch');
  return value === 'true' || value === '1';
}

function matches(
  match: RequestMatch | undefined,
  request: Pick<SeenRequest, 'method' | 'path' | 'query' | 'watch'>,
): boolean {
  if (!match) return true;
  if (match.method !== undefined && match.method.toUpperCase() !== request.method) return false;
  if (match.path !== undefined && !match.path.test(request.path)) return false;
  if (match.watch !== undefined && match.watch !== request.watch) return false;
  if (match.query !== undefined && !match.query.test(request.query)) return false;
  return true;
}

interface ActiveRule extends FaultRule {
  used: number;
  /** Requests this rule holds hung, destroyed when it is removed. */
  held: Set<ServerResponse>;
}

/** Reads the upstream server and TLS material from a KubeConfig (envtest's use client certificates). */
function upstreamOf(user: KubeConfigSource): { server: URL; agent: Agent; token?: string } {
  const cluster = user.getCurrentCluster();
  const current = user.getCurrentUser();
  if (!cluster) throw new Error('fault proxy: the upstream kubeconfig has no current cluster');
  const decode = (data?: string) => (data ? Buffer.from(data, 'base64') : undefined);
  const agent = new Agent({
    keepAlive: true,
    ca: decode(cluster.caData),
    cert: decode(current?.certData),
    key: decode(current?.keyData),
    rejectUnauthorized: !cluster.skipTLSVerify,
  });
  return { server: new URL(cluster.server), agent, token: current?.token };
}

/** Starts a fault proxy in front of a started envtest Environment. */
export async function startFaultProxy(env: Environment, options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const upstream = upstreamOf(options.user ?? env.kubeConfig);
  const rules: ActiveRule[] = [];
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();

  const removeRule = (rule: ActiveRule): void => {
    const index = rules.indexOf(rule);
    if (index >= 0) rules.splice(index, 1);
    for (const response of rule.held) response.socket?.destroy();
    rule.held.clear();
  };

  const forward = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest): void => {
    const headers = { ...req.headers, host: upstream.server.host };
    delete headers.authorization;
    if (upstream.token) headers.authorization = `Bearer ${upstream.token}`;
    const outgoing = httpsRequest(
      {
        protocol: 'https:',
        hostname: upstream.server.hostname,
        port: upstream.server.port,
        path: req.url,
        method: req.method,
        headers,
        agent: upstream.agent,
      },
      (incoming) => {
        seen.status = incoming.statusCode;
        res.writeHead(incoming.statusCode ?? 502, incoming.headers);
        // Watches stream: pass each chunk on as it arrives.
        res.flushHeaders();
        incoming.pipe(res);
        incoming.on('error', () => res.destroy());
      },
    );
    outgoing.on('error', () => res.destroy());
    // A client that goes away ends the upstream request too (a watch must not linger).
    res.on('close', () => outgoing.destroy());
    req.pipe(outgoing);
  };

  const connectionIds = new Map<Socket, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const seen: SeenRequest = {
      method: (req.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      watch: isWatch(url.searchParams),
      at: performance.now(),
      connection: connectionIds.get(req.socket) ?? 0,
    };
    requests.push(seen);
    const rule = rules.find(
      (candidate) =>
        (candidate.times === undefined || candidate.used < candidate.times) && matches(candidate.match, seen),
    );
    if (!rule) return forward(req, res, seen);
    rule.used++;
    seen.fault = rule.action.type;
    const action = rule.action;
    switch (action.type) {
      case 'hang':
        req.resume();
        rule.held.add(res);
        res.on('close', () => rule.held.delete(res));
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'delay':
        void sleep(action.ms).then(() => (res.destroyed ? undefined : forward(req, res, seen)));
        return;
      case 'status': {
        req.resume();
        seen.status = action.status;
        const body = JSON.stringify(action.body ?? statusBody(action.status));
        res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
        res.end(body);
        return;
      }
      case 'silent-watch':
        req.resume();
        seen.status = 200;
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        res.flushHeaders();
        rule.held.add(res);
        res.on('close', () => rule.held.delete(res));
        return;
      case 'close-watch':
      case 'watch-error':
        req.resume();
        seen.status = 200;
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        if (action.type === 'watch-error') res.write(`${JSON.stringify({ type: 'ERROR', object: action.status })}\n`);
        res.end();
        return;
    }
  });
  server.on('connection', (socket) => {
    connectionIds.set(socket, connectionIds.size + 1);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const kubeConfig = new RestConfig(
    // client-node (a child process may use it) refuses plain HTTP unless TLS verification is off; there is no TLS to verify.
    [{ name: 'fault-proxy', server: url, skipTLSVerify: true }],
    [{ name: 'fault-proxy' }],
    [{ name: 'fault-proxy', cluster: 'fault-proxy', user: 'fault-proxy' }],
    'fault-proxy',
  );
  let configDir: string | undefined;
  let configPath: string | undefined;

  return {
    url,
    kubeConfig,
    kubeConfigPath() {
      if (!configPath) {
        configDir = mkdtempSync(join(tmpdir(), 'fault-proxy-'));
        configPath = join(configDir, 'kubeconfig');
        writeFileSync(configPath, kubeConfig.exportConfig(), { mode: 0o600 });
      }
      return configPath;
    },
    addRule(rule) {
      const active: ActiveRule = { ...rule, used: 0, held: new Set() };
      rules.push(active);
      return () => removeRule(active);
    },
    clearRules() {
      for (const rule of [...rules]) removeRule(rule);
    },
    async refuseConnections() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    requests,
    count(match) {
      return requests.filter((request) => matches(match, request)).length;
    },
    async stop() {
      for (const rule of [...rules]) removeRule(rule);
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      upstream.agent.destroy();
      if (configDir) rmSync(configDir, { recursive: true, force: true });
    },
  };
}

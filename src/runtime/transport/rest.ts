import type { Agent as HttpAgent, ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  clusterTls,
  credentialSource,
  proxyAgent,
  type ClusterTls,
  type CredentialSource,
  type RequestCredentials,
} from './credentials.js';
import { ApiConnectionError, RequestTimeoutError, apiErrorFrom } from '../api/errors.js';
import { HttpAgent as PlainAgent, httpRequest } from '../node-builtins.js';
import type { KubeConfigSource } from './kubeconfig.js';

/** One event from a watch stream. */
export interface WatchEvent<T = Record<string, unknown>> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** URL query parameters of a call; `undefined` values are left out, so optional ones need no branching. */
export type Query = Record<string, string | number | boolean | undefined>;

/** What one {@link RestClient.request} call sends, and how long it may take. */
export interface RequestOptions {
  /** Query parameters (labelSelector, fieldManager, dryRun...). Default: none. */
  query?: Query;
  /** The request body: a string is sent as is, anything else as JSON. Default: no body. */
  body?: unknown;
  /** Content type of `body`; patches name theirs (merge, JSON, strategic, apply). Default: `application/json`. */
  contentType?: string;
  /** Aborts the call, retries and waits included, e.g. when a reconcile is cancelled. Default: none. */
  signal?: AbortSignal;
  /**
   * Overrides the client's `timeoutMs` for this call (0: no limit). It bounds
   * the whole call: every attempt, the waits between retries, and reading
   * the response body. Default: the client's `timeoutMs`.
   */
  timeoutMs?: number;
  /**
   * How a successful response body is read: `json` parses it (text that is
   * not JSON is returned as a string), `text` returns it as is, for plain-text
   * answers such as a pod's log, which may happen to look like JSON.
   * Default: `json`. Error statuses are always parsed as a Status.
   */
  responseType?: 'json' | 'text';
}

/**
 * Where and how a WebSocket upgrade (pods/exec) reaches the API server as
 * this client: the URL, the credential headers, the TLS material, and the
 * kubeconfig's proxy agent if it has one.
 */
export interface UpgradeTarget {
  url: URL;
  headers: Record<string, string>;
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  servername?: string;
  agent?: HttpAgent;
  /**
   * Sends the upgrade request (ws's `finishRequest` option): an upgrade such
   * as pods/exec changes the cluster, so it passes the client's write fence
   * as every write does, and is destroyed with the fence's error if refused.
   */
  finishRequest: (request: ClientRequest) => void;
}

/**
 * No call may take longer than this by default. client-go sets no client
 * timeout and leaves it to the API server, whose own `--request-timeout`
 * ends every non-watch request after 60 s; but a server (or a proxy, or a
 * half-open connection) that never answers would otherwise hold a reconcile
 * for as long as the socket stays open. So we bound it on the client at the
 * server's own limit: a healthy server never takes longer.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** client-go's default: a request is retried at most 10 times after the first attempt. */
export const DEFAULT_MAX_RETRIES = 10;

/**
 * The wait before retrying a GET whose connection was reset: client-go
 * treats such a failure as a `Retry-After: 1` from the server.
 */
const CONNECTION_RESET_RETRY_MS = 1000;

/** Construction options for `RestClient`. */
export interface RestClientOptions {
  /** Sent as `User-Agent`; the API server also names a write's field manager after it when none is given. Default: `ts-operator-sdk`. */
  userAgent?: string;
  /**
   * Bound on each call, in milliseconds; 0 turns it off. Watches are not
   * bounded by it once the server has answered (see `watch`).
   * Default: DEFAULT_REQUEST_TIMEOUT_MS (60 s).
   */
  timeoutMs?: number;
  /** Retries of one call: after a 429 or 5xx that carries `Retry-After`, and of a GET whose connection was reset. Default: DEFAULT_MAX_RETRIES (10). */
  maxRetries?: number;
  /**
   * Called with the text of each `Warning` header the API server sends
   * (deprecated APIs, admission webhooks' warnings), as client-go's
   * WarningHandler. Default: none, the warnings are dropped.
   */
  warningHandler?: (warning: string) => void;
}

/** Called once per HTTP attempt, for metrics and request counting. */
export type RequestObserver = (info: {
  method: string;
  path: string;
  /** The response's status, or 0 when the attempt got no response (connection error, timeout). */
  statusCode: number;
  durationSeconds: number;
  /** 1 for the first attempt of a call, 2 and up for its retries. */
  attempt: number;
}) => void;

/**
 * Decides whether a write may leave for the API server: it returns to let it
 * go and throws to refuse it, and the caller gets what it threw. It runs
 * synchronously at the last moment before the request's bytes go out, so it
 * must be cheap: leader election uses it to check the lease by the monotonic
 * clock (see {@link RestClient.fenceWrites}).
 */
export type WriteFence = (method: string, path: string) => void;

/** A response whose headers have arrived; the body is still a stream. */
interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/**
 * The one place the runtime talks HTTP to the API server, over Node's own
 * HTTP client with one keep-alive pool per client (and a second one for
 * streams, see `agentFor`). The kubeconfig's TLS
 * material is decoded once, when the agent is built, and credentials are
 * cached (a token file re-read when it changes, an exec plugin's answer kept
 * until it expires), so a request costs no certificate parsing and no
 * new connection. Responses are read as buffers and watches split into
 * lines on buffers, with no WHATWG Request/Response or web streams between.
 *
 * Retries follow client-go's rules. A 429 or 5xx response that carries an
 * integer `Retry-After` is retried for any verb, after waiting that many
 * seconds, up to `maxRetries` times: the server sends `Retry-After` when it
 * did not process the request (API Priority and Fairness rejections, a
 * server still starting), so even a POST is safe to repeat. A 5xx without
 * `Retry-After`, or a 429 without it, is returned to the caller: a write may
 * have happened. A GET whose connection was reset is retried after one
 * second, since reading twice is harmless; other verbs are not.
 *
 * Writes can be fenced ({@link RestClient.fenceWrites}): every request that
 * can change the cluster goes out through `send` or `upgradeTarget`, and both
 * run the fence with nothing asynchronous between it and the bytes leaving.
 */
export class RestClient {
  private readonly observers: RequestObserver[] = [];
  private readonly userAgent: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly warningHandler: ((warning: string) => void) | undefined;
  /** The server's URL parts, TLS settings and credentials: worked out on the first request, then reused. */
  private endpoint?: {
    base: URL;
    secure: boolean;
    tls: ClusterTls;
    credentials: CredentialSource;
    proxy?: Promise<HttpAgent>;
  };
  /**
   * The keep-alive agents, and the client certificate they were built with (an
   * exec plugin may change it): `requests` for calls that answer at once,
   * `streams` (built when first needed) for watches and followed logs.
   */
  private agents?: { requests: HttpAgent; streams?: HttpAgent; cert?: string; key?: string };
  /** Runs before every write; undefined (no cost) until {@link RestClient.fenceWrites}. */
  private writeFence?: WriteFence;
  /** Requests sent since creation (the benchmark's "API requests per reconcile"). */
  requestCount = 0;

  /**
   * `kubeConfig` is {@link loadKubeConfig}'s result or a client-node
   * `KubeConfig` (anything with `getCurrentCluster()` and `getCurrentUser()`).
   * `options` may also be just the user agent, as in earlier versions.
   */
  constructor(
    readonly kubeConfig: KubeConfigSource,
    options: RestClientOptions | string = {},
  ) {
    const resolved = typeof options === 'string' ? { userAgent: options } : options;
    this.userAgent = resolved.userAgent ?? 'ts-operator-sdk';
    this.timeoutMs = checkedMs('timeoutMs', resolved.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    this.maxRetries = resolved.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.warningHandler = resolved.warningHandler;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0)
      throw new Error(`RestClient maxRetries ${resolved.maxRetries} is not valid: use a whole number, 0 or more`);
  }

  /** Base URL of the current cluster. */
  get server(): string {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster)
      throw new Error('the kubeconfig has no current cluster: set current-context, or pass a KubeConfig that has one');
    return cluster.server.replace(/\/+$/, '');
  }

  /** Calls `observer` after every HTTP attempt, retries included (the manager counts them as metrics). */
  observe(observer: RequestObserver): void {
    this.observers.push(observer);
  }

  /**
   * Makes every later write through this client pass `fence` first: every
   * verb but GET and HEAD, each retry of it, and every WebSocket upgrade
   * (pods/exec). The fence runs synchronously just before the request is
   * created and again just before its bytes leave: on a pooled connection in
   * the same synchronous run as the write to the socket, on a new one once it
   * is connected, the request held back until then. A write it refuses is
   * never sent and fails with what the fence threw. Fences add up: a write
   * must pass every one. A LeaderElector fences its client when it first
   * acquires the lease, so that a leader that lost it, even one that has
   * just woken from a freeze and not yet noticed, writes nothing, save a
   * write it was stopped in the middle of, between the check and the send
   * (see LeaderElector).
   */
  fenceWrites(fence: WriteFence): void {
    const earlier = this.writeFence;
    this.writeFence = earlier
      ? (method, path) => {
          earlier(method, path);
          fence(method, path);
        }
      : fence;
  }

  /**
   * Sends one call (retrying as the class describes) and returns the parsed
   * body. Throws an ApiError subclass for an error status, RequestTimeoutError
   * when the call's time runs out, ApiConnectionError when no response came.
   */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const deadline = this.deadline(method, path, options.timeoutMs);
    try {
      const signal = deadline.signal(options.signal);
      const response = await this.sendWithRetries(method, path, options, signal);
      const text = await readBody(response.body).catch((err: unknown) => {
        throw signal?.aborted ? signal.reason : new ApiConnectionError(method, path, err);
      });
      if (response.status >= 400)
        throw apiErrorFrom(response.status, text ? safeJson(text) : undefined, `${method} ${path}`);
      if (options.responseType === 'text') return text as T;
      return (text ? safeJson(text) : undefined) as T;
    } catch (err) {
      throw deadline.explain(err);
    } finally {
      deadline.clear();
    }
  }

  /**
   * Closes the pooled connections: requests still in flight fail, and a later
   * request opens new ones. Without it, a keep-alive socket that the server
   * closes after the caller is done surfaces as an error in a process that
   * believed it had stopped.
   */
  async close(): Promise<void> {
    const agents = this.agents;
    this.agents = undefined;
    if (agents) destroyAgents(agents);
    const proxy = this.endpoint?.proxy;
    if (proxy) (await proxy.catch(() => undefined))?.destroy();
  }

  /**
   * Opens a watch and yields its events until the server closes the stream,
   * the signal aborts, or no data arrives for `idleTimeoutMs` (a stalled
   * connection), in which case it throws so the caller reconnects.
   *
   * A watch is meant to stay open, so the client's request timeout bounds
   * only the wait for the response headers (the API server answers a watch
   * at once); after that only the idle timeout applies.
   */
  async *watch<T = Record<string, unknown>>(
    path: string,
    query: Query,
    signal: AbortSignal,
    idleTimeoutMs: number,
  ): AsyncGenerator<WatchEvent<T>> {
    const idle = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(new WatchStalledError(idleTimeoutMs)), idleTimeoutMs);
      timer.unref();
    };
    arm();
    const combined = AbortSignal.any([signal, idle.signal]);
    let response: RawResponse | undefined;
    try {
      response = await this.openStream('watch', path, { ...query, watch: true }, combined, undefined);
      // Lines are found in the raw bytes: a chunk is decoded only as whole
      // lines, and a line split across chunks is joined once, not re-scanned.
      let pending: Buffer[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        arm();
        let start = 0;
        let newline: number;
        while ((newline = chunk.indexOf(10, start)) >= 0) {
          let line: Buffer = chunk.subarray(start, newline);
          if (pending.length) {
            line = Buffer.concat([...pending, line]);
            pending = [];
          }
          start = newline + 1;
          const text = line.toString('utf8').trim();
          if (text) yield JSON.parse(text) as WatchEvent<T>;
        }
        if (start < chunk.length) pending.push(chunk.subarray(start));
      }
    } catch (err) {
      if (idle.signal.aborted && !signal.aborted) throw idle.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
      // A consumer that stopped early (or an error) must not leave the socket streaming.
      if (response && !response.body.complete) response.body.destroy();
    }
  }

  /**
   * Sends a GET whose body streams (a watch, a followed log) and returns once
   * its headers are in. The request deadline bounds only that wait: it is
   * cleared before the first byte, since the stream itself has no time limit.
   * `label` names the request in errors (`watch <path>`, `GET <path>`).
   */
  private async openStream(
    label: string,
    path: string,
    query: Query,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ): Promise<RawResponse> {
    const headersDeadline = this.deadline(label, path, timeoutMs);
    try {
      const response = await this.sendWithRetries('GET', path, { query }, headersDeadline.signal(signal), true);
      if (response.status >= 400) {
        const text = await readBody(response.body);
        throw apiErrorFrom(response.status, text ? safeJson(text) : undefined, `${label} ${path}`);
      }
      return response;
    } catch (err) {
      throw headersDeadline.explain(err);
    } finally {
      headersDeadline.clear();
    }
  }

  /**
   * Opens a GET whose body is an open-ended byte stream (a followed pod log)
   * and yields its chunks until the server ends it or `signal` aborts. Like
   * `watch`, the request timeout bounds only the wait for the headers.
   * @internal
   */
  async *stream(
    path: string,
    query: Query,
    signal: AbortSignal | undefined,
    timeoutMs?: number,
  ): AsyncGenerator<Buffer> {
    const response = await this.openStream('GET', path, query, signal, timeoutMs);
    const onAbort = (): void => void response.body.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) yield chunk;
      if (!response.body.complete)
        throw new ApiConnectionError('GET', path, new Error('the connection closed before the stream ended'));
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!response.body.complete) response.body.destroy();
    }
  }

  /**
   * The URL, headers and TLS settings of a WebSocket upgrade to `path` (with
   * `search` already encoded), from the same kubeconfig, credential cache and
   * proxy as every other call, so an exec authenticates exactly as a GET does.
   * @internal
   */
  async upgradeTarget(path: string, search: string): Promise<UpgradeTarget> {
    const endpoint = (this.endpoint ??= this.resolveEndpoint());
    const url = new URL(endpoint.base.href);
    url.protocol = endpoint.secure ? 'wss:' : 'ws:';
    url.pathname = endpoint.base.pathname.replace(/\/+$/, '') + path;
    url.search = search;
    const credentials = await endpoint.credentials.credentials();
    this.requestCount++;
    const finishRequest = (request: ClientRequest): void => {
      // Read when the request is made, not when the target was: a fence may have been added since.
      const fence = this.writeFence;
      if (fence && !passes(request, fence, 'GET', path)) return;
      if (fence) fenceOnSocket(request, fence, 'GET', path);
      request.end();
    };
    return {
      finishRequest,
      url,
      headers: { ...credentials.headers, 'user-agent': this.userAgent },
      ca: endpoint.tls.ca,
      cert: credentials.cert,
      key: credentials.key,
      rejectUnauthorized: endpoint.tls.rejectUnauthorized,
      servername: endpoint.tls.servername,
      agent: endpoint.proxy ? await endpoint.proxy : undefined,
    };
  }

  /** One call: attempts until a response that is not retryable, or the retries run out. */
  private async sendWithRetries(
    method: string,
    path: string,
    options: RequestOptions,
    signal: AbortSignal | undefined,
    longRunning = false,
  ): Promise<RawResponse> {
    for (let attempt = 1; ; attempt++) {
      let waitMs: number | undefined;
      let response: RawResponse | undefined;
      try {
        response = await this.send(method, path, options, signal, attempt, longRunning);
      } catch (err) {
        if (signal?.aborted || attempt > this.maxRetries || !(method === 'GET' && isConnectionReset(err))) throw err;
        waitMs = CONNECTION_RESET_RETRY_MS;
      }
      if (response) {
        waitMs = attempt > this.maxRetries ? undefined : retryAfterMs(response);
        if (waitMs === undefined) return response;
        // Read the refused answer (a small Status) so its connection goes back to the pool.
        await readBody(response.body).catch(() => undefined);
      }
      await sleep(waitMs!, signal);
    }
  }

  private async send(
    method: string,
    path: string,
    options: RequestOptions,
    signal: AbortSignal | undefined,
    attempt: number,
    longRunning: boolean,
  ): Promise<RawResponse> {
    const endpoint = (this.endpoint ??= this.resolveEndpoint());
    let target = endpoint.base.pathname.replace(/\/+$/, '') + path;
    let separator = path.includes('?') ? '&' : '?';
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) continue;
      target += `${separator}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
      separator = '&';
    }
    const credentials = await endpoint.credentials.credentials();
    const agent = endpoint.proxy ? await endpoint.proxy : this.agentFor(endpoint, credentials, longRunning);
    const headers: Record<string, string | number> = {
      ...credentials.headers,
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = options.contentType ?? 'application/json';
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-length'] = Buffer.byteLength(body);
    }
    // Nothing is awaited from the fence to the request, and the socket is fenced again (fenceOnSocket).
    const fence = method === 'GET' || method === 'HEAD' ? undefined : this.writeFence;
    if (fence) refusable(fence, method, path);
    const started = performance.now();
    this.requestCount++;
    let statusCode = 0;
    try {
      if (signal?.aborted) throw signal.reason;
      const response = await new Promise<RawResponse>((resolve, reject) => {
        const request = (endpoint.secure ? httpsRequest : httpRequest)({
          protocol: endpoint.base.protocol,
          hostname: endpoint.base.hostname.replace(/^\[|\]$/g, ''),
          port: endpoint.base.port || (endpoint.secure ? 443 : 80),
          method,
          path: target,
          headers,
          agent,
          signal,
        });
        if (fence) fenceOnSocket(request, fence, method, path);
        request.once('response', (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }));
        // `on`, not `once`: a socket error after the response must not go unhandled.
        request.on('error', reject);
        request.end(body);
      });
      statusCode = response.status;
      if (this.warningHandler)
        for (const warning of warningTexts(response.headers.warning)) this.warningHandler(warning);
      return response;
    } catch (err) {
      if (isWriteRefusal(err)) throw err;
      // An abort is the caller's (or the deadline's) doing, not the connection's.
      if (signal?.aborted) throw signal.reason;
      throw new ApiConnectionError(method, path, err);
    } finally {
      const durationSeconds = (performance.now() - started) / 1000;
      for (const observer of this.observers) observer({ method, path, statusCode, durationSeconds, attempt });
    }
  }

  private resolveEndpoint(): NonNullable<RestClient['endpoint']> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster)
      throw new Error('the kubeconfig has no current cluster: set current-context, or pass a KubeConfig that has one');
    let base: URL;
    try {
      base = new URL(cluster.server);
    } catch {
      throw new Error(
        `the kubeconfig cluster "${cluster.name}" has server "${cluster.server}", which is not a URL: use https://HOST:PORT`,
      );
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:')
      throw new Error(
        `the kubeconfig cluster "${cluster.name}" has server "${cluster.server}": use an https:// (or http://) URL`,
      );
    // A proxy-url is rare: its agent (client-node's) is built once, and only then is client-node imported.
    const proxy = cluster.proxyUrl ? proxyAgent(this.kubeConfig) : undefined;
    proxy?.catch(() => undefined); // the first request reports the failure
    return {
      base,
      secure: base.protocol === 'https:',
      tls: clusterTls(cluster),
      credentials: credentialSource(this.kubeConfig),
      proxy,
    };
  }

  /**
   * The pooled agent for a call, rebuilt only when the client certificate
   * changes (an exec plugin's new one).
   *
   * A long-running call (a watch, a followed log) holds its connection for
   * minutes. It takes a pooled one only while another stays free; otherwise
   * it goes to the streams agent. Taking the last free connection would make
   * the next short call, typically a reconcile's first write right after the
   * caches sync, wait for a new TLS handshake (about 25 ms on loopback, more
   * across a network). client-go does not pay it: every call shares one
   * HTTP/2 connection. At start, with every informer's list done, this costs
   * at most one connection more than before, and that one would be opened
   * by the first write anyway.
   */
  private agentFor(
    endpoint: NonNullable<RestClient['endpoint']>,
    credentials: RequestCredentials,
    longRunning: boolean,
  ): HttpAgent {
    const old = this.agents;
    let current = old;
    if (!current || current.cert !== credentials.cert || current.key !== credentials.key) {
      // Requests still on the old agents finish; their idle sockets close with them.
      if (old) setTimeout(() => destroyAgents(old), DEFAULT_REQUEST_TIMEOUT_MS).unref();
      current = this.agents = {
        requests: newAgent(endpoint, credentials),
        cert: credentials.cert,
        key: credentials.key,
      };
    }
    if (!longRunning || freeSocketCount(current.requests) > 1) return current.requests;
    return (current.streams ??= newAgent(endpoint, credentials));
  }

  private deadline(method: string, path: string, override: number | undefined): Deadline {
    return new Deadline(
      `${method} ${path}`,
      override === undefined ? this.timeoutMs : checkedMs('timeoutMs', override),
    );
  }
}

/** What fences threw: passed to the caller as it is, never taken for a connection failure. */
const refusals = new WeakSet<object>();

/** @internal Whether `err` is a write fence's refusal (see {@link RestClient.fenceWrites}). */
export function isWriteRefusal(err: unknown): boolean {
  return typeof err === 'object' && err !== null && refusals.has(err);
}

/** Runs a fence; what it throws is marked as a refusal and rethrown. */
function refusable(fence: WriteFence, method: string, path: string): void {
  try {
    fence(method, path);
  } catch (thrown) {
    if (typeof thrown === 'object' && thrown !== null) {
      refusals.add(thrown);
      throw thrown;
    }
    // A primitive cannot be marked: it is wrapped in an Error.
    const err = new Error(String(thrown));
    refusals.add(err);
    throw err;
  }
}

/** Runs a fence for `request`: a refusal destroys the request, whose 'error' then carries it. */
function passes(request: ClientRequest, fence: WriteFence, method: string, path: string): boolean {
  try {
    refusable(fence, method, path);
    return true;
  } catch (err) {
    request.destroy(err as Error);
    return false;
  }
}

/**
 * Runs the fence again when `request` gets its socket, so that no wait
 * separates the check from the bytes leaving: a process frozen in such a
 * wait would otherwise send on the strength of a check made before the
 * freeze. Node writes a pooled, connected socket in the same synchronous run
 * that emits 'socket'; a new connection is corked until it is connected
 * (and, for TLS, its handshake done), then checked and uncorked.
 */
function fenceOnSocket(request: ClientRequest, fence: WriteFence, method: string, path: string): void {
  request.once('socket', (socket: Socket) => {
    if (isConnected(socket)) {
      passes(request, fence, method, path);
      return;
    }
    socket.cork();
    socket.once(isTls(socket) ? 'secureConnect' : 'connect', () => {
      if (passes(request, fence, method, path)) socket.uncork();
    });
  });
}

const isTls = (socket: Socket): socket is TLSSocket => (socket as Partial<TLSSocket>).encrypted === true;

/** Whether bytes written now leave at once: TCP connected and, for TLS, the handshake finished. */
function isConnected(socket: Socket): boolean {
  return isTls(socket) ? socket.getFinished() !== undefined : !socket.connecting;
}

/** The whole body of a response, as text. */
async function readBody(body: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(chunk);
  // A socket closed mid-body ends the stream without an error on some Node versions: tell it apart.
  if (!body.complete)
    throw Object.assign(new Error('the connection closed before the whole response body arrived'), {
      code: 'ECONNRESET',
    });
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}

/**
 * A call's time limit. Its own abort controller (rather than
 * AbortSignal.timeout) tells a timeout apart from the caller's abort, so the
 * caller gets a RequestTimeoutError naming the call instead of a bare
 * AbortError.
 */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer?: NodeJS.Timeout;

  constructor(what: string, timeoutMs: number) {
    if (timeoutMs > 0) {
      this.timer = setTimeout(() => this.controller.abort(new RequestTimeoutError(what, timeoutMs)), timeoutMs);
      this.timer.unref();
    }
  }

  /** The caller's signal combined with this deadline. */
  signal(callerSignal: AbortSignal | undefined): AbortSignal | undefined {
    if (!this.timer) return callerSignal;
    return callerSignal ? AbortSignal.any([callerSignal, this.controller.signal]) : this.controller.signal;
  }

  /** The error to throw: the timeout when it fired, whatever was thrown otherwise. */
  explain(err: unknown): unknown {
    return this.controller.signal.aborted ? this.controller.signal.reason : err;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** A keep-alive agent for the endpoint, with the kubeconfig's TLS material and this client certificate. */
function newAgent(endpoint: { secure: boolean; tls: ClusterTls }, credentials: RequestCredentials): HttpAgent {
  // lifo: the most recently used connection is the one least likely to have been closed by the server.
  const common = { keepAlive: true, scheduling: 'lifo' as const };
  return endpoint.secure
    ? new HttpsAgent({
        ...common,
        ca: endpoint.tls.ca,
        cert: credentials.cert,
        key: credentials.key,
        rejectUnauthorized: endpoint.tls.rejectUnauthorized,
        servername: endpoint.tls.servername,
      })
    : new PlainAgent(common);
}

/** Closes both agents' connections; requests still on them fail. */
function destroyAgents(agents: { requests: HttpAgent; streams?: HttpAgent }): void {
  agents.requests.destroy();
  agents.streams?.destroy();
}

/** Idle keep-alive connections in the agent's pool (every one is to the same API server). */
function freeSocketCount(agent: HttpAgent): number {
  let count = 0;
  for (const sockets of Object.values(agent.freeSockets)) count += sockets?.length ?? 0;
  return count;
}

/**
 * The wait a 429 or 5xx response asks for, or undefined when it is not to
 * be retried. Like client-go, only whole seconds count; a date or garbage
 * in `Retry-After` means "do not retry".
 */
function retryAfterMs(response: RawResponse): number | undefined {
  if (response.status !== 429 && response.status < 500) return undefined;
  // A header sent twice may come as a list: the first counts.
  const header = [response.headers['retry-after']].flat()[0]?.trim();
  if (!header || !/^\d+$/.test(header)) return undefined;
  return Number(header) * 1000;
}

/** A dropped connection: the socket error, possibly wrapped (ApiConnectionError's cause). */
function isConnectionReset(err: unknown): boolean {
  for (let current = err, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return true;
  }
  return false;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function checkedMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`RestClient ${name} ${value} is not valid: use milliseconds, 0 or more (0: no limit)`);
  return value;
}

/** Thrown by `watch` when the stream has been silent for too long. */
export class WatchStalledError extends Error {
  constructor(readonly idleTimeoutMs: number) {
    super(`watch stalled: no data for ${Math.round(idleTimeoutMs / 1000)}s`);
    this.name = 'WatchStalledError';
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The texts of `Warning: 299 - "text"` headers (RFC 7234 form, which the API
 * server uses); Node joins repeated headers with ", ", so each quoted text is
 * matched on its own.
 */
export function warningTexts(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const joined = Array.isArray(header) ? header.join(', ') : header;
  return [...joined.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((match) =>
    (match[1] ?? '').replace(/\\(.)/g, '$1'),
  );
}

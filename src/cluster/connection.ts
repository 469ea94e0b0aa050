/**
 * How a cluster command reaches the API server: one time budget for the whole
 * command (every request, retry and wait shares it, through one AbortSignal),
 * a first look at the server before anything else (does it answer, is it a
 * Kubernetes API server), and the one-line errors for a server that does not
 * answer, refuses us, or is something else entirely.
 */
import { UsageError } from '../errors.js';
import { ApiConnectionError, ApiError, RequestTimeoutError, UnauthorizedError } from '../runtime/api/errors.js';
import type { KubeConfigSource } from '../runtime/transport/kubeconfig.js';
import { RestClient, type RequestOptions } from '../runtime/transport/rest.js';

/**
 * The bound on any one request, whatever time the command has left: a healthy
 * API server answers in milliseconds, and its own --request-timeout ends a
 * request after 60 s. Half that still tells a hung server apart from a busy one.
 */
const REQUEST_TIMEOUT_MS = 30_000;
/** After the command's own time ran out, the bound on each request made to say what blocked it or to undo what it did. */
const OVERTIME_REQUEST_MS = 10_000;
/** Retries of a reset GET (see RestClient): a few, inside the budget. */
const MAX_RETRIES = 3;

/** The command's time ran out (the reason its signal aborts with). */
export class CommandTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the command's time limit of ${formatDuration(timeoutMs)} ran out`);
    this.name = 'CommandTimeoutError';
  }
}

/** `2s`, `1m30s`, `100h`, `500ms`: a duration in --timeout's own notation, for messages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms * 1000) / 1000}ms`;
  const total = Math.round(ms / 1000);
  const parts: [number, string][] = [
    [Math.floor(total / 3600), 'h'],
    [Math.floor((total % 3600) / 60), 'm'],
    [total % 60, 's'],
  ];
  return parts
    .filter(([value]) => value > 0)
    .map(([value, unit]) => `${value}${unit}`)
    .join('');
}

/** Node's timers hold at most this (about 24.8 days); a longer --timeout waits this long. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A span of time with an end: its signal aborts when it ends, or when `end()` is called. */
class TimeBudget {
  readonly endsAt: number;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly ms: number,
    /** `command`: the --timeout; `overtime`: time granted after it, to report and undo. */
    readonly phase: 'command' | 'overtime',
  ) {
    this.endsAt = Date.now() + ms;
    // A longer delay would overflow to 1 ms and end the command at once.
    this.timer = setTimeout(() => this.controller.abort(new CommandTimeoutError(ms)), Math.min(ms, MAX_TIMER_MS));
    this.timer.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  end(reason: unknown): void {
    clearTimeout(this.timer);
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }
}

/**
 * A RestClient whose every request carries the command's time budget, so the
 * RestMapper's discovery requests are bounded as well as the command's own.
 * In overtime, the first request the server does not answer ends the
 * overtime: whatever was left to undo cannot be undone through it.
 */
export class BoundedRestClient extends RestClient {
  /** Whether the server has sent any HTTP response (any status) to this client. */
  answered = false;
  private budget: TimeBudget;

  constructor(config: KubeConfigSource, timeoutMs: number, maxRetries = MAX_RETRIES) {
    super(config, { userAgent: 'ts-operator-sdk', timeoutMs: REQUEST_TIMEOUT_MS, maxRetries });
    this.budget = new TimeBudget(timeoutMs, 'command');
    this.observe(({ statusCode }) => {
      if (statusCode > 0) this.answered = true;
    });
  }

  /** The signal every request carries: aborts when the time runs out. */
  get signal(): AbortSignal {
    return this.budget.signal;
  }

  /** When the current budget ends (epoch ms). */
  get endsAt(): number {
    return this.budget.endsAt;
  }

  /** The current budget's length, for messages. */
  get budgetMs(): number {
    return this.budget.ms;
  }

  /** Whether the current budget is used up (or was ended). */
  get expired(): boolean {
    return this.budget.signal.aborted || Date.now() >= this.budget.endsAt;
  }

  /**
   * Starts a new budget of `ms` from now, for the work after the command's own
   * time ran out or it failed: saying what blocked it, and deleting what it
   * created. Each request then waits at most OVERTIME_REQUEST_MS.
   */
  overtime(ms: number): void {
    this.budget.end(new CommandTimeoutError(this.budget.ms));
    this.budget = new TimeBudget(ms, 'overtime');
  }

  override async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const budget = this.budget;
    const signal = options.signal ? AbortSignal.any([options.signal, budget.signal]) : budget.signal;
    const timeoutMs =
      budget.phase === 'overtime'
        ? Math.min(options.timeoutMs ?? OVERTIME_REQUEST_MS, OVERTIME_REQUEST_MS)
        : options.timeoutMs;
    try {
      return await super.request<T>(method, path, { ...options, signal, timeoutMs });
    } catch (err) {
      if (budget.phase === 'overtime' && (err instanceof RequestTimeoutError || err instanceof ApiConnectionError))
        budget.end(err);
      throw err;
    }
  }

  /** Ends the budget's timer, and closes the connections. */
  override async close(): Promise<void> {
    this.budget.end(new CommandTimeoutError(this.budget.ms));
    await super.close();
  }
}

/** How the user tells a command which kubeconfig to use, for fixes: `--kubeconfig or KUBECONFIG`, or `KUBECONFIG`. */
export type KubeconfigHint = string;

/**
 * Looks at the server before the command does anything: GET /version must
 * carry a gitVersion and GET /api an APIVersions list, as every Kubernetes
 * API server answers. Throws the one-line UsageError when the server does not
 * answer, refuses the connection, or is not a Kubernetes API server. Runs on
 * a client of its own without retries, inside `main`'s budget, so a reset
 * connection is named as such instead of being retried until the time runs out.
 */
export async function probeApiServer(main: BoundedRestClient, hint: KubeconfigHint): Promise<void> {
  const server = serverOf(main, hint);
  // The same clock: what is left of the command's time.
  const probe = new BoundedRestClient(main.kubeConfig, Math.max(0, main.endsAt - Date.now()), 0);
  try {
    for (const path of ['/version', '/api'] as const) {
      let status = 200;
      let body: unknown;
      try {
        body = await probe.request('GET', path);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        // A real API server sends a metav1.Status with its errors; a web server's login page or 404 is not one.
        const kubernetesStatus = err.status?.kind === 'Status';
        if (kubernetesStatus && err instanceof UnauthorizedError) {
          throw new UsageError(
            `the API server at ${server} rejected the kubeconfig's credentials (401 Unauthorized)`,
            'log in again (e.g. refresh the token), or use a kubeconfig whose user the cluster accepts',
          );
        }
        // Forbidden by RBAC is still Kubernetes; the command's own requests say what is denied.
        if (kubernetesStatus && err.statusCode === 403) break;
        status = err.statusCode;
      }
      const why = status !== 200 ? `GET ${path} answered HTTP ${status}` : notKubernetesAnswer(path, body);
      if (why)
        throw new UsageError(
          `the server at ${server} is not a Kubernetes API server (${why})`,
          `point ${hint} at your cluster's kubeconfig (kubectl config view --minify shows the server it uses)`,
        );
    }
  } catch (err) {
    // Named by the command's --timeout, whichever of the two budgets (they end together) ran out.
    throw explainFailure(
      err instanceof CommandTimeoutError ? new CommandTimeoutError(main.budgetMs) : err,
      main,
      hint,
      'connecting to the cluster',
    );
  } finally {
    await probe.close();
  }
  main.answered = true;
}

/** Why a 200 answer to `path` is not what Kubernetes sends, or undefined when it is. */
function notKubernetesAnswer(path: '/version' | '/api', body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return `GET ${path} answered with a body that is not JSON`;
  if (path === '/version')
    return typeof (body as { gitVersion?: unknown }).gitVersion === 'string'
      ? undefined
      : 'GET /version answered JSON without a gitVersion';
  const list = body as { kind?: unknown; versions?: unknown };
  return list.kind === 'APIVersions' && Array.isArray(list.versions)
    ? undefined
    : 'GET /api answered JSON that is not an APIVersions list';
}

/**
 * The server's URL as the kubeconfig names it; a kubeconfig without a usable
 * server is a UsageError here, before any request.
 */
export function serverOf(client: RestClient, hint: KubeconfigHint): string {
  const cluster = client.kubeConfig.getCurrentCluster();
  const context = (client.kubeConfig as { getCurrentContext?: () => string }).getCurrentContext?.();
  if (!cluster)
    throw new UsageError(
      `the kubeconfig's current context${context ? ` "${context}"` : ''} names no cluster the kubeconfig has`,
      `fix its contexts (kubectl config get-contexts), or point ${hint} at another kubeconfig`,
    );
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new UsageError(
      `the kubeconfig's cluster "${cluster.name}" has server "${cluster.server}", which is not a URL`,
      "set it to the API server's URL, e.g. https://127.0.0.1:6443 (kubectl config set-cluster)",
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(
      `the kubeconfig's cluster "${cluster.name}" has server "${cluster.server}", which is not an https:// or http:// URL`,
      "set it to the API server's URL, e.g. https://127.0.0.1:6443 (kubectl config set-cluster)",
    );
  }
  return cluster.server.replace(/\/+$/, '');
}

/** Socket error codes of a TLS handshake that failed, and what the user should check. */
const TLS_CODES = /^(EPROTO|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_)/;

/** The innermost error code of a connection failure (ECONNREFUSED, ECONNRESET, EPROTO...). */
function connectionCode(err: unknown): string | undefined {
  let code: string | undefined;
  for (let current = err, depth = 0; current instanceof Error && depth < 6; current = current.cause, depth++) {
    const own = (current as { code?: unknown }).code;
    if (typeof own === 'string') code = own;
  }
  return code;
}

/**
 * Turns a failure of a cluster command into the CLI's one line. The server
 * not answering, refusing us, or not being Kubernetes are the user's to fix;
 * any other error is passed on. `doing` says what the command was doing.
 */
export function explainFailure(err: unknown, client: BoundedRestClient, hint: KubeconfigHint, doing: string): unknown {
  if (err instanceof UsageError) return err;
  let server: string;
  try {
    server = serverOf(client, hint);
  } catch (serverError) {
    return serverError;
  }
  const check = `check that the cluster is running and that ${hint} points at it`;
  if (err instanceof CommandTimeoutError) {
    if (!client.answered)
      return new UsageError(
        `the API server at ${server} did not answer within ${formatDuration(err.timeoutMs)}`,
        'check that the cluster is running and reachable (kubectl cluster-info), or raise --timeout',
      );
    return new UsageError(
      `timed out after ${formatDuration(err.timeoutMs)} while ${doing}: the API server at ${server} did not answer in time`,
      "pass a longer --timeout, or check the cluster's health (kubectl get --raw /readyz)",
    );
  }
  if (err instanceof RequestTimeoutError) {
    return new UsageError(
      `the API server at ${server} did not answer ${err.what} within ${formatDuration(err.timeoutMs)}`,
      client.answered
        ? "check the cluster's health (kubectl get --raw /readyz) and run the command again"
        : 'check that the cluster is running and reachable (kubectl cluster-info)',
      { cause: err },
    );
  }
  if (err instanceof ApiConnectionError) {
    const code = connectionCode(err) ?? 'no response';
    if (code === 'ECONNREFUSED')
      return new UsageError(`cannot connect to the API server at ${server}: connection refused (ECONNREFUSED)`, check, {
        cause: err,
      });
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      return new UsageError(
        `cannot resolve the host of the API server at ${server} (${code})`,
        `check the server's URL in the kubeconfig, and that ${hint} points at the cluster you mean`,
        { cause: err },
      );
    if (TLS_CODES.test(code))
      return new UsageError(
        `cannot open a TLS connection to the server at ${server} (${code})`,
        "check the server's URL in the kubeconfig (https:// or http://) and that it is the API server",
        { cause: err },
      );
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET')
      return new UsageError(
        `the server at ${server} closed the connection without answering (${code})`,
        `${check}, and that it is the API server`,
        { cause: err },
      );
    return new UsageError(`cannot reach the API server at ${server} while ${doing} (${code})`, check, { cause: err });
  }
  if (err instanceof ApiError) {
    const status = err.statusCode;
    const fix =
      status === 401 || status === 403
        ? 'use a kubeconfig whose user may manage these objects (cluster-admin for OLM)'
        : 'check the cluster state with kubectl and run the command again';
    return new UsageError(`the API server refused a request while ${doing}: ${err.message.split('\n')[0]}`, fix, {
      cause: err,
    });
  }
  return err;
}

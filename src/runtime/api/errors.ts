/**
 * Typed API errors, so callers branch on `instanceof NotFoundError` (or
 * `isNotFound(err)`) instead of digging through HTTP status codes.
 */

/** The `Status` object the API server returns on failure. */
export interface StatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

/**
 * An error status from the API server. The subclasses name the statuses
 * callers act on; a status with no subclass (a 4xx other than those) is a
 * plain ApiError.
 */
export class ApiError extends Error {
  constructor(
    /** The HTTP status, e.g. 404. */
    readonly statusCode: number,
    /** The Status object's machine-readable reason (`NotFound`, `AlreadyExists`...), defaulted from the code when absent. */
    readonly reason: string,
    message: string,
    /** The Status object itself, for its `details`. */
    readonly status?: StatusBody,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: the request itself is malformed (a bad selector, an undecodable body). */
export class BadRequestError extends ApiError {}
/** 401: the credentials were missing or rejected; refresh the kubeconfig or token. */
export class UnauthorizedError extends ApiError {}
/** 403: RBAC denies this verb on this resource; the operator's Role needs a rule. */
export class ForbiddenError extends ApiError {}
/** 404: the object (or its kind) does not exist; often expected, see {@link ignoreNotFound}. */
export class NotFoundError extends ApiError {}
/** 405: the resource does not support this verb (say, a subresource that cannot be patched). */
export class MethodNotAllowedError extends ApiError {}
/** 409 with reason `Conflict`: the object changed since it was read. */
export class ConflictError extends ApiError {}
/** 409 with reason `AlreadyExists`. */
export class AlreadyExistsError extends ApiError {}
/** 410: the resourceVersion asked for is too old; relist. */
export class GoneError extends ApiError {}
/** 422: the object failed validation; `status.details.causes` names the fields. */
export class InvalidError extends ApiError {}
/** 429 that the client did not retry (no `Retry-After`, or retries used up): the server is throttling. */
export class TooManyRequestsError extends ApiError {}
/** 5xx: the server failed; retrying later usually helps, but a write may have happened. */
export class ServerError extends ApiError {}

/** Builds the typed error for an HTTP failure from the API server. */
export function apiErrorFrom(statusCode: number, body: unknown, what: string): ApiError {
  const status = (typeof body === 'object' && body !== null ? body : {}) as StatusBody;
  const reason = status.reason ?? '';
  const message = status.message ?? (typeof body === 'string' && body ? body : `${what}: HTTP ${statusCode}`);
  switch (statusCode) {
    case 400:
      return new BadRequestError(statusCode, reason || 'BadRequest', message, status);
    case 401:
      return new UnauthorizedError(statusCode, reason || 'Unauthorized', message, status);
    case 403:
      return new ForbiddenError(statusCode, reason || 'Forbidden', message, status);
    case 404:
      return new NotFoundError(statusCode, reason || 'NotFound', message, status);
    case 405:
      return new MethodNotAllowedError(statusCode, reason || 'MethodNotAllowed', message, status);
    case 409:
      return reason === 'AlreadyExists'
        ? new AlreadyExistsError(statusCode, reason, message, status)
        : new ConflictError(statusCode, reason || 'Conflict', message, status);
    case 410:
      return new GoneError(statusCode, reason || 'Expired', message, status);
    case 422:
      return new InvalidError(statusCode, reason || 'Invalid', message, status);
    case 429:
      return new TooManyRequestsError(statusCode, reason || 'TooManyRequests', message, status);
    default:
      return statusCode >= 500
        ? new ServerError(statusCode, reason || 'InternalError', message, status)
        : new ApiError(statusCode, reason, message, status);
  }
}

/** Whether `err` is a 404, as apimachinery's IsNotFound: read it as "already gone" in a delete or a lookup. */
export const isNotFound = (err: unknown): err is NotFoundError => err instanceof NotFoundError;
/** Whether `err` is a 409 Conflict: the object changed since it was read, so re-read and retry. */
export const isConflict = (err: unknown): err is ConflictError => err instanceof ConflictError;
/** Whether `err` is a 409 AlreadyExists: a create lost a race, often fine to treat as success. */
export const isAlreadyExists = (err: unknown): err is AlreadyExistsError => err instanceof AlreadyExistsError;
/** Whether `err` is a 403: RBAC denies the call, which no retry fixes. */
export const isForbidden = (err: unknown): err is ForbiddenError => err instanceof ForbiddenError;
/** Whether `err` is a 410: a watch or list resourceVersion expired, so relist. */
export const isGone = (err: unknown): err is GoneError => err instanceof GoneError;
/** Whether `err` is a 422: the object failed validation, so the same write will fail again. */
export const isInvalid = (err: unknown): err is InvalidError => err instanceof InvalidError;

/** Returns `undefined` for a NotFoundError and rethrows anything else. */
export function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

/**
 * No response came from the API server: the connection was refused, reset
 * or closed early, or TLS failed. `cause` holds the socket-level error.
 * (undici reports these as a bare `TypeError: fetch failed`, which would read
 * as a programming error and be counted as a reconcile panic.)
 */
export class ApiConnectionError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    cause: unknown,
  ) {
    super(`${method} ${path}: no response from the API server: ${describeCause(cause)}`, { cause });
    this.name = 'ApiConnectionError';
  }
}

/**
 * The API server serves no resource for this apiVersion and kind
 * (controller-runtime's NoKindMatchError): a typo in either, or a custom kind
 * whose CustomResourceDefinition is not installed. The client's REST mapper
 * throws it for an object it cannot place, and the manager's start() rejects
 * with it for a watched kind the server does not serve.
 */
export class NoKindMatchError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(
      `no matches for kind "${kind}" in version "${apiVersion}": install its CustomResourceDefinition ` +
        '(make install, or kubectl apply the CRD), or fix the apiVersion and kind',
    );
    this.name = 'NoKindMatchError';
  }
}

/** A call to the API server did not finish within its time limit. */
export class RequestTimeoutError extends Error {
  constructor(
    /** The call, e.g. `GET /api/v1/namespaces/default/configmaps/a`. */
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(
      `${what}: timed out after ${formatMs(timeoutMs)} without a complete answer from the API server (the request timeout; raise it with the RestClient's timeoutMs option or the call's timeoutMs)`,
    );
    this.name = 'RequestTimeoutError';
  }
}

/** Whether `err` is a call that ran out of time on the client; the server may still have done a write. */
export const isRequestTimeout = (err: unknown): err is RequestTimeoutError => err instanceof RequestTimeoutError;

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return `${cause.message}${inner}`;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * Thrown from a reconciler for a failure that retrying cannot fix (bad user
 * input, say). It is logged and counted, and the key is not requeued.
 *
 * It still counts when wrapped: `throw new Error('sync failed', { cause:
 * new TerminalError(...) })` is terminal too (see `isTerminalError`).
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/**
 * Whether `err` is, or wraps, a TerminalError: Go's
 * `errors.Is(err, reconcile.TerminalError(nil))`. It follows `cause` to any
 * depth and looks into every error of an AggregateError (JavaScript's
 * `errors.Join`), as `errors.Is` looks into a joined error. Cycles are safe.
 */
export function isTerminalError(err: unknown): boolean {
  return errorChainHas(err, TerminalError);
}

/** @internal Whether `err` or any error it wraps, as isTerminalError follows them, is a `type`. */
export function errorChainHas<T extends Error>(err: unknown, type: abstract new (...args: never[]) => T): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [err];
  while (pending.length > 0) {
    const current = pending.pop();
    if (!(current instanceof Error) || seen.has(current)) continue;
    seen.add(current);
    if (current instanceof type) return true;
    if (current.cause !== undefined) pending.push(current.cause);
    if (current instanceof AggregateError) pending.push(...(current.errors as unknown[]));
  }
  return false;
}

/**
 * Whether a value thrown by a reconciler counts as a panic
 * (`controller_runtime_reconcile_panics_total`). controller-runtime counts
 * the panics it recovers: nil dereferences, out-of-range indexes, failed
 * type assertions, `panic(value)`, that is, bugs rather than failures
 * returned as errors. Their JavaScript counterparts are:
 * - TypeError (reading a property of undefined, calling a non-function),
 * - ReferenceError (an undeclared name),
 * - RangeError (an invalid array length, a stack overflow),
 * - and a thrown value that is not an Error at all (`throw 'oops'`).
 * Only the thrown value itself is classified: a bug that the reconciler
 * caught and wrapped (`new Error('...', { cause: typeError })`) was handled,
 * as a Go error wrapping another is. SyntaxError and URIError are left out
 * because at run time they come from parsing input (`JSON.parse`,
 * `decodeURIComponent`), which in Go returns an error. The transport never
 * lets undici's `TypeError: fetch failed` through (it becomes an
 * ApiConnectionError), so a network failure is not counted as a panic.
 */
export function isReconcilePanic(thrown: unknown): boolean {
  if (!(thrown instanceof Error)) return true;
  return thrown instanceof TypeError || thrown instanceof ReferenceError || thrown instanceof RangeError;
}

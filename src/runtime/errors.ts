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
  details?: { name?: string; group?: string; kind?: string; causes?: Array<{ reason?: string; message?: string; field?: string }> };
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly reason: string,
    message: string,
    readonly status?: StatusBody,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends ApiError {}
export class UnauthorizedError extends ApiError {}
export class ForbiddenError extends ApiError {}
export class NotFoundError extends ApiError {}
export class MethodNotAllowedError extends ApiError {}
/** 409 with reason `Conflict`: the object changed since it was read. */
export class ConflictError extends ApiError {}
/** 409 with reason `AlreadyExists`. */
export class AlreadyExistsError extends ApiError {}
/** 410: the resourceVersion asked for is too old; relist. */
export class GoneError extends ApiError {}
/** 422: the object failed validation; `status.details.causes` names the fields. */
export class InvalidError extends ApiError {}
export class TooManyRequestsError extends ApiError {}
export class ServerError extends ApiError {}

/** Builds the typed error for an HTTP failure from the API server. */
export function apiErrorFrom(statusCode: number, body: unknown, what: string): ApiError {
  const status = (typeof body === 'object' && body !== null ? body : {}) as StatusBody;
  const reason = status.reason ?? '';
  const message = status.message ?? (typeof body === 'string' && body ? body : `${what}: HTTP ${statusCode}`);
  switch (statusCode) {
    case 400: return new BadRequestError(statusCode, reason || 'BadRequest', message, status);
    case 401: return new UnauthorizedError(statusCode, reason || 'Unauthorized', message, status);
    case 403: return new ForbiddenError(statusCode, reason || 'Forbidden', message, status);
    case 404: return new NotFoundError(statusCode, reason || 'NotFound', message, status);
    case 405: return new MethodNotAllowedError(statusCode, reason || 'MethodNotAllowed', message, status);
    case 409: return reason === 'AlreadyExists'
      ? new AlreadyExistsError(statusCode, reason, message, status)
      : new ConflictError(statusCode, reason || 'Conflict', message, status);
    case 410: return new GoneError(statusCode, reason || 'Expired', message, status);
    case 422: return new InvalidError(statusCode, reason || 'Invalid', message, status);
    case 429: return new TooManyRequestsError(statusCode, reason || 'TooManyRequests', message, status);
    default: return statusCode >= 500
      ? new ServerError(statusCode, reason || 'InternalError', message, status)
      : new ApiError(statusCode, reason, message, status);
  }
}

export const isNotFound = (err: unknown): err is NotFoundError => err instanceof NotFoundError;
export const isConflict = (err: unknown): err is ConflictError => err instanceof ConflictError;
export const isAlreadyExists = (err: unknown): err is AlreadyExistsError => err instanceof AlreadyExistsError;
export const isForbidden = (err: unknown): err is ForbiddenError => err instanceof ForbiddenError;
export const isGone = (err: unknown): err is GoneError => err instanceof GoneError;
export const isInvalid = (err: unknown): err is InvalidError => err instanceof InvalidError;

/** Returns `undefined` for a NotFoundError and rethrows anything else. */
export function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

/**
 * Thrown from a reconciler for a failure that retrying cannot fix (bad user
 * input, say). It is logged and counted, and the key is not requeued.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

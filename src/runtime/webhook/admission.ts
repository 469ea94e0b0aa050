import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/errors.js';
import type { Logger } from '../log/log.js';
import { createJsonPatch } from './jsonpatch.js';
import { readBoundedJson, RequestBodyError } from './body.js';

/** The group, version and kind (or resource) an admission request names. */
export interface GroupVersionKind {
  /** The API group; `''` for the core group. */
  group: string;
  /** The API version, e.g. `v1`. */
  version: string;
  /** The kind, e.g. `Memcached`. */
  kind: string;
}

/** What the API server asks an admission webhook: admission.k8s.io/v1 `AdmissionRequest`. */
export interface AdmissionRequest {
  /** Identifies this call; the response echoes it. */
  uid: string;
  /** The kind of `object` as the webhook's rules matched it. */
  kind: GroupVersionKind;
  /** The resource being written. */
  resource: { group: string; version: string; resource: string };
  /** The subresource (`status`, `scale`...), if any. */
  subResource?: string;
  /** The object's name; empty on a create with `generateName`. */
  name?: string;
  /** The object's namespace; empty for cluster-scoped objects. */
  namespace?: string;
  /** What is being done. */
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** Who is asking. */
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  /** The object after the write (absent on DELETE). */
  object?: unknown;
  /** The object before the write (on UPDATE, and the deleted object on DELETE). */
  oldObject?: unknown;
  /** True on a dry-run request: nothing will be stored, so the webhook must have no side effects. */
  dryRun?: boolean;
  /** The operation's options (CreateOptions, UpdateOptions, DeleteOptions). */
  options?: unknown;
}

/** What a webhook answers: admission.k8s.io/v1 `AdmissionResponse`. */
export interface AdmissionResponse {
  /** The request's uid. */
  uid: string;
  /** Whether the write may proceed. */
  allowed: boolean;
  /** Why not (or, when allowed, code 200). */
  status?: { code?: number; message?: string; reason?: string };
  /** A base64 RFC 6902 patch to apply to the object (mutating webhooks only). */
  patch?: string;
  /** Always `JSONPatch` when `patch` is set. */
  patchType?: 'JSONPatch';
  /** Shown to the client (kubectl prints them as `Warning: ...`). */
  warnings?: string[];
}

/** Warnings returned to the client with the admission answer, allowed or not. */
export type AdmissionWarnings = string[];

/** What an admission function receives besides the object(s). */
export interface AdmissionContext {
  /** Aborts when the API server gives up on the call (its webhook timeout) or disconnects. */
  signal: AbortSignal;
  /** The manager's logger, with the webhook path and request uid bound. */
  log: Logger;
  /** The whole request: operation, user, namespace, subresource, options. */
  request: AdmissionRequest;
  /** True when nothing will be stored: do not change anything outside the object (sideEffects: None). */
  dryRun: boolean;
}

/**
 * Fills in defaults (controller-runtime's CustomDefaulter). Mutate `obj` in
 * place; the runtime sends the API server a JSON patch computed from the
 * difference. Called for CREATE and UPDATE. Throw to deny, as a validator does.
 */
export interface CustomDefaulter<T> {
  /** Sets the defaults on `obj`. */
  default(ctx: AdmissionContext, obj: T): void | Promise<void>;
}

/** What a validation function returns: warnings for the client, or nothing. */
export type ValidationResult = AdmissionWarnings | void | Promise<AdmissionWarnings | void>;

/**
 * Accepts or refuses writes (controller-runtime's CustomValidator). Return
 * to accept, optionally with warnings; throw to refuse: an
 * {@link AdmissionDeniedError} for a message with a chosen code and
 * warnings, an ApiError to pass its status on, any other error to refuse
 * with its message and code 403.
 */
export interface CustomValidator<T> {
  /** Checks a new object. */
  validateCreate(ctx: AdmissionContext, obj: T): ValidationResult;
  /** Checks a change; `oldObj` is what is stored now. */
  validateUpdate(ctx: AdmissionContext, oldObj: T, newObj: T): ValidationResult;
  /** Checks a deletion of `obj` (the stored object). */
  validateDelete(ctx: AdmissionContext, obj: T): ValidationResult;
}

/** Options of an {@link AdmissionDeniedError}. */
export interface AdmissionDeniedOptions {
  /** HTTP status code the client sees. Default: 403. */
  code?: number;
  /** Machine-readable reason in the status. Default: derived from the code (403 → `Forbidden`, 422 → `Invalid`...). */
  reason?: string;
  /** Warnings sent with the denial. Default: none. */
  warnings?: AdmissionWarnings;
}

/** Thrown by a defaulter or validator to refuse a write with this message, code and warnings. */
export class AdmissionDeniedError extends Error {
  /** HTTP status code the client sees. */
  readonly code: number;
  /** Machine-readable reason in the status. */
  readonly reason: string;
  /** Warnings sent with the denial. */
  readonly warnings: AdmissionWarnings;

  constructor(message: string, options: AdmissionDeniedOptions = {}) {
    super(message);
    this.name = 'AdmissionDeniedError';
    this.code = options.code ?? 403;
    this.reason = options.reason ?? reasonForCode(this.code);
    this.warnings = options.warnings ?? [];
  }
}

/** An admission function: the runtime's adapter between the HTTP call and a defaulter or validator. */
export type Admit = (ctx: AdmissionContext) => Promise<Omit<AdmissionResponse, 'uid'>>;

/** controller-runtime's bound on an admission request body: 7 MiB, above etcd's 1.5 MiB object limit with room for oldObject. */
export const MAX_ADMISSION_REQUEST_BYTES = 7 * 1024 * 1024;

/**
 * Serves AdmissionReview v1 (and v1beta1, same shape) calls with `admit`.
 * Every answer is an AdmissionReview with the request's uid: an undecodable
 * body is `allowed: false` with code 400, and a throw from `admit` is a
 * denial, never a crash.
 */
export function admissionHandler(
  admit: Admit,
  log: Logger,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    let review: { apiVersion?: string; kind?: string; request?: AdmissionRequest };
    try {
      review = (await readBoundedJson(req, MAX_ADMISSION_REQUEST_BYTES)) as typeof review;
      if (
        !review ||
        typeof review !== 'object' ||
        review.kind !== 'AdmissionReview' ||
        !review.request ||
        typeof review.request.uid !== 'string'
      ) {
        throw new RequestBodyError('the body is not an AdmissionReview with a request and a uid');
      }
    } catch (err) {
      if (!(err instanceof RequestBodyError)) throw err;
      log.info({ err: err.message }, 'undecodable admission request');
      writeReview(
        res,
        'admission.k8s.io/v1',
        { uid: '', allowed: false, status: { code: 400, message: err.message, reason: 'BadRequest' } },
        err.closeConnection,
      );
      return;
    }
    const request = review.request;
    const requestLog = log.child({
      uid: request.uid,
      kind: request.kind?.kind,
      namespace: request.namespace,
      name: request.name,
      operation: request.operation,
    });
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort(new Error('the API server closed the admission call'));
    });
    const ctx: AdmissionContext = { signal: aborted.signal, log: requestLog, request, dryRun: request.dryRun === true };
    let response: Omit<AdmissionResponse, 'uid'>;
    try {
      response = await admit(ctx);
    } catch (err) {
      response = denialFor(err);
      if (!(err instanceof AdmissionDeniedError) && !(err instanceof ApiError) && !(err instanceof RequestBodyError))
        requestLog.info({ err }, 'admission denied by an error');
    }
    writeReview(res, review.apiVersion ?? 'admission.k8s.io/v1', { uid: request.uid, ...response });
  };
}

/** The admission answer for `obj` (or an old object), typed for the defaulter or validator. */
function objectOf<T>(request: AdmissionRequest, field: 'object' | 'oldObject'): T {
  const value = request[field];
  if (value === undefined || value === null || typeof value !== 'object') {
    throw new RequestBodyError(`the ${request.operation} request has no ${field} to decode`);
  }
  return value as T;
}

/** Admission through a {@link CustomDefaulter}: the patch is the difference the defaulter made. */
export function defaultingAdmit<T>(defaulter: CustomDefaulter<T>): Admit {
  return async (ctx) => {
    const { request } = ctx;
    // A delete has nothing to default, and CONNECT has no object.
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
    const original = objectOf<T>(request, 'object');
    const obj = structuredClone(original);
    await defaulter.default(ctx, obj);
    const operations = createJsonPatch(original, obj);
    if (operations.length === 0) return allowed();
    return { ...allowed(), patch: Buffer.from(JSON.stringify(operations)).toString('base64'), patchType: 'JSONPatch' };
  };
}

/** Admission through a {@link CustomValidator}, by operation; CONNECT is allowed. */
export function validatingAdmit<T>(validator: CustomValidator<T>): Admit {
  return async (ctx) => {
    const { request } = ctx;
    let warnings: AdmissionWarnings | void;
    switch (request.operation) {
      case 'CREATE':
        warnings = await validator.validateCreate(ctx, objectOf<T>(request, 'object'));
        break;
      case 'UPDATE':
        warnings = await validator.validateUpdate(
          ctx,
          objectOf<T>(request, 'oldObject'),
          objectOf<T>(request, 'object'),
        );
        break;
      case 'DELETE':
        // The API server sends the object being deleted as oldObject.
        warnings = await validator.validateDelete(ctx, objectOf<T>(request, 'oldObject'));
        break;
      default:
        return allowed();
    }
    return { ...allowed(), ...(warnings && warnings.length ? { warnings: [...warnings] } : {}) };
  };
}

function allowed(): Omit<AdmissionResponse, 'uid'> {
  return { allowed: true, status: { code: 200 } };
}

/** controller-runtime's mapping of an error to a denial. */
function denialFor(err: unknown): Omit<AdmissionResponse, 'uid'> {
  if (err instanceof AdmissionDeniedError) {
    return {
      allowed: false,
      status: { code: err.code, reason: err.reason, message: err.message },
      ...(err.warnings.length ? { warnings: [...err.warnings] } : {}),
    };
  }
  if (err instanceof RequestBodyError)
    return { allowed: false, status: { code: 400, reason: 'BadRequest', message: err.message } };
  if (err instanceof ApiError)
    return {
      allowed: false,
      status: { code: err.statusCode, reason: err.reason || reasonForCode(err.statusCode), message: err.message },
    };
  const message = err instanceof Error ? err.message : String(err);
  return { allowed: false, status: { code: 403, reason: 'Forbidden', message } };
}

function reasonForCode(code: number): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    409: 'Conflict',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
  };
  return reasons[code] ?? '';
}

function writeReview(
  res: ServerResponse,
  apiVersion: string,
  response: AdmissionResponse,
  closeConnection = false,
): void {
  const body = JSON.stringify({ apiVersion, kind: 'AdmissionReview', response });
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json');
  if (closeConnection) res.setHeader('connection', 'close');
  res.end(body);
}

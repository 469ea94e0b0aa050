import { AsyncLocalStorage } from 'node:async_hooks';

/** Options every Client call takes: how long it may wait, and what abandons it. */
export interface CallOptions {
  /**
   * Abandons the call at once when it aborts: the request is cancelled and the
   * call rejects with the signal's reason. Inside a reconcile the call also
   * carries the reconcile's own signal (see {@link runWithCallSignal}), so a
   * write in flight when leadership is lost is abandoned without the
   * reconciler passing `ctx.signal` by hand. Default: only the reconcile's
   * signal, if any.
   */
  signal?: AbortSignal;
  /**
   * Bounds each request of the call, in milliseconds (0: no limit). Default:
   * the RestClient's `timeoutMs` (60 s). Cached reads answer from memory and
   * ignore it.
   */
  timeoutMs?: number;
}

/**
 * The signal of the reconcile a Client call runs in, as controller-runtime
 * passes a reconcile's ctx to every call. AsyncLocalStorage carries it through
 * the reconciler's awaits, so the user's code never threads it.
 */
const ambientSignal = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` so that every Client call it makes (and awaits) also carries `signal`. */
export function runWithCallSignal<R>(signal: AbortSignal, fn: () => R): R {
  return ambientSignal.run(signal, fn);
}

/** The signal a call is bounded by: its own `signal`, the reconcile's, or both. */
export function callSignal(options: CallOptions | undefined): AbortSignal | undefined {
  const ambient = ambientSignal.getStore();
  const own = options?.signal;
  if (!ambient) return own;
  if (!own || own === ambient) return ambient;
  return AbortSignal.any([ambient, own]);
}

/** What RestClient.request takes from a call's options. */
export function requestBounds(options: CallOptions | undefined): { signal?: AbortSignal; timeoutMs?: number } {
  return { signal: callSignal(options), timeoutMs: options?.timeoutMs };
}

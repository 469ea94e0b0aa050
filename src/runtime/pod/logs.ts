/**
 * Reading a container's log over the API server's `pods/log` subresource, as
 * `kubectl logs` does: a plain GET whose body is the log text, or, with
 * `follow`, a stream that stays open while the container runs.
 */
import { podKey, podSubresourcePath, refinePodError, type PodReference } from './subresources.js';
import type { Query, RestClient } from '../transport/rest.js';

/** Which part of a log to read (the API's PodLogOptions). */
export interface LogOptions {
  /** The container; may be left out for a pod with one container. Default: the only container. */
  container?: string;
  /** Only the last this many lines. Default: the whole log. */
  tailLines?: number;
  /** Only lines logged in the last this many seconds. Default: the whole log. */
  sinceSeconds?: number;
  /** Only lines logged at or after this time (exclusive with sinceSeconds). Default: the whole log. */
  sinceTime?: Date | string;
  /** The log of the previous, terminated instance of the container (after a restart). Default: false, the current one. */
  previous?: boolean;
  /** Prefix each line with its RFC 3339 timestamp. Default: false. */
  timestamps?: boolean;
  /** At most this many bytes of log (the server cuts it, possibly mid-line). Default: no limit. */
  limitBytes?: number;
  /** Aborts the call. Default: none. */
  signal?: AbortSignal;
  /** Bound on the call, in ms (0: none); `followLogs` bounds only the wait for the stream to open. Default: the RestClient's timeoutMs. */
  timeoutMs?: number;
}

/**
 * Reads the log of a container. Throws NotFoundError (no such pod),
 * ContainerNotFoundError, PodNotRunningError (the container has not started),
 * ForbiddenError (RBAC denies `get` on `pods/log`), or the transport's errors.
 */
export async function readPodLogs(rest: RestClient, pod: PodReference, options: LogOptions = {}): Promise<string> {
  const key = podKey(pod, 'logs');
  try {
    return await rest.request<string>('GET', podSubresourcePath(key, 'log'), {
      query: logQuery(options, false),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      responseType: 'text',
    });
  } catch (err) {
    throw refinePodError(err, 'log', key);
  }
}

/**
 * Follows the log of a container: yields it line by line (without the line
 * break) as the container writes it, until the container stops or the signal
 * aborts. Lines already written come first (or the last `tailLines` of them).
 * Throws as {@link readPodLogs} does.
 */
export async function* followPodLogs(
  rest: RestClient,
  pod: PodReference,
  options: LogOptions = {},
): AsyncGenerator<string> {
  const key = podKey(pod, 'logs');
  let pending: Buffer[] = [];
  try {
    for await (const chunk of rest.stream(
      podSubresourcePath(key, 'log'),
      logQuery(options, true),
      options.signal,
      options.timeoutMs,
    )) {
      // Lines are found in the bytes, so a multi-byte character split across chunks is decoded whole.
      let start = 0;
      let newline: number;
      while ((newline = chunk.indexOf(10, start)) >= 0) {
        const line = Buffer.concat([...pending, chunk.subarray(start, newline)]);
        pending = [];
        start = newline + 1;
        yield line.toString('utf8');
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    }
  } catch (err) {
    throw refinePodError(err, 'log', key);
  }
  if (pending.length > 0) yield Buffer.concat(pending).toString('utf8');
}

function logQuery(options: LogOptions, follow: boolean): Query {
  for (const name of ['tailLines', 'sinceSeconds', 'limitBytes'] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isInteger(value) || value < (name === 'tailLines' ? 0 : 1))) {
      throw new Error(
        `logs ${name} ${value} is not valid: use a whole number${name === 'tailLines' ? ', 0 or more' : ', 1 or more'}`,
      );
    }
  }
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined)
    throw new Error('logs: pass sinceSeconds or sinceTime, not both');
  const sinceTime =
    options.sinceTime instanceof Date ? options.sinceTime.toISOString().replace(/\.\d{3}Z$/, 'Z') : options.sinceTime;
  return {
    container: options.container || undefined,
    tailLines: options.tailLines,
    sinceSeconds: options.sinceSeconds,
    sinceTime,
    previous: options.previous || undefined,
    timestamps: options.timestamps || undefined,
    limitBytes: options.limitBytes,
    follow: follow || undefined,
  };
}

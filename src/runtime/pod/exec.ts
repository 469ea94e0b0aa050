/**
 * Running a command in a pod's container over the API server's `pods/exec`
 * subresource, as `kubectl exec` does: a WebSocket speaking Kubernetes'
 * channel protocol (`v5.channel.k8s.io`, falling back to `v4` as client-go
 * does), through the same kubeconfig, credentials and TLS as every other
 * call of the RestClient.
 *
 * Each binary message starts with a channel byte: 0 stdin, 1 stdout,
 * 2 stderr, 3 the error channel (one `Status` when the command ends), 4
 * terminal resize, and in v5 only 255 to close a channel (how stdin reaches
 * EOF). The exit code is read from the error channel's Status: `Success` is
 * 0, reason `NonZeroExitCode` carries an `ExitCode` cause.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import type { Writable } from 'node:stream';
import type WebSocket from 'ws';
import { ApiConnectionError, RequestTimeoutError, apiErrorFrom, type StatusBody } from '../api/errors.js';
import { podKey, podMeta, podSubresourcePath, refinePodError, type PodReference } from './subresources.js';
import { isWriteRefusal, type RestClient } from '../transport/rest.js';

/** The channel protocols offered, best first: v5 can close stdin; v4 is what API servers before 1.30 speak. */
const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const CLOSE = 255;

/**
 * A command runs for at most this long by default. An exec holds its
 * reconcile until the command ends, and a hung command (a shell waiting for
 * input, a lock) would otherwise hold it forever; 60 s is the API server's
 * own bound on an ordinary request. Long jobs pass a larger `timeoutMs` (or 0).
 */
export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

/**
 * `exec` keeps the command's output in memory: past this many bytes (stdout
 * and stderr together) it stops the command and throws rather than let one
 * chatty command exhaust the operator's memory limit. Use `execStream` for
 * more.
 */
export const DEFAULT_EXEC_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Options shared by `exec` and `execStream`. */
export interface ExecCommonOptions {
  /** Aborts the command (the stream is closed; the process in the container may go on briefly). Default: none. */
  signal?: AbortSignal;
  /** Bound on the whole exec, from connecting to the exit status, in ms; 0: no limit. Default: DEFAULT_EXEC_TIMEOUT_MS (60 s). */
  timeoutMs?: number;
}

/** Options of `exec`. */
export interface ExecOptions extends ExecCommonOptions {
  /** Sent to the command's stdin, which is then closed (EOF). Default: no stdin. */
  stdin?: string | Uint8Array;
  /** Most bytes of output (stdout + stderr) kept before the exec is stopped with ExecOutputTooLargeError. Default: DEFAULT_EXEC_MAX_OUTPUT_BYTES (64 MiB). */
  maxOutputBytes?: number;
}

/** Options of `execStream`: where output goes as it arrives, and what feeds stdin. */
export interface ExecStreamOptions extends ExecCommonOptions {
  /** Receives stdout as it arrives; the stream waits while it is full. Default: stdout is discarded. */
  stdout?: Writable;
  /** Receives stderr as it arrives. Default: stderr is discarded. */
  stderr?: Writable;
  /** Fed to stdin, which is closed once it ends. Default: no stdin. */
  stdin?: string | Uint8Array | AsyncIterable<string | Uint8Array>;
}

/** What a finished command produced. */
export interface ExecResult {
  /** Everything written to stdout, decoded as UTF-8. */
  stdout: string;
  /** Everything written to stderr, decoded as UTF-8. */
  stderr: string;
  /** The command's exit code: 0 on success. */
  exitCode: number;
}

/**
 * The command could not be run to an exit code: the runtime refused to start
 * it, or the stream broke off. `stdout` and `stderr` hold what arrived before.
 */
export class PodExecError extends Error {
  constructor(
    message: string,
    /** The error channel's Status, when the failure came from there. */
    readonly status: StatusBody | undefined,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * The command does not exist in the container or is not executable: the
 * runtime said so, or the command exited with 127 (not found) or 126 (not
 * executable), the codes shells and runtimes use for it.
 */
export class CommandNotFoundError extends PodExecError {
  constructor(
    message: string,
    status: StatusBody | undefined,
    stdout: string,
    stderr: string,
    /** 126 or 127 when the command exited with it; undefined when the runtime refused it outright. */
    readonly exitCode: number | undefined,
  ) {
    super(message, status, stdout, stderr);
  }
}

/** The command wrote more than `maxOutputBytes`; it was stopped. */
export class ExecOutputTooLargeError extends PodExecError {}

/** An exec ran out of its `timeoutMs`. */
export class ExecTimeoutError extends RequestTimeoutError {
  constructor(what: string, timeoutMs: number) {
    super(what, timeoutMs);
    this.name = 'ExecTimeoutError';
    this.message = `${what}: no exit status after ${timeoutMs / 1000}s (the exec's timeout; pass a larger timeoutMs, or 0 for none)`;
  }
}

/**
 * Runs `command` in `container` of `pod` and returns its output and exit
 * code. A non-zero exit code is a result, not an error; the call throws
 * only when the command could not run to an end:
 * - NotFoundError: no such pod;
 * - ContainerNotFoundError: no such container (or none named in a pod with several);
 * - PodNotRunningError: the pod has no node yet, or has completed;
 * - ForbiddenError: RBAC denies `create` or `get` on `pods/exec`;
 * - CommandNotFoundError: the command is not in the container (or exited 126/127);
 * - ExecTimeoutError, or the signal's reason when it aborts;
 * - ExecOutputTooLargeError, PodExecError, ApiConnectionError.
 *
 * `container` may be undefined for a pod with one container.
 */
export async function execInPod(
  rest: RestClient,
  pod: PodReference,
  container: string | undefined,
  command: readonly string[],
  options: ExecOptions = {},
): Promise<ExecResult> {
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_EXEC_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 0)
    throw new Error(`exec maxOutputBytes ${maxOutputBytes} is not valid: use a whole number of bytes`);
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let bytes = 0;
  const collected = (): [string, string] => [
    Buffer.concat(stdout).toString('utf8'),
    Buffer.concat(stderr).toString('utf8'),
  ];
  const keep =
    (into: Buffer[]) =>
    (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > maxOutputBytes)
        throw new ExecOutputTooLargeError(
          `exec ${describe(pod, container, command)}: the output passed maxOutputBytes (${maxOutputBytes} bytes), so the exec was stopped: raise maxOutputBytes, or use execStream to write it somewhere`,
          undefined,
          ...collected(),
        );
      into.push(chunk);
    };
  const { exitCode } = await runExec(
    rest,
    pod,
    container,
    command,
    { onStdout: keep(stdout), onStderr: keep(stderr), stdin: options.stdin, collected },
    options,
  );
  const [out, err] = collected();
  return { stdout: out, stderr: err, exitCode };
}

/**
 * Runs `command` as {@link execInPod} does, but streams stdout and stderr
 * into writables as they arrive (waiting while one is full) and feeds stdin
 * from an async iterable, so output of any size passes through. Resolves
 * with the exit code; throws as execInPod does.
 */
export async function execStreamInPod(
  rest: RestClient,
  pod: PodReference,
  container: string | undefined,
  command: readonly string[],
  options: ExecStreamOptions = {},
): Promise<{ exitCode: number }> {
  return runExec(
    rest,
    pod,
    container,
    command,
    { onStdout: options.stdout, onStderr: options.stderr, stdin: options.stdin, collected: () => ['', ''] },
    options,
  );
}

/** Where one exec's output goes: a function keeps it, a writable receives it (with backpressure). */
interface ExecIo {
  onStdout?: ((chunk: Buffer) => void) | Writable;
  onStderr?: ((chunk: Buffer) => void) | Writable;
  stdin?: string | Uint8Array | AsyncIterable<string | Uint8Array>;
  /** The output so far, for an error thrown midway. */
  collected(): [string, string];
}

let wsModule: Promise<typeof import('ws')> | undefined;
/** `ws` is loaded on the first exec: an operator that never execs does not pay for it. */
const loadWs = (): Promise<typeof import('ws')> => (wsModule ??= import('ws'));

async function runExec(
  rest: RestClient,
  pod: PodReference,
  container: string | undefined,
  command: readonly string[],
  io: ExecIo,
  options: ExecCommonOptions,
): Promise<{ exitCode: number }> {
  const key = podKey(pod, 'exec');
  // Checked at run time too: JavaScript callers pass anything.
  const given: unknown = command;
  if (!Array.isArray(given) || command.length === 0 || command.some((arg) => typeof arg !== 'string')) {
    throw new Error(
      `exec in pod "${key.name}": the command must be a non-empty list of strings, e.g. ['sh', '-c', 'echo hi']`,
    );
  }
  if (command[0] === '')
    throw new Error(`exec in pod "${key.name}": the command's first element (the program) is empty`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
    throw new Error(`exec timeoutMs ${timeoutMs} is not valid: use milliseconds, 0 or more (0: no limit)`);
  const what = `exec ${describe(key, container, command)}`;
  const path = podSubresourcePath(key, 'exec');
  const query = new URLSearchParams();
  for (const arg of command) query.append('command', arg);
  if (container) query.set('container', container);
  if (io.stdin !== undefined) query.set('stdin', 'true');
  query.set('stdout', 'true');
  query.set('stderr', 'true');

  if (options.signal?.aborted) throw options.signal.reason;
  const [{ WebSocket }, target] = await Promise.all([loadWs(), rest.upgradeTarget(path, query.toString())]);
  if (options.signal?.aborted) throw options.signal.reason;

  return new Promise<{ exitCode: number }>((resolve, reject) => {
    // ws hands these to https.request; its types leave out servername, so they are typed as https options.
    const tls: HttpsRequestOptions = {
      ca: target.ca,
      cert: target.cert,
      key: target.key,
      rejectUnauthorized: target.rejectUnauthorized,
      servername: target.servername,
    };
    const socket = new WebSocket(target.url, EXEC_PROTOCOLS, {
      ...tls,
      headers: target.headers,
      agent: target.agent,
      perMessageDeflate: false,
      followRedirects: false,
      finishRequest: target.finishRequest,
    });
    let settled = false;
    let errorChannel = '';
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: unknown, exitCode?: number): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (err !== undefined) {
        // terminate(), not close(): the command's end is not awaited once the caller gave up on it.
        if (socket.readyState !== WebSocket.CLOSED) socket.terminate();
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- whatever ended the exec (an abort's reason, a socket error), passed on as is
        reject(err);
      } else resolve({ exitCode: exitCode! });
    };
    const onAbort = (): void => finish(options.signal!.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs > 0) {
      timer = setTimeout(() => finish(new ExecTimeoutError(what, timeoutMs)), timeoutMs);
      timer.unref();
    }

    // The upgrade was refused: the body is the API server's Status (404, 400, 403...).
    socket.on('unexpected-response', (request, response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (err) => finish(new ApiConnectionError('GET', path, err)));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // a proxy's plain-text answer is kept as the message
        }
        finish(refinePodError(apiErrorFrom(response.statusCode ?? 0, body, what), 'exec', key));
        request.destroy();
      });
    });
    socket.on('error', (err) =>
      finish(settled ? undefined : isWriteRefusal(err) ? err : new ApiConnectionError('GET', path, err)),
    );

    const outputs: Array<ExecIo['onStdout']> = [];
    outputs[STDOUT] = io.onStdout;
    outputs[STDERR] = io.onStderr;
    // Writes a writable has not processed yet: the exec resolves only once it has taken every byte.
    let unflushed = 0;
    let onFlushed: (() => void) | undefined;
    const written = (err?: Error | null): void => {
      if (err)
        finish(new PodExecError(`${what}: writing the command's output failed: ${err.message}`, undefined, '', ''));
      if (--unflushed === 0) onFlushed?.();
    };
    socket.on('open', () => {
      if (!EXEC_PROTOCOLS.includes(socket.protocol)) {
        finish(
          new PodExecError(
            `${what}: the API server agreed to no channel protocol this client speaks (offered ${EXEC_PROTOCOLS.join(', ')}, got "${socket.protocol}")`,
            undefined,
            '',
            '',
          ),
        );
        return;
      }
      if (io.stdin !== undefined)
        void sendStdin(socket, io.stdin, socket.protocol === EXEC_PROTOCOLS[0]).catch((err: unknown) =>
          finish(
            new PodExecError(
              `${what}: writing stdin failed: ${err instanceof Error ? err.message : String(err)}`,
              undefined,
              ...io.collected(),
            ),
          ),
        );
    });

    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (settled || !isBinary || data.length === 0) return;
      const channel = data[0]!;
      const payload = data.subarray(1);
      // The server opens each channel with an empty frame; nothing to pass on.
      if (payload.length === 0) return;
      if (channel === ERROR) {
        errorChannel += payload.toString('utf8');
        return;
      }
      const output = outputs[channel];
      if (!output) return;
      try {
        if (typeof output === 'function') output(payload);
        else if ((unflushed++, !output.write(payload, written))) {
          // Backpressure: stop reading from the socket until the writable drains.
          socket.pause();
          output.once('drain', () => socket.resume());
        }
      } catch (err) {
        finish(err);
      }
    });

    socket.on('close', (code, reason) => {
      if (settled) return;
      if (!errorChannel) {
        finish(
          new PodExecError(
            `${what}: the stream closed (${code}${reason.length ? ` ${reason.toString('utf8')}` : ''}) before the command's exit status arrived`,
            undefined,
            ...io.collected(),
          ),
        );
        return;
      }
      let exitCode: number;
      try {
        exitCode = exitCodeOf(errorChannel, what, io.collected());
      } catch (err) {
        finish(err);
        return;
      }
      if (unflushed === 0) finish(undefined, exitCode);
      else onFlushed = () => finish(undefined, exitCode);
    });
  });
}

/** Sends stdin, then (in v5) closes the channel so the command sees EOF. */
async function sendStdin(
  socket: WebSocket,
  stdin: string | Uint8Array | AsyncIterable<string | Uint8Array>,
  canClose: boolean,
): Promise<void> {
  const send = (frame: Buffer): Promise<void> =>
    new Promise((resolve, reject) => socket.send(frame, { binary: true }, (err) => (err ? reject(err) : resolve())));
  const chunks = typeof stdin === 'string' || stdin instanceof Uint8Array ? [stdin] : stdin;
  for await (const chunk of chunks) {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (bytes.length > 0) await send(Buffer.concat([Buffer.from([STDIN]), bytes]));
  }
  // v4 has no way to close one channel: a command that reads stdin to its end waits until the exec's timeout.
  if (canClose) await send(Buffer.from([CLOSE, STDIN]));
}

/**
 * The exit code from the error channel's Status. A Failure other than a
 * non-zero exit means the command never ran to an end: that is thrown.
 */
function exitCodeOf(text: string, what: string, [stdout, stderr]: [string, string]): number {
  let status: StatusBody;
  try {
    status = JSON.parse(text) as StatusBody;
  } catch {
    // v1-v3 servers send plain text here; v4 and v5 always send a Status.
    throw new PodExecError(`${what}: ${text.trim()}`, undefined, stdout, stderr);
  }
  if (status.status === 'Success') return 0;
  if (status.reason === 'NonZeroExitCode') {
    const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
    const exitCode = Number(cause?.message);
    if (Number.isInteger(exitCode)) {
      if (exitCode === 126 || exitCode === 127) {
        const meaning = exitCode === 127 ? 'was not found' : 'is not executable';
        throw new CommandNotFoundError(
          `${what}: exit code ${exitCode}: the command (or one a shell ran) ${meaning} in the container${firstLine(stderr)}`,
          status,
          stdout,
          stderr,
          exitCode,
        );
      }
      return exitCode;
    }
  }
  const message = status.message ?? text;
  if (/executable file not found|no such file or directory|not found in \$PATH|permission denied/i.test(message)) {
    // runc's own words come last, after the kubelet's and containerd's wrapping (the whole text stays in `status`).
    const reason = /unable to start container process: (.*)$/.exec(message)?.[1] ?? message;
    throw new CommandNotFoundError(
      `${what}: the container runtime could not start the command: ${reason}`,
      status,
      stdout,
      stderr,
      undefined,
    );
  }
  throw new PodExecError(`${what}: ${message}`, status, stdout, stderr);
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0];
  return line ? `: ${line}` : '';
}

function describe(pod: PodReference, container: string | undefined, command: readonly string[]): string {
  const meta = podMeta(pod);
  const shown = command.length > 0 ? JSON.stringify(command.join(' ').slice(0, 80)) : '(no command)';
  return `${shown} in pod ${meta.namespace ?? ''}/${meta.name ?? ''}${container ? ` container ${container}` : ''}`;
}

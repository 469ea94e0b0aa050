import { writeSync } from 'node:fs';
import { format } from '../node-builtins.js';

/** Log levels, least to most severe; `silent` writes nothing. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

const LEVEL_VALUES: Record<LogLevel, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

/**
 * One log method, called as pino's: `log.info('message')`,
 * `log.info({ field: 1 }, 'message')`, `log.error({ err }, 'message')`,
 * `log.error(err)`, or with printf-style arguments: `log.info('%s done', name)`.
 */
export interface LogFn {
  (message: string, ...args: unknown[]): void;
  (fields: object, message?: string, ...args: unknown[]): void;
}

/**
 * The structured logger used across the runtime: pino's calling convention
 * and JSON line format (`level`, `time`, the bound fields, the call's fields,
 * `msg`), without pino itself (see createLogger for why).
 */
export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** A logger whose lines also carry `bindings`; it starts at this logger's level. */
  child(bindings: Record<string, unknown>): Logger;
  /** The least severe level written; may be changed at run time. */
  level: LogLevel;
  /** True if a line at `level` would be written. */
  isLevelEnabled(level: LogLevel): boolean;
  /** Writes every line still buffered, synchronously. */
  flush(): void;
}

/** How {@link createLogger} formats, filters and writes log lines. */
export interface LoggerOptions {
  /** Human-readable lines instead of JSON (kubebuilder's `--zap-devel`). Default: false. */
  development?: boolean;
  /** The least severe level written. Default: `debug` in development, `info` otherwise. */
  level?: LogLevel;
  /**
   * Where lines go, one `write` per line, kept off stdout so it stays free for
   * a program's output. Default: standard error, as zap, batched (see createLogger).
   */
  destination?: NodeJS.WritableStream;
}

/** Where formatted lines go. */
interface Sink {
  write(line: string): void;
  flush(): void;
}

/**
 * JSON logs in production so log pipelines can index the fields; a compact
 * `time LEVEL msg key=value` form in development.
 *
 * Log an error as `log.error({ err }, '...')`, never `err.message`: the `err`
 * field is serialized with its `type`, `message` and `stack`, and the `cause`
 * chain is folded into both, so a reconciler's bug arrives with its stack
 * trace. In development the stack follows the line, as zap prints a stacktrace.
 *
 * By default lines go to standard error in batches: the lines logged in one
 * turn of the event loop are written together with one system call at the
 * end of it (one write per line was 12 % of a busy operator's main thread).
 * None is dropped: a full pipe makes the write wait, as zap's does, and what
 * is buffered is written when the process exits, by `process.exit()` (a fatal
 * error) or an uncaught exception included. Only a SIGKILL can cut off the
 * lines of the last moment, as it cuts off the process.
 *
 * Why not pino, which this follows in format and calling convention: loading
 * it (about 30 modules) added 8 MiB to an idle operator's memory, more than
 * the rest of the runtime's own modules, and the runtime uses only this much of it.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? (options.development ? 'debug' : 'info');
  const sink = options.destination ? streamSink(options.destination) : (sharedStandardError ??= standardErrorSink());
  return new JsonLogger(level, '', options.development ? developmentFormat : jsonFormat, sink);
}

/** Formats one line (without its newline) from the level, the bound fields' JSON and the call's fields. */
type LineFormat = (
  level: LogLevel,
  bound: string,
  fields: Record<string, unknown>,
  message: string | undefined,
) => string;

class JsonLogger implements Logger {
  private threshold: number;
  readonly trace: LogFn;
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  readonly fatal: LogFn;

  constructor(
    private currentLevel: LogLevel,
    /** The bound fields as JSON members (`"a":1,"b":2`), serialized once per child, not per line. */
    private readonly bound: string,
    private readonly lineFormat: LineFormat,
    private readonly sink: Sink,
  ) {
    this.threshold = LEVEL_VALUES[currentLevel];
    this.trace = this.method('trace');
    this.debug = this.method('debug');
    this.info = this.method('info');
    this.warn = this.method('warn');
    this.error = this.method('error');
    this.fatal = this.method('fatal');
  }

  get level(): LogLevel {
    return this.currentLevel;
  }

  set level(level: LogLevel) {
    if (!(level in LEVEL_VALUES))
      throw new Error(`unknown log level ${JSON.stringify(level)}: use one of ${Object.keys(LEVEL_VALUES).join(', ')}`);
    this.currentLevel = level;
    this.threshold = LEVEL_VALUES[level];
  }

  isLevelEnabled(level: LogLevel): boolean {
    return LEVEL_VALUES[level] >= this.threshold && level !== 'silent';
  }

  child(bindings: Record<string, unknown>): Logger {
    const members = toJson(serializeFields(bindings)).slice(1, -1);
    const bound = this.bound && members ? `${this.bound},${members}` : this.bound || members;
    return new JsonLogger(this.currentLevel, bound, this.lineFormat, this.sink);
  }

  flush(): void {
    this.sink.flush();
  }

  private method(level: LogLevel): LogFn {
    const value = LEVEL_VALUES[level];
    return (first: unknown, ...rest: unknown[]) => {
      if (value < this.threshold) return;
      let fields: Record<string, unknown> = {};
      let message: string | undefined;
      if (typeof first === 'string') {
        message = interpolate(first, rest);
      } else {
        if (first instanceof Error) fields = { err: first };
        else if (first !== null && typeof first === 'object') fields = first as Record<string, unknown>;
        const [template, ...args] = rest;
        message =
          typeof template === 'string'
            ? interpolate(template, args)
            : first instanceof Error
              ? first.message
              : undefined;
      }
      this.sink.write(this.lineFormat(level, this.bound, serializeFields(fields), message));
      // A fatal line is the last word before an exit: written at once.
      if (level === 'fatal') this.sink.flush();
    };
  }
}

/** A message with its printf-style arguments filled in (`%s`, `%d`, `%j`, ...), as pino does. */
function interpolate(template: string, args: unknown[]): string {
  return args.length ? format(template, ...args) : template;
}

const jsonFormat: LineFormat = (level, bound, fields, message) => {
  let line = `{"level":"${level}","time":"${new Date().toISOString()}"`;
  if (bound) line += `,${bound}`;
  const members = toJson(fields).slice(1, -1);
  if (members) line += `,${members}`;
  if (message !== undefined) line += `,"msg":${JSON.stringify(message)}`;
  return `${line}}`;
};

const developmentFormat: LineFormat = (level, bound, fields, message) => {
  const all = { ...(bound ? (JSON.parse(`{${bound}}`) as Record<string, unknown>) : {}), ...fields };
  const err = all.err as { message?: unknown; stack?: unknown } | undefined;
  const stack = typeof err?.stack === 'string' && err.stack ? err.stack : undefined;
  if (stack) all.err = err!.message;
  const extra = Object.entries(all)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${new Date().toISOString()}\t${level.toUpperCase()}\t${message ?? ''}${extra ? `\t${extra}` : ''}${stack ? `\n${stack}` : ''}`;
};

/**
 * JSON of a fields object that never throws: a circular reference becomes
 * "[Circular]" and a BigInt its decimal string, so a log call cannot crash
 * the code that made it.
 */
function toJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(fields);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(fields, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString();
      if (value !== null && typeof value === 'object') {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
  }
}

/** The call's fields, with `err` serialized (an Error's own properties do not survive JSON.stringify). */
function serializeFields(fields: Record<string, unknown>): Record<string, unknown> {
  if (!(fields.err instanceof Error)) return fields;
  return { ...fields, err: serializeError(fields.err, new Set()) };
}

/**
 * An Error as JSON: `type`, `message` and `stack` with the `cause` chain
 * folded in (`outer: inner`, and `caused by:` stacks), `aggregateErrors` for
 * an AggregateError, and any other enumerable property (a status code).
 */
function serializeError(err: Error, seen: Set<unknown>): Record<string, unknown> {
  seen.add(err);
  const serialized: Record<string, unknown> = {
    type: err.constructor?.name || err.name,
    message: foldCauses(err, (e) => e.message, ': '),
    stack: foldCauses(err, (e) => e.stack ?? `${e.name}: ${e.message}`, '\ncaused by: '),
  };
  if (err instanceof AggregateError)
    serialized.aggregateErrors = err.errors.map((inner: unknown) =>
      inner instanceof Error && !seen.has(inner) ? serializeError(inner, seen) : inner,
    );
  for (const key of Object.keys(err)) {
    if (key === 'cause' || key in serialized) continue;
    const value = (err as unknown as Record<string, unknown>)[key];
    serialized[key] = value instanceof Error ? (seen.has(value) ? '[Circular]' : serializeError(value, seen)) : value;
  }
  return serialized;
}

/** `part(err)` joined with the same part of each Error in its cause chain, stopping at a loop. */
function foldCauses(err: Error, part: (e: Error) => string, separator: string): string {
  const parts: string[] = [];
  const visited = new Set<Error>();
  for (let e: unknown = err; e instanceof Error && !visited.has(e); e = e.cause) {
    visited.add(e);
    const text = part(e);
    // An outer message that already ends with its cause's (a hand-written "x: y") is not repeated.
    if (separator === ': ' && parts.length && parts.at(-1)!.endsWith(text)) continue;
    parts.push(text);
  }
  return parts.join(separator);
}

/** Every logger writing to standard error shares one batch (and one exit hook). */
let sharedStandardError: Sink | undefined;

/** One synchronous write per line to a stream the caller gave. */
function streamSink(destination: NodeJS.WritableStream): Sink {
  return { write: (line) => void destination.write(`${line}\n`), flush: () => undefined };
}

/**
 * Standard error, batched: lines queue until the end of the current turn of
 * the event loop (setImmediate), then go out in one write. The queue is also
 * written on process exit, so no line is lost.
 */
function standardErrorSink(): Sink {
  let pending: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    writeFully(2, Buffer.from(text, 'utf8'));
  };
  process.on('exit', flush);
  return {
    write(line) {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush).unref();
      }
    },
    flush,
  };
}

/**
 * Writes all of `buffer` to `fd`, waiting out a full pipe. Standard error may
 * be non-blocking (a parent's pipe), so EAGAIN means "wait and retry", never
 * "drop".
 */
function writeFully(fd: number, buffer: Buffer): void {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += writeSync(fd, buffer, offset, buffer.length - offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return; // stderr closed: nowhere left to write
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
}
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** A logger that discards everything, for library code called without one. */
export const silentLogger: Logger = new JsonLogger('silent', '', jsonFormat, {
  write: () => undefined,
  flush: () => undefined,
});

import { Writable } from 'node:stream';
import { pino, type Logger as PinoLogger } from 'pino';

/** The structured logger used across the runtime (pino). */
export type Logger = PinoLogger;

/** How {@link createLogger} formats, filters and writes log lines. */
export interface LoggerOptions {
  /** Human-readable lines instead of JSON (kubebuilder's `--zap-devel`). Default: false. */
  development?: boolean;
  /** The least severe level written. Default: `debug` in development, `info` otherwise. */
  level?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
  /**
   * Where lines go, kept off stdout so it stays free for a program's output.
   * Default: standard error, as zap, written asynchronously (see createLogger).
   */
  destination?: NodeJS.WritableStream;
}

/**
 * JSON logs in production so log pipelines can index the fields; a compact
 * `time LEVEL msg key=value` form in development.
 *
 * Log an error as `log.error({ err }, '...')`, never `err.message`: pino's
 * `err` serializer keeps `type`, `message` and `stack`, and folds in the
 * `cause` chain, so a reconciler's bug arrives with its stack trace. In
 * development the stack follows the line, as zap prints a stacktrace.
 *
 * By default lines go to standard error without blocking the process: a
 * write is handed to the kernel in the background, and lines logged while
 * one is under way are written together with the next (synchronous writes
 * were 12 % of a busy operator's main thread). None is dropped: the buffer
 * grows rather than discarding, and it is flushed synchronously when the
 * process exits, by `process.exit()` (a fatal error) or an uncaught
 * exception included. Only a SIGKILL can cut off the lines of the last
 * moment, as it cuts off the process.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? (options.development ? 'debug' : 'info');
  const destination = options.destination ?? pino.destination({ dest: 2, sync: false });
  if (!options.development) {
    return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, destination);
  }
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, developmentStream(destination as NodeJS.WritableStream));
}

function developmentStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          const { time, level, msg, ...fields } = JSON.parse(line) as Record<string, unknown>;
          const stack = errorStack(fields.err);
          if (stack) fields.err = (fields.err as { message?: unknown }).message;
          const extra = Object.entries(fields)
            .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
            .join(' ');
          out.write(`${String(time)}\t${String(level).toUpperCase()}\t${String(msg ?? '')}${extra ? `\t${extra}` : ''}\n${stack ? `${stack}\n` : ''}`);
        } catch {
          out.write(`${line}\n`);
        }
      }
      callback();
    },
  });
}

/** The stack of a serialized error, to print on its own lines rather than as one escaped string. */
function errorStack(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const stack = (err as { stack?: unknown }).stack;
  return typeof stack === 'string' && stack ? stack : undefined;
}

/** A logger that discards everything, for library code called without one. */
export const silentLogger: Logger = pino({ level: 'silent' });

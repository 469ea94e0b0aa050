import type { Interface } from 'node:readline';
import { fstatSync } from 'node:fs';
import { UsageError } from '../errors.js';

/** Reads standard input one line at a time, on demand. */
export interface LineReader {
  /** The next line, without its newline; undefined once stdin is closed. */
  next(): Promise<string | undefined>;
  /** Stops reading, so the process can exit. */
  close(): void;
}

/**
 * A line reader over `input` that queues lines arriving before they are
 * asked for: readline drops lines (typed ahead or piped) while no question
 * is pending, so answers would be lost. Stdin is opened on the first `next()`.
 */
export function queuedLineReader(input?: NodeJS.ReadableStream): LineReader {
  let reader: Interface | undefined;
  const lines: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let closed = false;
  return {
    next() {
      if (!reader) {
        // readline is loaded here, not imported: every command loads this module, few read stdin by line.
        // process.stdin only now: creating it (a file or /dev/null: an fs.ReadStream, with fs/promises and
        // readline's modules) cost every command ~3 ms, though few ever read a line.
        reader = process.getBuiltinModule('node:readline').createInterface({
          input: input ?? process.stdin,
          terminal: false,
        });
        reader.on('line', (line) => (waiting.length > 0 ? waiting.shift()!(line) : lines.push(line)));
        reader.on('close', () => {
          closed = true;
          for (const resolve of waiting.splice(0)) resolve(undefined);
        });
      }
      if (lines.length > 0) return Promise.resolve(lines.shift());
      if (closed) return Promise.resolve(undefined);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      reader?.close();
      reader = undefined;
    },
  };
}

/**
 * All of stdin (at most `limit` bytes) when it is a pipe, a redirected file or a socket; undefined
 * for a terminal or /dev/null (closed stdin in CI), which must never block.
 */
export async function readPipedStdin(limit = Number.POSITIVE_INFINITY): Promise<string | undefined> {
  let piped: boolean;
  try {
    const stat = fstatSync(0);
    piped = stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    piped = false;
  }
  if (!piped) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    // Stop at the bound instead of buffering whatever the pipe produces.
    if (size > limit) {
      process.stdin.destroy();
      // Imported only here: yaml-input loads the yaml parser, which the commands that read no YAML should not pay for.
      const { formatSize } = await import('../yaml-input.js');
      throw new UsageError(
        `stdin is larger than ${formatSize(limit)}`,
        "pipe in only the operator's manifests (kustomize build config/manifests), or use --input-dir",
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

import { createInterface, type Interface } from 'node:readline/promises';
import type { CommandIO } from './io.js';
import { UsageError } from '../errors.js';

/** What command modules get from the entry point: where to talk, and where they run. */
export interface CliContext {
  io: CommandIO;
  /** The directory commands act on. */
  cwd: string;
  /** Whether stdin is a terminal, so prompts are allowed. */
  interactive: boolean;
  /** Turns on debug lines (set by the global --verbose). */
  setVerbose(verbose: boolean): void;
  /** Whether --verbose was given. */
  readonly verbose: boolean;
  /** Releases stdin if a prompt opened it. */
  close(): void;
  /**
   * The exit status for a command that finished without an error yet must
   * fail, e.g. `bundle validate` after reporting findings. 0 by default.
   */
  exitCode: number;
}

/** The context of a real process: stdout, stderr and a readline prompt on stdin. */
export function processContext(): CliContext {
  let verbose = false;
  // One reader for all prompts, with its own queue: readline drops lines that
  // arrive (typed ahead or piped) while no question is pending.
  let reader: Interface | undefined;
  const lines: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let closed = false;
  const nextLine = (): Promise<string | undefined> => {
    if (!reader) {
      reader = createInterface({ input: process.stdin, terminal: false });
      reader.on('line', (line) => (waiting.length > 0 ? waiting.shift()!(line) : lines.push(line)));
      reader.on('close', () => {
        closed = true;
        for (const resolve of waiting.splice(0)) resolve(undefined);
      });
    }
    if (lines.length > 0) return Promise.resolve(lines.shift());
    if (closed) return Promise.resolve(undefined);
    return new Promise((resolve) => waiting.push(resolve));
  };
  const io: CommandIO = {
    out: (line) => void process.stdout.write(`${line}\n`),
    progress: (line) => void process.stderr.write(`${line}\n`),
    debug: (line) => {
      if (verbose) process.stderr.write(`DEBUG ${line}\n`);
    },
    confirm: async (question) => {
      for (;;) {
        process.stderr.write(`${question}\n`);
        const answer = (await nextLine())?.trim().toLowerCase();
        if (answer === undefined) {
          throw new UsageError(`no answer to "${question}" (stdin was closed)`, 'answer y or n, or pass the flag explicitly, e.g. --resource=true --controller=true');
        }
        if (answer === 'y' || answer === 'yes') return true;
        if (answer === 'n' || answer === 'no') return false;
      }
    },
  };
  return {
    io,
    exitCode: 0,
    cwd: process.cwd(),
    interactive: Boolean(process.stdin.isTTY),
    setVerbose: (value) => {
      verbose = value;
    },
    get verbose() {
      return verbose;
    },
    close: () => {
      reader?.close();
      reader = undefined;
    },
  };
}

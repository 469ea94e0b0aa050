import { writeSync } from 'node:fs';
import { OutputError, type CommandIO } from './io.js';
import { queuedLineReader } from './stdin.js';
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

function currentDirectory(): string {
  try {
    return process.cwd();
  } catch (error) {
    throw new UsageError(
      `the current directory no longer exists (${(error as NodeJS.ErrnoException).code ?? 'cwd failed'})`,
      'change into an existing directory (e.g. `cd "$PWD"` if it was recreated) and run the command again',
      { cause: error },
    );
  }
}

/** Waits `ms` without spinning (there is no event loop turn to give back: the writes are synchronous). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Writes all of `text` to a file descriptor before returning, so a failure
 * is an exception at the line that printed, not a later 'error' event after
 * the command has changed the project. A descriptor left non-blocking by
 * another process (EAGAIN) is retried until its reader catches up.
 */
function writeAllSync(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length;) {
    try {
      offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      sleepSync(5);
    }
  }
}

/** Writes to stdout; a failure becomes an {@link OutputError}. */
function writeStdout(text: string): void {
  try {
    writeAllSync(1, text);
  } catch (error) {
    throw new OutputError(error);
  }
}

/** Writes to stderr. A failure is ignored, as Go programs do: there is nowhere left to report it. */
function writeStderr(text: string): void {
  try {
    writeAllSync(2, text);
  } catch {
    // Nothing to do: stderr is where problems are reported.
  }
}

/** The context of a real process: stdout, stderr and a readline prompt on stdin. */
export function processContext(): CliContext {
  let verbose = false;
  // One reader for all prompts; it opens stdin only when a question is asked.
  const reader = queuedLineReader();
  const io: CommandIO = {
    out: (line) => writeStdout(`${line}\n`),
    progress: (line) => writeStderr(`${line}\n`),
    debug: (line) => {
      if (verbose) writeStderr(`DEBUG ${line}\n`);
    },
    confirm: async (question) => {
      for (;;) {
        writeStderr(`${question}\n`);
        const answer = (await reader.next())?.trim().toLowerCase();
        if (answer === undefined) {
          throw new UsageError(
            `no answer to "${question}" (stdin was closed)`,
            'answer y or n, or pass the flag explicitly, e.g. --resource=true --controller=true',
          );
        }
        if (answer === 'y' || answer === 'yes') return true;
        if (answer === 'n' || answer === 'no') return false;
      }
    },
  };
  return {
    io,
    exitCode: 0,
    // Read when a command needs it, so a deleted working directory is a
    // one-line error inside the CLI's error handling, not a stack trace.
    get cwd() {
      return currentDirectory();
    },
    // Asked of the descriptor, not of process.stdin, which this would create (see queuedLineReader).
    get interactive() {
      return process.getBuiltinModule('node:tty').isatty(0);
    },
    setVerbose: (value) => {
      verbose = value;
    },
    get verbose() {
      return verbose;
    },
    close: () => reader.close(),
  };
}

import { createInterface } from 'node:readline/promises';
import type { CommandIO } from '../commands/io.js';

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
}

/** The context of a real process: stdout, stderr and a readline prompt on stdin. */
export function processContext(): CliContext {
  let verbose = false;
  const io: CommandIO = {
    out: (line) => void process.stdout.write(`${line}\n`),
    progress: (line) => void process.stderr.write(`${line}\n`),
    debug: (line) => {
      if (verbose) process.stderr.write(`DEBUG ${line}\n`);
    },
    confirm: async (question) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        for (;;) {
          const answer = (await rl.question(`${question}\n`)).trim().toLowerCase();
          if (answer === 'y' || answer === 'yes') return true;
          if (answer === 'n' || answer === 'no') return false;
        }
      } finally {
        rl.close();
      }
    },
  };
  return {
    io,
    cwd: process.cwd(),
    interactive: Boolean(process.stdin.isTTY),
    setVerbose: (value) => {
      verbose = value;
    },
    get verbose() {
      return verbose;
    },
  };
}

import type { TreeChange, VirtualTree } from '../scaffold/tree.js';

/** Where a command reports progress; the CLI binds it to stdout/stderr, tests may capture it. */
export interface CommandIO {
  /** A line for the user (results, next steps, dry-run listings), on stdout. */
  out(line: string): void;
  /** A progress or diagnostic line, on stderr. */
  progress(line: string): void;
  /** Only shown with --verbose. */
  debug(line: string): void;
  /** Asks a yes/no question; only called when stdin is a terminal. */
  confirm(question: string): Promise<boolean>;
}

/**
 * A write to stdout failed: a full device (ENOSPC from `> /dev/full`), a
 * pipe whose reader is gone (EPIPE), a descriptor not open for writing
 * (EBADF). The command's output is lost, so it stops; the CLI turns this into
 * one line and its exit code (see `run` in main.ts).
 */
export class OutputError extends Error {
  /** The errno code, e.g. `ENOSPC`, `EPIPE`. */
  readonly code: string;
  /** Set when the failed output was a report {@link finishTree} prints before writing the project: no file changed. */
  readonly filesUnchanged: boolean;

  constructor(cause: unknown, options: { filesUnchanged?: boolean } = {}) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'EIO';
    super(`cannot write to standard output (${code})`, { cause });
    this.name = 'OutputError';
    this.code = code;
    this.filesUnchanged = options.filesUnchanged ?? false;
  }
}

/** Prints `CREATE path` / `UPDATE path` / `DELETE path`, the dry-run report. */
export function reportChanges(io: CommandIO, changes: readonly TreeChange[]): void {
  for (const change of changes) io.out(`${change.action} ${change.path}`);
}

/**
 * Ends a command that rendered into `tree`: under --dry-run it lists the
 * changes and writes nothing; otherwise it writes them all at once and
 * prints `report` (what the command tells the user on success). The report
 * is printed, in one write, once every file is staged and before any is put
 * in place: a failed write (a file in the way, a read-only directory) leaves
 * stdout empty, and a stdout that cannot take the report (a full disk, a
 * closed pipe) leaves the project untouched. One write also means a reader
 * that stops early (`| head -1`) has been given all of it. Returns whether
 * files were written.
 */
export async function finishTree(
  tree: VirtualTree,
  io: CommandIO,
  dryRun: boolean,
  report: readonly string[] = [],
): Promise<boolean> {
  if (dryRun) {
    reportChanges(io, tree.changes());
    return false;
  }
  const printReport = (): void => {
    if (report.length === 0) return;
    try {
      io.out(report.join('\n'));
    } catch (error) {
      if (error instanceof OutputError) throw new OutputError(error.cause, { filesUnchanged: true });
      throw error;
    }
  };
  // Nothing to write (`edit` with nothing to change, manifests up to date): the commit has no staging step.
  if (tree.changes().length === 0) printReport();
  for (const change of await tree.commit({ beforeApply: printReport })) io.debug(`${change.action} ${change.path}`);
  return true;
}

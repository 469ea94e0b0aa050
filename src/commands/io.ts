import type { TreeChange } from '../scaffold/tree.js';

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

/** Prints `CREATE path` / `UPDATE path` / `DELETE path`, the dry-run report. */
export function reportChanges(io: CommandIO, changes: readonly TreeChange[]): void {
  for (const change of changes) io.out(`${change.action} ${change.path}`);
}

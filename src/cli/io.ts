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

/** Prints `CREATE path` / `UPDATE path` / `DELETE path`, the dry-run report. */
export function reportChanges(io: CommandIO, changes: readonly TreeChange[]): void {
  for (const change of changes) io.out(`${change.action} ${change.path}`);
}

/**
 * Ends a command that rendered into `tree`: under --dry-run it lists the
 * changes and writes nothing; otherwise it writes them all at once. Returns
 * whether files were written.
 */
export async function finishTree(tree: VirtualTree, io: CommandIO, dryRun: boolean): Promise<boolean> {
  if (dryRun) {
    reportChanges(io, tree.changes());
    return false;
  }
  for (const change of await tree.commit()) io.debug(`${change.action} ${change.path}`);
  return true;
}

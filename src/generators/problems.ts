/** A problem found in the user's sources, tied to the line that caused it. */
export interface SourceProblem {
  /** Path relative to the project directory (or absolute when outside it). */
  file: string;
  /** 1-based line number. */
  line: number;
  message: string;
}

/** Formats a problem the way compilers do, so editors can jump to it. */
export function formatProblem(problem: SourceProblem): string {
  return `${problem.file}:${problem.line}: ${problem.message}`;
}

/**
 * Thrown by `generateManifests` when any API or controller has a problem.
 * Every problem is collected first, so one run reports all of them.
 */
export class ManifestError extends Error {
  constructor(readonly problems: SourceProblem[]) {
    super(`generate manifests found ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was written:\n${problems.map(formatProblem).join('\n')}`);
    this.name = 'ManifestError';
  }
}

/** Collects problems during one generation run. */
export class ProblemList {
  readonly items: SourceProblem[] = [];

  add(file: string, line: number, message: string): void {
    this.items.push({ file, line, message });
  }

  get empty(): boolean {
    return this.items.length === 0;
  }

  /** Throws a ManifestError if any problem was recorded, sorted by file and line for stable output. */
  throwIfAny(): void {
    if (this.empty) return;
    const sorted = [...this.items].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.message.localeCompare(b.message));
    const unique = sorted.filter((p, i) => i === 0 || formatProblem(p) !== formatProblem(sorted[i - 1]!));
    throw new ManifestError(unique);
  }
}

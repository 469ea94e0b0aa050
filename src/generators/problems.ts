import { formatProblem, UsageError, type SourceProblem } from '../errors.js';
import { byteOrder } from '../byte-order.js';

/**
 * Collects problems during one generation run, so that one run reports every
 * problem in the user's API types and controllers, not just the first.
 */
export class ProblemList {
  readonly items: SourceProblem[] = [];

  add(file: string, line: number, message: string): void {
    this.items.push({ file, line, message });
  }

  get empty(): boolean {
    return this.items.length === 0;
  }

  /**
   * Throws a {@link UsageError} carrying every recorded problem, sorted by
   * file and line for stable output, if any was recorded.
   */
  throwIfAny(): void {
    if (this.empty) return;
    const sorted = [...this.items].sort(
      (a, b) => byteOrder(a.file, b.file) || a.line - b.line || byteOrder(a.message, b.message),
    );
    const unique = sorted.filter((p, i) => i === 0 || formatProblem(p) !== formatProblem(sorted[i - 1]!));
    throw new UsageError(
      `generate manifests found ${unique.length} problem${unique.length === 1 ? '' : 's'}; nothing was written`,
      'fix them and run it again',
      { problems: unique },
    );
  }
}

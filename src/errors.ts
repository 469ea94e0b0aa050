/**
 * The one error type for failures caused by the user's input or project
 * state. Every layer (commands, scaffold, generators, validation, the
 * runtime's envtest downloader) throws it; the CLI prints it as one line,
 * `Error: <Problem>. <Fix>.`, after any source problems it carries, and exits
 * 1. Anything else reaching the CLI is a bug.
 */

/** A problem found in the user's sources, tied to the line that caused it. */
export interface SourceProblem {
  /** Path relative to the project directory (or absolute when outside it). */
  file: string;
  /** 1-based line number. */
  line: number;
  message: string;
}

/** Formats a problem the way compilers do (`file:line: message`), so editors can jump to it. */
export function formatProblem(problem: SourceProblem): string {
  return `${problem.file}:${problem.line}: ${problem.message}`;
}

/** Options of {@link UsageError}. */
export interface UsageErrorOptions {
  /** The underlying error (shown with --verbose). */
  cause?: unknown;
  /** Source lines at fault; the CLI prints them, one per line, above the error. Default: none. */
  problems?: readonly SourceProblem[];
  /**
   * For errors a library caller reads (the runtime's envtest): `message` then
   * takes Go's chained form, `<component>: <problem>: <fix>`. The CLI prints
   * the sentence either way. Default: `message` is the sentence.
   */
  component?: string;
}

/** A failure the user can fix: what is wrong, and what to do about it. */
export class UsageError extends Error {
  /** What is wrong, on one line, without a trailing period. */
  readonly problem: string;
  /** What the user can do about it, on one line, without a trailing period. */
  readonly fix: string;
  /** The `file:line` problems behind this error, sorted; empty for most errors. */
  readonly problems: readonly SourceProblem[];

  constructor(problem: string, fix: string, options: UsageErrorOptions = {}) {
    const oneLineProblem = oneLine(problem);
    const oneLineFix = oneLine(fix);
    const problems = options.problems ?? [];
    const message =
      options.component !== undefined
        ? `${options.component}: ${oneLineProblem}: ${oneLineFix}`
        : [sentenceOf(oneLineProblem, oneLineFix), ...problems.map(formatProblem)].join('\n');
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UsageError';
    this.problem = oneLineProblem;
    this.fix = oneLineFix;
    this.problems = problems;
  }

  /** `<Problem>. <Fix>.`: the line the CLI prints after `Error: `. */
  get sentence(): string {
    return sentenceOf(this.problem, this.fix);
  }

  /** `<problem>: <fix>`, Go's chained form, for log lines such as `bundle validate`'s fatal entry. */
  get chained(): string {
    return `${this.problem}: ${this.fix}`;
  }
}

function sentenceOf(problem: string, fix: string): string {
  return `${problem}. ${fix.charAt(0).toUpperCase()}${fix.slice(1)}.`;
}

function oneLine(text: string): string {
  // One line is the contract: a multi-line cause (an fs error, a YAML parse
  // message) is folded so the error still reads as a single sentence.
  return shortenQuoted(text.replace(/\s*\n\s*/g, ' ').replace(/\.+$/, ''));
}

/** Quoted user input longer than this is cut when echoed in an error. */
export const MAX_ECHOED_INPUT = 80;

/**
 * Cuts every value quoted with `quote` that is longer than
 * {@link MAX_ECHOED_INPUT} characters to its start plus its length, so a
 * 100 kB argument does not become a 100 kB error line; the start is enough to
 * recognise it. Apostrophes are prose in our own messages, so only commander's
 * messages (`unknown option '--x'`) pass `'`.
 */
export function shortenQuoted(text: string, quote: '"' | "'" = '"'): string {
  const quoted = new RegExp(`${quote}([^${quote}\\n]{${MAX_ECHOED_INPUT + 1},}?)${quote}`, 'g');
  return text.replace(
    quoted,
    (_whole, value: string) => `${quote}${value.slice(0, MAX_ECHOED_INPUT - 20)}…${quote} (${value.length} characters)`,
  );
}

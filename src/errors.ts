/**
 * A failure caused by the user's input or project state. The CLI prints it as
 * one line, `Error: <problem>. <fix>.`, and exits 1; anything else is a bug.
 */
export class ScaffoldError extends Error {
  /** What is wrong, without a trailing period. */
  readonly problem: string;
  /** What the user can do about it, without a trailing period. */
  readonly fix: string;

  constructor(problem: string, fix: string, options?: { cause?: unknown }) {
    const fixSentence = stripPeriod(fix);
    super(`${stripPeriod(problem)}. ${fixSentence.charAt(0).toUpperCase()}${fixSentence.slice(1)}.`, options);
    this.name = 'ScaffoldError';
    this.problem = stripPeriod(problem);
    this.fix = fixSentence;
  }
}

function stripPeriod(text: string): string {
  // One line is the contract: a multi-line cause (an fs error, a YAML parse
  // message) is folded so the error still reads as a single sentence.
  return text.replace(/\s*\n\s*/g, ' ').replace(/\.+$/, '');
}

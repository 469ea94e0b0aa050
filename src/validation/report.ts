/**
 * The command's result (operator-sdk `internal/validate/result.go`): an
 * ordered list of outputs, each rendered api finding or format error, with
 * the text (logrus-style) and json-alpha1 renderers.
 */
import { renderFinding, type ManifestResult } from './diagnostics.js';

/** One output line's level, as json-alpha1 spells it. */
export type OutputType = 'error' | 'warning' | 'info';

/** One output of the report. */
export interface ReportOutput {
  type: OutputType;
  message: string;
}

/** The whole report: passed is false as soon as one error is added. */
export class ValidationReport {
  passed = true;
  readonly outputs: ReportOutput[] = [];

  /** Adds an error line. */
  addError(message: string): void {
    this.outputs.push({ type: 'error', message });
    this.passed = false;
  }

  /** Adds a warning line. */
  addWarning(message: string): void {
    this.outputs.push({ type: 'warning', message });
  }

  /** Adds each result's warnings, then its errors, result by result (operator-sdk's order). */
  addManifestResults(results: readonly ManifestResult[]): void {
    for (const result of results) {
      for (const warning of result.warnings) this.addWarning(renderFinding(warning));
      for (const error of result.errors) this.addError(renderFinding(error));
    }
  }

  /** json-alpha1: `{"passed", "outputs"}` with 4-space indent; no outputs is `null`, as Go marshals a nil slice. */
  toJson(): string {
    return JSON.stringify({ passed: this.passed, outputs: this.outputs.length === 0 ? null : this.outputs }, null, 4);
  }
}

/** logrus level names, short (TTY) and long (key=value) forms. */
const LEVELS = {
  info: { short: 'INFO', long: 'info' },
  warning: { short: 'WARN', long: 'warning' },
  error: { short: 'ERRO', long: 'error' },
  fatal: { short: 'FATA', long: 'fatal' },
} as const;

/** A level a log line can have. */
export type LogLevel = keyof typeof LEVELS;

/**
 * Formats one line like logrus' TextFormatter: `WARN[0000] msg` for a
 * terminal (seconds since start in the brackets), otherwise
 * `time="<RFC 3339>" level=warning msg="<quoted>"`.
 */
export function logLine(
  level: LogLevel,
  message: string,
  options: { tty: boolean; now: Date; startedAt: Date },
): string {
  if (options.tty) {
    const elapsed = Math.max(0, Math.floor((options.now.getTime() - options.startedAt.getTime()) / 1000));
    return `${LEVELS[level].short}[${String(elapsed).padStart(4, '0')}] ${message}`;
  }
  const time = options.now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `time="${time}" level=${LEVELS[level].long} msg=${quoteLogValue(message)}`;
}

/** logrus quotes a value unless it is made only of safe characters; quoting escapes like Go's strconv.Quote. */
function quoteLogValue(value: string): string {
  if (value !== '' && /^[A-Za-z0-9\-._/@^+]+$/.test(value)) return value;
  return JSON.stringify(value);
}

/**
 * `bundle validate <dir>`: validates an OLM bundle directory like
 * `operator-sdk bundle validate`. Results go to stdout (text or json-alpha1),
 * the log (success line, fatal errors) to stderr; the exit code is 1 only
 * when an error was found.
 */
import type { CommandIO } from '../../cli/io.js';
import { UsageError } from '../../errors.js';
import { optionalValidatorTable, selectValidators } from '../../validation/optional.js';
import { logLine, type LogLevel } from '../../validation/report.js';
import { validateBundleDirectory } from '../../validation/validate.js';

/** The output formats `-o` accepts. */
export const OUTPUT_FORMATS = ['text', 'json-alpha1'] as const;

/** Flags and argument of `bundle validate`. */
export interface BundleValidateOptions {
  directory?: string;
  selectOptional?: string;
  listOptional: boolean;
  /** Raw `--optional-values` entries, each `k=v[,k=v...]`. */
  optionalValues: string[];
  output: string;
}

/** Where the command runs and how its log lines look. */
export interface BundleValidateEnvironment {
  cwd: string;
  /** Whether stdout / stderr are terminals (short `WARN[0000]` log form). */
  stdoutIsTty: boolean;
  stderrIsTty: boolean;
  now(): Date;
}

/**
 * Runs the command and returns its exit code: results on `io.out`, the log
 * on `io.progress`. Bad flags throw a UsageError; a bundle that cannot be
 * loaded is one fatal log line and exit code 1.
 */
export function bundleValidateCommand(
  options: BundleValidateOptions,
  io: CommandIO,
  env: BundleValidateEnvironment,
): number {
  if (options.listOptional) {
    io.out(optionalValidatorTable().replace(/\n$/, ''));
    return 0;
  }
  if (!options.directory) {
    throw new UsageError('a bundle directory is a required argument', 'run `ts-operator-sdk bundle validate ./bundle`');
  }
  if (!(OUTPUT_FORMATS as readonly string[]).includes(options.output)) {
    throw new UsageError(
      `invalid value for output flag: ${options.output}`,
      `use one of: ${OUTPUT_FORMATS.join(', ')}`,
    );
  }
  const optionalValues = parseOptionalValues(options.optionalValues);
  const startedAt = env.now();
  const log = (level: LogLevel, message: string, tty: boolean, write: (line: string) => void): void =>
    write(logLine(level, message, { tty, now: env.now(), startedAt }));

  // A bad selector is a flag error (the usual `Error:` line); checked before
  // loading, so every UsageError from the load below is the bundle's.
  selectValidators(options.selectOptional);
  let report;
  try {
    report = validateBundleDirectory({
      directory: options.directory,
      cwd: env.cwd,
      selector: options.selectOptional,
      optionalValues,
    });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log('fatal', error.chained, env.stderrIsTty, (line) => io.progress(line));
    return 1;
  }
  if (options.output === 'json-alpha1') io.out(report.toJson());
  else for (const output of report.outputs) log(output.type, output.message, env.stdoutIsTty, (line) => io.out(line));
  if (!report.passed) return 1;
  log('info', 'All validation tests have completed successfully', env.stderrIsTty, (line) => io.progress(line));
  return 0;
}

/** Parses `k8s-version=1.25,index-path=x` entries (repeatable) into one map; later keys win. */
export function parseOptionalValues(entries: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const entry of entries) {
    for (const pair of entry.split(',')) {
      if (pair.trim() === '') continue;
      const equals = pair.indexOf('=');
      if (equals <= 0) {
        throw new UsageError(
          `invalid --optional-values entry ${JSON.stringify(pair)}: expected key=value`,
          'pass e.g. --optional-values=k8s-version=1.25',
        );
      }
      values.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
    }
  }
  return values;
}

/**
 * `bundle validate <dir>`: validates an OLM bundle directory like
 * `operator-sdk bundle validate`. Results go to stdout (text or json-alpha1),
 * the log (success line, fatal errors) to stderr; the exit code is 1 only
 * when an error was found.
 */
import { BundleLoadError } from '../../validation/bundle-loader.js';
import { optionalValidatorTable, SelectorError } from '../../validation/optional.js';
import { logLine, type LogLevel } from '../../validation/report.js';
import { validateBundleDirectory } from '../../validation/validate.js';
import { ScaffoldError } from '../../errors.js';

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

/** Where the command writes and how its log lines look. */
export interface BundleValidateEnvironment {
  cwd: string;
  stdout(line: string): void;
  stderr(line: string): void;
  /** Whether stdout / stderr are terminals (short `WARN[0000]` log form). */
  stdoutIsTty: boolean;
  stderrIsTty: boolean;
  now(): Date;
}

/** Runs the command and returns its exit code. Bad flags throw a ScaffoldError. */
export function bundleValidateCommand(options: BundleValidateOptions, env: BundleValidateEnvironment): number {
  if (options.listOptional) {
    env.stdout(optionalValidatorTable().replace(/\n$/, ''));
    return 0;
  }
  if (!options.directory) {
    throw new ScaffoldError('a bundle directory is a required argument', 'run `ts-operator-sdk bundle validate ./bundle`');
  }
  if (!(OUTPUT_FORMATS as readonly string[]).includes(options.output)) {
    throw new ScaffoldError(`invalid value for output flag: ${options.output}`, `use one of: ${OUTPUT_FORMATS.join(', ')}`);
  }
  const optionalValues = parseOptionalValues(options.optionalValues);
  const startedAt = env.now();
  const log = (level: LogLevel, message: string, tty: boolean, write: (line: string) => void): void =>
    write(logLine(level, message, { tty, now: env.now(), startedAt }));

  let report;
  try {
    report = validateBundleDirectory({ directory: options.directory, cwd: env.cwd, selector: options.selectOptional, optionalValues });
  } catch (error) {
    if (error instanceof SelectorError) {
      throw new ScaffoldError(error.message, 'run `ts-operator-sdk bundle validate --list-optional` to see the validators and their labels');
    }
    if (error instanceof BundleLoadError) {
      log('fatal', error.message, env.stderrIsTty, env.stderr);
      return 1;
    }
    throw error;
  }
  if (options.output === 'json-alpha1') env.stdout(report.toJson());
  else for (const output of report.outputs) log(output.type, output.message, env.stdoutIsTty, env.stdout);
  if (!report.passed) return 1;
  log('info', 'All validation tests have completed successfully', env.stderrIsTty, env.stderr);
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
        throw new ScaffoldError(`invalid --optional-values entry ${JSON.stringify(pair)}: expected key=value`, 'pass e.g. --optional-values=k8s-version=1.25');
      }
      values.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
    }
  }
  return values;
}

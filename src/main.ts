import { Command, CommanderError } from 'commander';
import { formatProblem, shortenQuoted, UsageError } from './errors.js';
import { recoverInterruptedWrite } from './scaffold/journal.js';
import { registerCompletion } from './commands/completion/cli.js';
import { registerCreateApi, registerCreateWebhook } from './commands/create/cli.js';
import { registerEdit } from './commands/edit/cli.js';
import {
  registerGenerateBundle,
  registerGenerateKustomizeManifests,
  registerGenerateManifests,
} from './commands/generate/cli.js';
import { registerInit } from './commands/init/cli.js';
import { registerSetupEnvtest } from './commands/setup-envtest/cli.js';
import { registerEnvtest } from './commands/envtest/cli.js';
import { registerBundleValidate } from './commands/bundle/cli.js';
import { registerVersion } from './commands/version/cli.js';
import { registerOlm } from './commands/olm/cli.js';
import { registerRun } from './commands/run/cli.js';
import { registerCleanup } from './commands/cleanup/cli.js';
import { processContext, type CliContext } from './cli/context.js';
import { OutputError } from './cli/io.js';

/** One registration function per command; add new commands here. */
export type CommandRegistration = (program: Command, ctx: CliContext) => void;

/** The commands this module wires; others append to the list they pass to {@link buildProgram}. */
export const CORE_COMMANDS: readonly CommandRegistration[] = [
  registerInit,
  registerCreateApi,
  registerCreateWebhook,
  registerEdit,
  registerGenerateManifests,
  registerGenerateKustomizeManifests,
  registerGenerateBundle,
  registerSetupEnvtest,
  registerEnvtest,
  registerBundleValidate,
  registerOlm,
  registerRun,
  registerCleanup,
  registerVersion,
  registerCompletion,
];

/** Builds the commander program with the given command registrations. */
export function buildProgram(ctx: CliContext, registrations: readonly CommandRegistration[] = CORE_COMMANDS): Command {
  const program = new Command('ts-operator-sdk')
    .description('Build Kubernetes operators in TypeScript: scaffold and maintain operator projects.')
    .option('--verbose', 'print debug output (every file written, stack traces)', false)
    .showHelpAfterError(false)
    .addHelpText(
      'after',
      `
Examples:
  $ ts-operator-sdk init --domain example.com
  $ ts-operator-sdk create api --group cache --version v1 --kind Memcached
  $ ts-operator-sdk edit --multigroup`,
    );
  program.hook('preAction', (thisCommand) => {
    ctx.setVerbose(Boolean(thisCommand.optsWithGlobals().verbose));
  });
  for (const register of registrations) register(program, ctx);
  // Apply the same error handling to every (sub)command, including ones
  // registered later by other modules.
  const configure = (command: Command): void => {
    command.exitOverride().configureOutput({
      // Help goes through the same stdout as every command's output, so a failed write is reported the same way.
      writeOut: (text) => ctx.io.out(text.replace(/\n$/, '')),
      // Commander's own messages ("error: unknown option '--x'") become our one-line form.
      outputError: () => undefined,
      // Help printed because a group (`create`, `generate`) got no
      // subcommand would be many lines; the one error line replaces it.
      writeErr: () => undefined,
    });
    command.commands.forEach(configure);
  };
  configure(program);
  return program;
}

/** Formats a commander usage error as `Error: <problem>. <fix>.` */
function usageError(error: CommanderError, program: Command, argv: string[]): string {
  // The command the words name, as deep as they go (`generate kustomize`).
  const chain: Command[] = [program];
  for (const word of argv.slice(2).filter((w) => !w.startsWith('-'))) {
    const next = chain[chain.length - 1]!.commands.find((c) => c.name() === word);
    if (!next) break;
    chain.push(next);
  }
  const target = chain[chain.length - 1]!;
  const helpFor = chain
    .slice(0, 3)
    .map((c) => c.name())
    .join(' ');
  let problem = shortenQuoted(
    shortenQuoted(
      error.message
        .replace(/^error:\s*/i, '')
        .split('\n')[0]!
        .replace(/\.$/, ''),
    ),
    "'",
  );
  if (error.code === 'commander.help' && target !== program && target.commands.length > 0) {
    // A command group run without a subcommand: commander's message is "(outputHelp)".
    problem = `\`${chain.map((c) => c.name()).join(' ')}\` needs a subcommand (${target.commands.map((c) => c.name()).join(', ')})`;
  }
  return `Error: ${problem}. Run \`${helpFor} --help\` for usage.`;
}

/**
 * The exit code when stdout's pipe was closed by its reader (`| head -1`):
 * 128 + SIGPIPE, what the shell reports for a Go CLI, which the signal kills
 * silently. Silent here too, and non-zero because the command did not finish
 * (a command that writes files has written none: it prints before it writes).
 */
export const BROKEN_PIPE_EXIT_CODE = 141;

/** Ends the run after stdout failed: quietly for a closed pipe, else one line on stderr. */
function outputFailure(error: OutputError, ctx: CliContext): number {
  ctx.io.debug(`stdout: ${error.code}: ${(error.cause as Error | undefined)?.message ?? error.message}`);
  if (error.code === 'EPIPE') return BROKEN_PIPE_EXIT_CODE;
  const why =
    error.code === 'ENOSPC'
      ? 'no space left on its device'
      : error.code === 'EBADF'
        ? 'it is not open for writing'
        : ((error.cause as Error | undefined)?.message ?? 'write failed').replace(/^[A-Z]+: /, '');
  ctx.io.progress(
    `Error: cannot write to standard output (${error.code}: ${why})${error.filesUnchanged ? '; no file was changed' : ''}. Redirect stdout to a file or pipe that can be written, and run the command again.`,
  );
  return 1;
}

/**
 * The CLI entry point: parses `argv` (as process.argv: node, script, args...),
 * runs the command and returns the exit code. Errors are one line on stderr.
 */
export async function run(argv: string[], ctx: CliContext = processContext()): Promise<number> {
  const program = buildProgram(ctx);
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return 0;
    }
    await recoverInterruptedWrite(ctx.cwd, (line) => ctx.io.progress(line));
    await program.parseAsync(argv, { from: 'node' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return 0;
      ctx.io.progress(usageError(error, program, argv));
      return 1;
    }
    if (error instanceof OutputError) return outputFailure(error, ctx);
    if (error instanceof UsageError) {
      for (const problem of error.problems) ctx.io.progress(formatProblem(problem));
      ctx.io.progress(`Error: ${error.sentence}`);
      if (ctx.verbose && error.cause instanceof Error) ctx.io.debug(error.cause.stack ?? String(error.cause));
      return 1;
    }
    // The bundle holds the CLI's dependencies except typescript, which the
    // commands that parse API types load on use: with optionalDependencies
    // omitted, that load fails here, not in the launcher, and gets the
    // launcher's line. Loaded only on failure: reading package.json is no
    // cost a successful run should pay.
    if ((error as NodeJS.ErrnoException | undefined)?.code?.endsWith('MODULE_NOT_FOUND')) {
      const [{ missingDependencyLine }, { packageInfo }] = await Promise.all([
        import('./cli/missing-dependency.js'),
        import('./scaffold/package-info.js'),
      ]);
      const line = missingDependencyLine(error, packageInfo.optionalDependencies);
      if (line !== undefined) {
        ctx.io.progress(line);
        return 1;
      }
    }
    const message = error instanceof Error ? error.message : String(error);
    ctx.io.progress(
      `Error: unexpected failure: ${message.split('\n')[0]!.replace(/\.$/, '')}. This is a bug in ts-operator-sdk; please report it with the --verbose output.`,
    );
    if (error instanceof Error) ctx.io.debug(error.stack ?? message);
    return 1;
  } finally {
    ctx.close();
  }
}

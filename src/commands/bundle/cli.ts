import type { Command } from 'commander';
import { commandGroup } from '../../cli/command-group.js';
import type { CliContext } from '../../cli/context.js';

/** The `bundle` command group; bundle subcommands register on it. */
export function bundleCommand(program: Command): Command {
  return commandGroup(program, 'bundle', 'Work with OLM bundles');
}

/** Registers `bundle validate`. */
export function registerBundleValidate(program: Command, ctx: CliContext): void {
  bundleCommand(program)
    .command('validate')
    .description('Validate an OLM bundle directory (manifests/ + metadata/) the way operator-sdk bundle validate does')
    .argument('[directory]', 'the bundle directory, e.g. ./bundle (image references are not supported)')
    .option(
      '--select-optional <selector>',
      'label selector of optional validators to run, e.g. suite=operatorframework or name=good-practices',
    )
    .option('--list-optional', 'list the optional validators and their labels, and run nothing', false)
    .option(
      '--optional-values <key=value>',
      'values for the validators, e.g. k8s-version=1.25 (repeatable, or comma-separated)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('-o, --output <format>', 'result format: text or json-alpha1', 'text')
    .addHelpText(
      'after',
      `
Examples:
  # What \`make bundle\` runs
  $ ts-operator-sdk bundle validate ./bundle

  # Everything OperatorHub checks, against Kubernetes 1.25
  $ ts-operator-sdk bundle validate ./bundle --select-optional suite=operatorframework --optional-values=k8s-version=1.25

  # Machine-readable results
  $ ts-operator-sdk bundle validate ./bundle -o json-alpha1`,
    )
    .action(
      async (
        directory: string | undefined,
        opts: { selectOptional?: string; listOptional: boolean; optionalValues: string[]; output: string },
      ) => {
        const { bundleValidateCommand } = await import('./validate.js');
        // tty (with net) is loaded here, not imported: every command loads this module.
        const { isatty } = process.getBuiltinModule('node:tty');
        const code = bundleValidateCommand({ directory, ...opts }, ctx.io, {
          cwd: ctx.cwd,
          // isatty, not process.stdout.isTTY: creating process.stdout would make a piped stdout non-blocking.
          stdoutIsTty: isatty(1),
          stderrIsTty: isatty(2),
          now: () => new Date(),
        });
        // Validation findings are not CLI errors: the report is already printed,
        // so only the exit status is left to set.
        ctx.exitCode = code;
      },
    );
}

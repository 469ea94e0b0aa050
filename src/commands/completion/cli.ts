import type { Command } from 'commander';
import type { CliContext } from '../../cli/context.js';
import { COMPLETION_SHELLS, completionScript } from './completion.js';

/** Registers `completion <shell>`. */
export function registerCompletion(program: Command, ctx: CliContext): void {
  program
    .command('completion')
    .description(`Print a shell completion script (${COMPLETION_SHELLS.join('|')})`)
    .argument('<shell>', COMPLETION_SHELLS.join('|'))
    .addHelpText(
      'after',
      `
Examples:
  $ source <(ts-operator-sdk completion bash)
  $ ts-operator-sdk completion zsh > "\${fpath[1]}/_ts-operator-sdk"
  $ ts-operator-sdk completion fish | source`,
    )
    .action((shell: string) => {
      ctx.io.out(completionScript(shell, program).replace(/\n$/, ''));
    });
}

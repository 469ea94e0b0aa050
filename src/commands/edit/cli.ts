import type { Command } from 'commander';
import type { CliContext } from '../../cli/context.js';
import { parseBooleanFlag } from '../../cli/flags.js';
// Type only: erased, so the command's modules still load on use.
import type { EditFlags } from './edit.js';

/** Registers `edit`. */
export function registerEdit(program: Command, ctx: CliContext): void {
  program
    .command('edit')
    .description('Update the project configuration; --multigroup also moves existing API files into the new layout')
    .option(
      '--multigroup [bool]',
      'enable (or with =false disable) the multigroup layout: apis/<group>/<version>, controllers/<group>',
      parseBooleanFlag,
    )
    .option('--dry-run', 'print the files that would change, write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  # Enable multigroup: moves apis/<version>/ to apis/<group>/<version>/ and
  # controllers/*.ts to controllers/<group>/, fixing the imports
  $ ts-operator-sdk edit --multigroup

  # Back to a single group (only when the project has at most one group)
  $ ts-operator-sdk edit --multigroup=false`,
    )
    .action(async (flags: EditFlags) => {
      // Loaded on use: only the command that runs pays for its templates and modules.
      const { edit } = await import('./edit.js');
      await edit({ directory: ctx.cwd, ...flags }, ctx.io);
    });
}

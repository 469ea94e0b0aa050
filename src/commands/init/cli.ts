import type { Command } from 'commander';
import { LICENSES } from '../../scaffold/boilerplate.js';
import type { CliContext } from '../../cli/context.js';

/** Registers `init`. */
export function registerInit(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description('Initialize a new TypeScript operator project in the current directory')
    .option('--domain <domain>', 'domain for the API groups', 'my.domain')
    .option('--project-name <name>', 'name of the project (default: the directory name)')
    .option('--owner <owner>', 'owner to put in the copyright notice')
    .option('--license <license>', `license of the project's header (${LICENSES.join('|')})`, 'apache2')
    .option('--skip-install', 'do not run npm install', false)
    .option('--dry-run', 'print the files that would be created, write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  # Scaffold a project that uses the domain example.com for its API groups
  $ mkdir memcached-operator && cd memcached-operator
  $ ts-operator-sdk init --domain example.com

  # Choose the project name and leave out the license header
  $ ts-operator-sdk init --domain example.com --project-name memcached-operator --license none`,
    )
    .action(
      async (opts: {
        domain: string;
        projectName?: string;
        owner?: string;
        license: string;
        skipInstall: boolean;
        dryRun: boolean;
      }) => {
        // Loaded on use: only the command that runs pays for its templates and modules.
        const { init } = await import('./init.js');
        await init({ directory: ctx.cwd, ...opts }, ctx.io);
      },
    );
}

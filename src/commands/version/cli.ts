import type { Command } from 'commander';
import { packageInfo } from '../../scaffold/package-info.js';
import type { CliContext } from '../../cli/context.js';

/** The version line, in operator-sdk's `key: "value"` format. */
export function versionLine(): string {
  return `ts-operator-sdk version: "${packageInfo.version}", node version: "${process.version}", platform: "${process.platform}", arch: "${process.arch}"`;
}

/** Registers `version`. */
export function registerVersion(program: Command, ctx: CliContext): void {
  program
    .command('version')
    .description('Print the ts-operator-sdk version')
    .addHelpText(
      'after',
      `
Examples:
  $ ts-operator-sdk version`,
    )
    .action(() => {
      ctx.io.out(versionLine());
    });
}

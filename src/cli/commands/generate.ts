import { Command } from 'commander';
import type { CliContext } from '../context.js';

/** The `generate` command group; each generator registers a subcommand on it. */
export function generateCommand(program: Command): Command {
  return program.commands.find((command) => command.name() === 'generate') ?? program.command('generate').description('Generate manifests, CSV bases and bundles from the project');
}

/** Registers `generate manifests`. */
export function registerGenerateManifests(program: Command, ctx: CliContext): void {
  generateCommand(program)
    .command('manifests')
    .description('Generate CRDs (config/crd/bases), RBAC (config/rbac/role.yaml) and the CRD kustomization from the API types and markers')
    .option('--allow-dangerous-types', 'allow float64 fields, like controller-gen\'s crd:allowDangerousTypes', false)
    .option('--dry-run', 'print the files that would change, write nothing', false)
    .addHelpText('after', `
Examples:
  # What \`make manifests\` runs
  $ ts-operator-sdk generate manifests

  # See what would change
  $ ts-operator-sdk generate manifests --dry-run`)
    .action(async (opts: { allowDangerousTypes: boolean; dryRun: boolean }) => {
      // Loaded on use: the TypeScript compiler alone takes ~0.5 s to import.
      const { generateManifestsCommand } = await import('../../commands/generate-manifests.js');
      await generateManifestsCommand({ directory: ctx.cwd, ...opts }, ctx.io);
    });
}

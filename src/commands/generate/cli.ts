import type { Command } from 'commander';
import { commandGroup } from '../../cli/command-group.js';
import type { CliContext } from '../../cli/context.js';
import { parseBooleanFlag } from '../../cli/flags.js';
import { queuedLineReader, readPipedStdin } from '../../cli/stdin.js';
import { UsageError } from '../../errors.js';

/** The `generate` command group; each generator registers a subcommand on it. */
export function generateCommand(program: Command): Command {
  return commandGroup(program, 'generate', 'Generate manifests, CSV bases and bundles from the project');
}

/**
 * `--output-dir` when the user gave it, else undefined: an output directory
 * the user names may be anywhere (a link in it is followed), while the
 * default one is part of the project and must stay inside it.
 */
function namedOutput(command: Command, value: string): string | undefined {
  return command.getOptionValueSource('outputDir') === 'default' ? undefined : value;
}

/** Registers `generate manifests`. */
export function registerGenerateManifests(program: Command, ctx: CliContext): void {
  generateCommand(program)
    .command('manifests')
    .description(
      'Generate CRDs (config/crd/bases), RBAC (config/rbac/role.yaml), webhook configurations (config/webhook/manifests.yaml) and the CRD kustomization from the API types and markers',
    )
    .option('--allow-dangerous-types', "allow float64 fields, like controller-gen's crd:allowDangerousTypes", false)
    .option('--dry-run', 'print the files that would change, write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  # What \`make manifests\` runs
  $ ts-operator-sdk generate manifests

  # See what would change
  $ ts-operator-sdk generate manifests --dry-run`,
    )
    .action(async (opts: { allowDangerousTypes: boolean; dryRun: boolean }) => {
      // Loaded on use: the TypeScript compiler alone takes ~0.5 s to import.
      const { generateManifestsCommand } = await import('./manifests.js');
      await generateManifestsCommand({ directory: ctx.cwd, ...opts }, ctx.io);
    });
}

/** Registers `generate kustomize manifests`. */
export function registerGenerateKustomizeManifests(program: Command, ctx: CliContext): void {
  commandGroup(generateCommand(program), 'kustomize', 'Generate kustomize bases for OLM')
    .command('manifests')
    .description(
      'Write the base ClusterServiceVersion (config/manifests/bases) with descriptors from +operator-sdk:csv markers, and config/manifests/kustomization.yaml if missing',
    )
    .option('--package <name>', 'package name (default: projectName from PROJECT)')
    .option('--input-dir <dir>', 'directory holding an existing base (default: the output dir)')
    .option('--output-dir <dir>', 'directory to write the base and kustomization to', 'config/manifests')
    .option('--apis-dir <dir>', 'root directory of the API types', 'apis')
    .option(
      '--interactive [bool]',
      'ask for UI metadata (display name, description, provider, keywords, maintainers); only on a terminal, and only when no base exists',
      parseBooleanFlag,
    )
    .option('-q, --quiet', 'print nothing on success', false)
    .option('--dry-run', 'print the files that would change, write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  # What \`make bundle\` runs; never prompts without a terminal
  $ ts-operator-sdk generate kustomize manifests -q

  # Placeholders instead of prompts, even on a terminal
  $ ts-operator-sdk generate kustomize manifests --interactive=false`,
    )
    .action(
      async (
        opts: {
          package?: string;
          inputDir?: string;
          outputDir: string;
          apisDir: string;
          interactive?: boolean;
          quiet: boolean;
          dryRun: boolean;
        },
        command: Command,
      ) => {
        const { generateKustomizeManifestsCommand } = await import('./kustomize-manifests.js');
        const reader = queuedLineReader();
        const ask = async (question: string): Promise<string> => {
          process.stderr.write(question);
          const answer = await reader.next();
          if (answer === undefined)
            throw new UsageError(
              `no answer to "${question.trim()}" (stdin was closed)`,
              'answer the questions, or pass --interactive=false to write placeholders',
            );
          return answer;
        };
        try {
          await generateKustomizeManifestsCommand(
            {
              directory: ctx.cwd,
              packageName: opts.package,
              inputDir: opts.inputDir,
              outputDir: namedOutput(command, opts.outputDir),
              apisDir: opts.apisDir,
              interactive: opts.interactive,
              terminal: ctx.interactive,
              quiet: opts.quiet,
              dryRun: opts.dryRun,
              ask,
            },
            ctx.io,
          );
        } finally {
          reader.close();
        }
      },
    );
}

/** Registers `generate bundle`. */
export function registerGenerateBundle(program: Command, ctx: CliContext): void {
  generateCommand(program)
    .command('bundle')
    .description(
      "Generate an OLM bundle (manifests, metadata, bundle.Dockerfile) from the operator's manifests and the base CSV",
    )
    .option('--input-dir <dir>', 'directory of manifests to read (instead of stdin)')
    .option('--deploy-dir <dir>', 'directory of operator manifests (Deployment, RBAC); with optional --crds-dir')
    .option('--crds-dir <dir>', 'directory of CRD manifests (with --deploy-dir)')
    .option('--kustomize-dir <dir>', 'directory holding bases/<package>.clusterserviceversion.yaml', 'config/manifests')
    .option('--version <semver>', 'the bundle version (sets the CSV name and spec.version)')
    .option('--channels <list>', 'comma-separated channels of the bundle', 'alpha')
    .option('--default-channel <name>', 'the default channel of the package')
    .option('--package <name>', 'package name (default: projectName from PROJECT)')
    .option('--output-dir <dir>', 'bundle directory', 'bundle')
    .option('--overwrite [bool]', 'overwrite existing bundle metadata and bundle.Dockerfile', parseBooleanFlag, true)
    .option('--manifests', 'generate only bundle manifests (with --metadata: both)', false)
    .option('--metadata', 'generate only bundle metadata and bundle.Dockerfile (with --manifests: both)', false)
    .option('--stdout', 'print the manifests to stdout instead of writing files', false)
    .option(
      '--extra-service-accounts <names>',
      'comma-separated ServiceAccounts whose RBAC also goes into the CSV',
      (value: string, previous: string[] = []) => [
        ...previous,
        ...value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ],
    )
    .option('--use-image-digests', 'pin every image to its digest through the registry (needs network)', false)
    .option('-q, --quiet', 'print nothing on success', false)
    .option('--dry-run', 'print the files that would change, write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  # What \`make bundle\` runs
  $ kubectl kustomize config/manifests | ts-operator-sdk generate bundle -q --overwrite --version 0.0.1

  # From a directory of manifests
  $ ts-operator-sdk generate bundle --input-dir dist/manifests --version 0.0.2 --channels stable,fast --default-channel stable`,
    )
    .action(
      async (
        opts: {
          inputDir?: string;
          deployDir?: string;
          crdsDir?: string;
          kustomizeDir: string;
          version?: string;
          channels: string;
          defaultChannel?: string;
          package?: string;
          outputDir: string;
          overwrite: boolean;
          manifests: boolean;
          metadata: boolean;
          stdout: boolean;
          extraServiceAccounts?: string[];
          useImageDigests: boolean;
          quiet: boolean;
          dryRun: boolean;
        },
        command: Command,
      ) => {
        const { generateBundleCommand } = await import('./bundle.js');
        // Loaded here, not at registration: yaml-input imports the yaml parser (70-odd modules).
        const { MAX_MANIFEST_STREAM_BYTES } = await import('../../yaml-input.js');
        // Only a pipe or a redirected file is input: a terminal or /dev/null (closed stdin in CI) never blocks.
        const stdin = ctx.interactive ? undefined : await readPipedStdin(MAX_MANIFEST_STREAM_BYTES);
        await generateBundleCommand(
          {
            directory: ctx.cwd,
            stdin,
            inputDir: opts.inputDir,
            deployDir: opts.deployDir,
            crdsDir: opts.crdsDir,
            kustomizeDir: opts.kustomizeDir,
            version: opts.version,
            channels: opts.channels,
            defaultChannel: opts.defaultChannel,
            packageName: opts.package,
            outputDir: namedOutput(command, opts.outputDir),
            overwrite: opts.overwrite,
            manifests: opts.manifests,
            metadata: opts.metadata,
            stdout: opts.stdout,
            extraServiceAccounts: opts.extraServiceAccounts,
            useImageDigests: opts.useImageDigests,
            quiet: opts.quiet,
            dryRun: opts.dryRun,
          },
          ctx.io,
        );
      },
    );
}

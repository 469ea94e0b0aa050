import { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { CliContext } from '../../cli/context.js';

/** The `generate` command group; each generator registers a subcommand on it. */
export function generateCommand(program: Command): Command {
  return program.commands.find((command) => command.name() === 'generate') ?? program.command('generate').description('Generate manifests, CSV bases and bundles from the project');
}

/** Registers `generate manifests`. */
export function registerGenerateManifests(program: Command, ctx: CliContext): void {
  generateCommand(program)
    .command('manifests')
    .description('Generate CRDs (config/crd/bases), RBAC (config/rbac/role.yaml), webhook configurations (config/webhook/manifests.yaml) and the CRD kustomization from the API types and markers')
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
      const { generateManifestsCommand } = await import('./manifests.js');
      await generateManifestsCommand({ directory: ctx.cwd, ...opts }, ctx.io);
    });
}

/** Parses `--interactive`, `--interactive=true|false` (operator-sdk's spelling). */
function parseBooleanFlag(flag: string): (value: string) => boolean {
  return (value: string) => {
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw new UsageError(`${flag} must be true or false, found "${value}"`, `write ${flag}=true or ${flag}=false`);
  };
}

/** Registers `generate kustomize manifests`. */
export function registerGenerateKustomizeManifests(program: Command, ctx: CliContext): void {
  const group = generateCommand(program);
  const kustomize = group.commands.find((c) => c.name() === 'kustomize') ?? group.command('kustomize').description('Generate kustomize bases for OLM');
  kustomize
    .command('manifests')
    .description('Write the base ClusterServiceVersion (config/manifests/bases) with descriptors from +operator-sdk:csv markers, and config/manifests/kustomization.yaml if missing')
    .option('--package <name>', 'package name (default: projectName from PROJECT)')
    .option('--input-dir <dir>', 'directory holding an existing base (default: the output dir)')
    .option('--output-dir <dir>', 'directory to write the base and kustomization to', 'config/manifests')
    .option('--apis-dir <dir>', 'root directory of the API types', 'apis')
    .option('--interactive [bool]', 'ask for UI metadata (display name, description, provider, keywords, maintainers); only on a terminal, and only when no base exists', parseBooleanFlag('--interactive'))
    .option('-q, --quiet', 'print nothing on success', false)
    .addHelpText('after', `
Examples:
  # What \`make bundle\` runs; never prompts without a terminal
  $ ts-operator-sdk generate kustomize manifests -q

  # Placeholders instead of prompts, even on a terminal
  $ ts-operator-sdk generate kustomize manifests --interactive=false`)
    .action(async (opts: { package?: string; inputDir?: string; outputDir: string; apisDir: string; interactive?: boolean; quiet: boolean }) => {
      const { generateKustomizeManifestsCommand } = await import('./kustomize-manifests.js');
      const reader = queuedLineReader();
      const ask = async (question: string): Promise<string> => {
        process.stderr.write(question);
        const answer = await reader.next();
        if (answer === undefined) throw new UsageError(`no answer to "${question.trim()}" (stdin was closed)`, 'answer the questions, or pass --interactive=false to write placeholders');
        return answer;
      };
      try {
        await generateKustomizeManifestsCommand(
          { directory: ctx.cwd, packageName: opts.package, inputDir: opts.inputDir, outputDir: opts.outputDir, apisDir: opts.apisDir, interactive: opts.interactive, terminal: ctx.interactive, quiet: opts.quiet, ask },
          ctx.io,
        );
      } finally {
        reader.close();
      }
    });
}

/** Registers `generate bundle`. */
export function registerGenerateBundle(program: Command, ctx: CliContext): void {
  generateCommand(program)
    .command('bundle')
    .description('Generate an OLM bundle (manifests, metadata, bundle.Dockerfile) from the operator\'s manifests and the base CSV')
    .option('--input-dir <dir>', 'directory of manifests to read (instead of stdin)')
    .option('--deploy-dir <dir>', 'directory of operator manifests (Deployment, RBAC); with optional --crds-dir')
    .option('--crds-dir <dir>', 'directory of CRD manifests (with --deploy-dir)')
    .option('--kustomize-dir <dir>', 'directory holding bases/<package>.clusterserviceversion.yaml', 'config/manifests')
    .option('--version <semver>', 'the bundle version (sets the CSV name and spec.version)')
    .option('--channels <list>', 'comma-separated channels of the bundle', 'alpha')
    .option('--default-channel <name>', 'the default channel of the package')
    .option('--package <name>', 'package name (default: projectName from PROJECT)')
    .option('--output-dir <dir>', 'bundle directory', 'bundle')
    .option('--overwrite [bool]', 'overwrite existing bundle metadata and bundle.Dockerfile', parseBooleanFlag('--overwrite'), true)
    .option('--manifests', 'generate only bundle manifests (with --metadata: both)', false)
    .option('--metadata', 'generate only bundle metadata and bundle.Dockerfile (with --manifests: both)', false)
    .option('--stdout', 'print the manifests to stdout instead of writing files', false)
    .option('--extra-service-accounts <names>', 'comma-separated ServiceAccounts whose RBAC also goes into the CSV', (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)])
    .option('--use-image-digests', 'pin every image to its digest through the registry (needs network)', false)
    .option('-q, --quiet', 'print nothing on success', false)
    .addHelpText('after', `
Examples:
  # What \`make bundle\` runs
  $ kubectl kustomize config/manifests | ts-operator-sdk generate bundle -q --overwrite --version 0.0.1

  # From a directory of manifests
  $ ts-operator-sdk generate bundle --input-dir dist/manifests --version 0.0.2 --channels stable,fast --default-channel stable`)
    .action(async (opts: { inputDir?: string; deployDir?: string; crdsDir?: string; kustomizeDir: string; version?: string; channels: string; defaultChannel?: string; package?: string; outputDir: string; overwrite: boolean; manifests: boolean; metadata: boolean; stdout: boolean; extraServiceAccounts?: string[]; useImageDigests: boolean; quiet: boolean }) => {
      const { generateBundleCommand } = await import('./bundle.js');
      const { fstatSync } = await import('node:fs');
      // Only a pipe or a redirected file is input: a terminal or /dev/null (closed stdin in CI) never blocks.
      let piped = false;
      try {
        const stat = fstatSync(0);
        piped = stat.isFIFO() || stat.isFile() || stat.isSocket();
      } catch {
        piped = false;
      }
      const stdin = piped && !ctx.interactive ? await readAllStdin() : undefined;
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
          outputDir: opts.outputDir,
          overwrite: opts.overwrite,
          manifests: opts.manifests,
          metadata: opts.metadata,
          stdout: opts.stdout,
          extraServiceAccounts: opts.extraServiceAccounts,
          useImageDigests: opts.useImageDigests,
          quiet: opts.quiet,
        },
        ctx.io,
      );
    });
}

async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads stdin line by line on demand, queueing lines that arrive before they
 * are asked for (readline drops those when no question is pending, so typed
 * or pasted answers would be lost). `next()` resolves undefined at EOF.
 */
function queuedLineReader(): { next(): Promise<string | undefined>; close(): void } {
  let reader: import('node:readline').Interface | undefined;
  const lines: string[] = [];
  const waiting: Array<(line: string | undefined) => void> = [];
  let closed = false;
  return {
    async next() {
      if (!reader) {
        const { createInterface } = await import('node:readline');
        reader = createInterface({ input: process.stdin, terminal: false });
        reader.on('line', (line) => (waiting.length > 0 ? waiting.shift()!(line) : lines.push(line)));
        reader.on('close', () => {
          closed = true;
          for (const resolve of waiting.splice(0)) resolve(undefined);
        });
      }
      if (lines.length > 0) return lines.shift();
      if (closed) return undefined;
      return new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      reader?.close();
    },
  };
}

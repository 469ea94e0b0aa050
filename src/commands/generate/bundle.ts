import { resolve } from 'node:path';
import YAML from 'yaml';
import { finishTree, type CommandIO } from '../../cli/io.js';
import { UsageError } from '../../errors.js';
import { resolveFlagPath, treePath } from '../../paths.js';
import { quickParseYaml } from '../../yaml-input.js';
import { yamlText } from '../../generators/render-yaml.js';
import { generateBundle, type BundleSource } from '../../generators/bundle/bundle.js';
import { annotationsYaml, bundleDockerfile, type BundleMetadataOptions } from '../../generators/bundle/writer.js';
import { packageInfo } from '../../scaffold/package-info.js';
import { validatePackageName } from '../../scaffold/names.js';
import { readProject } from '../../scaffold/project.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { parseSemver } from '../../validation/names.js';

/** Options of `ts-operator-sdk generate bundle`. */
export interface GenerateBundleOptions {
  directory: string;
  /** The piped manifests (`kustomize build config/manifests | ...`), when stdin is a pipe or file. */
  stdin?: string;
  inputDir?: string;
  deployDir?: string;
  crdsDir?: string;
  /** Where the base CSV is looked up when the input has none (default config/manifests). */
  kustomizeDir?: string;
  version?: string;
  channels?: string;
  defaultChannel?: string;
  packageName?: string;
  outputDir?: string;
  overwrite: boolean;
  manifests: boolean;
  metadata: boolean;
  stdout: boolean;
  extraServiceAccounts?: string[];
  quiet: boolean;
  useImageDigests: boolean;
  /** The clock for createdAt (tests pin it); SOURCE_DATE_EPOCH wins over it. */
  now?: Date;
  env?: NodeJS.ProcessEnv;
  /** Injected for the digest resolver's tests. */
  fetchImpl?: typeof fetch;
  /** Print the CREATE/UPDATE/DELETE lines instead of writing. */
  dryRun?: boolean;
}

/**
 * The bundle's record of the files in `manifests/` that `generate bundle`
 * wrote, at the bundle's root (outside `manifests/` and `metadata/`, which
 * the bundle image and the validators read). A later run removes only files
 * listed here that it no longer produces: anything else in `manifests/` (a
 * README, a hand-added manifest) is the user's, and stays.
 */
export const GENERATED_MANIFESTS_RECORD = '.ts-operator-sdk-generated.yaml';

/**
 * `generate bundle`: reads the operator's manifests (stdin, --input-dir, or
 * --deploy-dir + --crds-dir), fills the CSV from the base, and writes
 * `<output>/manifests`, `<output>/metadata/annotations.yaml`,
 * `<output>/tests/scorecard/config.yaml` and `bundle.Dockerfile`. A re-run
 * with the same input writes byte-identical files.
 */
export async function generateBundleCommand(options: GenerateBundleOptions, io: CommandIO): Promise<void> {
  const projectDir = resolve(options.directory);
  const outputAbs = resolveFlagPath(projectDir, options.outputDir ?? 'bundle');
  const tree = new VirtualTree(projectDir, { outputs: options.outputDir === undefined ? [] : [outputAbs] });
  // Under --dry-run the CREATE/UPDATE/DELETE lines are the whole report.
  const info = (line: string): void => {
    if (!options.quiet && options.dryRun !== true) io.progress(`INFO ${line}`);
  };
  validateInputFlags(options);
  if (options.version !== undefined) validateVersion(options.version);
  const project = tree.exists('PROJECT') ? readProject(tree, { quickParse: quickParseYaml }) : undefined;
  const packageName = options.packageName ?? project?.projectName;
  if (!packageName)
    throw new UsageError(
      '--package <name> must be set if PROJECT config file is not present',
      'pass --package <name>, or run in the project root',
    );
  validatePackageName(packageName, options.packageName !== undefined ? '--package' : 'PROJECT');
  const projectLayout = project?.layout?.length ? project.layout.join(',') : 'unknown';
  const builder = `ts-operator-sdk-v${packageInfo.version}`;
  const channels = (options.channels ?? 'alpha')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (channels.length === 0)
    throw new UsageError('--channels is empty', 'pass at least one channel, e.g. --channels=alpha');
  if (options.defaultChannel !== undefined && !channels.includes(options.defaultChannel)) {
    throw new UsageError(
      `--default-channel ${options.defaultChannel} is not one of --channels (${channels.join(',')})`,
      `add it to --channels, e.g. --channels=${[...channels, options.defaultChannel].join(',')}`,
    );
  }
  const writeManifests = options.manifests || !options.metadata;
  const writeMetadata = (options.metadata || !options.manifests) && !options.stdout;
  const outputRel = treePath(projectDir, outputAbs);

  let withScorecard = tree.exists(`${outputRel}/tests/scorecard/config.yaml`);
  if (writeManifests) {
    const bundle = await generateBundle({
      projectDir,
      source: sourceOf(options),
      packageName,
      version: options.version,
      kustomizeDir: options.kustomizeDir ?? 'config/manifests',
      extraServiceAccounts: options.extraServiceAccounts,
      builder,
      projectLayout,
      useImageDigests: options.useImageDigests,
      previousCsv: tree.read(`${outputRel}/manifests/${packageName.toLowerCase()}.clusterserviceversion.yaml`),
      now: options.now ?? new Date(),
      sourceDateEpoch: (options.env ?? process.env)['SOURCE_DATE_EPOCH'],
      fetchImpl: options.fetchImpl,
      info,
    });
    if (options.stdout) {
      io.out(
        bundle.manifests
          .map((f) => `---\n${f.content}`)
          .join('')
          .trimEnd(),
      );
      return;
    }
    info('Generating bundle manifests');
    for (const file of bundle.manifests) writeIfChanged(tree, `${outputRel}/manifests/${file.name}`, file.content);
    // A CRD or object removed from the input must not linger in the bundle;
    // only files an earlier run recorded as its own are removed.
    const recordPath = `${outputRel}/${GENERATED_MANIFESTS_RECORD}`;
    const produced = bundle.manifests.map((file) => file.name);
    for (const name of readGeneratedRecord(tree, recordPath)) {
      const path = `${outputRel}/manifests/${name}`;
      if (produced.includes(name) || !tree.exists(path)) continue;
      tree.delete(path);
      info(`Removed ${path}: an earlier generate bundle wrote it, and the input no longer produces it`);
    }
    writeIfChanged(tree, recordPath, generatedRecord(produced));
    if (bundle.scorecardConfig !== undefined) {
      writeIfChanged(tree, `${outputRel}/tests/scorecard/config.yaml`, bundle.scorecardConfig);
      withScorecard = true;
    }
    info(`Bundle manifests generated successfully in ${outputRel}`);
  }
  if (writeMetadata) {
    const metadataOptions: BundleMetadataOptions = {
      packageName,
      channels,
      defaultChannel: options.defaultChannel,
      builder,
      projectLayout,
      withScorecard,
      bundleDir: outputRel,
    };
    const annotationsPath = `${outputRel}/metadata/annotations.yaml`;
    if (tree.exists(annotationsPath) && !options.overwrite) {
      info('Bundle metadata already exists; not overwriting it (--overwrite=false)');
    } else {
      info('Creating bundle.Dockerfile');
      writeIfChanged(tree, 'bundle.Dockerfile', bundleDockerfile(metadataOptions));
      info(`Creating ${annotationsPath}`);
      writeIfChanged(tree, annotationsPath, annotationsYaml(metadataOptions));
      info('Bundle metadata generated successfully');
    }
  }
  await finishTree(tree, io, options.dryRun === true);
}

/** The record's text: a comment saying what it is, then the file names, sorted. */
function generatedRecord(names: readonly string[]): string {
  const record = { manifests: [...names].sort() };
  return [
    '# The files of manifests/ that `ts-operator-sdk generate bundle` wrote. A later run',
    '# removes only these, when its input no longer produces them; keep this file with the bundle.',
    yamlText(record, 'core', { indentSeq: true }).trimEnd(),
    '',
  ].join('\n');
}

/** The file names an earlier run recorded (none without a record); a record that is not one is refused. */
function readGeneratedRecord(tree: VirtualTree, path: string): string[] {
  const text = tree.read(path);
  if (text === undefined) return [];
  let names: unknown;
  // The quick reader first, as for the previous CSV (writer.ts): a record this
  // command wrote never needs the yaml library's parser, whose first use in a
  // process costs about 10 ms of compiling.
  const quick = quickParseYaml(text);
  if (quick?.length === 1) {
    names = (quick[0] as { manifests?: unknown } | null)?.manifests;
  } else {
    try {
      names = (YAML.parse(text) as { manifests?: unknown } | null)?.manifests;
    } catch {
      names = undefined;
    }
  }
  // Plain file names only: the record is data from the disk, and never names a path elsewhere.
  if (
    !Array.isArray(names) ||
    !names.every((name) => typeof name === 'string' && /^[^/\\\0]+$/.test(name) && name !== '.' && name !== '..')
  ) {
    throw new UsageError(
      `${path} is not the list of generated manifests that generate bundle keeps`,
      `restore it from version control, or delete it (generate bundle then removes no file from ${path.replace(/[^/]+$/, '')}manifests)`,
    );
  }
  return names as string[];
}

function writeIfChanged(tree: VirtualTree, path: string, content: string): void {
  if (tree.read(path) !== content) tree.write(path, content);
}

/** The one input source {@link validateInputFlags} allowed. */
function sourceOf(options: GenerateBundleOptions): BundleSource {
  if (options.stdin !== undefined) return { stdin: options.stdin };
  if (options.inputDir !== undefined) return { directories: [options.inputDir] };
  return { directories: [options.deployDir!, ...(options.crdsDir !== undefined ? [options.crdsDir] : [])] };
}

/** operator-sdk's rules: exactly one input source, stdin excluding the directory flags. */
function validateInputFlags(options: GenerateBundleOptions): void {
  const dirs = options.inputDir !== undefined || options.deployDir !== undefined || options.crdsDir !== undefined;
  if (!options.manifests && options.metadata) return;
  if (options.stdin !== undefined && dirs) {
    throw new UsageError(
      'none of --input-dir, --deploy-dir, or --crds-dir may be set if reading from stdin',
      'drop the flags, or run without piping manifests into the command',
    );
  }
  if (options.stdin === undefined && !dirs) {
    throw new UsageError(
      'one of stdin, --input-dir, or --deploy-dir (and optionally --crds-dir) must be set',
      'pipe manifests in, e.g. `kubectl kustomize config/manifests | ts-operator-sdk generate bundle`, or pass --input-dir',
    );
  }
  if (options.inputDir !== undefined && (options.deployDir !== undefined || options.crdsDir !== undefined)) {
    throw new UsageError(
      '--input-dir cannot be combined with --deploy-dir or --crds-dir',
      'use either --input-dir, or --deploy-dir with optional --crds-dir',
    );
  }
  if (options.crdsDir !== undefined && options.deployDir === undefined) {
    throw new UsageError(
      '--crds-dir needs --deploy-dir',
      "pass --deploy-dir with the operator's Deployment and RBAC manifests",
    );
  }
}

/** `--version`: strict semver without a leading v or leading zeros, as OLM requires. */
export function validateVersion(version: string): void {
  if (parseSemver(version)) return;
  if (/^v?\d+\.\d+\.\d+/.test(version) || /^\d/.test(version)) {
    throw new UsageError(
      `version ${version} contains bad values`,
      'use MAJOR.MINOR.PATCH without a leading v or leading zeros, e.g. --version 0.0.1',
    );
  }
  throw new UsageError(`${version} is not a valid semantic version`, 'use MAJOR.MINOR.PATCH, e.g. --version 0.0.1');
}

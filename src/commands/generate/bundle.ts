import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import YAML from 'yaml';
import { collectManifests, parseManifests, type KubeObject } from '../../generators/bundle/collector.js';
import { resolveImageDigest } from '../../generators/bundle/digests.js';
import { annotationsYaml, bundleDockerfile, chooseCreatedAt, manifestFiles, withCreatedAt, type BundleMetadataOptions } from '../../generators/bundle/writer.js';
import { CSV_API_VERSION, CSV_KIND, newBaseCsv, renderYaml, type CsvObject } from '../../generators/csv/base.js';
import { fillCsv, type RelatedImage } from '../../generators/csv/fill.js';
import { UsageError } from '../../errors.js';
import { packageInfo } from '../../scaffold/package-info.js';
import { readProject } from '../../scaffold/project.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

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
}

const STRICT_SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/**
 * `generate bundle`: reads the operator's manifests (stdin, --input-dir, or
 * --deploy-dir + --crds-dir), fills the CSV from the base, and writes
 * `<output>/manifests`, `<output>/metadata/annotations.yaml`,
 * `<output>/tests/scorecard/config.yaml` and `bundle.Dockerfile`. A re-run
 * with the same input writes byte-identical files.
 */
export async function generateBundleCommand(options: GenerateBundleOptions, io: CommandIO): Promise<void> {
  const projectDir = resolve(options.directory);
  const tree = new VirtualTree(projectDir);
  const info = (line: string): void => {
    if (!options.quiet) io.progress(`INFO ${line}`);
  };
  validateInputFlags(options);
  if (options.version !== undefined) validateVersion(options.version);
  const project = tree.exists('PROJECT') ? readProject(tree) : undefined;
  const packageName = options.packageName ?? project?.projectName;
  if (!packageName) throw new UsageError('--package <name> must be set if PROJECT config file is not present', 'pass --package <name>, or run in the project root');
  const projectLayout = project?.layout?.length ? project.layout.join(',') : 'unknown';
  const builder = `ts-operator-sdk-v${packageInfo.version}`;
  const channels = (options.channels ?? 'alpha').split(',').map((c) => c.trim()).filter(Boolean);
  if (channels.length === 0) throw new UsageError('--channels is empty', 'pass at least one channel, e.g. --channels=alpha');
  if (options.defaultChannel !== undefined && !channels.includes(options.defaultChannel)) {
    throw new UsageError(`--default-channel ${options.defaultChannel} is not one of --channels (${channels.join(',')})`, `add it to --channels, e.g. --channels=${[...channels, options.defaultChannel].join(',')}`);
  }
  const writeManifests = options.manifests || !options.metadata;
  const writeMetadata = (options.metadata || !options.manifests) && !options.stdout;
  const outputDir = (options.outputDir ?? 'bundle').replace(/\/+$/, '') || '.';
  const outputRel = relative(projectDir, resolve(projectDir, outputDir)).split('\\').join('/') || '.';

  let withScorecard = tree.exists(`${outputRel}/tests/scorecard/config.yaml`);
  if (writeManifests) {
    const objects = readInput(options, projectDir);
    const manifests = collectManifests(objects);
    const kustomizeDir = (options.kustomizeDir ?? 'config/manifests').replace(/\/+$/, '');
    const base = chooseBase(manifests.csvs, packageName, tree, kustomizeDir, info);
    const { csv, leftovers } = fillCsv(base, manifests, { packageName, version: options.version, extraServiceAccounts: options.extraServiceAccounts, builder, projectLayout });
    if (options.useImageDigests) await pinImages(csv, options.fetchImpl);
    const csvPath = `${outputRel}/manifests/${packageName.toLowerCase()}.clusterserviceversion.yaml`;
    const createdAt = chooseCreatedAt(csv, tree.read(csvPath), options.now ?? new Date(), (options.env ?? process.env)['SOURCE_DATE_EPOCH']);
    const files = manifestFiles(packageName, withCreatedAt(csv, createdAt), manifests.crds, leftovers);
    if (options.stdout) {
      io.out(files.map((f) => `---\n${f.content}`).join('').trimEnd());
      return;
    }
    info('Generating bundle manifests');
    const produced = new Set(files.map((f) => `${outputRel}/manifests/${f.name}`));
    for (const file of files) writeIfChanged(tree, `${outputRel}/manifests/${file.name}`, file.content);
    // A CRD or object removed from the input must not linger in the bundle.
    const manifestsDir = join(projectDir, outputRel, 'manifests');
    if (existsSync(manifestsDir)) {
      for (const name of readdirSync(manifestsDir)) if (!produced.has(`${outputRel}/manifests/${name}`)) tree.delete(`${outputRel}/manifests/${name}`);
    }
    if (manifests.scorecardConfig) {
      writeIfChanged(tree, `${outputRel}/tests/scorecard/config.yaml`, renderYaml(withoutNamespace(manifests.scorecardConfig)));
      withScorecard = true;
    }
    info(`Bundle manifests generated successfully in ${outputRel}`);
  }
  if (writeMetadata) {
    const metadataOptions: BundleMetadataOptions = { packageName, channels, defaultChannel: options.defaultChannel, builder, projectLayout, withScorecard, bundleDir: outputRel };
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
  await finishTree(tree, io, false);
}

function writeIfChanged(tree: VirtualTree, path: string, content: string): void {
  if (tree.read(path) !== content) tree.write(path, content);
}

function withoutNamespace(object: KubeObject): KubeObject {
  const { namespace: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** operator-sdk's rules: exactly one input source, stdin excluding the directory flags. */
function validateInputFlags(options: GenerateBundleOptions): void {
  const dirs = options.inputDir !== undefined || options.deployDir !== undefined || options.crdsDir !== undefined;
  if (!options.manifests && options.metadata) return;
  if (options.stdin !== undefined && dirs) {
    throw new UsageError('none of --input-dir, --deploy-dir, or --crds-dir may be set if reading from stdin', 'drop the flags, or run without piping manifests into the command');
  }
  if (options.stdin === undefined && !dirs) {
    throw new UsageError('one of stdin, --input-dir, or --deploy-dir (and optionally --crds-dir) must be set', 'pipe manifests in, e.g. `kubectl kustomize config/manifests | ts-operator-sdk generate bundle`, or pass --input-dir');
  }
  if (options.inputDir !== undefined && (options.deployDir !== undefined || options.crdsDir !== undefined)) {
    throw new UsageError('--input-dir cannot be combined with --deploy-dir or --crds-dir', 'use either --input-dir, or --deploy-dir with optional --crds-dir');
  }
  if (options.crdsDir !== undefined && options.deployDir === undefined) {
    throw new UsageError('--crds-dir needs --deploy-dir', 'pass --deploy-dir with the operator\'s Deployment and RBAC manifests');
  }
}

/** `--version`: strict semver without a leading v or leading zeros, as OLM requires. */
export function validateVersion(version: string): void {
  if (STRICT_SEMVER.test(version)) return;
  if (/^v?\d+\.\d+\.\d+/.test(version) || /^\d/.test(version)) {
    throw new UsageError(`version ${version} contains bad values`, 'use MAJOR.MINOR.PATCH without a leading v or leading zeros, e.g. --version 0.0.1');
  }
  throw new UsageError(`${version} is not a valid semantic version`, 'use MAJOR.MINOR.PATCH, e.g. --version 0.0.1');
}

function readInput(options: GenerateBundleOptions, projectDir: string): KubeObject[] {
  if (options.stdin !== undefined) return parseManifests(options.stdin, 'stdin');
  const dirs = options.inputDir !== undefined ? [options.inputDir] : [options.deployDir!, ...(options.crdsDir !== undefined ? [options.crdsDir] : [])];
  const objects: KubeObject[] = [];
  for (const dir of dirs) {
    const abs = resolve(projectDir, dir);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new UsageError(`input directory ${dir} does not exist`, 'pass a directory of manifests, e.g. --input-dir config/default');
    for (const file of listManifestFiles(abs)) objects.push(...parseManifests(readFileSync(file, 'utf8'), relative(projectDir, file)));
  }
  return objects;
}

function listManifestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ya?ml|json)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** The base CSV: one named `<package>.*` in the input, else the kustomize base, else a default. */
function chooseBase(csvs: readonly KubeObject[], packageName: string, tree: VirtualTree, kustomizeDir: string, info: (line: string) => void): CsvObject {
  const fromInput = csvs.find((c) => c.metadata.name.startsWith(`${packageName}.`));
  if (fromInput) return fromInput as unknown as CsvObject;
  const basePath = `${kustomizeDir}/bases/${packageName}.clusterserviceversion.yaml`;
  const text = tree.read(basePath);
  if (text !== undefined) {
    let parsed: unknown;
    try {
      parsed = YAML.parse(text);
    } catch (err) {
      throw new UsageError(`${basePath} is not valid YAML (${(err as Error).message.split('\n')[0]})`, 'fix it, or regenerate it with `ts-operator-sdk generate kustomize manifests`');
    }
    const csv = parsed as Partial<CsvObject> | null;
    if (!csv || csv.kind !== CSV_KIND || !csv.metadata || !csv.spec) throw new UsageError(`${basePath} is not a ClusterServiceVersion`, 'regenerate it with `ts-operator-sdk generate kustomize manifests`');
    return { apiVersion: CSV_API_VERSION, ...csv } as CsvObject;
  }
  info('Building a ClusterServiceVersion without an existing base');
  return newBaseCsv(packageName, []);
}

/**
 * `--use-image-digests`: every container image and related image pinned to
 * its digest, and every container image listed in relatedImages (OLM mirrors
 * exactly those for disconnected installs), named after its container.
 */
async function pinImages(csv: CsvObject, fetchImpl: typeof fetch | undefined): Promise<void> {
  const cache = new Map<string, Promise<string>>();
  const pin = (image: string): Promise<string> => {
    let pending = cache.get(image);
    if (!pending) {
      pending = resolveImageDigest(image, fetchImpl);
      cache.set(image, pending);
    }
    return pending;
  };
  const related = ((csv.spec['relatedImages'] as RelatedImage[] | undefined) ?? []).map((r) => ({ ...r }));
  for (const entry of related) entry.image = await pin(entry.image);
  const install = csv.spec['install'] as { spec?: { deployments?: Array<{ name: string; spec?: { template?: { spec?: { containers?: Array<{ name?: string; image?: string }>; initContainers?: Array<{ name?: string; image?: string }> } } } }> } };
  for (const deployment of install.spec?.deployments ?? []) {
    const pod = deployment.spec?.template?.spec;
    for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
      if (!container.image) continue;
      container.image = await pin(container.image);
      if (related.some((r) => r.image === container.image)) continue;
      const name = container.name ?? 'image';
      related.push({ name: related.some((r) => r.name === name) ? `${deployment.name}-${name}` : name, image: container.image });
    }
  }
  if (related.length > 0) csv.spec['relatedImages'] = related.sort((a, b) => a.name.localeCompare(b.name));
}

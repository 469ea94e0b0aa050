/**
 * `generate bundle`'s domain logic: from the operator's manifests and the
 * base CSV to the files of `<bundle>/manifests` and the scorecard config.
 * The command only turns flags into {@link BundleInputs} and writes the
 * result into its tree.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import YAML from 'yaml';
import { UsageError } from '../../errors.js';
import { CSV_API_VERSION, CSV_KIND, newBaseCsv, renderYaml, type CsvObject } from '../csv/base.js';
import { fillCsv, type RelatedImage } from '../csv/fill.js';
import { collectManifests, parseManifests, type KubeObject } from './collector.js';
import { resolveImageDigest } from './digests.js';
import { chooseCreatedAt, manifestFiles, withCreatedAt, withoutNamespace, type ManifestFile } from './writer.js';

/** Where the operator's manifests come from: the piped text, or directories of YAML/JSON files. */
export type BundleSource = { stdin: string } | { directories: readonly string[] };

/** Everything {@link generateBundle} needs; no flags, no defaults left to apply. */
export interface BundleInputs {
  /** The project root; directories and the base CSV path are relative to it. */
  projectDir: string;
  source: BundleSource;
  packageName: string;
  /** The bundle version (CSV name and spec.version); undefined keeps the base's. */
  version?: string;
  /** Directory holding `bases/<package>.clusterserviceversion.yaml`, relative to the project. */
  kustomizeDir: string;
  /** ServiceAccounts whose RBAC also goes into the CSV. */
  extraServiceAccounts?: readonly string[];
  /** The metrics builder label, e.g. `ts-operator-sdk-v0.1.0`. */
  builder: string;
  /** PROJECT's layout plugins joined by ',', or `unknown`. */
  projectLayout: string;
  /** Pin every image to its digest through its registry. */
  useImageDigests: boolean;
  /** The CSV the bundle holds now, so an unchanged CSV keeps its createdAt. */
  previousCsv?: string;
  /** The clock for createdAt; `sourceDateEpoch` (SOURCE_DATE_EPOCH) wins over it. */
  now: Date;
  sourceDateEpoch?: string;
  /** Injected for the digest resolver's tests. */
  fetchImpl?: typeof fetch;
  /** Receives progress lines (e.g. that no base CSV was found). */
  info(line: string): void;
}

/** The generated bundle content. */
export interface GeneratedBundle {
  /** The files of `<bundle>/manifests`, CSV first. */
  manifests: ManifestFile[];
  /** `tests/scorecard/config.yaml`, when the input holds a scorecard Configuration. */
  scorecardConfig?: string;
}

/**
 * Reads the manifests, picks the base CSV (one named `<package>.*` in the
 * input, else the kustomize base, else a default), fills it from the
 * manifests, optionally pins images, and renders the bundle's manifests.
 * Bad input is a {@link UsageError}.
 */
export async function generateBundle(inputs: BundleInputs): Promise<GeneratedBundle> {
  const manifests = collectManifests(readSource(inputs.source, inputs.projectDir));
  const base = chooseBase(manifests.csvs, inputs.packageName, inputs.projectDir, inputs.kustomizeDir, inputs.info);
  const { csv, leftovers } = fillCsv(base, manifests, {
    packageName: inputs.packageName,
    version: inputs.version,
    extraServiceAccounts: inputs.extraServiceAccounts ? [...inputs.extraServiceAccounts] : undefined,
    builder: inputs.builder,
    projectLayout: inputs.projectLayout,
  });
  if (inputs.useImageDigests) await pinImages(csv, inputs.fetchImpl);
  const createdAt = chooseCreatedAt(csv, inputs.previousCsv, inputs.now, inputs.sourceDateEpoch);
  return {
    manifests: manifestFiles(inputs.packageName, withCreatedAt(csv, createdAt), manifests.crds, leftovers),
    scorecardConfig: manifests.scorecardConfig ? renderYaml(withoutNamespace(manifests.scorecardConfig)) : undefined,
  };
}

function readSource(source: BundleSource, projectDir: string): KubeObject[] {
  if ('stdin' in source) return parseManifests(source.stdin, 'stdin');
  const objects: KubeObject[] = [];
  for (const dir of source.directories) {
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
function chooseBase(csvs: readonly KubeObject[], packageName: string, projectDir: string, kustomizeDir: string, info: (line: string) => void): CsvObject {
  const fromInput = csvs.find((c) => c.metadata.name.startsWith(`${packageName}.`));
  if (fromInput) return fromInput as unknown as CsvObject;
  const basePath = `${kustomizeDir}/bases/${packageName}.clusterserviceversion.yaml`;
  const baseFile = resolve(projectDir, basePath);
  if (existsSync(baseFile)) {
    let parsed: unknown;
    try {
      parsed = YAML.parse(readFileSync(baseFile, 'utf8'));
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

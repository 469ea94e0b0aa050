/**
 * `generate bundle`'s domain logic: from the operator's manifests and the
 * base CSV to the files of `<bundle>/manifests` and the scorecard config.
 * The command only turns flags into {@link BundleInputs} and writes the
 * result into its tree.
 */
import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../errors.js';
import { displayPath, resolveFlagPath } from '../../paths.js';
import {
  checkRegularFile,
  fileError,
  formatSize,
  MAX_MANIFEST_STREAM_BYTES,
  parseYamlDocuments,
  readManifestFile,
} from '../../yaml-input.js';
import { checkBaseCsvShape } from './shapes.js';
import { CSV_API_VERSION, CSV_KIND, newBaseCsv, renderYaml, type CsvObject } from '../csv/base.js';
import { fillCsv, type RelatedImage } from '../csv/fill.js';
import { collectManifests, parseManifests } from './collector.js';
import type { CollectedManifests, ManifestObject } from './input-objects.js';
import { resolveImageDigest } from './digests.js';
import {
  chooseCreatedAt,
  manifestFiles,
  parsePreviousCsv,
  withCreatedAt,
  withoutNamespace,
  type ManifestFile,
} from './writer.js';
import { byteOrder } from '../../byte-order.js';

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
  /** Directory holding `bases/<package>.clusterserviceversion.yaml`, relative to the project or absolute. */
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
  info: (line: string) => void;
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
  const objects = readSource(inputs.source, inputs.projectDir);
  // Empty input is what `kustomize build | generate bundle` passes when the
  // build fails; taking it as "the operator has no manifests" would wipe the bundle.
  if (objects.length === 0) {
    const where = 'stdin' in inputs.source ? 'stdin' : inputs.source.directories.join(', ');
    throw new UsageError(
      `${where} holds no Kubernetes objects, so there is nothing to build a bundle from; the bundle was left as it was`,
      'stdin' in inputs.source
        ? 'check that the command piping into generate bundle (kustomize build config/manifests) succeeded'
        : "pass the directory that holds the operator's manifests",
    );
  }
  const manifests = collectManifests(objects);
  const base = chooseBase(manifests.csvs, inputs.packageName, inputs.projectDir, inputs.kustomizeDir, inputs.info);
  const previousCsv = parsePreviousCsv(inputs.previousCsv);
  checkInputIsWhole(manifests, base, inputs, previousCsv);
  const { csv, leftovers } = fillCsv(base, manifests, {
    packageName: inputs.packageName,
    version: inputs.version,
    extraServiceAccounts: inputs.extraServiceAccounts ? [...inputs.extraServiceAccounts] : undefined,
    builder: inputs.builder,
    projectLayout: inputs.projectLayout,
  });
  if (inputs.useImageDigests) await pinImages(csv, inputs.fetchImpl);
  const createdAt = chooseCreatedAt(csv, previousCsv, inputs.now, inputs.sourceDateEpoch);
  return {
    manifests: manifestFiles(inputs.packageName, withCreatedAt(csv, createdAt), manifests.crds, leftovers),
    scorecardConfig: manifests.scorecardConfig ? renderYaml(withoutNamespace(manifests.scorecardConfig)) : undefined,
  };
}

/**
 * Refuses input that lacks what the bundle must hold, before anything is
 * written: a partial input (`--deploy-dir config/manager` alone, an empty
 * directory beside `--crds-dir`) would otherwise replace a whole bundle with
 * one that installs nothing, drops its CRDs or its RBAC, and still passes
 * `bundle validate`.
 */
function checkInputIsWhole(
  manifests: CollectedManifests,
  base: CsvObject,
  inputs: BundleInputs,
  previousCsv: CsvObject | undefined,
): void {
  const where = 'stdin' in inputs.source ? 'the input on stdin' : `the input (${inputs.source.directories.join(', ')})`;
  const wholeInput =
    "pass all of the operator's manifests, e.g. `kubectl kustomize config/manifests | ts-operator-sdk generate bundle`, or --input-dir with a directory that holds them all";
  if (manifests.deployments.length === 0) {
    throw new UsageError(
      `${where} has no Deployment, so the bundle's CSV would install no operator; the bundle was left as it was`,
      wholeInput,
    );
  }
  const owned = (
    (base.spec['customresourcedefinitions'] as { owned?: Array<{ name?: unknown }> } | undefined)?.owned ?? []
  )
    .map((crd) => crd.name)
    .filter((name): name is string => typeof name === 'string');
  const present = new Set(manifests.crds.map((crd) => crd.metadata.name));
  const missing = owned.filter((name) => !present.has(name));
  if (missing.length > 0) {
    throw new UsageError(
      `the base CSV owns ${missing.join(', ')}, but ${where} has no such CRD; the bundle was left as it was`,
      `${wholeInput} (with --deploy-dir, add --crds-dir config/crd/bases); if the API was removed, run \`ts-operator-sdk generate kustomize manifests\` first`,
    );
  }
  const hadRbac = previousPermissions(previousCsv);
  if (hadRbac && manifests.roles.length + manifests.clusterRoles.length === 0) {
    throw new UsageError(
      `${where} has no Role or ClusterRole, but the bundle's CSV grants the operator permissions now; the bundle was left as it was`,
      wholeInput,
    );
  }
}

/** Whether the bundle's current CSV grants any permissions (an unreadable CSV counts as none: it is replaced anyway). */
function previousPermissions(previousCsv: CsvObject | undefined): boolean {
  const install = (
    previousCsv as
      { spec?: { install?: { spec?: { permissions?: unknown; clusterPermissions?: unknown } } } } | undefined
  )?.spec?.install?.spec;
  return [install?.permissions, install?.clusterPermissions].some((list) => Array.isArray(list) && list.length > 0);
}

function readSource(source: BundleSource, projectDir: string): ManifestObject[] {
  if ('stdin' in source) return parseManifests(source.stdin, 'stdin');
  const objects: ManifestObject[] = [];
  let total = 0;
  for (const dir of source.directories) {
    const abs = resolveFlagPath(projectDir, dir);
    if (!existsSync(abs) || !statSync(abs).isDirectory())
      throw new UsageError(
        `input directory ${dir} does not exist`,
        'pass a directory of manifests, e.g. --input-dir config/default',
      );
    for (const file of listManifestFiles(abs, dir)) {
      const display = displayPath(projectDir, file);
      total += checkRegularFile(file, display);
      if (total > MAX_MANIFEST_STREAM_BYTES) {
        throw new UsageError(
          `the manifests in ${source.directories.join(', ')} add up to more than ${formatSize(MAX_MANIFEST_STREAM_BYTES)}`,
          "pass the directory of the operator's own manifests (Deployment, RBAC, CRDs, samples)",
        );
      }
      objects.push(...parseManifests(readManifestFile(file, display), display));
    }
  }
  return objects;
}

/**
 * The YAML and JSON files below `dir`, sorted. kustomize's own files are
 * skipped (operator-sdk skips them too: they list manifests, they are not
 * manifests). Anything else with a manifest's name is read, so a symlink, a
 * FIFO or a directory named `*.yaml` is reported rather than silently skipped.
 */
function listManifestFiles(dir: string, display: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch (err) {
    throw fileError(err, display);
  }
  return entries
    .filter((e) => !e.isDirectory() && /\.(ya?ml|json)$/.test(e.name) && !KUSTOMIZE_FILES.has(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** The names kustomize reads its configuration from. */
const KUSTOMIZE_FILES = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);

/** The base CSV: one named `<package>.*` in the input, else the kustomize base, else a default. */
function chooseBase(
  csvs: readonly ManifestObject[],
  packageName: string,
  projectDir: string,
  kustomizeDir: string,
  info: (line: string) => void,
): CsvObject {
  const fromInput = csvs.find((c) => c.metadata.name.startsWith(`${packageName}.`));
  if (fromInput) {
    checkBaseCsvShape(fromInput, `${fromInput.metadata.name} in the input`);
    return fromInput as unknown as CsvObject;
  }
  const baseFile = join(
    resolveFlagPath(projectDir, kustomizeDir),
    'bases',
    `${packageName}.clusterserviceversion.yaml`,
  );
  const basePath = displayPath(projectDir, baseFile);
  // lstat, not exists: a symlink loop or a dangling link is an error to report, not "no base".
  if (lstatSync(baseFile, { throwIfNoEntry: false })) {
    const [parsed] = parseYamlDocuments(
      readManifestFile(baseFile, basePath),
      basePath,
      (_index, reason) =>
        new UsageError(
          `${basePath} is not valid YAML (${reason})`,
          'fix it, or regenerate it with `ts-operator-sdk generate kustomize manifests`',
        ),
    );
    const csv = parsed as Partial<CsvObject> | null | undefined;
    if (!csv || typeof csv !== 'object' || csv.kind !== CSV_KIND || !csv.metadata || !csv.spec)
      throw new UsageError(
        `${basePath} is not a ClusterServiceVersion`,
        'regenerate it with `ts-operator-sdk generate kustomize manifests`',
      );
    checkBaseCsvShape(csv, basePath);
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
  const install = csv.spec['install'] as {
    spec?: {
      deployments?: Array<{
        name: string;
        spec?: {
          template?: {
            spec?: {
              containers?: Array<{ name?: string; image?: string }>;
              initContainers?: Array<{ name?: string; image?: string }>;
            };
          };
        };
      }>;
    };
  };
  for (const deployment of install.spec?.deployments ?? []) {
    const pod = deployment.spec?.template?.spec;
    for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
      if (!container.image) continue;
      container.image = await pin(container.image);
      if (related.some((r) => r.image === container.image)) continue;
      const name = container.name ?? 'image';
      related.push({
        name: related.some((r) => r.name === name) ? `${deployment.name}-${name}` : name,
        image: container.image,
      });
    }
  }
  if (related.length > 0) csv.spec['relatedImages'] = related.sort((a, b) => byteOrder(a.name, b.name));
}

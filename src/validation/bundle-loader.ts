/**
 * Reads a bundle directory the way operator-sdk does before any validator
 * runs: find metadata/annotations.yaml, read the manifests it points at, and
 * pick out the CSV and CRDs. Anything that stops this is a {@link UsageError},
 * which the command reports as one fatal line (`<problem>: <fix>`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseAllDocuments } from 'yaml';
import { UsageError } from '../errors.js';
import { parseSemverTolerant } from './names.js';

/** A decoded YAML object of the bundle. */
export type ManifestDocument = Record<string, any>;

/** One object from manifests/, with the file it came from. */
export interface BundleObject {
  file: string;
  apiVersion: string;
  kind: string;
  name: string;
  doc: ManifestDocument;
}

/** The annotation keys of bundle metadata (operator-registry's labels). */
export const ANNOTATION = {
  mediatype: 'operators.operatorframework.io.bundle.mediatype.v1',
  manifests: 'operators.operatorframework.io.bundle.manifests.v1',
  metadata: 'operators.operatorframework.io.bundle.metadata.v1',
  package: 'operators.operatorframework.io.bundle.package.v1',
  channels: 'operators.operatorframework.io.bundle.channels.v1',
  defaultChannel: 'operators.operatorframework.io.bundle.channel.default.v1',
} as const;

/** The media type of a bundle whose manifests hold a CSV. */
export const REGISTRY_V1 = 'registry+v1';

/** A loaded bundle: what the validators look at. */
export interface LoadedBundle {
  /** The bundle directory relative to the working directory, as messages print it. */
  directory: string;
  annotations: Record<string, string>;
  manifestsDir: string;
  mediaType: string;
  /** Every object in manifests/, the CSV and CRDs included, in file-name order. */
  objects: BundleObject[];
  csv: BundleObject;
  crds: BundleObject[];
  /** The CSV name (the api's bundle.Name). */
  name: string;
  channels: string[];
  defaultChannel: string;
  /** Total bytes of the manifest files, and the same gzipped (what OLM limits). */
  size: number;
  compressedSize: number;
}

/** Loads the bundle at `path` (relative to `cwd`). */
export function loadBundle(path: string, cwd: string): LoadedBundle {
  const root = join(cwd, path);
  if (!existsSync(root)) {
    throw new UsageError(`bundle directory ${path} not found`, `only bundle directories can be validated here, not image references; unpack the bundle image into a directory (or run \`make bundle\`) and pass that directory`);
  }
  if (!statSync(root).isDirectory()) {
    throw new UsageError(`${path} is not a directory`, `pass the bundle directory that holds manifests/ and metadata/`);
  }
  const directory = relative(cwd, root) || '.';
  const annotationsFile = findAnnotationsFile(root);
  if (!annotationsFile) {
    throw new UsageError(`metadata not found in ${directory}`, `expected ${join(directory, 'metadata', 'annotations.yaml')}; run \`make bundle\` (or \`ts-operator-sdk generate bundle\`) to create it`);
  }
  const annotationsDoc = readYamlDocuments(annotationsFile, cwd)[0];
  const annotations = stringMap(annotationsDoc?.annotations);
  const manifestsName = (annotations[ANNOTATION.manifests] ?? 'manifests/').replace(/\/+$/, '') || 'manifests';
  const manifestsDir = join(root, manifestsName);
  if (!existsSync(manifestsDir) || !statSync(manifestsDir).isDirectory()) {
    throw new UsageError(`manifests directory ${relative(cwd, manifestsDir)} not found`, `the bundle needs its manifests (CSV, CRDs) under ${join(directory, manifestsName)}/`);
  }

  const objects: BundleObject[] = [];
  let size = 0;
  let compressedSize = 0;
  const entries = readdirSync(manifestsDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const file = join(manifestsDir, entry.name);
    if (entry.isDirectory()) {
      // Split so that the fatal line's `<problem>: <fix>` reads as operator-sdk's message.
      throw new UsageError('bundle manifests dir contains directory', `${relative(cwd, file)}; move its files up into ${relative(cwd, manifestsDir)} or remove it`);
    }
    const bytes = readFileSync(file);
    size += bytes.length;
    // Like the api: each file gzipped, then base64-encoded (as OLM stores it), and the lengths summed.
    compressedSize += Buffer.byteLength(gzipSync(bytes).toString('base64'));
    // Like the api's loader, one object per file: the first document.
    const doc = readYamlDocuments(file, cwd)[0];
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) continue;
    objects.push({
      file: relative(cwd, file),
      apiVersion: String(doc.apiVersion ?? ''),
      kind: String(doc.kind ?? ''),
      name: String(doc.metadata?.name ?? ''),
      doc,
    });
  }
  if (entries.length === 0) {
    throw new UsageError(`The directory ${relative(cwd, manifestsDir)} contains no yaml files`, `put the CSV and CRDs there (run \`make bundle\`)`);
  }
  const csv = objects.find((object) => object.kind === 'ClusterServiceVersion');
  if (!csv) {
    throw new UsageError(`unable to find a csv in bundle directory ${relative(cwd, manifestsDir)}`, `add <package>.clusterserviceversion.yaml (run \`make bundle\`)`);
  }
  const version = csv.doc.spec?.version;
  if (version !== undefined && version !== null && version !== '' && !parseSemverTolerant(String(version))) {
    throw new UsageError(`invalid spec.version ${JSON.stringify(String(version))} in ${csv.file}`, `not a semantic version; use MAJOR.MINOR.PATCH, e.g. 0.0.1`);
  }
  const channels = (annotations[ANNOTATION.channels] ?? '').split(',').map((channel) => channel.trim()).filter((channel) => channel !== '');
  return {
    directory,
    annotations,
    manifestsDir,
    mediaType: REGISTRY_V1,
    objects,
    csv,
    crds: objects.filter((object) => object.kind === 'CustomResourceDefinition'),
    name: csv.name,
    channels,
    defaultChannel: annotations[ANNOTATION.defaultChannel] ?? '',
    size,
    compressedSize,
  };
}

/** metadata/annotations.yaml, or the first annotations.yaml anywhere below the root. */
function findAnnotationsFile(root: string): string | undefined {
  const preferred = join(root, 'metadata', 'annotations.yaml');
  if (existsSync(preferred)) return preferred;
  const walk = (dir: string): string | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!entry.isDirectory()) continue;
      const candidate = join(dir, entry.name, 'annotations.yaml');
      if (existsSync(candidate)) return candidate;
      const deeper = walk(join(dir, entry.name));
      if (deeper) return deeper;
    }
    return undefined;
  };
  return walk(root);
}

/** Parses every YAML document of a file; a syntax error is fatal and names the file (operator-sdk#5321). */
export function readYamlDocuments(file: string, cwd: string): any[] {
  const documents = parseAllDocuments(readFileSync(file, 'utf8'));
  const list = Array.isArray(documents) ? documents : [documents];
  for (const document of list) {
    const [problem] = document.errors;
    if (problem) {
      const reason = problem.message.split('\n')[0]!.replace(/[.:]\s*$/, '');
      throw new UsageError(`invalid YAML in ${relative(cwd, file)}`, `${reason}; fix the syntax and run again`);
    }
  }
  return list.map((document) => document.toJS()).filter((value) => value !== null && value !== undefined);
}

function stringMap(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, inner === null || inner === undefined ? '' : String(inner)]));
}

/**
 * Reads a bundle directory the way operator-sdk does before any validator
 * runs: find metadata/annotations.yaml, read the manifests it points at, and
 * pick out the CSV and CRDs. Anything that stops this is a {@link UsageError},
 * which the command reports as one fatal line (`<problem>: <fix>`).
 */
import { existsSync, lstatSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { UsageError } from '../errors.js';
import { displayPath } from '../paths.js';
import {
  checkRegularFile,
  fileError,
  formatSize,
  MAX_MANIFEST_STREAM_BYTES,
  parseYamlDocuments,
  readManifestFile,
} from '../yaml-input.js';
import { leafText, type CrdSpecDocument, type CsvSpecDocument, type ManifestDocument } from './documents.js';
import { parseSemverTolerant } from './names.js';

/** One object from manifests/, with the file it came from; `Spec` is what its kind's spec holds. */
export interface BundleObject<Spec = Record<string, unknown>> {
  file: string;
  apiVersion: string;
  kind: string;
  name: string;
  doc: ManifestDocument<Spec>;
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
  /** The bundle directory relative to the working directory (absolute when outside it), as messages print it. */
  directory: string;
  annotations: Record<string, string>;
  manifestsDir: string;
  mediaType: string;
  /** Every object in manifests/, the CSV and CRDs included, in file-name order. */
  objects: BundleObject[];
  csv: BundleObject<CsvSpecDocument>;
  crds: BundleObject<CrdSpecDocument>[];
  /** The CSV name (the api's bundle.Name). */
  name: string;
  channels: string[];
  defaultChannel: string;
  /** Total bytes of the manifest files, and the same gzipped (what OLM limits). */
  size: number;
  compressedSize: number;
}

/** Loads the bundle at `path` (relative to `cwd`, or absolute). */
export function loadBundle(path: string, cwd: string): LoadedBundle {
  const root = resolve(cwd, path);
  if (!existsSync(root)) {
    throw new UsageError(
      `bundle directory ${path} not found`,
      `only bundle directories can be validated here, not image references; unpack the bundle image into a directory (or run \`make bundle\`) and pass that directory`,
    );
  }
  if (!statSync(root).isDirectory()) {
    throw new UsageError(`${path} is not a directory`, `pass the bundle directory that holds manifests/ and metadata/`);
  }
  const directory = displayPath(cwd, root);
  const annotationsFile = findAnnotationsFile(root, cwd);
  if (!annotationsFile) {
    throw new UsageError(
      `metadata not found in ${directory}`,
      `expected ${join(directory, 'metadata', 'annotations.yaml')}; run \`make bundle\` (or \`ts-operator-sdk generate bundle\`) to create it`,
    );
  }
  const annotationsDoc = readYamlDocuments(annotationsFile, cwd)[0];
  const annotations = stringMap(isObject(annotationsDoc) ? annotationsDoc['annotations'] : undefined);
  const manifestsName = (annotations[ANNOTATION.manifests] ?? 'manifests/').replace(/\/+$/, '') || 'manifests';
  const manifestsDir = join(root, manifestsName);
  if (!existsSync(manifestsDir) || !statSync(manifestsDir).isDirectory()) {
    throw new UsageError(
      `manifests directory ${displayPath(cwd, manifestsDir)} not found`,
      `the bundle needs its manifests (CSV, CRDs) under ${join(directory, manifestsName)}/`,
    );
  }
  // Listed once through the named-error path, so an unreadable directory is one line, not a raw EACCES below.
  readDirectory(manifestsDir, cwd);

  const objects: BundleObject[] = [];
  let size = 0;
  let compressedSize = 0;
  const entries = readdirSync(manifestsDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  // Every file's type and size is checked before any is opened or parsed:
  // a FIFO blocks the read, and parsing time grows with size.
  let totalSize = 0;
  for (const entry of entries) {
    if (entry.isDirectory()) continue;
    const file = join(manifestsDir, entry.name);
    totalSize += checkRegularFile(file, displayPath(cwd, file));
    if (totalSize > MAX_MANIFEST_STREAM_BYTES) {
      throw new UsageError(
        `the files in ${displayPath(cwd, manifestsDir)} add up to more than ${formatSize(MAX_MANIFEST_STREAM_BYTES)}`,
        'OLM refuses bundles over 1 MiB compressed anyway; move what the operator does not need out of the bundle',
      );
    }
  }
  for (const entry of entries) {
    const file = join(manifestsDir, entry.name);
    if (entry.isDirectory()) {
      // Split so that the fatal line's `<problem>: <fix>` reads as operator-sdk's message.
      throw new UsageError(
        'bundle manifests dir contains directory',
        `${displayPath(cwd, file)}; move its files up into ${displayPath(cwd, manifestsDir)} or remove it`,
      );
    }
    const bytes = readBytes(file, cwd);
    size += bytes.length;
    // Like the api: each file gzipped, then base64-encoded (as OLM stores it), and the lengths summed.
    compressedSize += Buffer.byteLength(gzipSync(bytes).toString('base64'));
    // Like the api's loader, one object per file: the first document.
    const doc = readYamlDocuments(file, cwd)[0];
    if (!isObject(doc) || Array.isArray(doc)) continue;
    objects.push({
      file: displayPath(cwd, file),
      apiVersion: leafText(doc.apiVersion ?? ''),
      kind: leafText(doc.kind ?? ''),
      name: leafText(doc.metadata?.name ?? ''),
      doc,
    });
  }
  if (entries.length === 0) {
    throw new UsageError(
      `The directory ${displayPath(cwd, manifestsDir)} contains no yaml files`,
      `put the CSV and CRDs there (run \`make bundle\`)`,
    );
  }
  // By kind: what the validators read as a CSV's or a CRD's spec (unchecked; see ./documents.ts).
  const csv = objects.find((object) => object.kind === 'ClusterServiceVersion') as
    BundleObject<CsvSpecDocument> | undefined;
  if (!csv) {
    throw new UsageError(
      `unable to find a csv in bundle directory ${displayPath(cwd, manifestsDir)}`,
      `add <package>.clusterserviceversion.yaml (run \`make bundle\`)`,
    );
  }
  const version = csv.doc.spec?.version;
  if (version !== undefined && version !== null && version !== '' && !parseSemverTolerant(leafText(version))) {
    throw new UsageError(
      `invalid spec.version ${JSON.stringify(leafText(version))} in ${csv.file}`,
      `not a semantic version; use MAJOR.MINOR.PATCH, e.g. 0.0.1`,
    );
  }
  const channels = (annotations[ANNOTATION.channels] ?? '')
    .split(',')
    .map((channel) => channel.trim())
    .filter((channel) => channel !== '');
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
function findAnnotationsFile(root: string, cwd: string): string | undefined {
  const preferred = join(root, 'metadata', 'annotations.yaml');
  // lstat, not exists: a symlink loop there is reported by the read, not taken for "no metadata".
  if (lstatSync(preferred, { throwIfNoEntry: false })) return preferred;
  const walk = (dir: string): string | undefined => {
    for (const entry of readDirectory(dir, cwd).sort((a, b) => (a.name < b.name ? -1 : 1))) {
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

/**
 * Parses every YAML document of a file (a bounded read of a regular file);
 * a syntax error is fatal and names the file (operator-sdk#5321).
 */
export function readYamlDocuments(file: string, cwd: string): unknown[] {
  const display = displayPath(cwd, file);
  const documents = parseYamlDocuments(
    readManifestFile(file, display),
    display,
    (_index, reason) => new UsageError(`invalid YAML in ${display}`, `${reason}; fix the syntax and run again`),
  );
  return documents.filter((value) => value !== null && value !== undefined);
}

/** A file's bytes; an unreadable file is the user's error, named. */
function readBytes(file: string, cwd: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw fileError(err, displayPath(cwd, file));
  }
}

/** A directory's entries; an unreadable directory is the user's error, named. */
function readDirectory(dir: string, cwd: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    throw fileError(err, displayPath(cwd, dir));
  }
}

/** A YAML mapping (or list) read as an object whose fields are still to be checked. */
function isObject(value: unknown): value is ManifestDocument {
  return typeof value === 'object' && value !== null;
}

function stringMap(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, inner]) => [
      key,
      inner === null || inner === undefined ? '' : leafText(inner),
    ]),
  );
}

import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import type { CsvObject } from '../csv/base.js';
import { renderYaml } from '../csv/base.js';
import { groupOf, versionOf } from './collector.js';
import type { ManifestObject } from './input-objects.js';
import { BUNDLE_SUPPORTED_KINDS } from '../../validation/bundle-kinds.js';
import { quickParseYaml } from '../../yaml-input.js';
import { sortKeysDeep, yamlInlineString } from '../../yaml-output.js';

/** The CSV's annotation that changes on every content change, and only then. */
export const CREATED_AT = 'createdAt';

/** One file of the bundle, relative to the bundle's manifests directory. */
export interface ManifestFile {
  name: string;
  content: string;
}

/**
 * The files of `bundle/manifests`, named as operator-sdk names them: the
 * CSV as `<package>.clusterserviceversion.yaml`, CRDs as
 * `<group>_<plural>.yaml`, others as `<name>_<group>_<version>_<kind>.yaml`
 * (`<name>_<version>_<kind>.yaml` for the core group) with `dup<N>_` in
 * front on a clash. Namespaces are removed (OLM installs into the operator
 * group's namespace) and kinds OLM does not support are dropped.
 */
export function manifestFiles(
  packageName: string,
  csv: CsvObject,
  crds: readonly ManifestObject[],
  others: readonly ManifestObject[],
): ManifestFile[] {
  const files: ManifestFile[] = [
    { name: `${packageName.toLowerCase()}.clusterserviceversion.yaml`, content: renderYaml(csv) },
  ];
  const taken = new Set(files.map((f) => f.name));
  const add = (base: string, object: ManifestObject): void => {
    let name = base;
    for (let n = 1; taken.has(name); n++) name = `dup${n}_${base}`;
    taken.add(name);
    files.push({ name, content: renderYaml(withoutNamespace(object)) });
  };
  for (const crd of crds) {
    const spec = (crd['spec'] ?? {}) as { group?: string; names?: { plural?: string } };
    add(`${spec.group}_${spec.names?.plural}.yaml`, crd);
  }
  for (const object of others) {
    if (!BUNDLE_SUPPORTED_KINDS.has(object.kind)) continue;
    const group = groupOf(object);
    const kind = object.kind.toLowerCase();
    add(
      group
        ? `${object.metadata.name}_${group}_${versionOf(object)}_${kind}.yaml`
        : `${object.metadata.name}_${versionOf(object)}_${kind}.yaml`,
      object,
    );
  }
  return files;
}

/** A copy of `object` without metadata.namespace (OLM installs into the operator group's namespace). */
export function withoutNamespace(object: ManifestObject): ManifestObject {
  const { namespace: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** What the bundle metadata says about the package. */
export interface BundleMetadataOptions {
  packageName: string;
  channels: readonly string[];
  defaultChannel?: string;
  builder: string;
  projectLayout: string;
  /** Whether the bundle has tests/scorecard/config.yaml. */
  withScorecard: boolean;
  /** The bundle directory as the Dockerfile's COPY sees it (relative to the project), e.g. `bundle`. */
  bundleDir: string;
}

/** The bundle's labels in operator-sdk's order, as [comment, pairs] blocks. */
function labelBlocks(options: BundleMetadataOptions): Array<[string, Array<[string, string]>]> {
  const core: Array<[string, string]> = [
    ['operators.operatorframework.io.bundle.mediatype.v1', 'registry+v1'],
    ['operators.operatorframework.io.bundle.manifests.v1', 'manifests/'],
    ['operators.operatorframework.io.bundle.metadata.v1', 'metadata/'],
    ['operators.operatorframework.io.bundle.package.v1', options.packageName],
    ['operators.operatorframework.io.bundle.channels.v1', options.channels.join(',')],
  ];
  if (options.defaultChannel)
    core.push(['operators.operatorframework.io.bundle.channel.default.v1', options.defaultChannel]);
  core.push(
    ['operators.operatorframework.io.metrics.builder', options.builder],
    ['operators.operatorframework.io.metrics.mediatype.v1', 'metrics+v1'],
    ['operators.operatorframework.io.metrics.project_layout', options.projectLayout],
  );
  const blocks: Array<[string, Array<[string, string]>]> = [['Core bundle', core]];
  if (options.withScorecard) {
    blocks.push([
      'for testing',
      [
        ['operators.operatorframework.io.test.mediatype.v1', 'scorecard+v1'],
        ['operators.operatorframework.io.test.config.v1', 'tests/scorecard/'],
      ],
    ]);
  }
  return blocks;
}

/** `metadata/annotations.yaml`: the same keys and values as the Dockerfile's labels. */
export function annotationsYaml(options: BundleMetadataOptions): string {
  const lines = ['annotations:'];
  labelBlocks(options).forEach(([title, pairs], index) => {
    if (index > 0) lines.push('');
    lines.push(title === 'Core bundle' ? '  # Core bundle annotations.' : '  # Annotations for testing.');
    for (const [key, value] of pairs) {
      lines.push(`  ${key}: ${yamlInlineString(value, 'core') ?? YAML.stringify(value).trimEnd()}`);
    }
  });
  return `${lines.join('\n')}\n`;
}

/** `bundle.Dockerfile`: a scratch image labelled like annotations.yaml, holding the bundle directories. */
export function bundleDockerfile(options: BundleMetadataOptions): string {
  const lines = ['FROM scratch', ''];
  for (const [title, pairs] of labelBlocks(options)) {
    lines.push(title === 'Core bundle' ? '# Core bundle labels.' : '# Labels for testing.');
    for (const [key, value] of pairs) lines.push(`LABEL ${key}=${value}`);
    lines.push('');
  }
  const dir = options.bundleDir.replace(/\/+$/, '');
  lines.push(
    '# Copy files to locations specified by labels.',
    `COPY ${dir}/manifests /manifests/`,
    `COPY ${dir}/metadata /metadata/`,
  );
  if (options.withScorecard) lines.push(`COPY ${dir}/tests/scorecard /tests/scorecard/`);
  return `${lines.join('\n')}\n`;
}

/**
 * The bundle's current CSV as data, parsed once for everything that compares
 * against it; undefined when there is none or it is not YAML (it is replaced
 * anyway). Not checked to be a CSV: readers look fields up optionally.
 */
export function parsePreviousCsv(text: string | undefined): CsvObject | undefined {
  if (text === undefined) return undefined;
  // One document, as the quick reader reads it (the CSV generate bundle
  // wrote); anything else gets the yaml library's verdict, as before.
  const quick = quickParseYaml(text);
  if (quick?.length === 1) return (quick[0] as CsvObject | null) ?? undefined;
  try {
    return (YAML.parse(text) as CsvObject | null) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decides `createdAt` so it changes only when the bundle does: with
 * SOURCE_DATE_EPOCH set it is that instant; otherwise a previous CSV (from
 * {@link parsePreviousCsv}) that is identical apart from createdAt keeps its
 * value; otherwise it is `now`.
 */
export function chooseCreatedAt(
  csv: CsvObject,
  previous: CsvObject | undefined,
  now: Date,
  sourceDateEpoch: string | undefined,
): string {
  if (sourceDateEpoch !== undefined && sourceDateEpoch !== '') {
    const seconds = Number(sourceDateEpoch);
    if (Number.isInteger(seconds) && seconds >= 0) return rfc3339(new Date(seconds * 1000));
  }
  const previousCreatedAt = previous?.metadata?.annotations?.[CREATED_AT];
  // Compared as data, not as rendered text: rendering both CSVs cost as much
  // as writing the bundle's CSV. The same decision: sortKeysDeep drops the
  // keys renderYaml leaves out (undefined values) and gives every object one
  // prototype, and what renders differently (1 and "1", true and "true")
  // differs as data too.
  if (
    previous &&
    previousCreatedAt &&
    isDeepStrictEqual(sortKeysDeep(withCreatedAt(previous, '')), sortKeysDeep(withCreatedAt(csv, '')))
  )
    return previousCreatedAt;
  return rfc3339(now);
}

/** A copy of the CSV with createdAt set (or removed when `value` is empty). */
export function withCreatedAt(csv: CsvObject, value: string): CsvObject {
  const annotations = { ...(csv.metadata.annotations ?? {}) };
  if (value) annotations[CREATED_AT] = value;
  else delete annotations[CREATED_AT];
  return { ...csv, metadata: { ...csv.metadata, annotations } };
}

/** RFC 3339 in UTC to the second, as Go's time.RFC3339 prints it. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

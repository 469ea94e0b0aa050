/**
 * An operator bundle as `run bundle` reads it from its image: the
 * registry+v1 layout, metadata/annotations.yaml naming the package and
 * channels, and manifests/ holding the CSV, the CRDs and other objects.
 */
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { UsageError } from '../../errors.js';
import type { ClusterObject } from '../../cluster/session.js';
import { byteOrder } from '../../byte-order.js';

const ANNOTATION = 'operators.operatorframework.io.bundle';

/** What a bundle image holds that the catalog needs. */
export interface Bundle {
  /** The image the bundle came from, as given on the command line. */
  image: string;
  packageName: string;
  channels: string[];
  defaultChannel?: string;
  /** The ClusterServiceVersion. */
  csv: ClusterObject;
  /** Every object under manifests/, the CSV included. */
  objects: ClusterObject[];
}

/** The CSV's name, e.g. memcached-operator.v0.0.1. */
export function csvName(bundle: Bundle): string {
  return bundle.csv.metadata!.name!;
}

/** The CSV's spec.version, e.g. 0.0.1. */
export function bundleVersion(bundle: Bundle): string {
  return String(bundle.csv.spec?.version ?? '');
}

/** Reads a bundle from an image's files; a UsageError when the image is not a registry+v1 bundle. */
export function readBundle(image: string, files: ReadonlyMap<string, Buffer>): Bundle {
  const notBundle = (problem: string): never => {
    throw new UsageError(
      `image ${image} is not an operator bundle: ${problem}`,
      'pass a bundle image built from `make bundle bundle-build` (bundle.Dockerfile)',
    );
  };
  const annotationsFile = files.get('metadata/annotations.yaml') ?? files.get('metadata/annotations.yml');
  if (!annotationsFile) return notBundle('it has no metadata/annotations.yaml');
  let annotations: Record<string, string>;
  try {
    annotations =
      (parseYaml(annotationsFile.toString('utf8')) as { annotations?: Record<string, string> } | null)?.annotations ??
      {};
  } catch (err) {
    return notBundle(`metadata/annotations.yaml is not valid YAML (${(err as Error).message.split('\n')[0]})`);
  }
  const packageName = annotations[`${ANNOTATION}.package.v1`];
  if (!packageName) return notBundle(`metadata/annotations.yaml has no ${ANNOTATION}.package.v1`);
  const channels = (annotations[`${ANNOTATION}.channels.v1`] ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (channels.length === 0) return notBundle(`metadata/annotations.yaml has no ${ANNOTATION}.channels.v1`);
  const manifestsDir = (annotations[`${ANNOTATION}.manifests.v1`] ?? 'manifests/')
    .replace(/^\.?\/+/, '')
    .replace(/\/?$/, '/');
  const objects: ClusterObject[] = [];
  for (const [path, data] of [...files].sort(([a], [b]) => byteOrder(a, b))) {
    if (!path.startsWith(manifestsDir) || !/\.(ya?ml|json)$/.test(path)) continue;
    for (const doc of parseAllDocuments(data.toString('utf8'))) {
      if (doc.errors.length > 0)
        return notBundle(`${path} is not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`);
      const value = doc.toJS() as ClusterObject | null;
      if (value && typeof value === 'object' && value.kind) objects.push(value);
    }
  }
  const csvs = objects.filter((obj) => obj.kind === 'ClusterServiceVersion');
  if (csvs.length !== 1) return notBundle(`${manifestsDir} holds ${csvs.length} ClusterServiceVersions, not one`);
  const csv = csvs[0]!;
  if (!csv.metadata?.name) return notBundle('its ClusterServiceVersion has no metadata.name');
  return {
    image,
    packageName,
    channels,
    defaultChannel: annotations[`${ANNOTATION}.channel.default.v1`] || undefined,
    csv,
    objects,
  };
}

/** The install modes the CSV supports (AllNamespaces, OwnNamespace, SingleNamespace, MultiNamespace). */
export function supportedInstallModes(bundle: Bundle): string[] {
  return ((bundle.csv.spec?.installModes ?? []) as { type: string; supported: boolean }[])
    .filter((mode) => mode.supported)
    .map((mode) => mode.type);
}

/**
 * The file-based catalog (FBC) `run bundle` serves with `opm serve`: one
 * olm.package, its olm.channel entries and one olm.bundle per bundle, with
 * the properties `opm render` gives a bundle (package and version, provided
 * and required GVKs, and every manifest as an olm.bundle.object, so OLM
 * installs from the catalog without unpacking the bundle image in a Job).
 */
import { UsageError } from '../../errors.js';
import { bundleVersion, csvName, type Bundle } from './bundle-image.js';

/** One FBC blob. */
export interface CatalogBlob {
  schema: 'olm.package' | 'olm.channel' | 'olm.bundle';
  name: string;
  package?: string;
  defaultChannel?: string;
  entries?: { name: string; replaces?: string }[];
  image?: string;
  properties?: { type: string; value: unknown }[];
  relatedImages?: { name: string; image: string }[];
}

/** A catalog with just this bundle, in each of its channels. */
export function catalogFor(bundle: Bundle): CatalogBlob[] {
  const channels = bundle.channels.map((channel): CatalogBlob => ({
    schema: 'olm.channel',
    name: channel,
    package: bundle.packageName,
    entries: [{ name: csvName(bundle) }],
  }));
  return [
    { schema: 'olm.package', name: bundle.packageName, defaultChannel: bundle.defaultChannel ?? bundle.channels[0] },
    ...channels,
    bundleBlob(bundle),
  ];
}

/**
 * The catalog with `bundle` added as the upgrade of `replaces` in each of the
 * bundle's channels (a channel it did not have yet starts with it).
 */
export function catalogWithUpgrade(catalog: readonly CatalogBlob[], bundle: Bundle, replaces: string): CatalogBlob[] {
  const name = csvName(bundle);
  if (catalog.some((blob) => blob.schema === 'olm.bundle' && blob.name === name)) {
    throw new UsageError(
      `bundle ${name} is already in the catalog of package ${bundle.packageName}`,
      'build and push a bundle with a new version (make bundle VERSION=... bundle-build bundle-push), then run bundle-upgrade with it',
    );
  }
  const next: CatalogBlob[] = catalog.map((blob) =>
    blob.entries ? { ...blob, entries: blob.entries.map((entry) => ({ ...entry })) } : { ...blob },
  );
  for (const channel of bundle.channels) {
    const existing = next.find((blob) => blob.schema === 'olm.channel' && blob.name === channel);
    if (existing) existing.entries!.push({ name, replaces });
    else
      next.push({ schema: 'olm.channel', name: channel, package: bundle.packageName, entries: [{ name, replaces }] });
  }
  next.push(bundleBlob(bundle));
  return next;
}

/** The catalog as `opm serve` reads a .json file: one JSON object per blob. */
export function serializeCatalog(catalog: readonly CatalogBlob[]): string {
  return catalog.map((blob) => JSON.stringify(blob)).join('\n') + '\n';
}

/** Parses what {@link serializeCatalog} wrote. */
export function parseCatalog(text: string): CatalogBlob[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CatalogBlob);
}

function bundleBlob(bundle: Bundle): CatalogBlob {
  type CrdDescription = { name?: string; version?: string; kind?: string };
  const crds = bundle.csv.spec?.customresourcedefinitions as
    { owned?: CrdDescription[]; required?: CrdDescription[] } | undefined;
  const gvks = (list: CrdDescription[] | undefined, type: string) =>
    (list ?? []).map((crd) => ({
      type,
      value: { group: (crd.name ?? '').split('.').slice(1).join('.'), kind: crd.kind, version: crd.version },
    }));
  const properties: { type: string; value: unknown }[] = [
    { type: 'olm.package', value: { packageName: bundle.packageName, version: bundleVersion(bundle) } },
    ...gvks(crds?.owned, 'olm.gvk'),
    ...gvks(crds?.required, 'olm.gvk.required'),
    ...bundle.objects.map((obj) => ({
      type: 'olm.bundle.object',
      value: { data: Buffer.from(JSON.stringify(obj)).toString('base64') },
    })),
  ];
  const related = ((bundle.csv.spec?.relatedImages ?? []) as { name?: string; image: string }[]).map((image) => ({
    name: image.name ?? '',
    image: image.image,
  }));
  return {
    schema: 'olm.bundle',
    name: csvName(bundle),
    package: bundle.packageName,
    image: bundle.image,
    properties,
    relatedImages: [{ name: '', image: bundle.image }, ...related],
  };
}

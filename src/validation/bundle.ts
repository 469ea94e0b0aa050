/**
 * The api's BundleValidator: owned CRDs against the CRDs shipped, duplicate
 * CRD versions, ServiceAccount manifests that clash with the CSV's, and the
 * compressed size OLM can store.
 */
import type { LoadedBundle } from './bundle-loader.js';
import { leafText, type CrdVersionDocument, type ListItem } from './documents.js';
import { GroupVersionKind, manifestResult, valueFinding, type ApiError, type ManifestResult } from './diagnostics.js';

/** OLM keeps a bundle in a ConfigMap, which caps it at 1 MiB compressed. */
export const MAX_COMPRESSED_BUNDLE_BYTES = 1 << 20;
/** Warn from 85 % of the cap, before a few more CRD versions break the install. */
const SIZE_WARNING_RATIO = 0.85;

/** Runs the bundle checks; the result is named after the CSV's spec.version as in the api. */
export function validateBundle(bundle: LoadedBundle): ManifestResult {
  const findings: ApiError[] = [];
  const spec = bundle.csv.doc.spec ?? {};
  const owned: GroupVersionKind[] = (spec.customresourcedefinitions?.owned ?? []).map((entry) => {
    const name = leafText(entry?.name ?? '');
    const dot = name.indexOf('.');
    return new GroupVersionKind(
      dot < 0 ? name : name.slice(dot + 1),
      leafText(entry?.version ?? ''),
      leafText(entry?.kind ?? ''),
    );
  });
  const shipped = new Map<string, GroupVersionKind>();
  for (const crd of bundle.crds) {
    const crdSpec = crd.doc.spec ?? {};
    const versions: string[] =
      Array.isArray(crdSpec.versions) && crdSpec.versions.length > 0
        ? (crdSpec.versions as ListItem<CrdVersionDocument>[]).map((version) => leafText(version?.name ?? ''))
        : [leafText(crdSpec.version ?? '')];
    for (const version of versions) {
      const key = new GroupVersionKind(leafText(crdSpec.group ?? ''), version, leafText(crdSpec.names?.kind ?? ''));
      if (shipped.has(key.key))
        findings.push(
          valueFinding(
            'Error',
            `duplicate CRD ${JSON.stringify(key.toString())} in bundle ${JSON.stringify(bundle.name)}`,
            key,
          ),
        );
      shipped.set(key.key, key);
    }
  }
  const ownedGroupKinds = new Set<string>();
  for (const key of owned) {
    if (!shipped.has(key.key))
      findings.push(
        valueFinding(
          'Error',
          `owned CRD ${JSON.stringify(key.toString())} not found in bundle ${JSON.stringify(bundle.name)}`,
          key,
        ),
      );
    else {
      shipped.delete(key.key);
      ownedGroupKinds.add(groupKind(key));
    }
  }
  // A CSV lists the versions it serves; the CRD's other versions (an old
  // storage version kept for conversion) belong to the same owned CRD.
  for (const key of shipped.values()) {
    if (ownedGroupKinds.has(groupKind(key))) continue;
    // OLM refuses to install a CRD no CSV owns, so this is an error, as in the api.
    findings.push(
      valueFinding(
        'Error',
        `CRD ${JSON.stringify(key.toString())} is present in bundle ${JSON.stringify(bundle.name)} but not defined in CSV`,
        key,
      ),
    );
  }
  findings.push(...serviceAccountClashes(bundle), ...sizeFindings(bundle));
  return manifestResult(leafText(spec.version ?? ''), findings);
}

function groupKind(key: GroupVersionKind): string {
  return `${key.group}\u0000${key.kind}`;
}

/** OLM creates the deployment's ServiceAccount itself; shipping one with the same name breaks ownership. */
function serviceAccountClashes(bundle: LoadedBundle): ApiError[] {
  const deployments = bundle.csv.doc.spec?.install?.spec?.deployments ?? [];
  const csvAccounts = new Set(
    deployments.map((deployment) => leafText(deployment?.spec?.template?.spec?.serviceAccountName ?? '')),
  );
  return bundle.objects
    .filter((object) => object.apiVersion === 'v1' && object.kind === 'ServiceAccount' && csvAccounts.has(object.name))
    .map((object) =>
      valueFinding(
        'Error',
        `invalid service account found in bundle. This service account ${object.name} in your bundle is not valid, because a service account with the same name was already specified in your CSV. If this was unintentional, please remove the service account manifest from your bundle. If it was intentional to specify a separate service account, please rename the SA in either the bundle manifest or the CSV.`,
        object.name,
      ),
    );
}

function sizeFindings(bundle: LoadedBundle): ApiError[] {
  const sizes = `size=~${formatBytes(bundle.compressedSize)} , max=${formatBytes(MAX_COMPRESSED_BUNDLE_BYTES)}. Bundle uncompressed size is ${formatBytes(bundle.size)}`;
  if (bundle.compressedSize > MAX_COMPRESSED_BUNDLE_BYTES) {
    return [valueFinding('Error', `maximum bundle compressed size with gzip size exceeded: ${sizes}`, bundle.name)];
  }
  if (bundle.compressedSize > MAX_COMPRESSED_BUNDLE_BYTES * SIZE_WARNING_RATIO) {
    return [valueFinding('Warning', `nearing maximum bundle compressed size with gzip: ${sizes}`, bundle.name)];
  }
  return [];
}

/** Decimal units with one decimal, as the api prints sizes ("948.6 kB", "1.0 MB"). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  let divisor = 1000;
  let exponent = 0;
  for (let n = Math.floor(bytes / 1000); n >= 1000; n = Math.floor(n / 1000)) {
    divisor *= 1000;
    exponent++;
  }
  return `${(bytes / divisor).toFixed(1)} ${'kMGTPE'[exponent]}B`;
}

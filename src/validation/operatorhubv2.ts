/**
 * The api's OperatorHubV2Validator: the CSV metadata OperatorHub.io needs
 * (provider, maintainers, links, version, icon, minKubeVersion) plus the
 * removed-API check of {@link validateDeprecatedApis}.
 */
import type { LoadedBundle } from './bundle-loader.js';
import { leafText, type ListItem } from './documents.js';
import { csvFinding, manifestResult, type ApiError, type ManifestResult } from './diagnostics.js';
import { MIN_KUBE_VERSION_WARNING } from './csv.js';
import { removedApiFindings } from './deprecated-apis.js';
import { parseSemverTolerant } from './names.js';

const ICON_MEDIA_TYPES = new Set(['image/gif', 'image/jpeg', 'image/png', 'image/svg+xml']);

/** Runs the OperatorHub checks with the optional `k8s-version` value. */
export function validateOperatorHubV2(
  bundle: LoadedBundle,
  optionalValues: ReadonlyMap<string, string>,
): ManifestResult {
  const csv = bundle.csv;
  const spec = csv.doc.spec ?? {};
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!spec.provider?.name) errors.push('csv.Spec.Provider.Name not specified');
  for (const maintainer of spec.maintainers ?? []) {
    if (!maintainer?.name || !maintainer?.email)
      errors.push('csv.Spec.Maintainers elements should contain both name and email');
    if (maintainer?.email) {
      const problem = mailAddressProblem(leafText(maintainer.email));
      if (problem) errors.push(`csv.Spec.Maintainers email ${leafText(maintainer.email)} is invalid: ${problem}`);
    }
  }
  for (const link of spec.links ?? []) {
    if (!link?.name || !link?.url) errors.push('csv.Spec.Links elements should contain both name and url');
    if (link?.url && !/^(\/|[A-Za-z][A-Za-z0-9+.-]*:)/.test(leafText(link.url))) {
      errors.push(
        `csv.Spec.Links url ${leafText(link.url)} is invalid: parse ${JSON.stringify(leafText(link.url))}: invalid URI for request`,
      );
    }
  }
  const version = parseSemverTolerant(leafText(spec.version ?? ''));
  if (!version || (version.major === 0 && version.minor === 0 && version.patch === 0 && version.text === '0.0.0'))
    errors.push('csv.Spec.Version must be set');
  if (Array.isArray(spec.icon)) {
    const icons = spec.icon as ListItem<{ mediatype?: unknown; base64data?: unknown }>[];
    if (icons.length !== 1) errors.push('csv.Spec.Icon should only have one element');
    const icon = icons[0] ?? {};
    if (!icon.mediatype || !icon.base64data)
      errors.push('csv.Spec.Icon elements should contain both data and mediatype');
    if (icon.mediatype && !ICON_MEDIA_TYPES.has(leafText(icon.mediatype)))
      errors.push(`csv.Spec.Icon ${leafText(icon.mediatype)} does not have a valid mediatype`);
  } else {
    warnings.push('csv.Spec.Icon not specified');
  }
  const minKubeVersion = leafText(spec.minKubeVersion ?? '');
  if (minKubeVersion.trim() === '') warnings.push(MIN_KUBE_VERSION_WARNING);
  else if (!parseSemverTolerant(minKubeVersion))
    errors.push(`csv.Spec.MinKubeVersion has an invalid value: ${minKubeVersion}`);
  const findings: ApiError[] = [
    ...errors.map((detail) => csvFinding('Error', detail, csv.name)),
    ...warnings.map((detail) => csvFinding('Warning', detail, csv.name)),
    ...removedApiFindings(bundle, optionalValues.get('k8s-version') ?? ''),
  ];
  return manifestResult(bundle.name, findings);
}

/** Go's net/mail address parsing, reduced to the failures a maintainer email hits. */
function mailAddressProblem(address: string): string | undefined {
  const angle = /<([^>]*)>\s*$/.exec(address);
  const addr = (angle ? angle[1]! : address).trim();
  if (!addr.includes('@')) return "mail: missing '@' or angle-addr";
  const [local, domain] = [addr.slice(0, addr.lastIndexOf('@')), addr.slice(addr.lastIndexOf('@') + 1)];
  if (local === '') return 'mail: invalid string';
  if (domain === '' || !/^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.[\]]+$/.test(domain)) return 'mail: no angle-addr';
  return undefined;
}

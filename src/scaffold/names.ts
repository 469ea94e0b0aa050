import { UsageError } from '../errors.js';
import {
  DNS1123_LABEL_MAX,
  DNS1123_SUBDOMAIN_MAX,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
} from '../validation/names.js';
import { pluralizeKind } from './plural.js';

// Kubernetes' own name rules (validation/names), because every name here ends
// up in an object name, an API group or a label.
const API_VERSION = /^v\d+((alpha|beta)\d+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/** Throws unless `domain` can be the suffix of API groups. */
export function validateDomain(domain: string): void {
  if (!isDns1123Subdomain(domain)) {
    throw new UsageError(
      `invalid domain "${domain}": it must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')`,
      'pass a domain such as --domain example.com',
    );
  }
}

/** Throws unless `name` can name the project (and prefix its objects). */
export function validateProjectName(name: string): void {
  if (!isDns1123Label(name)) {
    throw new UsageError(
      `invalid project name "${name}": it must be a DNS-1123 label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)`,
      'pass --project-name with a valid name such as --project-name memcached-operator',
    );
  }
}

/**
 * Throws unless `name` can be an OLM package name, which names the CSV and
 * its files (`<package>.clusterserviceversion.yaml`): a DNS-1123 label, as
 * the projectName it defaults to. `from` is where it came from: `--package`
 * or `PROJECT` (its projectName).
 */
export function validatePackageName(name: string, from: '--package' | 'PROJECT'): void {
  if (isDns1123Label(name)) return;
  throw new UsageError(
    `${from === 'PROJECT' ? 'the projectName in PROJECT, ' : ''}package name "${name}", is not a DNS-1123 label (at most 63 lowercase letters, digits and '-')`,
    from === 'PROJECT'
      ? 'fix projectName in PROJECT, or pass --package with a name such as memcached-operator'
      : 'pass a name such as --package memcached-operator',
  );
}

/** Throws unless `group` (possibly empty) plus `domain` (from PROJECT) forms a valid API group. */
export function validateGroup(group: string, domain: string): void {
  const qualified = group && domain ? `${group}.${domain}` : group || domain;
  if (group !== '' && !isDns1123Subdomain(group)) {
    throw new UsageError(
      `invalid group "${group}": it must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')`,
      'pass a group such as --group cache, or leave --group out to use the domain as the API group',
    );
  }
  if (domain !== '' && !isDns1123Subdomain(domain)) {
    throw new UsageError(
      `the PROJECT file's domain "${domain}" is not a DNS-1123 subdomain`,
      'set `domain:` in PROJECT to a domain such as example.com',
    );
  }
  if (!qualified.includes('.')) {
    // The API server requires a dot in a CRD's group; without a domain there is none.
    throw new UsageError(
      domain === ''
        ? `the PROJECT file has no domain, so the API group would be "${qualified}", and a CRD's group needs a dot`
        : `the API group "${qualified}" has no dot, which a CRD's group needs`,
      'add a line such as `domain: example.com` to PROJECT, or pass a --group with a dot',
    );
  }
  if (!isDns1123Subdomain(qualified)) {
    throw new UsageError(
      `invalid API group "${qualified}": it must be a DNS-1123 subdomain of at most ${DNS1123_SUBDOMAIN_MAX} characters`,
      group ? 'choose a shorter --group' : 'choose a shorter domain in PROJECT',
    );
  }
}

/** Throws unless `version` is a Kubernetes API version such as v1, v1alpha1 or v2beta3. */
export function validateVersion(version: string): void {
  if (!API_VERSION.test(version)) {
    throw new UsageError(
      `invalid version "${version}": an API version is "v" + a number, optionally followed by alpha<N> or beta<N>`,
      'pass a version such as --version v1 or --version v1alpha1',
    );
  }
}

/** Throws unless `kind` is PascalCase and a DNS-1035 label when lowercased. */
export function validateKind(kind: string): void {
  if (!KIND.test(kind)) {
    throw new UsageError(
      `invalid kind "${kind}": a kind starts with an uppercase letter and has only letters and digits`,
      'pass a PascalCase kind such as --kind Memcached',
    );
  }
  if (!isDns1035Label(kind.toLowerCase())) {
    throw new UsageError(
      `invalid kind "${kind}": it must be at most ${DNS1123_LABEL_MAX} characters`,
      'pass a shorter --kind',
    );
  }
}

/** Throws unless `plural` is a lowercase resource name. */
export function validatePlural(plural: string): void {
  if (!isDns1123Label(plural)) {
    throw new UsageError(
      `invalid plural "${plural}": a resource name is a DNS-1123 label (lowercase letters, digits and '-')`,
      'pass a lowercase plural such as --plural memcacheds',
    );
  }
}

/**
 * Throws unless the plural derived from `kind` (used when there is no --plural)
 * can name a resource. Two kinds pass {@link validateKind} but not this: a kind
 * near 63 characters, whose plural outgrows the limit, and a few acronyms that
 * flect keeps in upper case (Dns → dnsDNSes), which kubebuilder also rejects.
 */
export function validateDerivedPlural(kind: string): void {
  const plural = pluralize(kind);
  if (isDns1123Label(plural)) return;
  const lower = kind.toLowerCase();
  const example =
    lower.length <= DNS1123_LABEL_MAX - 2 ? ` such as --plural ${lower}${lower.endsWith('s') ? 'es' : 's'}` : '';
  if (plural.length > DNS1123_LABEL_MAX) {
    throw new UsageError(
      `kind "${kind}" gives the plural resource name "${plural}" of ${plural.length} characters, longer than the ${DNS1123_LABEL_MAX} a resource name may have`,
      `pass --plural with a name of at most ${DNS1123_LABEL_MAX} lowercase letters and digits, or a shorter --kind`,
    );
  }
  throw new UsageError(
    `kind "${kind}" gives the plural resource name "${plural}" (kubebuilder's pluralizer keeps the acronym in upper case), which is not a valid resource name`,
    `pass a lowercase --plural${example}`,
  );
}

/**
 * The plural resource name kubebuilder derives from a kind, which is
 * gobuffalo/flect's plural of the lowercased kind (Memcached → memcacheds,
 * Policy → policies, Redis → redis); see ./plural.ts.
 */
export function pluralize(kind: string): string {
  return pluralizeKind(kind);
}

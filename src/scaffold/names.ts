import { UsageError } from '../errors.js';
import { DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, isDns1035Label, isDns1123Label, isDns1123Subdomain } from '../validation/names.js';

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

/** Throws unless `group` (possibly empty) plus `domain` forms a valid API group. */
export function validateGroup(group: string, domain: string): void {
  const qualified = group ? `${group}.${domain}` : domain;
  if (group !== '' && !isDns1123Subdomain(group)) {
    throw new UsageError(
      `invalid group "${group}": it must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')`,
      'pass a group such as --group cache, or leave --group out to use the domain as the API group',
    );
  }
  if (!isDns1123Subdomain(qualified)) {
    throw new UsageError(
      `invalid API group "${qualified}": it must be a DNS-1123 subdomain of at most ${DNS1123_SUBDOMAIN_MAX} characters`,
      'choose a shorter --group',
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
    throw new UsageError(`invalid kind "${kind}": it must be at most ${DNS1123_LABEL_MAX} characters`, 'pass a shorter --kind');
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

// Plural rules in the spirit of gobuffalo/flect, which kubebuilder uses to
// derive resource names; the tables are ours, the outcomes match for the kinds
// people actually write.
const UNCOUNTABLE = new Set([
  'equipment', 'information', 'rice', 'money', 'species', 'series', 'fish', 'sheep', 'deer', 'news', 'data', 'metadata', 'moose', 'aircraft', 'software', 'hardware', 'feedback', 'traffic',
]);

const IRREGULAR: Record<string, string> = {
  person: 'people', man: 'men', woman: 'women', child: 'children', ox: 'oxen', mouse: 'mice', goose: 'geese', foot: 'feet', tooth: 'teeth',
  leaf: 'leaves', knife: 'knives', life: 'lives', wife: 'wives', half: 'halves', shelf: 'shelves', wolf: 'wolves', calf: 'calves',
  index: 'indices', vertex: 'vertices', matrix: 'matrices', appendix: 'appendices', criterion: 'criteria', phenomenon: 'phenomena',
  analysis: 'analyses', basis: 'bases', crisis: 'crises', thesis: 'theses', diagnosis: 'diagnoses', axis: 'axes',
  quiz: 'quizzes', potato: 'potatoes', tomato: 'tomatoes', hero: 'heroes', echo: 'echoes', veto: 'vetoes',
};

/** Suffix rules, longest first; each maps a singular ending to its plural ending. */
const SUFFIX_RULES: [string, string][] = [
  ['ss', 'sses'],
  ['sh', 'shes'],
  ['ch', 'ches'],
  ['us', 'uses'],
  ['ay', 'ays'],
  ['ey', 'eys'],
  ['oy', 'oys'],
  ['uy', 'uys'],
  ['y', 'ies'],
  ['x', 'xes'],
  ['z', 'zes'],
  ['s', 'ses'],
];

/**
 * The plural resource name kubebuilder derives from a kind: lowercased, then
 * pluralised (Memcached → memcacheds, Policy → policies, Status → statuses).
 */
export function pluralize(kind: string): string {
  const word = kind.toLowerCase();
  if (UNCOUNTABLE.has(word)) return word;
  for (const [singular, plural] of Object.entries(IRREGULAR)) {
    // Compound kinds end in the irregular word: "Salesperson" → "salespeople".
    if (word === singular || (word.endsWith(singular) && singular.length >= 4)) return word.slice(0, word.length - singular.length) + plural;
  }
  for (const [ending, replacement] of SUFFIX_RULES) {
    if (word.endsWith(ending)) return word.slice(0, word.length - ending.length) + replacement;
  }
  return `${word}s`;
}

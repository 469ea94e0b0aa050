/**
 * Kubernetes name and version rules, in one place for the scaffolder, the
 * generators and the validators, with the exact messages of
 * k8s.io/apimachinery's validation helpers and blang/semver.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** The longest DNS-1123 (and DNS-1035) label. */
export const DNS1123_LABEL_MAX = 63;
/** The longest DNS-1123 subdomain. */
export const DNS1123_SUBDOMAIN_MAX = 253;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Whether `value` is a DNS-1123 label (lowercase alphanumerics and '-', at most 63). */
export function isDns1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(value);
}

/** Whether `value` is a DNS-1123 subdomain (dot-separated labels, at most 253). */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= DNS1123_SUBDOMAIN_MAX && DNS1123_SUBDOMAIN.test(value);
}

/** Whether `value` is a DNS-1035 label (a DNS-1123 label that starts with a letter). */
export function isDns1035Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX && DNS1035_LABEL.test(value);
}

/** Problems with `value` as a DNS-1123 subdomain (empty when valid). */
export function dns1123SubdomainProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) problems.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) {
    problems.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return problems;
}

/** Problems with `value` as a DNS-1035 label (empty when valid). */
export function dns1035LabelProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) problems.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(value)) {
    problems.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return problems;
}

/** Problems with `value` as a label value (empty when valid). */
export function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(value)) {
    problems.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
  }
  return problems;
}

/** Problems with `value` as a qualified name such as a label key (empty when valid). */
export function qualifiedNameProblems(value: string): string[] {
  const parts = value.split('/');
  let name = value;
  const problems: string[] = [];
  if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    name = rest;
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else problems.push(...dns1123SubdomainProblems(prefix).map((problem) => `prefix part ${problem}`));
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  if (name.length > 0 && !QUALIFIED_NAME_PART.test(name)) {
    problems.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  }
  return problems;
}

/**
 * Why `name` cannot name an object of `kind` in `group`, by the rule the
 * API server applies to it, or undefined when it can: RBAC objects take any
 * path segment (ValidatePathSegmentName: not `.` or `..`, no `/` or `%`,
 * so `system:controller:x` is fine), Services and Namespaces a DNS label,
 * everything else a DNS-1123 subdomain. Every rule keeps a name usable as
 * a file name, which is what `generate bundle` makes of it.
 */
export function objectNameProblem(group: string, kind: string, name: string): string | undefined {
  if (group === 'rbac.authorization.k8s.io') {
    if (name === '' || name === '.' || name === '..') return `may not be ${JSON.stringify(name)}`;
    return /[/%]/.test(name) ? "may not contain '/' or '%'" : undefined;
  }
  if (group === '' && kind === 'Service')
    return isDns1035Label(name)
      ? undefined
      : "must be a DNS-1035 label (at most 63 lowercase letters, digits and '-', starting with a letter)";
  if (group === '' && kind === 'Namespace')
    return isDns1123Label(name) ? undefined : "must be a DNS-1123 label (at most 63 lowercase letters, digits and '-')";
  return isDns1123Subdomain(name) ? undefined : "must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')";
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** A parsed semantic version (build metadata dropped, pre-release kept for display only). */
export interface SemanticVersion {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

/** Strict semver (blang/semver `Parse`): no leading "v", all three parts, no leading zeros. */
export function parseSemver(value: string): SemanticVersion | undefined {
  const match = SEMVER.exec(value);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), text: value };
}

/** Tolerant semver (blang/semver `ParseTolerant`): trims, drops a leading "v", pads "1.22" to "1.22.0". */
export function parseSemverTolerant(value: string): SemanticVersion | undefined {
  let text = value.trim().replace(/^v/, '');
  const core = text.split(/[-+]/, 1)[0]!;
  const parts = core.split('.');
  if (parts.length < 3 && parts.every((part) => /^\d+$/.test(part))) {
    while (parts.length < 3) parts.push('0');
    text = parts.map((part) => String(Number(part))).join('.') + text.slice(core.length);
  }
  return parseSemver(text);
}

/** Whether `a` >= `b`, comparing major.minor.patch. */
export function versionAtLeast(a: SemanticVersion, b: SemanticVersion): boolean {
  if (a.major !== b.major) return a.major > b.major;
  if (a.minor !== b.minor) return a.minor > b.minor;
  return a.patch >= b.patch;
}

/**
 * The optional validators operator-sdk exposes, selected with a Kubernetes
 * label selector (`--select-optional name=capabilities`, `suite=operatorframework`).
 */
import type { LoadedBundle } from './bundle-loader.js';
import type { ManifestResult } from './diagnostics.js';
import { validateCapabilities } from './capabilities.js';
import { validateCategories } from './categories.js';
import { validateDeprecatedApis } from './deprecated-apis.js';
import { validateGoodPractices } from './good-practices.js';
import { validateOperatorHubV2 } from './operatorhubv2.js';

/** One selectable validator. */
export interface OptionalValidator {
  name: string;
  labels: Readonly<Record<string, string>>;
  description: string;
  run(bundle: LoadedBundle, optionalValues: ReadonlyMap<string, string>): ManifestResult;
}

/** The validators `--select-optional` can pick, in the order they run. */
export const OPTIONAL_VALIDATORS: readonly OptionalValidator[] = [
  { name: 'operatorhubv2', labels: { name: 'operatorhubv2', suite: 'operatorframework' }, description: 'OperatorHub.io metadata validation', run: validateOperatorHubV2 },
  { name: 'capabilities', labels: { name: 'capabilities', suite: 'operatorframework' }, description: 'OperatorHub.io capabilities annotation validation', run: (bundle) => validateCapabilities(bundle) },
  { name: 'categories', labels: { name: 'categories', suite: 'operatorframework' }, description: 'OperatorHub.io categories annotation validation', run: (bundle) => validateCategories(bundle) },
  { name: 'alpha-deprecated-apis', labels: { name: 'alpha-deprecated-apis', suite: 'operatorframework' }, description: 'Deprecated APIs validation (APIs removed in Kubernetes 1.22, 1.25 and 1.26); pass --optional-values=k8s-version=<version> to check against a cluster version', run: validateDeprecatedApis },
  { name: 'good-practices', labels: { name: 'good-practices', suite: 'operatorframework' }, description: 'Good practices validation (resource requests, channel names, CRD descriptions, CSV name)', run: (bundle) => validateGoodPractices(bundle) },
];

/** A bad `--select-optional` value. */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

/** Parses a label selector (=, ==, !=, in, notin, exists, !exists; comma means AND). */
export function parseSelector(selector: string): (labels: Readonly<Record<string, string>>) => boolean {
  const requirements: Requirement[] = [];
  for (const raw of splitTopLevel(selector)) {
    const term = raw.trim();
    if (term === '') continue;
    let match: RegExpExecArray | null;
    if ((match = /^([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)$/.exec(term))) {
      const [, key, op, value] = match as unknown as [string, string, string, string];
      requirements.push(op === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value);
    } else if ((match = /^([\w./-]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term))) {
      const [, key, op, list] = match as unknown as [string, string, string, string];
      const values = new Set(list.split(',').map((value) => value.trim()));
      requirements.push(op === 'in' ? (labels) => key in labels && values.has(labels[key]!) : (labels) => !(key in labels) || !values.has(labels[key]!));
    } else if ((match = /^(!?)([\w./-]+)$/.exec(term))) {
      const [, negate, key] = match as unknown as [string, string, string];
      requirements.push(negate ? (labels) => !(key in labels) : (labels) => key in labels);
    } else {
      throw new SelectorError(`invalid label selector ${JSON.stringify(selector)}: cannot parse ${JSON.stringify(term)}`);
    }
  }
  return (labels) => requirements.length > 0 && requirements.every((requirement) => requirement(labels));
}

function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of selector) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

/** The validators a selector picks; an empty selector picks none, one that matches nothing is an error. */
export function selectValidators(selector: string | undefined): OptionalValidator[] {
  if (!selector) return [];
  const matches = parseSelector(selector);
  const selected = OPTIONAL_VALIDATORS.filter((validator) => matches(validator.labels));
  if (selected.length === 0) throw new SelectorError(`selector ${JSON.stringify(selector)} does not match any validator labels`);
  return selected;
}

/** The `--list-optional` table: NAME, LABELS, DESCRIPTION, one extra row per further label (like Go's tabwriter). */
export function optionalValidatorTable(): string {
  const rows: [string, string, string][] = [['NAME', 'LABELS', 'DESCRIPTION']];
  for (const validator of OPTIONAL_VALIDATORS) {
    const labels = Object.entries(validator.labels).map(([key, value]) => `${key}=${value}`);
    rows.push([validator.name, labels[0] ?? '', validator.description]);
    for (const label of labels.slice(1)) rows.push(['', label, '']);
  }
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `${row[0].padEnd(widths[0]! + 4)}${row[1].padEnd(widths[1]! + 4)}${row[2]}`.trimEnd()).join('\n') + '\n';
}

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
import { matchesLabels, parseSelector as parseLabelSelector, type Requirement } from '../runtime/api/labels.js';
import { UsageError } from '../errors.js';

/** One selectable validator. */
export interface OptionalValidator {
  name: string;
  labels: Readonly<Record<string, string>>;
  description: string;
  run(bundle: LoadedBundle, optionalValues: ReadonlyMap<string, string>): ManifestResult;
}

/** The validators `--select-optional` can pick, in the order they run. */
export const OPTIONAL_VALIDATORS: readonly OptionalValidator[] = [
  {
    name: 'operatorhubv2',
    labels: { name: 'operatorhubv2', suite: 'operatorframework' },
    description: 'OperatorHub.io metadata validation',
    run: validateOperatorHubV2,
  },
  {
    name: 'capabilities',
    labels: { name: 'capabilities', suite: 'operatorframework' },
    description: 'OperatorHub.io capabilities annotation validation',
    run: (bundle) => validateCapabilities(bundle),
  },
  {
    name: 'categories',
    labels: { name: 'categories', suite: 'operatorframework' },
    description: 'OperatorHub.io categories annotation validation',
    run: (bundle) => validateCategories(bundle),
  },
  {
    name: 'alpha-deprecated-apis',
    labels: { name: 'alpha-deprecated-apis', suite: 'operatorframework' },
    description:
      'Deprecated APIs validation (APIs removed in Kubernetes 1.22, 1.25 and 1.26); pass --optional-values=k8s-version=<version> to check against a cluster version',
    run: validateDeprecatedApis,
  },
  {
    name: 'good-practices',
    labels: { name: 'good-practices', suite: 'operatorframework' },
    description: 'Good practices validation (resource requests, channel names, CRD descriptions, CSV name)',
    run: (bundle) => validateGoodPractices(bundle),
  },
];

/** The fix for every bad `--select-optional` value. */
const SELECTOR_FIX = 'run `ts-operator-sdk bundle validate --list-optional` to see the validators and their labels';

/** An operator-sdk optional validator this tool does not run, with why and what to run instead. */
interface UnsupportedValidator {
  name: string;
  labels: Readonly<Record<string, string>>;
  reason: string;
  fix: string;
}

/**
 * operator-sdk's other optional validators (same labels). Selecting one is an
 * error that says so, rather than a selector that "matches nothing".
 */
export const UNSUPPORTED_VALIDATORS: readonly UnsupportedValidator[] = [
  {
    name: 'operatorhub',
    labels: { name: 'operatorhub' },
    reason: 'it is deprecated in operator-framework/api',
    fix: 'select suite=operatorframework instead: operatorhubv2, capabilities and categories run its checks',
  },
  {
    name: 'community',
    labels: { name: 'community' },
    reason: 'it is deprecated in operator-framework/api, whose community checks moved to ocp-olm-catalog-validator',
    fix: 'run github.com/redhat-openshift-ecosystem/ocp-olm-catalog-validator on the bundle',
  },
  {
    name: 'multiarch',
    labels: { name: 'multiarch' },
    reason: "it pulls the operator's images from a registry to read their platforms",
    fix: 'run `operator-sdk bundle validate <bundle-dir> --select-optional name=multiarch`',
  },
];

/**
 * Compiles a label selector (=, ==, !=, in, notin, exists, !exists; comma
 * means AND) into a matcher, with the same parser the runtime's label
 * predicates use. A selector without terms matches nothing.
 */
export function parseSelector(selector: string): (labels: Readonly<Record<string, string>>) => boolean {
  let requirements: Requirement[];
  try {
    requirements = parseLabelSelector(selector);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), SELECTOR_FIX);
  }
  return (labels) => requirements.length > 0 && matchesLabels(requirements, labels);
}

/** The validators a selector picks; an empty selector picks none, one that matches nothing is an error. */
export function selectValidators(selector: string | undefined): OptionalValidator[] {
  if (!selector) return [];
  const matches = parseSelector(selector);
  const unsupported = UNSUPPORTED_VALIDATORS.find((validator) => matches(validator.labels));
  if (unsupported) {
    throw new UsageError(
      `the ${unsupported.name} validator (selected by ${JSON.stringify(selector)}) is not supported by ts-operator-sdk: ${unsupported.reason}`,
      unsupported.fix,
    );
  }
  const selected = OPTIONAL_VALIDATORS.filter((validator) => matches(validator.labels));
  if (selected.length === 0)
    throw new UsageError(`selector ${JSON.stringify(selector)} does not match any validator labels`, SELECTOR_FIX);
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
  return (
    rows
      .map((row) => `${row[0].padEnd(widths[0]! + 4)}${row[1].padEnd(widths[1]! + 4)}${row[2]}`.trimEnd())
      .join('\n') + '\n'
  );
}

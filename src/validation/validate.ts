/**
 * Runs operator-sdk's `bundle validate` checks on a bundle directory, in its
 * order: format, then the bundle, CSV (with OLM's webhook rules) and CRD
 * validators with the object checks folded into the CSV's result, then the
 * selected optional validators.
 */
import { resolve } from 'node:path';
import { loadBundle } from './bundle-loader.js';
import { validateBundle } from './bundle.js';
import { validateCrd } from './crd.js';
import { validateCsv } from './csv.js';
import { addFindings, manifestResult, type ManifestResult } from './diagnostics.js';
import { formatErrorLine } from './format.js';
import { validateObjects } from './objects.js';
import { selectValidators } from './optional.js';
import { ValidationReport } from './report.js';
import { validateWebhookDefinitions } from './webhooks.js';

/** What to validate and how. */
export interface BundleValidationRequest {
  /** The bundle directory, relative to `cwd` or absolute. */
  directory: string;
  cwd: string;
  /** A label selector for optional validators; empty runs none. */
  selector?: string;
  /** `--optional-values`, e.g. k8s-version → 1.25. */
  optionalValues?: ReadonlyMap<string, string>;
}

/**
 * Validates a bundle and returns the report. Throws a UsageError when the
 * selector is bad or matches nothing (checked first), or when the bundle cannot be read.
 */
export function validateBundleDirectory(request: BundleValidationRequest): ValidationReport {
  // Checked first so a typo in the selector fails fast, as operator-sdk does.
  const optional = selectValidators(request.selector);
  const bundle = loadBundle(request.directory, request.cwd);
  const report = new ValidationReport();
  const formatError = formatErrorLine(bundle, resolve(request.cwd, bundle.directory), request.cwd);
  if (formatError) report.addError(formatError);

  const csvResult = validateCsv(bundle.csv);
  addFindings(csvResult, validateWebhookDefinitions(bundle));
  const results: ManifestResult[] = [validateBundle(bundle), csvResult, ...bundle.crds.map(validateCrd)];
  // operator-sdk merges the object checks into the result that shares the bundle's name: the CSV's.
  const objectResult = manifestResult(bundle.name, validateObjects(bundle));
  const sameName = results.find((result) => result.name === objectResult.name);
  if (sameName) addFindings(sameName, [...objectResult.errors, ...objectResult.warnings]);
  else results.push(objectResult);
  report.addManifestResults(results);

  const values = request.optionalValues ?? new Map<string, string>();
  report.addManifestResults(optional.map((validator) => validator.run(bundle, values)));
  return report;
}

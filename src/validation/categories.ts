/**
 * The api's StandardCategoriesValidator: each comma-separated `categories`
 * value is a standard OperatorHub category, or one of a custom list named by
 * the OPERATOR_BUNDLE_CATEGORIES environment variable.
 */
import { readFileSync } from 'node:fs';
import type { LoadedBundle } from './bundle-loader.js';
import { csvFinding, goQuote, manifestResult, type ApiError, type ManifestResult } from './diagnostics.js';

/** The categories OperatorHub.io lists. */
export const STANDARD_CATEGORIES: ReadonlySet<string> = new Set([
  'AI/Machine Learning',
  'Application Runtime',
  'Big Data',
  'Cloud Provider',
  'Developer Tools',
  'Database',
  'Integration & Delivery',
  'Logging & Tracing',
  'Monitoring',
  'Modernization & Migration',
  'Networking',
  'OpenShift Optional',
  'Security',
  'Storage',
  'Streaming & Messaging',
  'Observability',
]);

/** Checks the CSV's categories annotation; `env` supplies OPERATOR_BUNDLE_CATEGORIES. */
export function validateCategories(bundle: LoadedBundle, env: NodeJS.ProcessEnv = process.env): ManifestResult {
  const annotations = bundle.csv.doc.metadata?.annotations ?? {};
  const findings: ApiError[] = [];
  if ('categories' in annotations) {
    let allowed = STANDARD_CATEGORIES;
    let setName = 'standard';
    const customFile = env.OPERATOR_BUNDLE_CATEGORIES;
    if (customFile) {
      try {
        const parsed = JSON.parse(readFileSync(customFile, 'utf8')) as { categories?: unknown };
        allowed = new Set(Array.isArray(parsed.categories) ? parsed.categories.map(String) : []);
        setName = 'custom';
      } catch (error) {
        findings.push(
          csvFinding(
            'Error',
            `could not extract custom categories from ${customFile}: ${error instanceof Error ? error.message : String(error)}`,
            bundle.csv.name,
          ),
        );
        return manifestResult(bundle.name, findings);
      }
    }
    for (const category of String(annotations.categories).split(',')) {
      if (!allowed.has(category.trim())) {
        findings.push(
          csvFinding(
            'Error',
            `csv.Metadata.Annotations["categories"] value ${goQuote(category)} is not in the set of ${setName} categories`,
            bundle.csv.name,
          ),
        );
      }
    }
  }
  return manifestResult(bundle.name, findings);
}

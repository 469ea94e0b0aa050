/** The api's StandardCapabilitiesValidator: the `capabilities` annotation is one of OLM's five levels. */
import type { LoadedBundle } from './bundle-loader.js';
import { csvFinding, goQuote, manifestResult, type ManifestResult } from './diagnostics.js';

/** The operator capability levels OperatorHub shows. */
export const CAPABILITY_LEVELS: ReadonlySet<string> = new Set([
  'Basic Install',
  'Seamless Upgrades',
  'Full Lifecycle',
  'Deep Insights',
  'Auto Pilot',
]);

/** Checks the CSV's capabilities annotation. */
export function validateCapabilities(bundle: LoadedBundle): ManifestResult {
  const annotations = bundle.csv.doc.metadata?.annotations ?? {};
  const findings = [];
  if ('capabilities' in annotations && !CAPABILITY_LEVELS.has(String(annotations.capabilities))) {
    findings.push(
      csvFinding(
        'Error',
        `csv.Metadata.Annotations.Capabilities ${goQuote(String(annotations.capabilities))} is not a valid capabilities level`,
        bundle.csv.name,
      ),
    );
  }
  return manifestResult(bundle.name, findings);
}

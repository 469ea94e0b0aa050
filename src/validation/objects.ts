/**
 * Checks on the bundle's other objects (operator-sdk `ValidateBundleContent`):
 * only kinds OLM can install, and metadata that would apply cleanly with no
 * namespace (OLM picks the namespace at install time).
 */
import type { LoadedBundle, BundleObject } from './bundle-loader.js';
import { GroupVersionKind, goValue, valueFinding, type ApiError } from './diagnostics.js';
import { leafText } from './documents.js';
import { BUNDLE_SUPPORTED_KINDS } from './bundle-kinds.js';
import { labelValueProblems, qualifiedNameProblems } from './names.js';

/** Findings for every object that is neither the CSV nor a CRD. */
export function validateObjects(bundle: LoadedBundle): ApiError[] {
  const findings: ApiError[] = [];
  for (const object of bundle.objects) {
    if (object.kind === 'ClusterServiceVersion' || object.kind === 'CustomResourceDefinition') continue;
    if (!BUNDLE_SUPPORTED_KINDS.has(object.kind)) {
      findings.push(
        valueFinding(
          'Error',
          `unsupported media type ${bundle.mediaType} for bundle object`,
          GroupVersionKind.of(object.apiVersion, object.kind),
        ),
      );
      continue;
    }
    const problems = objectMetaProblems(object);
    if (problems.length > 0) {
      const aggregate = problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`;
      findings.push(
        valueFinding('Error', `error validating object: ${aggregate}. &{${goValue(object.doc)}}`, object.name),
      );
    }
  }
  return findings;
}

/** k8s ValidateObjectMetaAccessor with no namespace allowed and no name format rule, as operator-sdk calls it. */
function objectMetaProblems(object: BundleObject): string[] {
  const metadata = object.doc.metadata ?? {};
  const problems: string[] = [];
  if (!metadata.name && !metadata.generateName)
    problems.push('metadata.name: Required value: name or generateName is required');
  if (metadata.namespace) problems.push('metadata.namespace: Forbidden: not allowed on this type');
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    for (const problem of qualifiedNameProblems(key))
      problems.push(`metadata.labels: Invalid value: ${JSON.stringify(key)}: ${problem}`);
    for (const problem of labelValueProblems(leafText(value ?? '')))
      problems.push(`metadata.labels: Invalid value: ${JSON.stringify(leafText(value ?? ''))}: ${problem}`);
  }
  for (const key of Object.keys(metadata.annotations ?? {})) {
    for (const problem of qualifiedNameProblems(key.toLowerCase()))
      problems.push(`metadata.annotations: Invalid value: ${JSON.stringify(key)}: ${problem}`);
  }
  return problems;
}

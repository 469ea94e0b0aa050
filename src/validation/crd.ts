/**
 * The api's CRDValidator: apiextensions' CRD validation, minus errors in
 * openAPIV3Schema and status (the api drops those). Each finding carries the
 * k8s field error as its detail, as the api wraps it.
 */
import type { BundleObject } from './bundle-loader.js';
import { manifestResult, type ApiError, type ManifestResult } from './diagnostics.js';
import { dns1035LabelProblems, dns1123SubdomainProblems } from './names.js';

/** Runs the CRD checks on one CRD; the result is named after the CRD. */
export function validateCrd(crd: BundleObject): ManifestResult {
  const spec = (crd.doc.spec ?? {}) as Record<string, any>;
  const names = (spec.names ?? {}) as Record<string, any>;
  const findings: ApiError[] = [];
  const group = String(spec.group ?? '');
  const plural = String(names.plural ?? '');
  if (crd.name !== `${plural}.${group}`) findings.push(invalid('metadata.name', crd.name, 'must be spec.names.plural+"."+spec.group'));
  if (group === '') findings.push(required('spec.group'));
  else if (dns1123SubdomainProblems(group).length > 0) findings.push(invalid('spec.group', group, dns1123SubdomainProblems(group).join(', ')));
  else if (!group.includes('.')) findings.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  const scope = String(spec.scope ?? '');
  if (scope !== 'Cluster' && scope !== 'Namespaced') {
    findings.push({ level: 'Error', field: 'spec.scope', badValue: scope, detail: `spec.scope: Unsupported value: ${JSON.stringify(scope)}: supported values: "Cluster", "Namespaced"` });
  }
  for (const key of ['plural', 'kind'] as const) {
    if (String(names[key] ?? '') === '') findings.push(required(`spec.names.${key}`));
  }
  // apiextensions/v1 dropped pruning opt-outs at the top level.
  if (spec.preserveUnknownFields === true) {
    findings.push(invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  const versions: any[] = Array.isArray(spec.versions) ? spec.versions : [];
  const seen = new Set<string>();
  versions.forEach((version, index) => {
    const name = String(version?.name ?? '');
    const problems = dns1035LabelProblems(name);
    if (problems.length > 0) findings.push(invalid(`spec.versions[${index}].name`, name, problems.join(', ')));
    if (seen.has(name)) findings.push(invalid('spec.versions', versions, 'must appear only once'));
    seen.add(name);
  });
  if (versions.filter((version) => version?.storage === true).length !== 1) {
    findings.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  }
  if (versions.length > 0 && !versions.some((version) => version?.served === true)) {
    findings.push(invalid('spec.versions', versions, 'must have at least one version marked as served'));
  }
  return manifestResult(crd.name, findings);
}

/**
 * k8s prints scalar bad values as Go does (%q for strings); structured
 * values (the versions list) are printed as compact JSON, where Go would
 * dump its internal struct syntax.
 */
function invalid(field: string, value: unknown, detail: string): ApiError {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return { level: 'Error', field, badValue: shown, detail: `${field}: Invalid value: ${JSON.stringify(value)}: ${detail}` };
}

function required(field: string): ApiError {
  return { level: 'Error', field, badValue: '', detail: `${field}: Required value` };
}

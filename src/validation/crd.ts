/**
 * The api's CRDValidator: apiextensions' CRD validation, minus errors in
 * openAPIV3Schema and status (the api drops those). Each finding carries the
 * k8s field error as its detail, as the api wraps it.
 *
 * A v1beta1 CRD is validated as the api does it: with v1beta1's defaults
 * (`preserveUnknownFields` true when absent, which is refused), and without
 * the step that moves per-version fields all set alike to the top level
 * (only v1's conversion does that), so a v1-shaped CRD relabelled v1beta1 is
 * refused too.
 */
import { isDeepStrictEqual } from 'node:util';
import type { BundleObject } from './bundle-loader.js';
import { leafText, type CrdSpecDocument, type CrdVersionDocument, type ListItem } from './documents.js';
import { manifestResult, type ApiError, type ManifestResult } from './diagnostics.js';
import { dns1035LabelProblems, dns1123SubdomainProblems } from './names.js';

/** Runs the CRD checks on one CRD; the result is named after the CRD. */
export function validateCrd(crd: BundleObject<CrdSpecDocument>): ManifestResult {
  const v1beta1 = crd.apiVersion === V1BETA1;
  const spec = v1beta1 ? withV1beta1Defaults(crd.doc.spec) : (crd.doc.spec ?? {});
  const names = spec.names ?? {};
  const findings: ApiError[] = [];
  const group = leafText(spec.group ?? '');
  const plural = leafText(names.plural ?? '');
  if (crd.name !== `${plural}.${group}`)
    findings.push(invalid('metadata.name', crd.name, 'must be spec.names.plural+"."+spec.group'));
  if (group === '') findings.push(required('spec.group'));
  else if (dns1123SubdomainProblems(group).length > 0)
    findings.push(invalid('spec.group', group, dns1123SubdomainProblems(group).join(', ')));
  else if (!group.includes('.'))
    findings.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  const scope = leafText(spec.scope ?? '');
  if (scope !== 'Cluster' && scope !== 'Namespaced') {
    findings.push({
      level: 'Error',
      field: 'spec.scope',
      badValue: scope,
      detail: `spec.scope: Unsupported value: ${JSON.stringify(scope)}: supported values: "Cluster", "Namespaced"`,
    });
  }
  for (const key of ['plural', 'kind'] as const) {
    if (leafText(names[key] ?? '') === '') findings.push(required(`spec.names.${key}`));
  }
  // apiextensions/v1 dropped pruning opt-outs at the top level (v1beta1 still defaults to one).
  if (spec.preserveUnknownFields === true) {
    findings.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  const versions = Array.isArray(spec.versions) ? (spec.versions as ListItem<CrdVersionDocument>[]) : [];
  if (v1beta1) findings.push(...v1beta1Findings(spec, versions));
  const seen = new Set<string>();
  versions.forEach((version, index) => {
    const name = leafText(version?.name ?? '');
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

const V1BETA1 = 'apiextensions.k8s.io/v1beta1';

/** The v1beta1 defaults that matter to validation (apiextensions' SetObjectDefaults_CustomResourceDefinition). */
function withV1beta1Defaults(raw: CrdSpecDocument | undefined): CrdSpecDocument {
  const spec = { ...(raw ?? {}) };
  const versions = Array.isArray(spec.versions) ? (spec.versions as ListItem<CrdVersionDocument>[]) : [];
  if (!spec.version && versions.length > 0) spec.version = versions[0]?.name;
  if (versions.length === 0 && spec.version) spec.versions = [{ name: spec.version, served: true, storage: true }];
  spec.scope ||= 'Namespaced';
  spec.conversion ??= { strategy: 'None' };
  spec.preserveUnknownFields ??= true;
  return spec;
}

/**
 * The checks a v1 CRD cannot fail: its conversion to the internal form moves
 * per-version fields that are all alike to the top level, and it has no
 * top-level schema, subresources, columns or version of its own.
 */
function v1beta1Findings(spec: CrdSpecDocument, versions: readonly ListItem<CrdVersionDocument>[]): ApiError[] {
  const findings: ApiError[] = [];
  const perVersion = [
    { key: 'schema', top: 'validation', plural: 'schemas' },
    { key: 'subresources', top: 'subresources', plural: 'subresources' },
    { key: 'additionalPrinterColumns', top: 'additionalPrinterColumns', plural: 'additionalPrinterColumns' },
  ] as const;
  for (const field of perVersion) {
    const top = spec[field.top];
    const topSet = field.key === 'additionalPrinterColumns' ? Array.isArray(top) && top.length > 0 : top != null;
    if (topSet && versions.some((version) => version?.[field.key] != null)) {
      findings.push(forbidden(`spec.${field.top}`, `top-level and per-version ${field.plural} are mutually exclusive`));
    }
  }
  for (const field of perVersion) {
    const first = versions[0]?.[field.key];
    if (
      versions.length > 0 &&
      versions.every((version) => version?.[field.key] != null && isDeepStrictEqual(version[field.key], first))
    ) {
      findings.push(
        invalid(
          'spec.versions',
          versions,
          `per-version ${field.plural} may not all be set to identical values (top-level ${field.top} should be used instead)`,
        ),
      );
    }
  }
  if (spec.version && versions.length > 0 && versions[0]?.name !== spec.version) {
    findings.push(invalid('spec.version', leafText(spec.version), 'must match the first version in spec.versions'));
  }
  const strategy = leafText(spec.conversion?.strategy ?? 'None');
  if (strategy !== 'None' && spec.preserveUnknownFields === true) {
    findings.push(invalid('spec.conversion.strategy', strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  return findings;
}

/**
 * k8s prints scalar bad values as Go does (%q for strings); structured
 * values (the versions list) are printed as compact JSON, where Go would
 * dump its internal struct syntax.
 */
function invalid(field: string, value: unknown, detail: string): ApiError {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return {
    level: 'Error',
    field,
    badValue: shown,
    detail: `${field}: Invalid value: ${JSON.stringify(value)}: ${detail}`,
  };
}

function required(field: string): ApiError {
  return { level: 'Error', field, badValue: '', detail: `${field}: Required value` };
}

function forbidden(field: string, detail: string): ApiError {
  return { level: 'Error', field, badValue: '', detail: `${field}: Forbidden: ${detail}` };
}

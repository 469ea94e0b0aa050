/**
 * The api's CSVValidator: name and replaces format, example annotations,
 * install modes, minKubeVersion, required fields, annotation-name case, and
 * apiVersion/kind. Messages match operator-framework/api.
 */
import type { BundleObject } from './bundle-loader.js';
import { leafText, type CsvSpecDocument, type ListItem, type ManifestDocument } from './documents.js';
import {
  csvFinding,
  GroupVersionKind,
  manifestResult,
  missingField,
  valueFinding,
  type ApiError,
  type ManifestResult,
} from './diagnostics.js';
import { dns1123SubdomainProblems, labelValueProblems, parseSemver } from './names.js';

/** The warning every bundle without spec.minKubeVersion gets (the api's wording). */
export const MIN_KUBE_VERSION_WARNING =
  'csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. Otherwise, it would mean that your operator project can be distributed and installed in any cluster version available, which is not necessarily the case for all projects.';

/** OLM annotation keys whose case matters: a wrong-cased key is silently ignored by OLM. */
const CASE_SENSITIVE_ANNOTATIONS = [
  'olm.skipRange',
  'olm.operatorGroup',
  'olm.operatorNamespace',
  'olm.targetNamespaces',
];

/** Runs the CSV checks; the result is named after the CSV. */
export function validateCsv(csv: BundleObject<CsvSpecDocument>): ManifestResult {
  const name = csv.name;
  const spec = csv.doc.spec ?? {};
  const findings: ApiError[] = [];
  const nameProblem = csvNameProblem(name);
  if (nameProblem) findings.push(csvFinding('Error', `metadata.name ${nameProblem}`, name));
  if (spec.replaces) {
    const replacesProblem = csvNameProblem(leafText(spec.replaces));
    if (replacesProblem) findings.push(csvFinding('Error', `spec.replaces ${replacesProblem}`, name));
  }
  findings.push(...exampleFindings(csv), ...installModeFindings(csv));
  const minKubeVersion = leafText(spec.minKubeVersion ?? '');
  if (minKubeVersion.trim() === '') findings.push(csvFinding('Warning', MIN_KUBE_VERSION_WARNING, name));
  else if (!parseSemver(minKubeVersion))
    findings.push(csvFinding('Error', `csv.Spec.MinKubeVersion has an invalid value: ${minKubeVersion}`, name));
  findings.push(...requiredFieldFindings(csv.doc));
  for (const key of Object.keys(csv.doc.metadata?.annotations ?? {})) {
    const expected = CASE_SENSITIVE_ANNOTATIONS.find((known) => known.toLowerCase() === key.toLowerCase());
    if (expected && expected !== key)
      findings.push(
        valueFinding('Error', `provided annotation ${key} uses wrong case and should be ${expected} instead`, name),
      );
  }
  if (!csv.apiVersion) findings.push(csvFinding('Error', "'apiVersion' is missing", name));
  if (!csv.kind) findings.push(csvFinding('Error', "'kind' is missing", name));
  return manifestResult(name, findings);
}

/** A CSV name (or replaces) must be a DNS-1123 subdomain usable as a label value. */
function csvNameProblem(name: string): string | undefined {
  const problems = [...dns1123SubdomainProblems(name), ...labelValueProblems(name)];
  return problems.length === 0 ? undefined : `${JSON.stringify(name)} is invalid: ${problems.join(',')}`;
}

function exampleFindings(csv: BundleObject<CsvSpecDocument>): ApiError[] {
  const annotations = csv.doc.metadata?.annotations ?? {};
  if (Object.keys(annotations).length === 0) return [csvFinding('Warning', 'annotations not found', csv.name)];
  const hasAlm = 'alm-examples' in annotations;
  const hasOlm = 'olm.examples' in annotations;
  if (!hasAlm && !hasOlm) return [csvFinding('Warning', 'example annotations not found', csv.name)];
  const findings: ApiError[] = [];
  if (hasAlm && hasOlm)
    findings.push(
      csvFinding(
        'Warning',
        'both `alm-examples` and `olm.examples` are present. Checking only `alm-examples`',
        csv.name,
      ),
    );
  const text = leafText((hasAlm ? annotations['alm-examples'] : annotations['olm.examples']) ?? '');
  let examples: unknown = [];
  if (text.length > 0) {
    try {
      examples = JSON.parse(text);
    } catch (error) {
      findings.push(valueFinding('Error', 'invalid example', jsonSyntaxProblem(text, error)));
      return findings;
    }
  }
  const exampleKeys = new Map<string, GroupVersionKind>();
  for (const example of Array.isArray(examples) ? (examples as ListItem<ManifestDocument>[]) : []) {
    const gvk = GroupVersionKind.of(leafText(example?.apiVersion ?? ''), leafText(example?.kind ?? ''));
    exampleKeys.set(gvk.key, gvk);
  }
  const provided = new Map<string, GroupVersionKind>();
  for (const owned of csv.doc.spec?.customresourcedefinitions?.owned ?? []) {
    const crdName = leafText(owned?.name ?? '');
    const dot = crdName.indexOf('.');
    if (dot < 0) {
      findings.push({ level: 'Error', detail: `couldn't parse plural.group from crd name: ${crdName}` });
      continue;
    }
    const gvk = new GroupVersionKind(
      crdName.slice(dot + 1),
      leafText(owned?.version ?? ''),
      leafText(owned?.kind ?? ''),
    );
    provided.set(gvk.key, gvk);
  }
  for (const api of csv.doc.spec?.apiservicedefinitions?.owned ?? []) {
    const gvk = new GroupVersionKind(
      leafText(api?.group ?? ''),
      leafText(api?.version ?? ''),
      leafText(api?.kind ?? ''),
    );
    provided.set(gvk.key, gvk);
  }
  for (const example of exampleKeys.values()) {
    if (!provided.has(example.key)) findings.push(valueFinding('Error', 'example must have a provided API', example));
  }
  for (const api of provided.values()) {
    if (!exampleKeys.has(api.key))
      findings.push(valueFinding('Warning', 'provided API should have an example annotation', api));
  }
  return findings;
}

/** Go's JSON error as the api prints it: the offset after the bad byte and the text up to it. */
function jsonSyntaxProblem(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const position = /position (\d+)/.exec(message);
  const offset = position ? Number(position[1]) + 1 : text.length;
  return `invalid character at ${offset}\n ${text.slice(0, offset)}<--(see the invalid character)`;
}

function installModeFindings(csv: BundleObject<CsvSpecDocument>): ApiError[] {
  const spec = csv.doc.spec ?? {};
  const modes = Array.isArray(spec.installModes) ? (spec.installModes as ListItem<InstallModeDocument>[]) : [];
  if (modes.length === 0) return [csvFinding('Error', 'install modes not found', csv.name)];
  const findings: ApiError[] = [];
  // api v0.34 never records the modes it has seen, so its duplicate check
  // never fires and a duplicate passes; we agree with it (OLM keeps the last entry).
  const anySupported = modes.some((mode) => mode?.supported === true);
  // Conversion webhooks are cluster-wide, so OLM only installs them for AllNamespaces operators.
  for (const webhook of spec.webhookdefinitions ?? []) {
    if (!Array.isArray(webhook?.conversionCRDs) || webhook.conversionCRDs.length === 0) continue;
    const onlyAllNamespaces = modes.every((mode) =>
      mode?.type === 'AllNamespaces' ? mode?.supported === true : mode?.supported !== true,
    );
    if (!onlyAllNamespaces)
      findings.push(
        csvFinding('Error', 'only AllNamespaces InstallModeType is supported when conversionCRDs is present', csv.name),
      );
  }
  if (!anySupported) findings.push(csvFinding('Error', 'none of InstallModeTypes are supported', csv.name));
  return findings;
}

/** An install mode of the CSV, as written. */
interface InstallModeDocument {
  type?: unknown;
  supported?: unknown;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value).every(isEmpty);
  return false;
}

/**
 * The CSV fields the api's Go types mark as required (no `omitempty`), in Go
 * struct order and with Go field paths, as its reflective check reports them.
 */
function requiredFieldFindings(doc: ManifestDocument<CsvSpecDocument>): ApiError[] {
  const findings: ApiError[] = [];
  const spec = doc.spec;
  if (spec === undefined || isEmpty(spec)) return [missingField('Spec', 'struct')];
  const install = spec.install;
  if (install === undefined || isEmpty(install)) findings.push(missingField('Spec.InstallStrategy', 'struct'));
  else {
    if (isEmpty(install.strategy)) findings.push(missingField('Spec.InstallStrategy.StrategyName', 'field'));
    // Go's zero check: an absent list is missing, an empty `deployments: []` is not (the api accepts it).
    const deployments = install.spec?.deployments;
    if (!isEmpty(install.spec) && (deployments === undefined || deployments === null))
      findings.push(missingField('Spec.InstallStrategy.StrategySpec.DeploymentSpecs', 'field'));
  }
  if (isEmpty(spec.displayName)) findings.push(missingField('Spec.DisplayName', 'field'));
  return findings;
}

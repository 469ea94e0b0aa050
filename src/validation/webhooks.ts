/**
 * OLM's rules for spec.webhookdefinitions (the Red Hat CSV guide, "Webhook
 * considerations for OLM"): OLM puts a CSV that breaks them in the Failed
 * phase at install time, so they are reported here, before publishing.
 *
 * They are warnings, not errors: operator-framework/api's validators (what
 * operator-sdk runs) do not check them, and `bundle validate` must give the
 * same verdict, the same exit code, on every bundle. A warning still names the
 * problem before OLM fails the install.
 */
import type { BundleObject, LoadedBundle } from './bundle-loader.js';
import { csvFinding, type ApiError } from './diagnostics.js';
import { leafText, type ListItem } from './documents.js';

/** The webhook types OLM knows how to install. */
export const WEBHOOK_TYPES = ['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook', 'ConversionWebhook'] as const;

const WEBHOOK_CONFIGURATION_RESOURCES = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'];

/** Findings for every webhook definition of the bundle's CSV. */
export function validateWebhookDefinitions(bundle: LoadedBundle): ApiError[] {
  const csv = bundle.csv;
  const spec = csv.doc.spec ?? {};
  const deployments = new Set<string>(
    (spec.install?.spec?.deployments ?? []).map((deployment) => leafText(deployment?.name ?? '')),
  );
  const owned = new Set<string>(
    (spec.customresourcedefinitions?.owned ?? []).map((entry) => leafText(entry?.name ?? '')),
  );
  const crdsByName = new Map<string, BundleObject>(bundle.crds.map((crd) => [crd.name, crd]));
  const findings: ApiError[] = [];
  const report = (detail: string): void =>
    void findings.push(csvFinding('Warning', `${detail} (OLM fails this CSV at install time)`, csv.name));
  for (const webhook of spec.webhookdefinitions ?? []) {
    const label = `webhookdefinition ${JSON.stringify(leafText(webhook?.generateName ?? ''))}`;
    const type = leafText(webhook?.type ?? '');
    if (!(WEBHOOK_TYPES as readonly string[]).includes(type)) {
      report(`${label} has type ${JSON.stringify(type)}: the type must be one of ${WEBHOOK_TYPES.join(', ')}`);
    }
    const deploymentName = leafText(webhook?.deploymentName ?? '');
    if (!deployments.has(deploymentName)) {
      report(
        `${label} has deploymentName ${JSON.stringify(deploymentName)}, which matches no deployment in spec.install.spec.deployments`,
      );
    }
    if (type === 'ConversionWebhook') {
      for (const crdName of (webhook?.conversionCRDs ?? []).map(String)) {
        if (!owned.has(crdName)) {
          report(
            `${label} converts CRD ${JSON.stringify(crdName)}, which is not in spec.customresourcedefinitions.owned: a conversion webhook may only target CRDs the CSV owns`,
          );
        } else if (crdsByName.get(crdName)?.doc.spec?.preserveUnknownFields === true) {
          report(
            `${label} converts CRD ${JSON.stringify(crdName)}, whose spec.preserveUnknownFields is true: set it to false (or remove it) in the CRD`,
          );
        }
      }
    }
    if (type === 'ValidatingAdmissionWebhook' || type === 'MutatingAdmissionWebhook') {
      for (const rule of webhook?.rules ?? []) findings.push(...ruleFindings(label, rule, report));
    }
  }
  return findings;
}

/** Admission rules that could stop the cluster (or OLM itself) from recovering. */
function ruleFindings(
  label: string,
  rule: ListItem<{ apiGroups?: unknown[]; resources?: unknown[] }>,
  report: (detail: string) => void,
): ApiError[] {
  const groups: string[] = (rule?.apiGroups ?? []).map(String);
  const resources: string[] = (rule?.resources ?? []).map((resource: unknown) => String(resource).split('/')[0]!);
  if (groups.includes('*')) {
    report(
      `${label} has a rule matching all API groups ("*"): OLM rejects admission webhooks that intercept every group; list the groups the webhook needs`,
    );
    return [];
  }
  if (groups.includes('operators.coreos.com')) {
    report(
      `${label} has a rule matching the operators.coreos.com group: OLM rejects admission webhooks that intercept OLM's own resources`,
    );
  }
  if (
    groups.includes('admissionregistration.k8s.io') &&
    resources.some((resource) => resource === '*' || WEBHOOK_CONFIGURATION_RESOURCES.includes(resource))
  ) {
    report(
      `${label} has a rule matching ValidatingWebhookConfigurations or MutatingWebhookConfigurations (admissionregistration.k8s.io): OLM rejects admission webhooks that intercept webhook configurations`,
    );
  }
  return [];
}

/**
 * The api's GoodPracticesValidator: resource requests, a deployment to
 * install, CRD descriptions, channel naming, CRD-creating permissions, and the
 * `<name>.v<semver>` CSV name convention.
 */
import type { LoadedBundle } from './bundle-loader.js';
import { leafText, type ListItem, type PolicyRuleDocument } from './documents.js';
import { goQuotedList, manifestResult, valueFinding, type ApiError, type ManifestResult } from './diagnostics.js';
import { parseSemver } from './names.js';

const CHANNEL_PREFIXES = ['candidate', 'stable', 'fast'];
const CRD_CREATION_WARNING =
  "CSV contains permissions to create CRD. An Operator shouldn't deploy or manage other operators (such patterns are known as meta or super operators or include CRDs in its Operands). It's the Operator Lifecycle Manager's job to manage the deployment and lifecycle of operators.  Please, review the design of your solution and if you should not be using Dependency Resolution from OLM instead. More info: https://sdk.operatorframework.io/docs/best-practices/common-recommendation/";

/** Runs the good-practice checks. */
export function validateGoodPractices(bundle: LoadedBundle): ManifestResult {
  const csv = bundle.csv;
  const spec = csv.doc.spec ?? {};
  const errors: string[] = [];
  const warnings: string[] = [];
  const deployments = spec.install?.spec?.deployments;
  // The api checks for a nil list: an empty `deployments: []` is accepted, as the default checks accept it.
  if (deployments === undefined || deployments === null || !Array.isArray(deployments)) {
    errors.push('unable to find a deployment to install in the CSV');
  } else {
    for (const deployment of deployments) {
      for (const container of deployment?.spec?.template?.spec?.containers ?? []) {
        const requests = container?.resources?.requests;
        if (!requests?.cpu || !requests?.memory) {
          warnings.push(
            `unable to find the resource requests for the container: (${leafText(container?.name ?? '')}). It is recommended to ensure the resource request for CPU and Memory. Be aware that for some clusters configurations it is required to specify requests or limits for those values. Otherwise, the system or quota may reject Pod creation. More info: https://master.sdk.operatorframework.io/docs/best-practices/managing-resources/`,
          );
        }
      }
    }
  }
  for (const relation of ['owned', 'required'] as const) {
    for (const crd of spec.customresourcedefinitions?.[relation] ?? []) {
      if (!crd?.description)
        warnings.push(`${relation} CRD ${JSON.stringify(leafText(crd?.name ?? ''))} has an empty description`);
    }
  }
  // operator-sdk loads the bundle from manifests/, where no annotations.yaml
  // lives, so the api's channel check never sees a bundle directory's
  // channels; we agree with it rather than warn where operator-sdk does not.
  const channels: string[] = [];
  const offConvention = channels.filter(
    (channel) => channel !== '' && !CHANNEL_PREFIXES.some((prefix) => channel.startsWith(prefix)),
  );
  if (offConvention.length > 0) {
    warnings.push(
      `channel(s) ${goQuotedList(offConvention)} are not following the recommended naming convention: https://olm.operatorframework.io/docs/best-practices/channel-naming`,
    );
  }
  const permissions = [...(spec.install?.spec?.permissions ?? []), ...(spec.install?.spec?.clusterPermissions ?? [])];
  if (permissions.some(createsCrds)) warnings.push(CRD_CREATION_WARNING);
  const versionMatch =
    /([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+)?$/.exec(csv.name);
  if (!versionMatch || !parseSemver(versionMatch[0])) {
    warnings.push(
      `csv.metadata.Name ${csv.name} is not following the versioning convention (MAJOR.MINOR.PATCH e.g 0.0.1): https://semver.org/`,
    );
  }
  if (csv.name.split('.v').length !== 2) {
    warnings.push(
      `csv.metadata.Name ${csv.name} is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1`,
    );
  }
  const findings: ApiError[] = [
    ...errors.map((detail) => valueFinding('Error', detail, csv.name)),
    ...warnings.map((detail) => valueFinding('Warning', detail, csv.name)),
  ];
  return manifestResult(bundle.name, findings);
}

function createsCrds(permission: ListItem<{ rules?: ListItem<PolicyRuleDocument>[] }>): boolean {
  return (permission?.rules ?? []).some(
    (rule) =>
      (rule?.apiGroups ?? []).includes('apiextensions.k8s.io') &&
      (rule?.resources ?? []).some((resource) =>
        ['customresourcedefinitions', '*', '[*]'].includes(resource as string),
      ) &&
      (rule?.verbs ?? []).some((verb) => ['create', '*', '[*]', 'patch'].includes(verb as string)),
  );
}

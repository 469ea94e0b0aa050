/**
 * The api's AlphaDeprecatedAPIsValidator: manifests using APIs removed in
 * Kubernetes 1.22, 1.25 and 1.26. An error when the target version (the
 * `k8s-version` optional value, or minKubeVersion) is at or past the removal,
 * otherwise a warning, since the bundle may still be installed there.
 */
import type { LoadedBundle } from './bundle-loader.js';
import { leafText } from './documents.js';
import { goQuotedList, manifestResult, valueFinding, type ApiError, type ManifestResult } from './diagnostics.js';
import { parseSemverTolerant, versionAtLeast, type SemanticVersion } from './names.js';

interface Removal {
  version: SemanticVersion;
  /** apiVersion → kinds removed in that release. */
  apis: Record<string, readonly string[]>;
}

const REMOVALS: readonly Removal[] = [
  {
    version: { major: 1, minor: 22, patch: 0, text: '1.22.0' },
    apis: {
      'scheduling.k8s.io/v1beta1': ['PriorityClass'],
      'rbac.authorization.k8s.io/v1beta1': ['Role', 'ClusterRoleBinding', 'RoleBinding', 'ClusterRole'],
      'apiregistration.k8s.io/v1beta1': ['APIService'],
      'authentication.k8s.io/v1beta1': ['TokenReview'],
      'authorization.k8s.io/v1beta1': ['LocalSubjectAccessReview', 'SelfSubjectAccessReview', 'SubjectAccessReview'],
      'admissionregistration.k8s.io/v1beta1': ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
      'coordination.k8s.io/v1beta1': ['Lease'],
      'extensions/v1beta1': ['Ingress'],
      'networking.k8s.io/v1beta1': ['Ingress', 'IngressClass'],
      'storage.k8s.io/v1beta1': ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'],
      'certificates.k8s.io/v1beta1': ['CertificateSigningRequest'],
    },
  },
  {
    version: { major: 1, minor: 25, patch: 0, text: '1.25.0' },
    apis: {
      'batch/v1beta1': ['CronJob'],
      'discovery.k8s.io/v1beta1': ['EndpointSlice'],
      'events.k8s.io/v1beta1': ['Event'],
      'autoscaling/v2beta1': ['HorizontalPodAutoscaler'],
      'policy/v1beta1': ['PodDisruptionBudget', 'PodSecurityPolicy'],
      'node.k8s.io/v1beta1': ['RuntimeClass'],
    },
  },
  {
    version: { major: 1, minor: 26, patch: 0, text: '1.26.0' },
    apis: { 'autoscaling/v2beta2': ['HorizontalPodAutoscaler'] },
  },
];

/** Runs the removed-API check as its own optional validator. */
export function validateDeprecatedApis(
  bundle: LoadedBundle,
  optionalValues: ReadonlyMap<string, string>,
): ManifestResult {
  return manifestResult(bundle.name, removedApiFindings(bundle, optionalValues.get('k8s-version') ?? ''));
}

/** The removed-API findings, shared with operatorhubv2. */
export function removedApiFindings(bundle: LoadedBundle, k8sVersion: string): ApiError[] {
  const findings: ApiError[] = [];
  const csvName = bundle.csv.name;
  const target = k8sVersion === '' ? undefined : parseSemverTolerant(k8sVersion);
  if (k8sVersion !== '' && !target)
    findings.push(valueFinding('Error', `invalid value informed via the k8s key option : ${k8sVersion}`, csvName));
  const minKubeText = leafText(bundle.csv.doc.spec?.minKubeVersion ?? '');
  const minKube = minKubeText === '' ? undefined : parseSemverTolerant(minKubeText);
  if (minKubeText !== '' && !minKube) {
    findings.push(
      valueFinding(
        'Error',
        `unable to use csv.Spec.MinKubeVersion to verify the CRD/Webhook apis because it has an invalid value: ${minKubeText}`,
        csvName,
      ),
    );
  }
  for (const removal of REMOVALS) {
    const found = new Map<string, string[]>();
    for (const object of bundle.objects) {
      if (!(removal.apis[object.apiVersion] ?? []).includes(object.kind)) continue;
      found.set(object.kind, [...(found.get(object.kind) ?? []), object.name]);
    }
    if (removal.version.minor === 22) {
      const v1beta1Crds = bundle.crds
        .filter((crd) => crd.apiVersion === 'apiextensions.k8s.io/v1beta1')
        .map((crd) => crd.name);
      if (v1beta1Crds.length > 0) found.set('CRD', v1beta1Crds);
    }
    if (found.size === 0) continue;
    const list = [...found.keys()]
      .sort()
      .map((kind) => `${kind}: (${goQuotedList(found.get(kind)!)})`)
      .join(',');
    const { major, minor } = removal.version;
    const detail = `this bundle is using APIs which were deprecated and removed in v${major}.${minor}. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v${major}-${minor}. Migrate the API(s) for ${list}`;
    const removedThere =
      (target && versionAtLeast(target, removal.version)) || (minKube && versionAtLeast(minKube, removal.version));
    findings.push(valueFinding(removedThere ? 'Error' : 'Warning', detail, csvName));
  }
  return findings;
}

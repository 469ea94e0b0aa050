/**
 * The catalog of bundle variants whose `bundle validate` verdict is compared
 * with operator-framework/api's (bundle-verdicts.test.ts and
 * scripts/olm-verdicts.sh). Each variant is the valid Memcached fixture plus one
 * deliberate change, so a disagreement points at exactly one rule.
 *
 * Run as a script (`node dist/test/unit/broken-bundles.js OUT_DIR`) it writes
 * every variant to OUT_DIR/<name>/ and prints one JSON line per variant
 * (name, selector, optional values) for the Go reference to loop over.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse, stringify } from 'yaml';

const FIXTURE = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'bundles', 'memcached');
const CSV_FILE = 'manifests/memcached-operator.clusterserviceversion.yaml';
const CRD_FILE = 'manifests/cache.example.com_memcacheds.yaml';

/** One bundle variant: how to break the valid bundle, and which optional validators to run. */
export interface BundleVariant {
  name: string;
  /** `--select-optional`, when the variant targets an optional validator. */
  selector?: string;
  /** `--optional-values`, as one `k=v[,k=v]` string. */
  optionalValues?: string;
  /** Changes the copy of the valid bundle at `dir`. */
  build(dir: string): void;
}

function editYaml(dir: string, file: string, edit: (doc: any) => void): void {
  const path = join(dir, file);
  const doc = parse(readFileSync(path, 'utf8'));
  edit(doc);
  writeFileSync(path, stringify(doc));
}
const editCsv = (dir: string, edit: (csv: any) => void): void => editYaml(dir, CSV_FILE, edit);
const editCrd = (dir: string, edit: (crd: any) => void): void => editYaml(dir, CRD_FILE, edit);
const editAnnotations = (dir: string, edit: (annotations: Record<string, string>) => void): void =>
  editYaml(dir, 'metadata/annotations.yaml', (doc) => edit(doc.annotations));
const writeManifest = (dir: string, file: string, doc: unknown): void =>
  writeFileSync(join(dir, 'manifests', file), stringify(doc));

/** A second, unowned CRD in the same group (MemcachedBackup), built from the Memcached one. */
function addBackupCrd(dir: string): void {
  const crd = parse(readFileSync(join(dir, CRD_FILE), 'utf8'));
  crd.metadata.name = 'memcachedbackups.cache.example.com';
  crd.spec.names = {
    kind: 'MemcachedBackup',
    listKind: 'MemcachedBackupList',
    plural: 'memcachedbackups',
    singular: 'memcachedbackup',
  };
  writeManifest(dir, 'cache.example.com_memcachedbackups.yaml', crd);
}

/** Adds a served, non-storage v2 to the Memcached CRD (a valid two-version CRD). */
function addSecondVersion(dir: string): void {
  editCrd(dir, (crd) => crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2', storage: false }));
}

const V1BETA1 = 'apiextensions.k8s.io/v1beta1';

/** Rewrites the one-version v1 CRD as v1beta1 writes it: top-level version, validation and subresources. */
function toV1beta1(crd: any): any {
  const [version] = crd.spec.versions;
  crd.apiVersion = V1BETA1;
  crd.spec.version = version.name;
  crd.spec.validation = version.schema;
  crd.spec.subresources = version.subresources;
  crd.spec.versions = [{ name: version.name, served: true, storage: true }];
  return crd;
}

/** Bytes that gzip cannot shrink, the same on every run so the recorded sizes stay stable. */
function incompressible(length: number): string {
  const bytes = Buffer.alloc(length);
  let state = 0x2545f491;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  return bytes.toString('base64');
}

/** A valid admission webhook definition for the Memcached CSV (also used by bundle-validate.test). */
export const WEBHOOK = {
  admissionReviewVersions: ['v1'],
  containerPort: 443,
  deploymentName: 'memcached-operator-controller-manager',
  failurePolicy: 'Fail',
  generateName: 'vmemcached.kb.io',
  rules: [
    {
      apiGroups: ['cache.example.com'],
      apiVersions: ['v1'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['memcacheds'],
    },
  ],
  sideEffects: 'None',
  targetPort: 9443,
  type: 'ValidatingAdmissionWebhook',
  webhookPath: '/validate-cache-example-com-v1-memcached',
};
/** A valid conversion webhook definition for the Memcached CSV. */
export const CONVERSION = {
  admissionReviewVersions: ['v1'],
  containerPort: 443,
  conversionCRDs: ['memcacheds.cache.example.com'],
  deploymentName: 'memcached-operator-controller-manager',
  generateName: 'cmemcacheds.kb.io',
  sideEffects: 'None',
  targetPort: 9443,
  type: 'ConversionWebhook',
  webhookPath: '/convert',
};
const withWebhook =
  (webhook: Record<string, unknown>) =>
  (dir: string): void =>
    editCsv(dir, (csv) => (csv.spec.webhookdefinitions = [webhook]));

/** Every variant, valid ones first. Names are directory names and golden keys. */
export const BUNDLE_VARIANTS: readonly BundleVariant[] = [
  { name: 'valid', build: () => {} },
  { name: 'valid-min-kube-version', build: (dir) => editCsv(dir, (csv) => (csv.spec.minKubeVersion = '1.25.0')) },
  { name: 'valid-suite-operatorframework', selector: 'suite=operatorframework', build: () => {} },
  {
    name: 'valid-no-icon-suite-operatorframework',
    selector: 'suite=operatorframework',
    build: (dir) => editCsv(dir, (csv) => delete csv.spec.icon),
  },

  // Bundles that cannot be loaded at all.
  { name: 'csv-version-not-semver', build: (dir) => editCsv(dir, (csv) => (csv.spec.version = 'one')) },

  // Format (operator-registry's annotation rules).
  {
    name: 'format-missing-package-annotation',
    build: (dir) => editAnnotations(dir, (a) => delete a['operators.operatorframework.io.bundle.package.v1']),
  },
  {
    name: 'format-wrong-mediatype',
    build: (dir) => editAnnotations(dir, (a) => (a['operators.operatorframework.io.bundle.mediatype.v1'] = 'plain')),
  },
  {
    name: 'format-empty-channels',
    build: (dir) => editAnnotations(dir, (a) => (a['operators.operatorframework.io.bundle.channels.v1'] = '')),
  },

  // BundleValidator.
  { name: 'owned-crd-missing', build: (dir) => rmSync(join(dir, CRD_FILE)) },
  { name: 'crd-not-owned', build: addBackupCrd },
  {
    name: 'crd-not-owned-and-owned-crd-missing',
    build: (dir) => {
      addBackupCrd(dir);
      rmSync(join(dir, CRD_FILE));
    },
  },
  { name: 'two-version-crd-one-owned', build: addSecondVersion },
  {
    name: 'two-version-crd-both-owned',
    build: (dir) => {
      addSecondVersion(dir);
      editCsv(dir, (csv) =>
        csv.spec.customresourcedefinitions.owned.push({
          ...csv.spec.customresourcedefinitions.owned[0],
          version: 'v2',
        }),
      );
    },
  },
  {
    name: 'two-version-crd-only-v2-owned',
    build: (dir) => {
      addSecondVersion(dir);
      editCsv(dir, (csv) => (csv.spec.customresourcedefinitions.owned[0].version = 'v2'));
    },
  },
  {
    name: 'owned-version-not-in-crd',
    build: (dir) => editCsv(dir, (csv) => (csv.spec.customresourcedefinitions.owned[0].version = 'v9')),
  },
  {
    name: 'duplicate-crd-version',
    build: (dir) => cpSync(join(dir, CRD_FILE), join(dir, 'manifests', 'cache.example.com_memcacheds_copy.yaml')),
  },
  {
    name: 'over-compressed-size-limit',
    build: (dir) =>
      writeManifest(dir, 'blob_v1_secret.yaml', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'blob' },
        data: { blob: incompressible(1_200_000) },
      }),
  },
  {
    name: 'service-account-clash',
    build: (dir) =>
      writeManifest(dir, 'memcached-operator-controller-manager_v1_serviceaccount.yaml', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'memcached-operator-controller-manager' },
      }),
  },

  // CSVValidator.
  {
    name: 'alm-examples-invalid-json',
    build: (dir) =>
      editCsv(
        dir,
        (csv) =>
          (csv.metadata.annotations['alm-examples'] = '[{"apiVersion":"cache.example.com/v1","kind":"Memcached",}]'),
      ),
  },
  {
    name: 'example-without-provided-api',
    build: (dir) =>
      editCsv(
        dir,
        (csv) =>
          (csv.metadata.annotations['alm-examples'] =
            '[{"apiVersion":"cache.example.com/v1","kind":"Memcache","metadata":{"name":"x"}}]'),
      ),
  },
  { name: 'no-install-modes', build: (dir) => editCsv(dir, (csv) => delete csv.spec.installModes) },
  {
    name: 'duplicate-install-modes-none-supported',
    build: (dir) =>
      editCsv(
        dir,
        (csv) =>
          (csv.spec.installModes = [
            { supported: false, type: 'AllNamespaces' },
            { supported: true, type: 'AllNamespaces' },
          ]),
      ),
  },
  { name: 'min-kube-version-not-semver', build: (dir) => editCsv(dir, (csv) => (csv.spec.minKubeVersion = '1.22')) },
  { name: 'missing-display-name', build: (dir) => editCsv(dir, (csv) => delete csv.spec.displayName) },
  { name: 'missing-install-strategy', build: (dir) => editCsv(dir, (csv) => delete csv.spec.install.strategy) },
  { name: 'empty-deployments', build: (dir) => editCsv(dir, (csv) => (csv.spec.install.spec.deployments = [])) },
  {
    name: 'csv-name-not-dns-1123',
    build: (dir) => editCsv(dir, (csv) => (csv.metadata.name = 'Memcached-Operator.v0.0.1')),
  },
  {
    name: 'annotation-wrong-case',
    build: (dir) => editCsv(dir, (csv) => (csv.metadata.annotations['olm.skiprange'] = '<0.0.1')),
  },
  {
    name: 'conversion-webhook-own-namespace',
    build: (dir) =>
      editCsv(dir, (csv) => {
        csv.spec.webhookdefinitions = [CONVERSION];
        csv.spec.installModes[0].supported = true;
      }),
  },

  // operator-sdk's object checks.
  {
    name: 'namespaced-object',
    build: (dir) =>
      writeManifest(dir, 'extra-sa_v1_serviceaccount.yaml', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'extra-sa', namespace: 'memcached-operator-system' },
      }),
  },
  {
    name: 'unsupported-kind',
    build: (dir) =>
      writeManifest(dir, 'extra_apps_v1_deployment.yaml', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'extra' },
        spec: {},
      }),
  },

  // CRDValidator.
  {
    name: 'crd-two-storage-versions',
    build: (dir) => {
      editCrd(dir, (crd) => crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2' }));
      editCsv(dir, (csv) =>
        csv.spec.customresourcedefinitions.owned.push({
          ...csv.spec.customresourcedefinitions.owned[0],
          version: 'v2',
        }),
      );
    },
  },

  // v1beta1 CRDs: the api validates them with v1beta1's defaults (preserveUnknownFields: true when absent).
  { name: 'crd-v1beta1-no-preserve-unknown-fields', build: (dir) => editCrd(dir, toV1beta1) },
  {
    name: 'crd-v1beta1-preserve-unknown-fields-false',
    build: (dir) => editCrd(dir, (crd) => Object.assign(toV1beta1(crd).spec, { preserveUnknownFields: false })),
  },
  { name: 'crd-v1-shaped-labelled-v1beta1', build: (dir) => editCrd(dir, (crd) => (crd.apiVersion = V1BETA1)) },
  {
    name: 'crd-v1-shaped-labelled-v1beta1-preserve-unknown-fields-false',
    build: (dir) =>
      editCrd(dir, (crd) => (Object.assign(crd, { apiVersion: V1BETA1 }).spec.preserveUnknownFields = false)),
  },
  {
    name: 'crd-v1beta1-version-not-first',
    build: (dir) =>
      editCrd(dir, (crd) => Object.assign(toV1beta1(crd).spec, { preserveUnknownFields: false, version: 'v2' })),
  },
  {
    name: 'crd-v1beta1-webhook-conversion-without-preserve-unknown-fields',
    build: (dir) =>
      editCrd(
        dir,
        (crd) =>
          (toV1beta1(crd).spec.conversion = {
            strategy: 'Webhook',
            conversionReviewVersions: ['v1'],
            webhookClientConfig: { service: { name: 'webhook-service', namespace: 'system', path: '/convert' } },
          }),
      ),
  },

  // OLM's install-time webhook rules (ours; see bundle-verdicts.test.ts).
  { name: 'webhook-unknown-deployment', build: withWebhook({ ...WEBHOOK, deploymentName: 'webhook-server' }) },
  { name: 'webhook-unsupported-type', build: withWebhook({ ...WEBHOOK, type: 'ValidatingWebhook' }) },
  { name: 'webhook-valid-conversion', build: withWebhook(CONVERSION) },
  {
    name: 'webhook-conversion-unowned-crd',
    build: withWebhook({ ...CONVERSION, conversionCRDs: ['memcachedbackups.cache.example.com'] }),
  },
  {
    name: 'webhook-conversion-preserve-unknown-fields',
    build: (dir) => {
      withWebhook(CONVERSION)(dir);
      editCrd(dir, (crd) => (crd.spec.preserveUnknownFields = true));
    },
  },
  {
    name: 'webhook-rule-all-groups',
    build: withWebhook({
      ...WEBHOOK,
      rules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['*'] }],
    }),
  },
  {
    name: 'webhook-rule-olm-group',
    build: withWebhook({
      ...WEBHOOK,
      type: 'MutatingAdmissionWebhook',
      rules: [
        {
          apiGroups: ['operators.coreos.com'],
          apiVersions: ['v1alpha1'],
          operations: ['CREATE'],
          resources: ['subscriptions'],
        },
      ],
    }),
  },
  {
    name: 'webhook-rule-webhook-configurations',
    build: withWebhook({
      ...WEBHOOK,
      rules: [
        {
          apiGroups: ['admissionregistration.k8s.io'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['validatingwebhookconfigurations'],
        },
      ],
    }),
  },

  // Optional validators.
  {
    name: 'capabilities-invalid-level',
    selector: 'name=capabilities',
    build: (dir) => editCsv(dir, (csv) => (csv.metadata.annotations.capabilities = 'Installs and stuff')),
  },
  {
    name: 'categories-unknown',
    selector: 'name=categories',
    build: (dir) => editCsv(dir, (csv) => (csv.metadata.annotations.categories = 'Database,Magic')),
  },
  {
    name: 'operatorhubv2-provider-and-email',
    selector: 'name=operatorhubv2',
    build: (dir) =>
      editCsv(dir, (csv) => {
        csv.spec.provider = { url: 'https://your.domain' };
        csv.spec.maintainers = [{ email: 'invalidemail', name: 'Maintainer Name' }];
        csv.spec.icon = [{ base64data: 'iVBORw0KGgo=', mediatype: 'image/png' }];
      }),
  },
  ...(['1.25', '1.24'] as const).map((k8sVersion): BundleVariant => ({
    name: `deprecated-apis-pdb-v1beta1-k8s-${k8sVersion}`,
    selector: 'name=alpha-deprecated-apis',
    optionalValues: `k8s-version=${k8sVersion}`,
    build: (dir) =>
      writeManifest(dir, 'memcached-pdb_policy_v1beta1_poddisruptionbudget.yaml', {
        apiVersion: 'policy/v1beta1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'memcached-pdb' },
        spec: { minAvailable: 1 },
      }),
  })),
  {
    name: 'good-practices-no-resource-requests',
    selector: 'name=good-practices',
    build: (dir) =>
      editCsv(
        dir,
        (csv) => delete csv.spec.install.spec.deployments[0].spec.template.spec.containers[0].resources.requests,
      ),
  },
  {
    name: 'good-practices-no-deployments',
    selector: 'name=good-practices',
    build: (dir) => editCsv(dir, (csv) => (csv.spec.install.spec.deployments = [])),
  },
];

/** Writes one variant to `dir` (replacing what is there). */
export function materializeVariant(variant: BundleVariant, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(FIXTURE, dir, { recursive: true });
  variant.build(dir);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outDir = process.argv[2];
  if (!outDir) {
    process.stderr.write('usage: node dist/test/unit/broken-bundles.js OUT_DIR\n');
    process.exit(2);
  }
  for (const variant of BUNDLE_VARIANTS) {
    materializeVariant(variant, join(outDir, variant.name));
    process.stdout.write(
      `${JSON.stringify({ name: variant.name, selector: variant.selector ?? '', optionalValues: variant.optionalValues ?? '' })}\n`,
    );
  }
}

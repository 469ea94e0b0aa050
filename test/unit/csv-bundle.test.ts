/**
 * `generate bundle`: CSV filling rules (RBAC folding, relatedImages merge,
 * WATCH_NAMESPACE, webhooks, alm-examples, owned CRDs), bundle file naming,
 * determinism and createdAt stability, input-mode errors, and the digest
 * resolver's unreachable-registry error (against a closed local port).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { generateBundleCommand, type GenerateBundleOptions } from '../../src/commands/generate/bundle.js';
import type { CommandIO } from '../../src/cli/io.js';
import { collectManifests, parseManifests } from '../../src/generators/bundle/collector.js';
import type { ManifestObject } from '../../src/generators/bundle/input-objects.js';
import { resolveImageDigest } from '../../src/generators/bundle/digests.js';
import { parseImageReference } from '../../src/oci/reference.js';
import {
  annotationsYaml,
  bundleDockerfile,
  chooseCreatedAt,
  parsePreviousCsv,
  manifestFiles,
} from '../../src/generators/bundle/writer.js';
import { newBaseCsv, type CsvObject } from '../../src/generators/csv/base.js';
import { fillCsv, mergeRelatedImages, relatedImagesFromEnv } from '../../src/generators/csv/fill.js';
import { UsageError } from '../../src/errors.js';

const OPTIONS = {
  packageName: 'memcached-operator',
  builder: 'ts-operator-sdk-v0.1.0',
  projectLayout: 'typescript.ts-operator-sdk.io/v1',
};

function deployment(
  name: string,
  sa: string | undefined,
  env: Array<Record<string, unknown>> = [],
  labels: Record<string, string> = { app: name },
): ManifestObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'ns', labels: { 'control-plane': name } },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          ...(sa ? { serviceAccountName: sa } : {}),
          containers: [{ name: 'manager', image: 'example.com/op:v1', env }],
        },
      },
    },
  };
}

const rule = (resource: string): Record<string, unknown> => ({
  apiGroups: [''],
  resources: [resource],
  verbs: ['get'],
});
const role = (kind: 'Role' | 'ClusterRole', name: string, rules: unknown[]): ManifestObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: { name, namespace: 'ns' },
  rules,
});
const binding = (
  kind: 'RoleBinding' | 'ClusterRoleBinding',
  name: string,
  roleKind: string,
  roleName: string,
  subjects: Array<{ kind: string; name: string }>,
): ManifestObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: { name, namespace: 'ns' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
  subjects: subjects.map((s) => ({ ...s, namespace: 'ns' })),
});
const crd = (
  group: string,
  plural: string,
  kind: string,
  versions: Array<{ name: string; served: boolean }>,
  extra: Record<string, unknown> = {},
): ManifestObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    names: { kind, plural },
    scope: 'Namespaced',
    versions: versions.map((v) => ({
      ...v,
      storage: v.name === versions[0]!.name,
      schema: { openAPIV3Schema: { type: 'object' } },
    })),
    ...extra,
  },
});

describe('CSV filling', () => {
  it('folds RBAC through ServiceAccount bindings: Role → permissions, ClusterRole → clusterPermissions; leftovers stay files', () => {
    const manifests = collectManifests([
      deployment('op', 'op-sa'),
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op-sa', namespace: 'ns' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'unused-sa', namespace: 'ns' } },
      role('Role', 'leader', [rule('configmaps')]),
      role('ClusterRole', 'manager', [rule('pods')]),
      role('ClusterRole', 'in-namespace', [rule('secrets')]),
      role('ClusterRole', 'viewer', [rule('memcacheds')]),
      role('ClusterRole', 'empty', []),
      binding('RoleBinding', 'leader-b', 'Role', 'leader', [{ kind: 'ServiceAccount', name: 'op-sa' }]),
      binding('RoleBinding', 'ns-b', 'ClusterRole', 'in-namespace', [{ kind: 'ServiceAccount', name: 'op-sa' }]),
      binding('ClusterRoleBinding', 'manager-b', 'ClusterRole', 'manager', [{ kind: 'ServiceAccount', name: 'op-sa' }]),
      binding('ClusterRoleBinding', 'shared-b', 'ClusterRole', 'viewer', [
        { kind: 'ServiceAccount', name: 'op-sa' },
        { kind: 'User', name: 'jane' },
      ]),
      binding('ClusterRoleBinding', 'empty-b', 'ClusterRole', 'empty', [{ kind: 'ServiceAccount', name: 'op-sa' }]),
    ]);
    const { csv, leftovers } = fillCsv(newBaseCsv('memcached-operator', []), manifests, OPTIONS);
    const install = csv.spec['install'] as { spec: Record<string, unknown>; strategy: string };
    assert.equal(install.strategy, 'deployment');
    assert.deepEqual(install.spec['permissions'], [
      { serviceAccountName: 'op-sa', rules: [rule('configmaps'), rule('secrets')] },
    ]);
    assert.deepEqual(install.spec['clusterPermissions'], [
      { serviceAccountName: 'op-sa', rules: [rule('pods'), rule('memcacheds')] },
    ]);
    const names = leftovers.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    // viewer is bound partly to a user: it and its binding stay; the unused SA stays; the empty role is folded (and its empty rules dropped).
    assert.deepEqual(names, ['ClusterRole/viewer', 'ClusterRoleBinding/shared-b', 'ServiceAccount/unused-sa']);
  });

  it('--extra-service-accounts folds the RBAC of accounts no Deployment uses', () => {
    const objects = [
      deployment('op', undefined),
      role('Role', 'extra-role', [rule('pods')]),
      binding('RoleBinding', 'extra-b', 'Role', 'extra-role', [{ kind: 'ServiceAccount', name: 'helper' }]),
    ];
    const without = fillCsv(newBaseCsv('p', []), collectManifests(objects), OPTIONS);
    assert.equal((without.csv.spec['install'] as { spec: Record<string, unknown> }).spec['permissions'], undefined);
    const withExtra = fillCsv(newBaseCsv('p', []), collectManifests(objects), {
      ...OPTIONS,
      extraServiceAccounts: ['helper'],
    });
    assert.deepEqual((withExtra.csv.spec['install'] as { spec: Record<string, unknown> }).spec['permissions'], [
      { serviceAccountName: 'helper', rules: [rule('pods')] },
    ]);
  });

  it('rejects a binding whose roleRef.apiGroup is not RBAC', () => {
    const bad = binding('RoleBinding', 'b', 'Role', 'r', [{ kind: 'ServiceAccount', name: 'default' }]);
    (bad['roleRef'] as Record<string, string>)['apiGroup'] = 'example.com';
    assert.throws(
      () => fillCsv(newBaseCsv('p', []), collectManifests([deployment('op', undefined), bad]), OPTIONS),
      /roleRef\.apiGroup "example\.com"\. Set it to rbac\.authorization\.k8s\.io\./,
    );
  });

  it('rewrites WATCH_NAMESPACE to the olm.targetNamespaces annotation and sets name, version, builder and layout', () => {
    const input = deployment('op', 'sa', [
      { name: 'WATCH_NAMESPACE', value: 'default' },
      { name: 'OTHER', value: 'x' },
    ]);
    const { csv } = fillCsv(newBaseCsv('memcached-operator', []), collectManifests([input]), {
      ...OPTIONS,
      version: '1.2.3',
    });
    const deployments = (
      csv.spec['install'] as {
        spec: {
          deployments: Array<{
            name: string;
            label: unknown;
            spec: { template: { spec: { containers: Array<{ env: unknown[] }> } } };
          }>;
        };
      }
    ).spec.deployments;
    assert.deepEqual(deployments[0]!.spec.template.spec.containers[0]!.env, [
      {
        name: 'WATCH_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } },
      },
      { name: 'OTHER', value: 'x' },
    ]);
    assert.deepEqual(deployments[0]!.label, { 'control-plane': 'op' });
    assert.equal(
      (input['spec'] as { template: { spec: { containers: Array<{ env: Array<{ value?: string }> }> } } }).template.spec
        .containers[0]!.env[0]!.value,
      'default',
      'the input is not modified',
    );
    assert.equal(csv.metadata.name, 'memcached-operator.v1.2.3');
    assert.equal(csv.spec['version'], '1.2.3');
    assert.equal(csv.metadata.annotations!['operators.operatorframework.io/builder'], 'ts-operator-sdk-v0.1.0');
    assert.equal(
      csv.metadata.annotations!['operators.operatorframework.io/project_layout'],
      'typescript.ts-operator-sdk.io/v1',
    );
    const unversioned = fillCsv(newBaseCsv('memcached-operator', []), collectManifests([input]), OPTIONS).csv;
    assert.equal(unversioned.metadata.name, 'memcached-operator.v0.0.0', 'without --version the base name stays');
  });

  it("merges RELATED_IMAGE_* env vars with the base's relatedImages instead of dropping them (operator-sdk #6590)", () => {
    const base = newBaseCsv('p', []);
    base.spec['relatedImages'] = [
      { name: 'hand-written', image: 'example.com/sidecar:v1' },
      { name: 'memcached', image: 'memcached:old' },
    ];
    const objects = [
      deployment('op', 'sa', [
        { name: 'RELATED_IMAGE_MEMCACHED', value: 'memcached:1.6' },
        { name: 'RELATED_IMAGE_BUSY_BOX', value: 'busybox:1' },
      ]),
    ];
    const { csv } = fillCsv(base, collectManifests(objects), OPTIONS);
    assert.deepEqual(csv.spec['relatedImages'], [
      { name: 'busy-box', image: 'busybox:1' },
      { name: 'hand-written', image: 'example.com/sidecar:v1' },
      { name: 'memcached', image: 'memcached:1.6' },
    ]);
    assert.deepEqual(mergeRelatedImages([], []), []);
  });

  it('qualifies clashing related image names and rejects valueFrom', () => {
    const images = relatedImagesFromEnv([
      deployment('a', 'sa', [{ name: 'RELATED_IMAGE_DB', value: 'db:1' }]),
      deployment('b', 'sa', [{ name: 'RELATED_IMAGE_DB', value: 'db:2' }]),
    ]);
    assert.deepEqual(images, [
      { name: 'a-manager-db', image: 'db:1' },
      { name: 'b-manager-db', image: 'db:2' },
    ]);
    assert.throws(
      () =>
        relatedImagesFromEnv([
          deployment('a', 'sa', [{ name: 'RELATED_IMAGE_DB', valueFrom: { configMapKeyRef: {} } }]),
        ]),
      /RELATED_IMAGE_DB .* has no literal value/,
    );
  });

  it('builds alm-examples from the samples, keeps base descriptors for served versions and drops base entries without a CRD', () => {
    const base = newBaseCsv('p', [
      {
        name: 'memcacheds.cache.example.com',
        version: 'v1',
        kind: 'Memcached',
        displayName: 'Memcached',
        specDescriptors: [{ displayName: 'Size', path: 'size' }],
      },
      { name: 'gone.cache.example.com', version: 'v1', kind: 'Gone', displayName: 'Gone' },
    ]);
    const sample: ManifestObject = {
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name: 'memcached-sample' },
      spec: { size: 1 },
    };
    const manifests = collectManifests([
      deployment('op', 'sa'),
      crd('cache.example.com', 'memcacheds', 'Memcached', [
        { name: 'v1', served: true },
        { name: 'v1alpha1', served: true },
        { name: 'v0', served: false },
      ]),
      sample,
    ]);
    assert.equal(manifests.customResources.length, 1);
    const { csv, leftovers } = fillCsv(base, manifests, OPTIONS);
    assert.equal(
      csv.metadata.annotations!['alm-examples'],
      JSON.stringify(
        [
          {
            apiVersion: 'cache.example.com/v1',
            kind: 'Memcached',
            metadata: { name: 'memcached-sample' },
            spec: { size: 1 },
          },
        ],
        null,
        2,
      ),
    );
    assert.ok(csv.metadata.annotations!['alm-examples'].includes('\n  {\n    "apiVersion"'), '2-space indent');
    assert.deepEqual((csv.spec['customresourcedefinitions'] as { owned: unknown[] }).owned, [
      {
        name: 'memcacheds.cache.example.com',
        version: 'v1',
        kind: 'Memcached',
        displayName: 'Memcached',
        specDescriptors: [{ displayName: 'Size', path: 'size' }],
      },
      { name: 'memcacheds.cache.example.com', version: 'v1alpha1', kind: 'Memcached' },
    ]);
    assert.ok(!leftovers.includes(sample), 'custom resources are examples, not bundle files');
  });

  it('describes admission and conversion webhooks, tied to the Deployment through the Service selector', () => {
    const service: ManifestObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'op-webhook-service', namespace: 'ns' },
      spec: { selector: { app: 'op' }, ports: [{ port: 443, targetPort: 9443 }] },
    };
    const validating: ManifestObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'v' },
      webhooks: [
        {
          name: 'vmemcached.kb.io',
          admissionReviewVersions: ['v1'],
          clientConfig: { service: { name: 'op-webhook-service', namespace: 'ns', path: '/validate' } },
          failurePolicy: 'Fail',
          rules: [{ operations: ['CREATE'] }],
          sideEffects: 'None',
        },
      ],
    };
    const mutating: ManifestObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'm' },
      webhooks: [
        {
          name: 'mmemcached.kb.io',
          clientConfig: { service: { name: 'op-webhook-service', namespace: 'ns', path: '/mutate' } },
          reinvocationPolicy: 'Never',
        },
      ],
    };
    const conversion = crd('cache.example.com', 'memcacheds', 'Memcached', [{ name: 'v1', served: true }], {
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { service: { name: 'op-webhook-service', namespace: 'ns', path: '/convert' } },
          conversionReviewVersions: ['v1'],
        },
      },
    });
    const { csv, leftovers } = fillCsv(
      newBaseCsv('p', []),
      collectManifests([deployment('op', 'sa', [], { app: 'op' }), service, validating, mutating, conversion]),
      OPTIONS,
    );
    assert.deepEqual(csv.spec['webhookdefinitions'], [
      {
        type: 'ConversionWebhook',
        conversionCRDs: ['memcacheds.cache.example.com'],
        generateName: 'cmemcacheds.kb.io',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        webhookPath: '/convert',
        deploymentName: 'op',
        containerPort: 443,
        targetPort: 9443,
      },
      {
        type: 'MutatingAdmissionWebhook',
        generateName: 'mmemcached.kb.io',
        sideEffects: 'None',
        admissionReviewVersions: ['v1beta1'],
        webhookPath: '/mutate',
        deploymentName: 'op',
        containerPort: 443,
        targetPort: 9443,
        reinvocationPolicy: 'Never',
      },
      {
        type: 'ValidatingAdmissionWebhook',
        generateName: 'vmemcached.kb.io',
        rules: [{ operations: ['CREATE'] }],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        webhookPath: '/validate',
        deploymentName: 'op',
        containerPort: 443,
        targetPort: 9443,
      },
    ]);
    assert.ok(leftovers.includes(service), 'the Service is still shipped');
    assert.ok(!leftovers.some((o) => o.kind.endsWith('WebhookConfiguration')));
  });
});

describe('bundle files', () => {
  const csv = newBaseCsv('Memcached-Operator', []);
  it('names files as operator-sdk does, strips namespaces, drops unsupported kinds and prefixes clashes with dup<N>_', () => {
    const cm = (name: string): ManifestObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'ns' },
      data: {},
    });
    const files = manifestFiles(
      'Memcached-Operator',
      csv,
      [crd('cache.example.com', 'memcacheds', 'Memcached', [{ name: 'v1', served: true }])],
      [
        cm('settings'),
        cm('settings'),
        cm('settings'),
        { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'mon', namespace: 'ns' } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'system' } },
        { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'cert', namespace: 'ns' } },
      ],
    );
    assert.deepEqual(
      files.map((f) => f.name),
      [
        'memcached-operator.clusterserviceversion.yaml',
        'cache.example.com_memcacheds.yaml',
        'settings_v1_configmap.yaml',
        'dup1_settings_v1_configmap.yaml',
        'dup2_settings_v1_configmap.yaml',
        'mon_monitoring.coreos.com_v1_servicemonitor.yaml',
      ],
    );
    for (const file of files.slice(1)) assert.doesNotMatch(file.content, /namespace:/);
    assert.match(files[0]!.content, /namespace: placeholder/, 'the CSV keeps the base namespace');
  });

  it('writes identical labels to annotations.yaml and bundle.Dockerfile', () => {
    const options = {
      packageName: 'memcached-operator',
      channels: ['alpha', 'stable'],
      defaultChannel: 'stable',
      builder: 'b',
      projectLayout: 'l',
      withScorecard: true,
      bundleDir: 'bundle',
    };
    const annotations = (YAML.parse(annotationsYaml(options)) as { annotations: Record<string, string> }).annotations;
    const labels = Object.fromEntries(
      [...bundleDockerfile(options).matchAll(/^LABEL ([^=]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!] as const),
    );
    assert.deepEqual(labels, annotations);
    assert.equal(annotations['operators.operatorframework.io.bundle.channels.v1'], 'alpha,stable');
    assert.equal(annotations['operators.operatorframework.io.bundle.channel.default.v1'], 'stable');
    assert.match(bundleDockerfile(options), /COPY bundle\/tests\/scorecard \/tests\/scorecard\/\n$/);
    assert.doesNotMatch(bundleDockerfile({ ...options, withScorecard: false }), /scorecard/);
  });

  it('keeps createdAt while the content is unchanged, renews it on change, and honours SOURCE_DATE_EPOCH', () => {
    const filled = newBaseCsv('p', []);
    const old = new Date('2025-01-02T03:04:05Z');
    const first = chooseCreatedAt(filled, undefined, old, undefined);
    assert.equal(first, '2025-01-02T03:04:05Z');
    const previous = parsePreviousCsv(
      YAML.stringify({
        ...filled,
        metadata: { ...filled.metadata, annotations: { ...filled.metadata.annotations, createdAt: first } },
      }),
    );
    assert.equal(chooseCreatedAt(filled, previous, new Date(), undefined), first);
    const changed = { ...filled, spec: { ...filled.spec, version: '9.9.9' } };
    assert.notEqual(chooseCreatedAt(changed, previous, new Date('2030-01-01T00:00:00Z'), undefined), first);
    assert.equal(chooseCreatedAt(changed, previous, new Date(), '1700000000'), '2023-11-14T22:13:20Z');
  });
});

const MANIFESTS = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  namespace: ns
spec:
  selector: {matchLabels: {app: op}}
  template:
    metadata: {labels: {app: op}}
    spec:
      containers: [{name: manager, image: "example.com/op:v1"}]
---
apiVersion: v1
kind: Service
metadata: {name: op-metrics, namespace: ns}
spec: {ports: [{port: 8443}]}
`;

function io(lines: string[] = []): CommandIO {
  return {
    out: (l) => lines.push(l),
    progress: (l) => lines.push(l),
    debug: () => undefined,
    confirm: () => Promise.reject(new Error('no prompts')),
  };
}

function bundleOptions(directory: string, extra: Partial<GenerateBundleOptions>): GenerateBundleOptions {
  return {
    directory,
    overwrite: true,
    manifests: false,
    metadata: false,
    stdout: false,
    quiet: true,
    useImageDigests: false,
    packageName: 'op',
    ...extra,
  };
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      out[join(entry.parentPath, entry.name).slice(dir.length + 1)] = readFileSync(
        join(entry.parentPath, entry.name),
        'utf8',
      );
  }
  return out;
}

describe('generate bundle command', () => {
  it("needs exactly one input source, with operator-sdk's messages", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-input-'));
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, {}), io()),
      /^Error: one of stdin, --input-dir, or --deploy-dir \(and optionally --crds-dir\) must be set|one of stdin, --input-dir, or --deploy-dir \(and optionally --crds-dir\) must be set\. Pipe manifests in/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { stdin: MANIFESTS, inputDir: 'x' }), io()),
      /none of --input-dir, --deploy-dir, or --crds-dir may be set if reading from stdin/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { inputDir: 'x', deployDir: 'y' }), io()),
      /--input-dir cannot be combined with --deploy-dir/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { inputDir: 'missing' }), io()),
      /input directory missing does not exist/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { stdin: MANIFESTS, packageName: undefined }), io()),
      /--package <name> must be set if PROJECT config file is not present/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { stdin: 'kind: [' }), io()),
      (err: unknown) =>
        err instanceof UsageError && /stdin is not valid YAML/.test(err.message) && !err.message.includes('\n'),
    );
  });

  it('requires a strict semantic version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-version-'));
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { stdin: MANIFESTS, version: 'v0.0.1' }), io()),
      /version v0\.0\.1 contains bad values/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { stdin: MANIFESTS, version: '01.0.0' }), io()),
      /version 01\.0\.0 contains bad values/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { stdin: MANIFESTS, version: 'latest' }), io()),
      /latest is not a valid semantic version/,
    );
    await assert.rejects(
      generateBundleCommand(bundleOptions(dir, { stdin: MANIFESTS, defaultChannel: 'stable' }), io()),
      /--default-channel stable is not one of --channels \(alpha\)/,
    );
  });

  it('is byte-identical on re-run, keeps createdAt until the input changes, and removes stale manifests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-rerun-'));
    await generateBundleCommand(
      bundleOptions(dir, { stdin: MANIFESTS, version: '0.0.1', now: new Date('2025-01-01T00:00:00Z') }),
      io(),
    );
    const first = snapshot(dir);
    assert.deepEqual(Object.keys(first).sort(), [
      'bundle.Dockerfile',
      'bundle/.ts-operator-sdk-generated.yaml',
      'bundle/manifests/op-metrics_v1_service.yaml',
      'bundle/manifests/op.clusterserviceversion.yaml',
      'bundle/metadata/annotations.yaml',
    ]);
    assert.match(first['bundle/manifests/op.clusterserviceversion.yaml']!, /createdAt: "2025-01-01T00:00:00Z"/);
    await generateBundleCommand(
      bundleOptions(dir, { stdin: MANIFESTS, version: '0.0.1', now: new Date('2026-06-01T00:00:00Z') }),
      io(),
    );
    assert.deepEqual(snapshot(dir), first);
    await generateBundleCommand(
      bundleOptions(dir, {
        stdin: MANIFESTS.replace('op-metrics', 'op-metrics2'),
        version: '0.0.1',
        now: new Date('2026-06-01T00:00:00Z'),
      }),
      io(),
    );
    const second = snapshot(dir);
    assert.ok(second['bundle/manifests/op-metrics2_v1_service.yaml']);
    assert.equal(second['bundle/manifests/op-metrics_v1_service.yaml'], undefined, 'stale file removed');
    await generateBundleCommand(
      bundleOptions(dir, { stdin: MANIFESTS, version: '0.0.2', now: new Date('2026-06-01T00:00:00Z') }),
      io(),
    );
    assert.match(snapshot(dir)['bundle/manifests/op.clusterserviceversion.yaml']!, /createdAt: "2026-06-01T00:00:00Z"/);
  });

  it('reads --deploy-dir plus --crds-dir, uses the kustomize base, and keeps metadata with --overwrite=false', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-dirs-'));
    mkdirSync(join(dir, 'deploy'));
    mkdirSync(join(dir, 'crds'));
    mkdirSync(join(dir, 'config/manifests/bases'), { recursive: true });
    writeFileSync(join(dir, 'deploy', 'all.yaml'), MANIFESTS);
    writeFileSync(
      join(dir, 'crds', 'crd.yaml'),
      YAML.stringify(crd('cache.example.com', 'memcacheds', 'Memcached', [{ name: 'v1', served: true }])),
    );
    const base = newBaseCsv('op', []);
    base.spec['description'] = 'Hand-written description';
    writeFileSync(join(dir, 'config/manifests/bases/op.clusterserviceversion.yaml'), YAML.stringify(base));
    mkdirSync(join(dir, 'bundle/metadata'), { recursive: true });
    writeFileSync(join(dir, 'bundle/metadata/annotations.yaml'), 'annotations: {custom: kept}\n');
    await generateBundleCommand(bundleOptions(dir, { deployDir: 'deploy', crdsDir: 'crds', overwrite: false }), io());
    const csv = YAML.parse(
      readFileSync(join(dir, 'bundle/manifests/op.clusterserviceversion.yaml'), 'utf8'),
    ) as CsvObject;
    assert.equal(csv.spec['description'], 'Hand-written description');
    assert.ok(existsSync(join(dir, 'bundle/manifests/cache.example.com_memcacheds.yaml')));
    assert.equal(readFileSync(join(dir, 'bundle/metadata/annotations.yaml'), 'utf8'), 'annotations: {custom: kept}\n');
  });

  it('--stdout prints the manifests and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-stdout-'));
    const lines: string[] = [];
    await generateBundleCommand(bundleOptions(dir, { stdin: MANIFESTS, stdout: true }), io(lines));
    assert.deepEqual(readdirSync(dir), []);
    const documents = YAML.parseAllDocuments(lines.join('\n')).map((d) => (d.toJSON() as ManifestObject).kind);
    assert.deepEqual(documents, ['ClusterServiceVersion', 'Service']);
  });
});

describe('--use-image-digests', () => {
  it('parses references like container tools', () => {
    assert.deepEqual(parseImageReference('memcached:1.6'), {
      registry: 'docker.io',
      repository: 'library/memcached',
      tag: '1.6',
      digest: undefined,
      original: 'memcached:1.6',
    });
    assert.deepEqual(parseImageReference('localhost:5000/team/op'), {
      registry: 'localhost:5000',
      repository: 'team/op',
      tag: 'latest',
      digest: undefined,
      original: 'localhost:5000/team/op',
    });
    assert.deepEqual(
      parseImageReference('quay.io/x/y@sha256:abababababababababababababababababababababababababababababababab'),
      {
        registry: 'quay.io',
        repository: 'x/y',
        tag: undefined,
        digest: 'sha256:abababababababababababababababababababababababababababababababab',
        original: 'quay.io/x/y@sha256:abababababababababababababababababababababababababababababababab',
      },
    );
  });

  it('an unreachable registry is a one-line error naming the image and the way out', async () => {
    // A port that was just free: nothing listens there, so the connection is refused.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as { port: number };
        server.close(() => resolve(p));
      });
    });
    const image = `127.0.0.1:${port}/team/op:v1`;
    await assert.rejects(resolveImageDigest(image), (err: unknown) => {
      assert.ok(err instanceof UsageError);
      assert.equal(
        err.message,
        `--use-image-digests cannot resolve ${image}: registry 127.0.0.1:${port} is unreachable (ECONNREFUSED). Check the network and the image name, or run without --use-image-digests (USE_IMAGE_DIGESTS=false).`,
      );
      return true;
    });
    const dir = mkdtempSync(join(tmpdir(), 'bundle-digests-'));
    await assert.rejects(
      generateBundleCommand(
        bundleOptions(dir, { stdin: MANIFESTS.replace('example.com/op:v1', image), useImageDigests: true }),
        io(),
      ),
      /is unreachable \(ECONNREFUSED\)/,
    );
    assert.deepEqual(readdirSync(dir), [], 'nothing written on failure');
  });

  it('already-pinned images need no registry', async () => {
    assert.equal(
      await resolveImageDigest('127.0.0.1:1/x@sha256:abababababababababababababababababababababababababababababababab'),
      '127.0.0.1:1/x@sha256:abababababababababababababababababababababababababababababababab',
    );
  });

  it('a malformed reference is refused before any registry call, by the grammar run bundle uses', async () => {
    await assert.rejects(
      resolveImageDigest('127.0.0.1:1/Team//op:v1'),
      (err: Error) => err.name === 'UsageError' && /is not a valid image reference/.test(err.message),
    );
  });

  it('collects input documents, flattening Lists and removing exact duplicates', () => {
    const objects = parseManifests(
      `apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\n`,
      'stdin',
    );
    assert.equal(objects.length, 2);
    assert.equal(collectManifests(objects).others.length, 1);
  });
});

describe('generate bundle CLI input detection', () => {
  const cli = fileURLToPath(new URL('../../../bin/ts-operator-sdk.js', import.meta.url));
  it('reads piped manifests, and with stdin closed fails at once with the input error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-cli-'));
    const piped = spawnSync(process.execPath, [cli, 'generate', 'bundle', '--package', 'op', '-q'], {
      cwd: dir,
      input: MANIFESTS,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(piped.status, 0, piped.stderr);
    assert.equal(piped.stderr, '', '-q prints nothing');
    assert.ok(existsSync(join(dir, 'bundle/manifests/op.clusterserviceversion.yaml')));
    const closed = spawnSync(process.execPath, [cli, 'generate', 'bundle', '--package', 'op'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(closed.status, 1);
    assert.equal(
      closed.stderr,
      'Error: one of stdin, --input-dir, or --deploy-dir (and optionally --crds-dir) must be set. Pipe manifests in, e.g. `kubectl kustomize config/manifests | ts-operator-sdk generate bundle`, or pass --input-dir.\n',
    );
  });
});

describe('--use-image-digests against a stand-in registry', () => {
  it('pins container and related images through HEAD /v2/.../manifests with an anonymous bearer token, and lists them in relatedImages', async () => {
    // A stand-in for a registry (none is reachable here): a real HTTP server speaking the
    // distribution API's token challenge and manifest HEAD, so the client's requests are real.
    const seen: string[] = [];
    const server = createHttpServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
      const host = req.headers.host!;
      if (req.url!.startsWith('/token')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'anon' }));
        return;
      }
      if (req.headers.authorization !== 'Bearer anon') {
        res
          .writeHead(401, {
            'www-authenticate': `Bearer realm="http://${host}/token",service="stand-in",scope="repository:team/op:pull"`,
          })
          .end();
        return;
      }
      const digest =
        req.url === '/v2/team/op/manifests/v1'
          ? 'sha256:1111'
          : req.url === '/v2/team/sidecar/manifests/v2'
            ? 'sha256:2222'
            : undefined;
      if (!digest) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'docker-content-digest': digest }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const registry = `127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const dir = mkdtempSync(join(tmpdir(), 'bundle-pin-'));
      mkdirSync(join(dir, 'config/manifests/bases'), { recursive: true });
      const base = newBaseCsv('op', []);
      base.spec['relatedImages'] = [{ name: 'sidecar', image: `${registry}/team/sidecar:v2` }];
      writeFileSync(join(dir, 'config/manifests/bases/op.clusterserviceversion.yaml'), YAML.stringify(base));
      await generateBundleCommand(
        bundleOptions(dir, {
          stdin: MANIFESTS.replace('example.com/op:v1', `${registry}/team/op:v1`),
          useImageDigests: true,
        }),
        io(),
      );
      const csv = YAML.parse(readFileSync(join(dir, 'bundle/manifests/op.clusterserviceversion.yaml'), 'utf8')) as {
        spec: {
          relatedImages: unknown;
          install: {
            spec: { deployments: Array<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }> };
          };
        };
      };
      assert.equal(
        csv.spec.install.spec.deployments[0]!.spec.template.spec.containers[0]!.image,
        `${registry}/team/op@sha256:1111`,
      );
      assert.deepEqual(csv.spec.relatedImages, [
        { image: `${registry}/team/op@sha256:1111`, name: 'manager' },
        { image: `${registry}/team/sidecar@sha256:2222`, name: 'sidecar' },
      ]);
      assert.ok(
        seen.some((s) => s.startsWith('GET /token?service=stand-in&scope=repository%3Ateam%2Fop%3Apull')),
        seen.join('\n'),
      );
      await assert.rejects(
        resolveImageDigest(`${registry}/team/missing:v1`),
        /cannot resolve .*missing:v1: the registry answered HTTP 404\. Check that the image is pushed/,
      );
    } finally {
      server.close();
    }
  });
});

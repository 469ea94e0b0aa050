/**
 * `create webhook` on a scaffolded project (no install): what PROJECT
 * records, the files and markers each type adds, a second type added to a
 * kind that has one (no --force, the user's code kept), --force, --dry-run,
 * the conversion pieces (storage version, CRD patch, spoke functions), and
 * the marker's paths being the ones the runtime's webhook builder serves.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { defineKind, newWebhookManagedBy } from '../../src/runtime/index.js';
import { copyProject, hashTree, runCliOk, SCENARIOS, scaffoldScenario, tempProjectDir } from '../scaffold/harness.js';
import { unstartedManager } from './unstarted-manager.js';

let twoVersions: string;

before(() => {
  twoVersions = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
  runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v1alpha1', '--kind', 'Memcached', '--controller=false'],
    twoVersions,
  );
});

const webhook = (...extra: string[]): string[] => [
  'create',
  'webhook',
  '--group',
  'cache',
  '--version',
  'v1',
  '--kind',
  'Memcached',
  ...extra,
];
const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');

/** The `webhooks:` block of the v1 Memcached entry in PROJECT. */
function projectWebhooks(dir: string): string {
  const text = read(dir, 'PROJECT');
  const entry = /path: apis\/v1\n {2}version: v1\n((?: {2}webhooks:\n(?: {4}.*\n)+)?)/.exec(text);
  assert.ok(entry, text);
  return entry[1]!;
}

describe('create webhook', () => {
  it("records the types in PROJECT in kubebuilder's format", () => {
    const dir = copyProject(twoVersions);
    runCliOk(webhook('--defaulting', '--programmatic-validation', '--conversion', '--spoke', 'v1alpha1'), dir);
    assert.equal(
      projectWebhooks(dir),
      '  webhooks:\n    conversion: true\n    defaulting: true\n    spoke:\n    - v1alpha1\n    validation: true\n    webhookVersion: v1\n',
    );
  });

  it("adds a second type to a kind that has one, without --force, keeping the user's code", () => {
    const dir = copyProject(twoVersions);
    runCliOk(webhook('--defaulting'), dir);
    const file = 'webhooks/v1/memcached_webhook.ts';
    const userCode = "    memcached.spec = { foo: 'default', ...memcached.spec };\n";
    writeFileSync(
      join(dir, file),
      read(dir, file).replace('    // TODO(user): fill in your defaulting logic.\n', userCode),
    );
    runCliOk(webhook('--programmatic-validation'), dir);
    const text = read(dir, file);
    assert.ok(text.includes(userCode), 'the defaulter the user wrote is kept');
    assert.match(
      text,
      /\.withDefaulter\(new MemcachedCustomDefaulter\(\)\)\n {4}\.withValidator\(new MemcachedCustomValidator\(\)\)\n {4}\/\/ \+kubebuilder:scaffold:webhook-builder/,
    );
    assert.match(
      text,
      /\+kubebuilder:webhook:path=\/mutate-cache-example-com-v1-memcached,mutating=true,failurePolicy=fail,sideEffects=None,groups=cache\.example\.com,resources=memcacheds,verbs=create;update,versions=v1,name=mmemcached-v1\.cache\.kb\.io,admissionReviewVersions=v1/,
    );
    assert.match(text, /\+kubebuilder:webhook:path=\/validate-cache-example-com-v1-memcached,mutating=false,/);
    assert.equal(
      text.match(/^import type \{ AdmissionContext \} from 'ts-operator-sdk\/webhook';$/gm)?.length,
      1,
      'the import both types need is written once',
    );
    assert.equal(
      projectWebhooks(dir),
      '  webhooks:\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n',
    );
    const main = read(dir, 'main.ts');
    assert.equal(main.match(/setupMemcachedWebhookWithManager\(mgr\);/g)?.length, 1, 'registered once');
    assert.equal(main.match(/mgr\.addReadyzCheck\('webhook'/g)?.length, 1);
    assert.match(
      main,
      /if \(process\.env\.ENABLE_WEBHOOKS !== 'false'\) \{\n {2}setupMemcachedWebhookWithManager\(mgr\);\n\}\n\/\/ \+kubebuilder:scaffold:builder/,
    );
    assert.match(
      read(dir, 'webhooks/v1/memcached_webhook.test.ts'),
      /runs the defaulting webhook[\s\S]*runs the validating webhook/,
    );
  });

  it("--force scaffolds the kind's files again with every type it has", () => {
    const dir = copyProject(twoVersions);
    runCliOk(webhook('--defaulting'), dir);
    runCliOk(webhook('--programmatic-validation'), dir);
    const file = 'webhooks/v1/memcached_webhook.ts';
    writeFileSync(join(dir, file), 'broken\n');
    runCliOk(webhook('--defaulting', '--force'), dir);
    assert.match(read(dir, file), /withDefaulter[\s\S]*withValidator/);
  });

  it('uncomments the [WEBHOOK] parts of config/default and the OLM cert patch, and wires the build', () => {
    const dir = copyProject(twoVersions);
    runCliOk(webhook('--defaulting'), dir);
    const kustomization = read(dir, 'config/default/kustomization.yaml');
    assert.match(kustomization, /^- \.\.\/webhook$/m);
    assert.match(kustomization, /^- path: manager_webhook_patch\.yaml\n {2}target:\n {4}kind: Deployment$/m);
    assert.match(kustomization, /^#- \.\.\/certmanager$/m, "cert-manager stays the user's choice, as in kubebuilder");
    assert.match(
      read(dir, 'config/manifests/kustomization.yaml'),
      /^patches:\n- target:[\s\S]*\$patch: delete\n {12}name: webhook-certs/m,
    );
    assert.match(read(dir, 'tsconfig.json'), /"webhooks\/\*\*\/\*\.ts"/);
    assert.match(read(dir, 'Dockerfile'), /^COPY webhooks\/ webhooks\/$/m);
    assert.match(read(dir, 'config/network-policy/kustomization.yaml'), /^- allow-webhook-traffic\.yaml$/m);
    for (const path of [
      'config/webhook/kustomization.yaml',
      'config/webhook/kustomizeconfig.yaml',
      'config/webhook/service.yaml',
      'config/certmanager/issuer.yaml',
      'config/certmanager/certificate-webhook.yaml',
      'config/certmanager/certificate-metrics.yaml',
      'config/certmanager/kustomization.yaml',
      'config/certmanager/kustomizeconfig.yaml',
      'config/default/manager_webhook_patch.yaml',
    ]) {
      assert.ok(existsSync(join(dir, path)), path);
    }
    assert.ok(!existsSync(join(dir, 'config/crd/patches')), 'the CRD patch is for conversion only');
  });

  it('a conversion-only webhook leaves manifests.yaml out of config/webhook, so config/default builds; the first admission webhook puts it back', () => {
    const dir = copyProject(twoVersions);
    const build = (): string =>
      execFileSync('kubectl', ['kustomize', join(dir, 'config/default')], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    runCliOk(webhook('--conversion', '--spoke', 'v1alpha1'), dir);
    runCliOk(['generate', 'manifests'], dir);
    assert.match(read(dir, 'config/webhook/kustomization.yaml'), /^#- manifests\.yaml$/m);
    assert.ok(
      !existsSync(join(dir, 'config/webhook/manifests.yaml')),
      'generate manifests writes it for admission only',
    );
    assert.match(build(), /strategy: Webhook/);
    runCliOk(webhook('--defaulting'), dir);
    runCliOk(['generate', 'manifests'], dir);
    assert.match(read(dir, 'config/webhook/kustomization.yaml'), /^- manifests\.yaml$/m);
    assert.match(build(), /^kind: MutatingWebhookConfiguration$/m);
  });

  it('conversion: the hub becomes the storage version, the CRD patch and the spoke functions appear', () => {
    const dir = copyProject(twoVersions);
    runCliOk(webhook('--conversion', '--spoke', 'v1alpha1'), dir);
    assert.match(
      read(dir, 'apis/v1/memcached_types.ts'),
      / \* \+kubebuilder:object:root=true\n \* \+kubebuilder:storageversion\n/,
    );
    assert.doesNotMatch(read(dir, 'apis/v1alpha1/memcached_types.ts'), /storageversion/);
    assert.match(
      read(dir, 'config/crd/patches/webhook_in_memcacheds.yaml'),
      /name: memcacheds\.cache\.example\.com\nspec:\n {2}conversion:\n {4}strategy: Webhook/,
    );
    const crd = read(dir, 'config/crd/kustomization.yaml');
    assert.match(
      crd,
      /^- path: patches\/webhook_in_memcacheds\.yaml\n# \+kubebuilder:scaffold:crdkustomizewebhookpatch$/m,
    );
    assert.match(crd, /^configurations:\n- kustomizeconfig\.yaml$/m);
    assert.match(
      read(dir, 'apis/v1alpha1/memcached_conversion.ts'),
      /export function convertTo\(src: Memcached\): MemcachedHub[\s\S]*export function convertFrom\(hub: MemcachedHub\): Memcached/,
    );
    assert.match(
      read(dir, 'webhooks/v1/memcached_webhook.ts'),
      / {8}\{\n {10}kind: MemcachedV1alpha1,\n {10}convertTo: v1alpha1Conversion\.convertTo,\n {10}convertFrom: v1alpha1Conversion\.convertFrom,\n {8}\},\n/,
    );
    assert.match(
      read(dir, 'config/default/kustomization.yaml'),
      /#  - select:\n# {6}kind: CustomResourceDefinition\n# {6}name: memcacheds\.cache\.example\.com/,
    );
  });

  it('a project from before webhooks (no webhook patch, no CA-injection markers) gets the files and a note for each missing piece', () => {
    const dir = copyProject(twoVersions);
    const path = join(dir, 'config/default/kustomization.yaml');
    const text = read(dir, 'config/default/kustomization.yaml');
    writeFileSync(path, text.slice(0, text.indexOf('\n# [WEBHOOK] To enable the webhooks')) + '\n');
    const result = runCliOk(webhook('--conversion', '--spoke', 'v1alpha1'), dir);
    assert.match(
      result.stdout,
      /Note: config\/default\/kustomization\.yaml does not apply manager_webhook_patch\.yaml: add it under `patches:`/,
    );
    assert.match(
      result.stdout,
      /Note: config\/default\/kustomization\.yaml has no "# \+kubebuilder:scaffold:crdkustomizecainjectionns" marker/,
    );
    assert.ok(existsSync(join(dir, 'apis/v1alpha1/memcached_conversion.ts')));
  });

  it('--dry-run writes nothing', () => {
    const dir = copyProject(twoVersions);
    const before = hashTree(dir);
    const result = runCliOk(webhook('--defaulting', '--programmatic-validation', '--dry-run'), dir);
    assert.match(result.stdout, /webhooks\/v1\/memcached_webhook\.ts/);
    assert.equal(hashTree(dir), before);
  });

  it("writes into the marker the paths the runtime's webhook builder serves: dotted group, domain-only group, mixed-case kind", () => {
    const dir = tempProjectDir();
    runCliOk(['init', '--domain', 'my-org.example.co.uk', '--skip-install'], dir);
    const kinds = [
      {
        group: 'web.cache',
        version: 'v1beta2',
        kind: 'HTTPRouteCache',
        file: 'webhooks/web.cache/v1beta2/httproutecache_webhook.ts',
      },
      { group: '', version: 'v1', kind: 'DNSZone', file: 'webhooks/v1/dnszone_webhook.ts' },
    ];
    runCliOk(['edit', '--multigroup'], dir);
    for (const { group, version, kind } of kinds) {
      runCliOk(['create', 'api', '--group', group, '--version', version, '--kind', kind, '--controller=false'], dir);
      runCliOk(
        [
          'create',
          'webhook',
          '--group',
          group,
          '--version',
          version,
          '--kind',
          kind,
          '--defaulting',
          '--programmatic-validation',
        ],
        dir,
      );
    }
    for (const { group, version, kind, file } of kinds) {
      const text = read(dir, file);
      const markerPath = (mutating: boolean): string => {
        const match = new RegExp(`\\+kubebuilder:webhook:path=([^,]+),mutating=${mutating},`).exec(text);
        assert.ok(match, `${file} has no ${mutating ? 'mutating' : 'validating'} webhook marker:\n${text}`);
        return match[1]!;
      };
      // The builder registers on a real (unstarted) manager's webhook server: the paths it serves, not a function of ours.
      const mgr = unstartedManager();
      const qualified = [group, 'my-org.example.co.uk'].filter(Boolean).join('.');
      const served = defineKind({
        group: qualified,
        version,
        kind,
        plural: `${kind.toLowerCase()}s`,
        namespaced: true,
      });
      newWebhookManagedBy(mgr, served)
        .withDefaulter({ default: () => undefined })
        .withValidator({
          validateCreate: () => undefined,
          validateUpdate: () => undefined,
          validateDelete: () => undefined,
        })
        .complete();
      const server = mgr.getWebhookServer();
      for (const mutating of [true, false]) {
        const path = markerPath(mutating);
        assert.equal(server.has(path), true, `${kind}: the marker's path ${path} is not one the builder serves`);
      }
    }
  });
});

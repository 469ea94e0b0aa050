/**
 * The webhook configurations `generate manifests` writes are valid
 * admissionregistration.k8s.io/v1 objects: the real kube-apiserver accepts
 * them unchanged (server-side dry run, strict field validation, so no field
 * is silently dropped), stores them with every field intact once the Service
 * points at an existing namespace, and keeps admitting objects while the
 * webhook Service is absent because failurePolicy is Ignore.
 */
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { InvalidError } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { generateManifests } from '../../src/generators/manifests.js';
import { WEBHOOK_MANIFEST_PATH, type WebhookConfiguration } from '../../src/generators/webhook/webhook.js';
import { startControlPlane } from './control-plane.js';

const crdFixture = new URL('../../../test/fixtures/crd/memcached/', import.meta.url);
const webhookFixture = new URL('../../../test/fixtures/webhook/memcached/', import.meta.url);

/** Every optional argument controller-gen knows, so the server checks each generated field. */
const ALL_ARGUMENTS = [
  '// +kubebuilder:webhook:path=/mutate-core-v1-pod,mutating=true,failurePolicy=ignore,matchPolicy=Equivalent,sideEffects=NoneOnDryRun,groups=core,resources=pods,verbs=create;update;delete;connect,versions=v1,name=mpod-v1.kb.io,admissionReviewVersions=v1;v1beta1,reinvocationPolicy=IfNeeded,timeoutSeconds=5,serviceName=pod-hooks,serviceNamespace=system,servicePort=8443,webhookVersions=v1',
  '// +kubebuilder:webhook:url="https://hooks.example.com:9443/validate-apps",mutating=false,matchPolicy=Exact,sideEffects=None,groups=apps,resources=deployments;statefulsets,verbs=*,versions=v1,name=vapps-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=30',
].join('\n');

const API = '/apis/admissionregistration.k8s.io/v1';
const collection = (config: WebhookConfiguration): string =>
  `${API}/${config.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations'}`;

describe('generated webhook configurations on a real kube-apiserver', () => {
  let env: Environment;
  let rest: RestClient;
  let project: string;
  let configurations: WebhookConfiguration[];
  let crd: object;

  before(async () => {
    env = await startControlPlane();
    rest = new RestClient(env.kubeConfig);
    project = await mkdtemp(join(tmpdir(), 'webhook-project-'));
    await cp(new URL('apis', crdFixture), join(project, 'apis'), { recursive: true });
    await cp(new URL('internal', webhookFixture), join(project, 'internal'), { recursive: true });
    await mkdir(join(project, 'webhooks'), { recursive: true });
    await writeFile(join(project, 'webhooks', 'all_arguments.ts'), `${ALL_ARGUMENTS}\n`);
    const files = await generateManifests({
      projectDir: project,
      domain: 'example.com',
      multigroup: false,
      resources: [
        { group: 'cache', domain: 'example.com', version: 'v1', kind: 'Memcached', path: 'apis/v1', namespaced: true },
      ],
    });
    const text = (path: string) => files.find((file) => file.path === path)!.content;
    configurations = parseAllDocuments(text(WEBHOOK_MANIFEST_PATH)).map((doc) => doc.toJS() as WebhookConfiguration);
    crd = parseAllDocuments(text('config/crd/bases/cache.example.com_memcacheds.yaml'))[0]!.toJS() as object;
  });
  after(async () => {
    await env?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('generates both kinds with all four webhooks', () => {
    assert.deepEqual(
      configurations.map((c) => [c.kind, c.webhooks.map((w) => w.name)]),
      [
        ['MutatingWebhookConfiguration', ['mmemcached-v1.kb.io', 'mpod-v1.kb.io']],
        ['ValidatingWebhookConfiguration', ['vapps-v1.kb.io', 'vmemcached-v1.kb.io']],
      ],
    );
  });

  it('the API server accepts the file as generated (server-side dry run, strict field validation)', async () => {
    for (const config of configurations) {
      const accepted = await rest.request<WebhookConfiguration>('POST', collection(config), {
        body: config,
        query: { dryRun: 'All', fieldValidation: 'Strict' },
      });
      assert.equal(accepted.metadata.name, config.metadata.name);
      assert.deepEqual(
        accepted.webhooks.map((w) => w.name),
        config.webhooks.map((w) => w.name),
      );
    }
  });

  it('a wrong operation is refused, so the acceptance above is a real check', async () => {
    const broken = structuredClone(configurations[0]!);
    broken.webhooks[0]!.rules[0]!.operations = ['PATCH'];
    await assert.rejects(
      rest.request('POST', collection(broken), { body: broken, query: { dryRun: 'All' } }),
      (err: unknown) => {
        assert.ok(err instanceof InvalidError, `expected 422 Invalid, got ${String(err)}`);
        assert.match(err.message, /operations/);
        return true;
      },
    );
  });

  it('stored in an existing namespace with failurePolicy Ignore, every field survives and admission keeps working', async () => {
    await env.installCRDs({ crds: [crd] });
    for (const generated of configurations) {
      const config = structuredClone(generated);
      for (const webhook of config.webhooks) {
        // The Service does not exist; Ignore lets the API server admit objects anyway.
        webhook.failurePolicy = 'Ignore';
        if (webhook.clientConfig.service) webhook.clientConfig.service.namespace = 'default';
      }
      await rest.request('POST', collection(config), { body: config, query: { fieldValidation: 'Strict' } });
      const stored = await rest.request<WebhookConfiguration>('GET', `${collection(config)}/${config.metadata.name}`);
      for (const [index, sent] of config.webhooks.entries()) {
        const kept = stored.webhooks[index]! as unknown as Record<string, unknown>;
        for (const [field, value] of Object.entries(sent)) {
          if (field === 'clientConfig') {
            // The server adds the default port 443 to a Service reference.
            const service = sent.clientConfig.service;
            const expected = service ? { service: { port: 443, ...service } } : sent.clientConfig;
            assert.deepEqual(kept['clientConfig'], expected, `${sent.name} clientConfig`);
          } else if (field === 'rules') {
            // ...and scope '*' (all scopes) to each rule, as a rule without scope means.
            assert.deepEqual(
              kept['rules'],
              sent.rules.map((rule) => ({ ...rule, scope: '*' })),
              `${sent.name} rules`,
            );
          } else if (value !== undefined) assert.deepEqual(kept[field], value, `${sent.name} ${field}`);
        }
      }
    }
    const created = await rest.request<{ metadata: { uid?: string } }>(
      'POST',
      '/apis/cache.example.com/v1/namespaces/default/memcacheds',
      {
        body: {
          apiVersion: 'cache.example.com/v1',
          kind: 'Memcached',
          metadata: { name: 'admitted' },
          spec: { size: 1 },
        },
      },
    );
    assert.ok(created.metadata.uid, 'the Memcached was admitted past the unreachable webhooks');
  });
});

/**
 * Conversion through the real kube-apiserver: envtest points the CRD's
 * conversion at the manager's `/convert`, the hub is v1 (storage), the
 * spoke v1alpha1 renames spec.size to spec.replicas. Objects are written in
 * one version and read, listed and updated in the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Manager, newWebhookManagedBy } from '../../src/runtime/index.js';
import { ApiError } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';
import {
  MODE_ANNOTATION,
  MemcachedV1,
  UNCONVERTIBLE_REPLICAS,
  twoVersionCRD,
  v1alpha1Conversion,
  type MemcachedV1alpha1,
} from './fixtures/memcached-conversion.js';

const V1 = '/apis/cache.example.com/v1/namespaces/default/memcacheds';
const V1ALPHA1 = '/apis/cache.example.com/v1alpha1/namespaces/default/memcacheds';

describe('conversion webhook on a real API server', () => {
  let env: Environment;
  let mgr: Manager;
  let running: Promise<void>;
  let rest: RestClient;
  const { logger } = capturingLogger();

  before(async () => {
    env = await startControlPlane({
      crds: [twoVersionCRD],
      webhookInstallOptions: { conversionCRDs: ['memcacheds.cache.example.com'] },
    });
    mgr = new Manager({
      kubeConfig: env.kubeConfig,
      webhookServer: env.webhookServerOptions(),
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '127.0.0.1:0',
      handleSignals: false,
      logger,
    });
    newWebhookManagedBy(mgr, MemcachedV1)
      .withConversion({ spokes: [v1alpha1Conversion] })
      .complete();
    mgr.addReadyzCheck('webhook', mgr.getWebhookServer().startedChecker());
    running = mgr.start();
    rest = new RestClient(env.kubeConfig);
    await eventually(
      'the manager to be ready',
      async () => (await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`)).status === 200,
      60_000,
    );
  });

  after(async () => {
    mgr?.stop();
    await running;
    await env?.stop();
  });

  const get = <T>(collection: string, name: string): Promise<T> => rest.request<T>('GET', `${collection}/${name}`);

  it("envtest set the CRD's conversion to the webhook at /convert", async () => {
    const crd = await rest.request<{
      spec: { conversion: { strategy: string; webhook: { clientConfig: { url: string } } } };
    }>('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com');
    assert.equal(crd.spec.conversion.strategy, 'Webhook');
    assert.equal(
      crd.spec.conversion.webhook.clientConfig.url,
      `https://${env.webhookServerOptions().host}:${env.webhookServerOptions().port}/convert`,
    );
  });

  it('created as v1alpha1, it reads as v1 with the renamed field, and back as v1alpha1 unchanged', async () => {
    const created = await rest.request<MemcachedV1alpha1>('POST', V1ALPHA1, {
      body: {
        apiVersion: 'cache.example.com/v1alpha1',
        kind: 'Memcached',
        metadata: { name: 'alpha', labels: { tier: 'cache' } },
        spec: { replicas: 3 },
      },
    });
    const asV1 = await get<MemcachedV1>(V1, 'alpha');
    assert.equal(asV1.apiVersion, 'cache.example.com/v1');
    assert.deepEqual(asV1.spec, { size: 3 });
    assert.deepEqual(asV1.metadata?.labels, { tier: 'cache' });
    assert.equal(asV1.metadata?.uid, created.metadata?.uid);
    const back = await get<MemcachedV1alpha1>(V1ALPHA1, 'alpha');
    assert.deepEqual(back.spec, { replicas: 3 });
    assert.deepEqual({ ...back.metadata, managedFields: undefined }, { ...created.metadata, managedFields: undefined });
  });

  it('a v1 field the spoke lacks survives a round trip through v1alpha1, updates included', async () => {
    await rest.request('POST', V1, {
      body: {
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: 'hub' },
        spec: { size: 2, mode: 'fast' },
      },
    });
    const asAlpha = await get<MemcachedV1alpha1>(V1ALPHA1, 'hub');
    assert.deepEqual(asAlpha.spec, { replicas: 2 });
    assert.equal(asAlpha.metadata?.annotations?.[MODE_ANNOTATION], 'fast');
    await rest.request('PUT', `${V1ALPHA1}/hub`, { body: { ...asAlpha, spec: { replicas: 5 } } });
    const asV1 = await get<MemcachedV1>(V1, 'hub');
    assert.deepEqual(asV1.spec, { size: 5, mode: 'fast' });
    assert.equal(
      asV1.metadata?.annotations?.[MODE_ANNOTATION],
      undefined,
      "the spoke's bookkeeping annotation is not part of the hub object",
    );
  });

  it('lists in both versions', async () => {
    const v1 = await rest.request<{ items: MemcachedV1[] }>('GET', V1);
    const v1alpha1 = await rest.request<{ items: MemcachedV1alpha1[] }>('GET', V1ALPHA1);
    assert.deepEqual(
      v1.items.map((item) => [item.apiVersion ?? 'cache.example.com/v1', item.metadata?.name, item.spec]),
      [
        ['cache.example.com/v1', 'alpha', { size: 3 }],
        ['cache.example.com/v1', 'hub', { size: 5, mode: 'fast' }],
      ],
    );
    assert.deepEqual(
      v1alpha1.items.map((item) => [item.apiVersion ?? 'cache.example.com/v1alpha1', item.metadata?.name, item.spec]),
      [
        ['cache.example.com/v1alpha1', 'alpha', { replicas: 3 }],
        ['cache.example.com/v1alpha1', 'hub', { replicas: 5 }],
      ],
    );
  });

  it("a conversion function's error reaches the client and nothing is stored", async () => {
    await assert.rejects(
      rest.request('POST', V1ALPHA1, {
        body: {
          apiVersion: 'cache.example.com/v1alpha1',
          kind: 'Memcached',
          metadata: { name: 'unlucky' },
          spec: { replicas: UNCONVERTIBLE_REPLICAS },
        },
      }),
      (err: unknown) => err instanceof ApiError && /replicas 13 has no v1 equivalent/.test(err.message),
    );
    await assert.rejects(get(V1, 'unlucky'), (err: unknown) => err instanceof ApiError && err.statusCode === 404);
  });

  it('storage is v1: storedVersions says so, and with the webhook gone v1 still reads while v1alpha1 cannot', async () => {
    const crd = await rest.request<{ status: { storedVersions: string[] } }>(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com',
    );
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    mgr.stop();
    await running;
    // Reading in the storage version needs no conversion; any other version needs the (stopped) webhook.
    assert.deepEqual((await get<MemcachedV1>(V1, 'alpha')).spec, { size: 3 });
    await assert.rejects(
      get(V1ALPHA1, 'alpha'),
      (err: unknown) => err instanceof ApiError && /conversion webhook/.test(err.message),
    );
  });

  it('a conversionCRDs entry that names no installed CRD fails start() with the fix, and leaves nothing running', async () => {
    const misspelt = new Environment({
      crds: [twoVersionCRD],
      webhookInstallOptions: { conversionCRDs: ['memcached.cache.example.com'] },
    });
    await assert.rejects(
      misspelt.start(),
      /conversionCRDs names memcached\.cache\.example\.com, but no such CRD was installed: use the CRD's metadata\.name \(<plural>\.<group>\)/,
    );
    assert.deepEqual(misspelt.pids, { etcd: undefined, apiServer: undefined });
  });
});

/**
 * Admission webhooks through the real kube-apiserver: envtest installs the
 * fixture's config/webhook manifests rewritten to the manager's webhook
 * server on loopback, and every rule of the Memcached defaulter and
 * validator is observed as a client sees it (stored objects, API errors,
 * Warning headers, dry runs). Also the server's readiness check and its
 * graceful stop with the manager.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Agent as UndiciAgent, fetch } from 'undici';
import { Client, Manager, newWebhookManagedBy } from '../../src/runtime/index.js';
import { ForbiddenError, InvalidError, NotFoundError, type ApiError } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';
import { Memcached, memcachedCRD } from './fixtures/memcached.js';
import { MemcachedDefaulter, MemcachedValidator, PROTECTED_LABEL } from './fixtures/memcached-webhooks.js';
import { rawClient, warningsOf } from './raw-request.js';

const webhookConfig = fileURLToPath(
  new URL('../../../test/fixtures/webhook/memcached-admission/config/webhook', import.meta.url),
);
const COLLECTION = '/apis/cache.example.com/v1/namespaces/default/memcacheds';

describe('admission webhooks on a real API server', () => {
  let env: Environment;
  let mgr: Manager;
  let running: Promise<void>;
  let api: Client;
  let raw: ReturnType<typeof rawClient>;
  const validator = new MemcachedValidator();
  const { logger } = capturingLogger();

  before(async () => {
    env = await startControlPlane({
      crds: [memcachedCRD],
      webhookInstallOptions: { paths: [webhookConfig], errorIfPathMissing: true },
    });
    mgr = new Manager({
      kubeConfig: env.kubeConfig,
      webhookServer: env.webhookServerOptions(),
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '127.0.0.1:0',
      handleSignals: false,
      logger,
    });
    newWebhookManagedBy(mgr, Memcached).withDefaulter(new MemcachedDefaulter()).withValidator(validator).complete();
    mgr.addReadyzCheck('webhook', mgr.getWebhookServer().startedChecker());
    running = mgr.start();
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    raw = rawClient(env.kubeConfig);
    await eventually(
      'the manager to be ready',
      async () => (await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`)).status === 200,
      60_000,
    );
  });

  after(async () => {
    mgr?.stop();
    await running;
    await raw?.close();
    await env?.stop();
  });

  const memcached = (name: string, spec?: { size?: number }, labels?: Record<string, string>): Memcached => ({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) },
    ...(spec ? { spec: spec as { size: number } } : {}),
  });
  const rejection = async (promise: Promise<unknown>): Promise<ApiError> => {
    try {
      await promise;
    } catch (err) {
      return err as ApiError;
    }
    assert.fail('the API server accepted what the webhook must refuse');
  };

  it('registers the paths controller-runtime names, which the generated manifests use', () => {
    const server = mgr.getWebhookServer();
    assert.ok(server.has('/mutate-cache-example-com-v1-memcached'));
    assert.ok(server.has('/validate-cache-example-com-v1-memcached'));
  });

  it('a Memcached without spec, or without spec.size, is stored with size 1', async () => {
    const noSpec = await api.create(memcached('no-spec'));
    assert.equal(noSpec.spec?.size, 1);
    const noSize = await api.create(memcached('no-size', {}));
    assert.equal(noSize.spec?.size, 1);
    assert.equal(
      (await api.get(Memcached, { namespace: 'default', name: 'no-spec' })).spec?.size,
      1,
      'stored, not only returned',
    );
  });

  it("size 11 is refused with the validator's message and 403", async () => {
    const err = await rejection(api.create(memcached('too-big', { size: 11 })));
    assert.ok(err instanceof ForbiddenError, `expected 403, got ${String(err)}`);
    assert.match(
      err.message,
      /admission webhook "vmemcached-v1\.kb\.io" denied the request: spec\.size must be at most 10, got 11/,
    );
    await assert.rejects(api.get(Memcached, { namespace: 'default', name: 'too-big' }), NotFoundError);
  });

  it('an update may grow but not shrink below the old size; the denial carries its code and warnings', async () => {
    const created = await api.create(memcached('resize', { size: 3 }));
    const grown = await api.update({ ...created, spec: { size: 4 } });
    assert.equal(grown.spec?.size, 4);
    const err = await rejection(api.update({ ...grown, spec: { size: 2 } }));
    assert.ok(err instanceof InvalidError, `the validator chose 422, got ${String(err)}`);
    assert.match(err.message, /spec\.size may not shrink \(from 4 to 2\)/);
    const denied = await raw.request('PUT', `${COLLECTION}/resize`, { ...grown, spec: { size: 2 } });
    assert.equal(denied.status, 422);
    assert.deepEqual(warningsOf(denied.headers), ['shrinking drops cached data']);
    assert.equal((await api.get(Memcached, { namespace: 'default', name: 'resize' })).spec?.size, 4);
  });

  it('a protected Memcached cannot be deleted until the label is removed', async () => {
    const created = await api.create(memcached('guarded', { size: 1 }, { [PROTECTED_LABEL]: 'true' }));
    const err = await rejection(api.delete(created));
    assert.ok(err instanceof ForbiddenError, `a plain Error from the validator is a 403, got ${String(err)}`);
    assert.match(err.message, /Memcached guarded is protected: remove the cache\.example\.com\/protected label/);
    const current = await api.get(Memcached, { namespace: 'default', name: 'guarded' });
    const unlabelled = await api.update({ ...current, metadata: { ...current.metadata, labels: {} } });
    await api.delete(unlabelled);
    await eventually('the Memcached to be gone', async () =>
      api.get(Memcached, { namespace: 'default', name: 'guarded' }).then(
        () => false,
        (e) => e instanceof NotFoundError,
      ),
    );
  });

  it('warnings reach the client as Warning headers', async () => {
    const response = await raw.request('POST', COLLECTION, memcached('warned', { size: 7 }));
    assert.equal(response.status, 201);
    assert.deepEqual(warningsOf(response.headers), ['spec.size 7 is above 5: each replica reserves 64 MiB']);
    const quiet = await raw.request('POST', COLLECTION, memcached('quiet', { size: 2 }));
    assert.deepEqual(warningsOf(quiet.headers), []);
  });

  it("and reach the runtime's own client through RestClient's warningHandler", async () => {
    const warnings: string[] = [];
    const warned = new Client({
      rest: new RestClient(env.kubeConfig, { warningHandler: (warning) => warnings.push(warning) }),
    });
    await warned.create(memcached('warned-client', { size: 8 }));
    assert.deepEqual(warnings, ['spec.size 8 is above 5: each replica reserves 64 MiB']);
  });

  it('a server-side dry run runs both webhooks (dryRun in their context) and stores nothing', async () => {
    const response = await raw.request('POST', `${COLLECTION}?dryRun=All`, memcached('dry'));
    assert.equal(response.status, 201);
    assert.deepEqual((response.body as { spec?: unknown }).spec, { size: 1 }, 'the defaulter ran');
    assert.deepEqual(
      validator.calls.filter((call) => call.name === 'dry'),
      [{ operation: 'CREATE', name: 'dry', dryRun: true }],
    );
    await assert.rejects(api.get(Memcached, { namespace: 'default', name: 'dry' }), NotFoundError);
    const refused = await raw.request('POST', `${COLLECTION}?dryRun=All`, memcached('dry-big', { size: 11 }));
    assert.equal(refused.status, 403, 'the validator ran in the dry run too');
    assert.ok(
      validator.calls.some((call) => call.name === 'quiet' && !call.dryRun),
      'real writes are not dry runs',
    );
  });

  it('a replica that does not lead still serves webhooks (the server is not leader-only)', async () => {
    const now = new Date().toISOString().replace(/\.\d+Z$/, '.000000Z');
    await new RestClient(env.kubeConfig).request('POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'webhook-follower' },
        spec: { holderIdentity: 'another-replica', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
      },
    });
    const follower = new Manager({
      kubeConfig: env.kubeConfig,
      webhookServer: { ...env.webhookServerOptions(), port: 0 },
      leaderElection: { id: 'webhook-follower', namespace: 'default' },
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger,
    });
    newWebhookManagedBy(follower, Memcached).withDefaulter(new MemcachedDefaulter()).complete();
    const followerRunning = follower.start();
    try {
      const address = await eventually(
        "the follower's webhook server",
        () => follower.getWebhookServer().address(),
        60_000,
      );
      await follower.getWebhookServer().startedChecker()();
      const review = {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: 'follower',
          kind: { group: 'cache.example.com', version: 'v1', kind: 'Memcached' },
          resource: { group: 'cache.example.com', version: 'v1', resource: 'memcacheds' },
          operation: 'CREATE',
          userInfo: {},
          object: memcached('x'),
        },
      };
      const response = await fetch(`https://${address}/mutate-cache-example-com-v1-memcached`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(review),
        dispatcher: new UndiciAgent({ connect: { rejectUnauthorized: false } }),
      });
      const answer = (await response.json()) as { response: { uid: string; allowed: boolean; patch?: string } };
      assert.deepEqual(
        [answer.response.uid, answer.response.allowed, typeof answer.response.patch],
        ['follower', true, 'string'],
      );
      assert.equal(follower.isLeader(), false, 'the Lease is held by another replica');
    } finally {
      follower.stop();
      await followerRunning;
    }
  });

  it('stops with the manager: a call in flight is answered, then the port closes', async () => {
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    validator.beforeAnswer = async (_ctx, object) => {
      if (object.metadata?.name !== 'last') return;
      entered();
      await new Promise((resolve) => setTimeout(resolve, 1500));
    };
    const address = mgr.getWebhookServer().address()!;
    const port = Number(address.slice(address.lastIndexOf(':') + 1));
    const create = api.create(memcached('last', { size: 2 }));
    await inside;
    mgr.stop();
    const created = await create;
    assert.equal(created.spec?.size, 2, 'the call in flight finished after stop()');
    await running;
    await assert.rejects(
      new Promise((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => resolve(socket.end()));
        socket.once('error', reject);
      }),
      /ECONNREFUSED/,
    );
  });
});

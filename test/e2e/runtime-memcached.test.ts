/**
 * Acceptance for the runtime on a real kube-apiserver: the Memcached operator
 * converges, survives API server and etcd restarts, serves metrics and probes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { Client, Deployment, Manager, isNotFound } from '../../src/runtime/index.js';
import { ConfigMap } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { MemcachedReconciler, Memcached, memcachedCRD, FINALIZER } from './fixtures/memcached.js';
import { capturingLogger } from './log-capture.js';

describe('Memcached operator on a real API server', () => {
  let env: Environment;
  let mgr: Manager;
  let running: Promise<void>;
  let api: Client;
  const { logger, lines } = capturingLogger();

  before(async () => {
    env = await startControlPlane({ crds: [memcachedCRD] });
    mgr = new Manager({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '127.0.0.1:0' },
      healthProbeBindAddress: '127.0.0.1:0',
      handleSignals: false,
      logger,
      cache: { backoffMaxMs: 2000 },
    });
    new MemcachedReconciler(mgr.getClient(), mgr.getEventRecorderFor('memcached-controller')).setupWithManager(mgr);
    running = mgr.start();
    // An uncached client of our own, to observe the cluster independently of the operator's cache.
    api = new Client({ rest: new RestClient(env.kubeConfig) });
  });

  after(async () => {
    mgr?.stop();
    await running;
    await env?.stop();
  });

  const deploymentOf = (name: string): Promise<V1Deployment | undefined> =>
    api
      .get(Deployment, { namespace: 'default', name })
      .catch((err) => (isNotFound(err) ? undefined : Promise.reject(err)));

  it('creating a CR gives a Deployment with spec.size replicas and a controller ownerReference', async () => {
    const created = await api.create<Memcached>({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name: 'sample', namespace: 'default' },
      spec: { size: 2 },
    });
    const deployment = await eventually('the Deployment', () => deploymentOf('sample'));
    assert.equal(deployment.spec?.replicas, 2);
    const ref = deployment.metadata?.ownerReferences?.find((r) => r.controller);
    assert.deepEqual(
      {
        kind: ref?.kind,
        name: ref?.name,
        uid: ref?.uid,
        apiVersion: ref?.apiVersion,
        blockOwnerDeletion: ref?.blockOwnerDeletion,
      },
      {
        kind: 'Memcached',
        name: 'sample',
        uid: created.metadata?.uid,
        apiVersion: 'cache.example.com/v1',
        blockOwnerDeletion: true,
      },
    );
  });

  it('writes status through the status subresource and adds the finalizer', async () => {
    const memcached = await eventually('the Available=True condition', async () => {
      const current = await api.get(Memcached, { namespace: 'default', name: 'sample' });
      return current.status?.conditions?.find((c) => c.type === 'Available' && c.status === 'True')
        ? current
        : undefined;
    });
    // With the status subresource enabled, a main-resource update drops status: seeing it proves /status was used.
    assert.match(memcached.status!.conditions![0]!.message, /with 2 replicas/);
    assert.ok(memcached.metadata?.finalizers?.includes(FINALIZER));
  });

  it('patching the size updates the Deployment', async () => {
    const current = await api.get(Memcached, { namespace: 'default', name: 'sample' });
    await api.patch(current, { type: 'merge', data: { spec: { size: 4 } } });
    await eventually('replicas=4', async () => (await deploymentOf('sample'))?.spec?.replicas === 4);
  });

  it('deleting the Deployment recreates it', async () => {
    const before = await deploymentOf('sample');
    await api.delete(before!);
    const recreated = await eventually('a new Deployment', async () => {
      const now = await deploymentOf('sample');
      return now && now.metadata?.uid !== before!.metadata?.uid ? now : undefined;
    });
    assert.equal(recreated.spec?.replicas, 4);
  });

  it('restarting kube-apiserver does not stall the operator, and the log says what happened', async () => {
    await env.stopAPIServer();
    await env.startAPIServer();
    await api.create({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name: 'after-apiserver-restart', namespace: 'default' },
      spec: { size: 1 },
    });
    await eventually('reconcile after the API server restart', () => deploymentOf('after-apiserver-restart'), 60_000);
    assert.ok(
      lines.some((line) => line.msg === 'list/watch failed; reconnecting after backoff'),
      'the informer logged the lost connection and its backoff',
    );
  });

  it('restarting etcd does not stall the operator', async () => {
    await env.stopEtcd();
    await env.startEtcd();
    await eventually(
      'the API server to serve again',
      () => api.list(ConfigMap, { namespace: 'default' }).then(() => true),
      60_000,
    );
    await api.create({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name: 'after-etcd-restart', namespace: 'default' },
      spec: { size: 3 },
    });
    const deployment = await eventually(
      'reconcile after the etcd restart',
      () => deploymentOf('after-etcd-restart'),
      60_000,
    );
    assert.equal(deployment.spec?.replicas, 3);
  });

  it('the finalizer runs its cleanup before the CR goes away', async () => {
    const current = await api.get(Memcached, { namespace: 'default', name: 'sample' });
    await api.delete(current);
    await eventually('the CR to be gone', () =>
      api.get(Memcached, { namespace: 'default', name: 'sample' }).then(
        () => false,
        (err) => isNotFound(err),
      ),
    );
    const trace = await api.get(ConfigMap, { namespace: 'default', name: 'sample-finalized' });
    assert.equal(trace.data?.finalized, 'true');
  });

  it('/metrics counts the reconciles and /readyz is ready after sync', async () => {
    const ready = await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`);
    assert.equal(ready.status, 200);
    const text = await (await fetch(`http://${mgr.getMetricsAddress()}/metrics`)).text();
    const success = Number(
      text.match(/controller_runtime_reconcile_total\{controller="memcached",result="success"\} (\d+)/)?.[1],
    );
    assert.ok(success >= 4, `success count ${success}`);
    for (const series of [
      'controller_runtime_reconcile_errors_total{controller="memcached"}',
      'controller_runtime_reconcile_time_seconds_count{controller="memcached"}',
      'controller_runtime_active_workers{controller="memcached"} 0',
      'controller_runtime_max_concurrent_reconciles{controller="memcached"} 1',
      'workqueue_adds_total{name="memcached",controller="memcached"}',
      'workqueue_depth{name="memcached",controller="memcached",priority="0"}',
    ]) {
      assert.ok(text.includes(series), `missing ${series}`);
    }
  });
});

/**
 * The cache's list+watch loop under faults a healthy API server does not
 * produce on demand, injected by the fault proxy in front of the real
 * kube-apiserver: watches closed at once or gone silent,
 * ResourceVersionTooLarge, and deletes missed while the watch was down
 * (found only by a relist).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Manager, newControllerManagedBy, type ManagerOptions } from '../../src/runtime/index.js';
import { ConfigMap } from '../../src/runtime/api/index.js';
import { type DeleteInfo } from '../../src/runtime/cache/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { startFaultProxy, tooLargeResourceVersion, type FaultProxy } from './fault-proxy.js';
import { capturingLogger } from './log-capture.js';

describe('cache under injected faults', () => {
  let env: Environment;
  let api: Client;
  let proxy: FaultProxy;

  before(async () => {
    env = await startControlPlane();
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'relist' } });
  });
  after(async () => {
    await env?.stop();
  });

  /** A manager that talks to the API server through a fresh fault proxy, with one ConfigMap controller. */
  async function withManager(
    options: Partial<ManagerOptions>,
    rules: (proxy: FaultProxy) => void,
    body: (mgr: Manager) => Promise<void>,
    forOptions: Parameters<ReturnType<typeof newControllerManagedBy>['for']>[1] = {},
  ): Promise<void> {
    proxy = await startFaultProxy(env);
    rules(proxy);
    const mgr = new Manager({
      kubeConfig: proxy.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: capturingLogger().logger,
      ...options,
    });
    newControllerManagedBy(mgr)
      .for(ConfigMap, forOptions)
      .named('faults')
      .complete({ async reconcile() {} });
    const done = mgr.start();
    try {
      await body(mgr);
    } finally {
      mgr.stop();
      proxy.clearRules();
      await done;
      await proxy.stop();
    }
  }

  const configMapWatches = { method: 'GET', path: /\/configmaps$/, watch: true } as const;
  const configMapLists = { method: 'GET', path: /\/configmaps$/, watch: false } as const;

  it('watches the server closes at once are reopened with backoff: at most 20 watch requests in 10 s', async () => {
    await withManager(
      {},
      (p) => p.addRule({ match: configMapWatches, action: { type: 'close-watch' } }),
      async () => {
        const first = await eventually(
          'the first watch request',
          () => proxy.requests.find((r) => r.watch && /\/configmaps$/.test(r.path))?.at,
        );
        await sleep(Math.max(0, first + 10_000 - performance.now()));
        const watches = proxy.requests.filter(
          (r) => r.watch && /\/configmaps$/.test(r.path) && r.at <= first + 10_000,
        ).length;
        assert.ok(
          watches <= 20,
          `${watches} watch requests in 10 s: a watch closed at once must count as an error and back off`,
        );
        assert.ok(watches >= 2, `${watches} watch requests in 10 s: the watch must still be retried`);
      },
    );
  });

  it('a watch that went silent is reopened after the idle timeout, and the cache sees what happened meanwhile', async () => {
    const idleTimeoutMs = 1500;
    await withManager(
      { cache: { watchIdleTimeoutMs: idleTimeoutMs } },
      (p) => p.addRule({ match: configMapWatches, action: { type: 'silent-watch' }, times: 1 }),
      async (mgr) => {
        const silent = await eventually('the silenced watch', () =>
          proxy.requests.find((r) => r.fault === 'silent-watch'),
        );
        await api.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { namespace: 'default', name: 'during-silence' },
        });
        await eventually(
          'the ConfigMap made during the silence in the cache',
          () =>
            mgr
              .getClient()
              .get(ConfigMap, { namespace: 'default', name: 'during-silence' })
              .then(
                () => true,
                () => false,
              ),
          20_000,
        );
        const reopened = proxy.requests.find((r) => r.watch && /\/configmaps$/.test(r.path) && r.at > silent.at);
        assert.ok(reopened, 'a new watch was opened after the silent one');
        // Not before the idle timeout (timers fire up to a millisecond early), and not long after it: the backoff starts at 800 ms.
        const after = reopened.at - silent.at;
        assert.ok(
          after >= idleTimeoutMs - 1 && after < idleTimeoutMs + 10_000,
          `reopened ${Math.round(after)} ms after the silent watch opened (idle timeout ${idleTimeoutMs} ms)`,
        );
      },
    );
  });

  it('a ResourceVersionTooLarge watch error relists from scratch', async () => {
    await withManager(
      {},
      (p) =>
        p.addRule({
          match: configMapWatches,
          action: { type: 'watch-error', status: tooLargeResourceVersion() },
          times: 1,
        }),
      async (mgr) => {
        await eventually('a second list after the faulted watch', () => proxy.count(configMapLists) >= 2, 15_000);
        const faulted = proxy.requests.findIndex((r) => r.fault === 'watch-error');
        assert.ok(faulted >= 0, 'the watch was faulted');
        const relist = proxy.requests
          .slice(faulted + 1)
          .find((r) => !r.watch && r.method === 'GET' && /\/configmaps$/.test(r.path));
        assert.ok(relist, 'a list request followed the ResourceVersionTooLarge');
        assert.doesNotMatch(
          relist.query,
          /resourceVersion=/,
          'the relist must not ask for the too-large resourceVersion (or any)',
        );
        // The cache works again afterwards.
        await api.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { namespace: 'default', name: 'after-too-large' },
        });
        await eventually('the new ConfigMap in the cache', () =>
          mgr
            .getClient()
            .get(ConfigMap, { namespace: 'default', name: 'after-too-large' })
            .then(
              () => true,
              () => false,
            ),
        );
      },
    );
  });

  it('a relist turns deletes missed while the watch was down into deletes flagged finalStateUnknown', async () => {
    const namespace = 'relist';
    for (const name of ['gone', 'kept'])
      await api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name } });
    const deletes: Array<[string, DeleteInfo]> = [];
    const watchesInRelist = { method: 'GET', path: /\/namespaces\/relist\/configmaps$/, watch: true } as const;
    let removeHang = (): void => undefined;
    await withManager(
      { cache: { namespaces: [namespace] } },
      (p) => {
        // The first watch hangs: nothing the server sends reaches the cache.
        removeHang = p.addRule({ match: watchesInRelist, action: { type: 'hang' } });
      },
      async (mgr) => {
        await mgr.getCache().waitForCacheSync(20_000);
        const cached = async (): Promise<string[]> =>
          (await mgr.getClient().list(ConfigMap, { namespace })).map((cm) => cm.metadata.name).sort();
        assert.deepEqual(await cached(), ['gone', 'kept']);
        await eventually('the watch is held by the proxy', () => proxy.count({ ...watchesInRelist }) >= 1);
        await api.delete({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { namespace, name: 'gone' },
        });
        await sleep(500);
        assert.deepEqual(await cached(), ['gone', 'kept'], 'the hung watch must not have delivered the delete');

        // The next watch is told its resourceVersion expired, so the reflector relists.
        proxy.addRule({
          match: watchesInRelist,
          action: {
            type: 'watch-error',
            status: {
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              code: 410,
              reason: 'Expired',
              message: 'too old resource version',
            },
          },
          times: 1,
        });
        removeHang();
        await eventually(
          'the relist removed the deleted ConfigMap from the cache',
          async () => (await cached()).join() === 'kept',
          15_000,
        );
        assert.deepEqual(
          deletes,
          [['gone', { finalStateUnknown: true }]],
          'a delete found by a relist is flagged finalStateUnknown',
        );

        // A delete seen on the (now healthy) watch has a known final state.
        await api.delete({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { namespace, name: 'kept' },
        });
        await eventually('the watched delete', () => deletes.length === 2);
        assert.deepEqual(deletes[1], ['kept', { finalStateUnknown: false }]);
      },
      { predicates: [{ delete: (object, info) => (deletes.push([object.metadata!.name!, info]), true) }] },
    );
  });
});

/**
 * Events and the cache on a real API server: updates map the old and the new
 * object (owner moves, orphaning, map-function retargets), async map
 * functions that read the cache, informers keyed by version, readiness that
 * ignores lazily created informers, field indexes, resync and the channel
 * source. Faults that a healthy server cannot produce are in
 * runtime-cache-faults.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubernetesObject, V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import {
  Client,
  Manager,
  defineKind,
  newControllerManagedBy,
  type ManagerOptions,
  type Reconciler,
} from '../../src/runtime/index.js';
import { ConfigMap, Secret, keyOf } from '../../src/runtime/api/index.js';
import { labelSelectorPredicate } from '../../src/runtime/predicate/index.js';
import { ChannelSource } from '../../src/runtime/source/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';

/** A CRD served at two versions with no conversion webhook (the server only rewrites apiVersion). */
const gadgetCRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.versions.example.com' },
  spec: {
    group: 'versions.example.com',
    names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
    scope: 'Namespaced',
    conversion: { strategy: 'None' },
    versions: ['v1', 'v2'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    })),
  },
};
const GadgetV1 = defineKind<KubernetesObject>({
  group: 'versions.example.com',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
});
const GadgetV2 = defineKind<KubernetesObject>({
  group: 'versions.example.com',
  version: 'v2',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
});
/** A kind whose CRD is never installed: every list of it fails with 404. */
const Widget = defineKind<KubernetesObject>({
  group: 'missing.example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

describe('events and cache', () => {
  let env: Environment;
  let api: Client;

  before(async () => {
    env = await startControlPlane({ crds: [gadgetCRD] });
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    for (const name of ['owners', 'retarget', 'versions', 'indexes', 'resync', 'channel', 'mutation'])
      await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(async () => {
    await env?.stop();
  });

  function newManager(options: ManagerOptions = {}): Manager {
    return new Manager({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: capturingLogger().logger,
      ...options,
    });
  }

  /** Starts `mgr`, runs `body`, and always stops the manager. */
  async function running(mgr: Manager, body: () => Promise<void>): Promise<void> {
    const done = mgr.start();
    try {
      await mgr.elected();
      await body();
    } finally {
      mgr.stop();
      await done;
    }
  }

  /** A reconciler that records the names it was asked to reconcile. */
  function recorder(): { reconciler: Reconciler; seen: Set<string> } {
    const seen = new Set<string>();
    return {
      seen,
      reconciler: {
        async reconcile(_ctx, req) {
          seen.add(req.name);
        },
      },
    };
  }

  const ownerRef = (owner: KubernetesObject) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: owner.metadata!.name!,
    uid: owner.metadata!.uid!,
    controller: true,
  });

  it("an object read from the cache (get or list) is the reader's own: mutating it changes neither the cache nor what handlers see", async () => {
    const namespace = 'mutation';
    const mgr = newManager();
    const seenData: Array<string | undefined> = [];
    newControllerManagedBy(mgr)
      .for(ConfigMap, { predicates: [labelSelectorPredicate('test=mutation')] })
      .named('mutation')
      .complete({
        async reconcile(_ctx, req) {
          const read = await mgr.getClient().get(ConfigMap, req);
          seenData.push(read.data?.value);
          // A reconciler that edits what it read, deep inside, and never writes it back.
          read.data!.value = 'scribbled';
          read.metadata.labels!.test = 'scribbled';
        },
      });
    await running(mgr, async () => {
      await api.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace, name: 'm', labels: { test: 'mutation' } },
        data: { value: 'original' },
      });
      await eventually('the reconcile ran', () => seenData.length > 0);
      const client = mgr.getClient();
      const got = await client.get(ConfigMap, { namespace, name: 'm' });
      assert.equal(got.data?.value, 'original', "the reconciler's edit did not reach the cache");
      assert.equal(got.metadata?.labels?.test, 'mutation');
      const [listed] = await client.list(ConfigMap, { namespace });
      listed!.data!.value = 'scribbled by list';
      assert.equal(
        (await client.get(ConfigMap, { namespace, name: 'm' })).data?.value,
        'original',
        'an edit of a listed object did not reach the cache',
      );
      assert.equal(
        (await client.list(ConfigMap, { namespace, labelSelector: { test: 'mutation' } })).length,
        1,
        'the label index still matches',
      );
    });
  });

  it('owns(): an ownerRef moved from a to b reconciles both, and an orphaned object reconciles its old owner', async () => {
    const namespace = 'owners';
    const mgr = newManager();
    const { reconciler, seen } = recorder();
    newControllerManagedBy(mgr)
      .for(ConfigMap, { predicates: [labelSelectorPredicate('test=owners')] })
      .owns(Secret)
      .named('owners')
      .complete(reconciler);
    await running(mgr, async () => {
      const a = await api.create<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace, name: 'a', labels: { test: 'owners' } },
      });
      const b = await api.create<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace, name: 'b', labels: { test: 'owners' } },
      });
      let owned = await api.create<V1Secret>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace, name: 'owned', ownerReferences: [ownerRef(a)] },
      });
      await eventually('a and b reconciled after their creation', () => seen.has('a') && seen.has('b'));
      // The cache stores an object and calls the handlers in one step: once it has the secret, its create is queued.
      await eventually('the secret in the cache', () =>
        mgr
          .getClient()
          .get(Secret, { namespace, name: 'owned' })
          .then(
            () => true,
            () => false,
          ),
      );
      await sleep(1000); // and reconciled
      seen.clear();

      owned = await api.update({ ...owned, metadata: { ...owned.metadata, ownerReferences: [ownerRef(b)] } });
      await eventually(
        `both owners reconciled after the move (saw: ${[...seen].join(', ') || 'nothing'})`,
        () => seen.has('a') && seen.has('b'),
        10_000,
      );

      await sleep(500);
      seen.clear();
      await api.update({ ...owned, metadata: { ...owned.metadata, ownerReferences: [] } });
      await eventually('the old owner b reconciled after orphaning', () => seen.has('b'), 10_000);
    });
  });

  it('watches(): an async map function that reads the cache reconciles the old and the new target when its answer changes', async () => {
    const namespace = 'retarget';
    const mgr = newManager();
    const client = mgr.getClient();
    const { reconciler, seen } = recorder();
    let mapCalls = 0;
    newControllerManagedBy(mgr)
      .for(ConfigMap, { predicates: [labelSelectorPredicate('role=target')] })
      // Like a CR that selects ConfigMaps by label: the targets say which `app` they select.
      .watches(Secret, async (secret: V1Secret) => {
        mapCalls++;
        const app = secret.metadata?.labels?.app;
        if (!app) return [];
        const targets = await client.list(ConfigMap, {
          namespace: secret.metadata!.namespace,
          labelSelector: { role: 'target' },
        });
        return targets
          .filter((target) => target.data?.selects === app)
          .map((target) => ({ namespace: target.metadata.namespace, name: target.metadata.name }));
      })
      .named('retarget')
      .complete(reconciler);
    await running(mgr, async () => {
      for (const [name, selects] of [
        ['t1', 'one'],
        ['t2', 'two'],
      ]) {
        await api.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { namespace, name, labels: { role: 'target' } },
          data: { selects },
        });
      }
      await eventually('both targets reconciled after creation', () => seen.has('t1') && seen.has('t2'));
      const watched = await api.create<V1Secret>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace, name: 'watched', labels: { app: 'one' } },
      });
      await eventually('the map function ran for the new secret', () => mapCalls >= 1);
      await sleep(1000);
      seen.clear();

      await api.update({ ...watched, metadata: { ...watched.metadata, labels: { app: 'two' } } });
      await eventually(
        `the old target t1 and the new target t2 reconciled (saw: ${[...seen].join(', ') || 'nothing'})`,
        () => seen.has('t1') && seen.has('t2'),
        10_000,
      );
    });
  });

  it('two versions of one kind are cached by separate informers and returned as their own version', async () => {
    const namespace = 'versions';
    await api.create({
      apiVersion: 'versions.example.com/v1',
      kind: 'Gadget',
      metadata: { namespace, name: 'g1' },
      spec: { size: 1 },
    });
    await api.create({
      apiVersion: 'versions.example.com/v2',
      kind: 'Gadget',
      metadata: { namespace, name: 'g2' },
      spec: { size: 2 },
    });
    const mgr = newManager();
    const { reconciler, seen } = recorder();
    newControllerManagedBy(mgr).for(GadgetV2).named('gadgets-v2').complete(reconciler);
    // Started with the manager rather than lazily by the first read below: a watch opened just before the
    // manager stops sometimes leaves undici's HTTP/2 session throwing "other side closed" / "socket idle
    // timeout" as an uncaught exception later (a transport issue, not this test's subject).
    const v1Informer = mgr.getCache().informerFor(GadgetV1);
    await running(mgr, async () => {
      await eventually('the v2 controller saw both gadgets', () => seen.has('g1') && seen.has('g2'));
      const client = mgr.getClient();
      const v1 = await client.list(GadgetV1, { namespace });
      const v2 = await client.list(GadgetV2, { namespace });
      assert.deepEqual(v1.map((g) => `${g.metadata.name} ${g.apiVersion}`).sort(), [
        'g1 versions.example.com/v1',
        'g2 versions.example.com/v1',
      ]);
      assert.deepEqual(v2.map((g) => `${g.metadata.name} ${g.apiVersion}`).sort(), [
        'g1 versions.example.com/v2',
        'g2 versions.example.com/v2',
      ]);
      assert.equal((await client.get(GadgetV1, { namespace, name: 'g2' })).apiVersion, 'versions.example.com/v1');
      assert.equal((await client.get(GadgetV2, { namespace, name: 'g1' })).apiVersion, 'versions.example.com/v2');
      assert.notEqual(v1Informer, mgr.getCache().informerFor(GadgetV2));
    });
  });

  it('/readyz stays 200 after a failed lazy read of a kind no controller watches', async () => {
    const mgr = newManager({ healthProbeBindAddress: '127.0.0.1:0', cache: { syncTimeoutMs: 5000 } });
    const { reconciler } = recorder();
    newControllerManagedBy(mgr).for(ConfigMap).named('ready').complete(reconciler);
    await running(mgr, async () => {
      const readyz = async (): Promise<number> => (await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`)).status;
      await eventually('ready once the ConfigMap cache synced', async () => (await readyz()) === 200);
      // Widget's CRD is not installed: the lazily started informer can never list it.
      await assert.rejects(
        mgr.getClient().get(Widget, { namespace: 'default', name: 'w' }),
        /timed out after 5s waiting for the Widget cache to sync/,
      );
      assert.equal(await readyz(), 200, 'a failed lazy read must not make the process unready');
      await sleep(1500);
      assert.equal(await readyz(), 200, 'still ready while the lazy informer keeps failing');
    });
  });

  it('/readyz stays 200 when the operator may not list a kind it reads lazily (RBAC)', async () => {
    // The user may list and watch ConfigMaps (its controller's kind) and nothing else: a cached read of
    // Secrets starts an informer whose every list is 403 Forbidden.
    await api.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'configmaps-only' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
    });
    await api.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'configmaps-only' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'configmaps-only' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'configmaps-only' }],
    });
    const mgr = newManager({
      kubeConfig: await env.addUser({ name: 'configmaps-only' }),
      healthProbeBindAddress: '127.0.0.1:0',
      cache: { syncTimeoutMs: 5000 },
    });
    const { reconciler } = recorder();
    newControllerManagedBy(mgr).for(ConfigMap).named('rbac-ready').complete(reconciler);
    await running(mgr, async () => {
      const readyz = async (): Promise<number> => (await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`)).status;
      await eventually('ready once the ConfigMap cache synced', async () => (await readyz()) === 200);
      await assert.rejects(
        mgr.getClient().get(Secret, { namespace: 'default', name: 's' }),
        /timed out after 5s waiting for the Secret cache to sync/,
      );
      assert.equal(await readyz(), 200, 'a forbidden lazy read must not make the process unready');
    });
  });

  it('field indexes answer matchingFields and equality field selectors, and follow updates and deletes', async () => {
    const namespace = 'indexes';
    const mgr = newManager();
    mgr.getCache().indexField(ConfigMap, 'data.owner', (cm: V1ConfigMap) => (cm.data?.owner ? [cm.data.owner] : []));
    await running(mgr, async () => {
      const client = mgr.getClient();
      await api.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace, name: 'i1' },
        data: { owner: 'alice' },
      });
      const i2 = await api.create<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace, name: 'i2' },
        data: { owner: 'alice' },
      });
      await api.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: 'default', name: 'i3' },
        data: { owner: 'alice' },
      });
      const i4 = await api.create<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace, name: 'i4' },
        data: { owner: 'bob' },
      });
      const names = async (options: Parameters<Client['list']>[1]): Promise<string[]> =>
        (await client.list(ConfigMap, options)).map((cm) => keyOf(cm)).sort();
      const alice = { matchingFields: { 'data.owner': 'alice' } };

      await eventually(
        'all four ConfigMaps indexed',
        async () =>
          (await names(alice)).length === 3 && (await names({ matchingFields: { 'data.owner': 'bob' } })).length === 1,
      );
      assert.deepEqual(await names(alice), ['default/i3', 'indexes/i1', 'indexes/i2']);
      assert.deepEqual(
        await names({ ...alice, namespace }),
        ['indexes/i1', 'indexes/i2'],
        'an index read narrowed to a namespace',
      );
      assert.deepEqual(
        await names({ namespace, fieldSelector: 'data.owner=bob' }),
        ['indexes/i4'],
        'an equality field selector on an indexed field uses the index',
      );
      assert.deepEqual(
        await names({ ...alice, fieldSelector: { 'metadata.name': 'i2' } }),
        ['indexes/i2'],
        'an index combined with a metadata.name selector',
      );
      await assert.rejects(
        client.list(ConfigMap, { matchingFields: { 'data.colour': 'red' } }),
        /no index for field "data.colour": call mgr.getCache\(\).indexField\(ConfigMap, 'data.colour', fn\)/,
      );

      await api.update({ ...i2, data: { owner: 'bob' } });
      await api.delete(i4);
      await eventually(
        'the update and the delete reach the index',
        async () => (await names({ namespace, matchingFields: { 'data.owner': 'bob' } })).join() === 'indexes/i2',
      );
      assert.deepEqual(await names({ ...alice, namespace }), ['indexes/i1'], 'the update unfiled i2 from alice');
      // The uncached reader sends matchingFields to the server as a field selector.
      assert.deepEqual(
        (await mgr.getAPIReader().list(ConfigMap, { namespace, matchingFields: { 'metadata.name': 'i1' } })).map(
          (cm) => cm.metadata.name,
        ),
        ['i1'],
      );
    });
  });

  it('resync redelivers unchanged objects every sync period', async () => {
    const times: number[] = [];
    const mgr = newManager({ cache: { resyncPeriodMs: 1500 } });
    newControllerManagedBy(mgr)
      .for(ConfigMap, { predicates: [labelSelectorPredicate('test=resync')] })
      .named('resync')
      .complete({
        async reconcile() {
          times.push(performance.now());
        },
      });
    await running(mgr, async () => {
      await api.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: 'resync', name: 'steady', labels: { test: 'resync' } },
      });
      // The create, then at least two resyncs with no change to the object.
      await eventually('two resync reconciles', () => times.length >= 3, 15_000);
    });
    const gaps = times.slice(1).map((at, i) => Math.round(at - times[i]!));
    // Resyncs are 1350–1650 ms apart (±10 % jitter), less whatever a busy machine delayed the previous
    // reconcile by; the first gap depends on when the create landed. A burst would show gaps near 0.
    assert.ok(
      gaps.slice(1).every((gap) => gap >= 1000),
      `resyncs came faster than the sync period: ${gaps.join(', ')} ms`,
    );
  });

  it('a channel source turns objects the operator sends into reconciles', async () => {
    const channel = new ChannelSource<KubernetesObject>();
    const mapped = new ChannelSource<KubernetesObject>();
    const mgr = newManager();
    const { reconciler, seen } = recorder();
    // Sent before the manager starts: kept until the controller watches the channel.
    channel.send({ metadata: { namespace: 'channel', name: 'early' } });
    newControllerManagedBy(mgr)
      .for(ConfigMap, { predicates: [labelSelectorPredicate('test=channel')] })
      .watchesRawSource(channel)
      .watchesRawSource(mapped, async (object) => [{ namespace: 'channel', name: `for-${object.metadata!.name}` }], {
        predicates: [{ generic: (object) => object.metadata?.name !== 'filtered' }],
      })
      .named('channel')
      .complete(reconciler);
    await running(mgr, async () => {
      channel.send({ metadata: { namespace: 'channel', name: 'external-1' } });
      mapped.send({ metadata: { name: 'webhook' } });
      mapped.send({ metadata: { name: 'filtered' } });
      await eventually(
        `the generic events reconciled (saw: ${[...seen].join(', ')})`,
        () => seen.has('early') && seen.has('external-1') && seen.has('for-webhook'),
      );
      await sleep(300);
      assert.equal(seen.has('for-filtered'), false, "a predicate's generic callback filters channel events");
    });
  });
});

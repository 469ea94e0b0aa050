/**
 * Controller semantics on a real API server, with instrumented reconcilers:
 * backoff, requeueAfterMs, per-key exclusivity, parallelism, namespace scoping
 * and readiness before sync.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Manager, newControllerManagedBy, type Reconciler, type Request } from '../../src/runtime/index.js';
import { ConfigMap } from '../../src/runtime/api/index.js';
import { labelSelectorPredicate } from '../../src/runtime/predicate/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';

describe('controller semantics', () => {
  let env: Environment;
  let api: Client;

  before(async () => {
    env = await startControlPlane();
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    for (const name of ['team-a', 'team-b', 'team-c'])
      await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(async () => {
    await env?.stop();
  });

  /** Runs a manager with one ConfigMap controller for the duration of `body`. */
  async function withController(
    name: string,
    reconciler: Reconciler,
    body: (mgr: Manager) => Promise<void>,
    options: { namespaces?: string[]; maxConcurrentReconciles?: number } = {},
  ): Promise<void> {
    const mgr = new Manager({
      kubeConfig: env.kubeConfig,
      cache: { namespaces: options.namespaces },
      metrics: { bindAddress: '127.0.0.1:0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: capturingLogger().logger,
    });
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .withEventFilter(labelSelectorPredicate(`test=${name}`))
      .withOptions({ maxConcurrentReconciles: options.maxConcurrentReconciles })
      .named(name)
      .complete(reconciler);
    const running = mgr.start();
    try {
      await mgr.elected();
      await body(mgr);
    } finally {
      mgr.stop();
      await running;
    }
  }

  const configMap = (namespace: string, name: string, test: string, data: Record<string, string> = {}) =>
    api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { test } }, data });

  it('errors requeue with growing delays, and success forgets the key', async () => {
    const attempts: number[] = [];
    await withController(
      'backoff',
      {
        async reconcile() {
          attempts.push(performance.now());
          if (attempts.length <= 6) throw new Error('transient failure');
          return {};
        },
      },
      async (mgr) => {
        await configMap('default', 'flaky', 'backoff');
        await eventually('seven attempts', () => attempts.length >= 7);
        const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
        // Backoff 5, 10, 20, 40, 80, 160 ms: each retry waits at least its backoff (timers may fire
        // up to a millisecond early), and the delays grow. Scheduling noise of a few ms can reorder
        // the first, tiny gaps on a busy machine, so growth is checked where it dominates.
        const shown = gaps.map(Math.round).join(', ');
        gaps.forEach((gap, i) =>
          assert.ok(
            gap >= 5 * 2 ** i - 1,
            `retry ${i + 1} waited ${Math.round(gap)} ms, less than its ${5 * 2 ** i} ms backoff (${shown})`,
          ),
        );
        assert.ok(gaps[5]! > gaps[4]! && gaps[4]! > gaps[3]!, `the later delays must grow: ${shown}`);
        await sleep(300);
        assert.equal(attempts.length, 7, 'no retries after success');
        const text = await (await fetch(`http://${mgr.getMetricsAddress()}/metrics`)).text();
        assert.match(text, /controller_runtime_reconcile_total\{controller="backoff",result="error"\} 6/);
        assert.match(text, /controller_runtime_reconcile_total\{controller="backoff",result="success"\} 1/);
        assert.match(text, /controller_runtime_reconcile_errors_total\{controller="backoff"\} 6/);
        assert.match(text, /workqueue_retries_total\{name="backoff",controller="backoff"\} 6/);
      },
    );
  });

  it("a scrape reports the reconcile in flight (the metrics server's before-scrape hook), and the manager's controller defaults apply", async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const mgr = new Manager({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '127.0.0.1:0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: capturingLogger().logger,
      controller: { maxConcurrentReconciles: 3 },
    });
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .withEventFilter(labelSelectorPredicate('test=progress'))
      .named('progress')
      .complete({
        async reconcile() {
          started = true;
          await blocked;
        },
      });
    const running = mgr.start();
    try {
      await mgr.elected();
      await configMap('default', 'slow', 'progress');
      await eventually('the reconcile started', () => started);
      await sleep(300);
      const text = await (await fetch(`http://${mgr.getMetricsAddress()}/metrics`)).text();
      // Computed only when scraped: without the hook the gauge still reads 0.
      const longest = Number(
        /workqueue_longest_running_processor_seconds\{name="progress",controller="progress"\} (\S+)/.exec(text)?.[1],
      );
      assert.ok(longest >= 0.3, `the running reconcile is ${longest} s old on the scrape, not at least 0.3 s`);
      assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="progress"\} 3/);
    } finally {
      release();
      mgr.stop();
      await running;
    }
  });

  it('requeueAfterMs is honoured', async () => {
    const times: number[] = [];
    await withController(
      'after',
      {
        async reconcile() {
          times.push(performance.now());
          return times.length === 1 ? { requeueAfterMs: 700 } : {};
        },
      },
      async () => {
        await configMap('default', 'later', 'after');
        await eventually('the requeued reconcile', () => times.length >= 2);
        const waited = times[1]! - times[0]!;
        assert.ok(waited >= 690 && waited < 1500, `requeueAfterMs 700 waited ${Math.round(waited)} ms`);
      },
    );
  });

  it('one key is never reconciled concurrently, even with idle workers; maxConcurrentReconciles 4 runs four keys in parallel', async () => {
    const inFlight = new Map<string, number>();
    let concurrentSameKey = 0;
    let peak = 0;
    let total = 0;
    const reconciler: Reconciler = {
      async reconcile(_ctx, req: Request) {
        const key = `${req.namespace}/${req.name}`;
        if (inFlight.has(key)) concurrentSameKey++;
        inFlight.set(key, Date.now());
        peak = Math.max(peak, inFlight.size);
        total++;
        // Long enough that all four creates land while the first is still running, even on a busy
        // machine; p0 runs longer still, so its updates arrive while the other three workers are idle.
        await sleep(req.name === 'p0' ? 4000 : 1500);
        inFlight.delete(key);
        return {};
      },
    };
    let updatesWithIdleWorkers = 0;
    await withController(
      'parallel',
      reconciler,
      async () => {
        for (let i = 0; i < 4; i++) await configMap('default', `p${i}`, 'parallel');
        await eventually(
          'only p0 still running',
          () => peak === 4 && inFlight.size === 1 && inFlight.has('default/p0'),
          20_000,
        );
        // Hammer p0 with updates while it is being reconciled and three workers have nothing to do:
        // a queue that handed out a key still in process would give p0 to one of them.
        for (let round = 0; round < 5; round++) {
          const current = await api.get(ConfigMap, { namespace: 'default', name: 'p0' });
          await api.update({ ...current, data: { round: String(round) } });
          if (inFlight.size === 1 && inFlight.has('default/p0')) updatesWithIdleWorkers++;
          await sleep(100);
        }
        await eventually('the queue to drain', () => inFlight.size === 0 && total >= 5, 20_000);
      },
      { maxConcurrentReconciles: 4 },
    );
    assert.ok(
      updatesWithIdleWorkers > 0,
      'p0 was updated while it ran and the other workers were idle (else this test proves nothing)',
    );
    assert.equal(concurrentSameKey, 0, 'a key was reconciled twice at once');
    assert.equal(peak, 4, 'four different keys ran in parallel');
  });

  for (const [label, namespaces, expected] of [
    ['one namespace', ['team-a'], ['team-a']],
    ['several namespaces', ['team-a', 'team-b'], ['team-a', 'team-b']],
    ['all namespaces', undefined, ['team-a', 'team-b', 'team-c']],
  ] as const) {
    it(`watches ${label}`, async () => {
      const seen = new Set<string>();
      const test = `ns-${label.split(' ')[0]}`;
      await withController(
        test,
        {
          async reconcile(_ctx, req) {
            seen.add(req.namespace!);
            return {};
          },
        },
        async () => {
          for (const namespace of ['team-a', 'team-b', 'team-c']) await configMap(namespace, test, test);
          await eventually(`reconciles in ${expected.join(', ')}`, () => expected.every((ns) => seen.has(ns)));
          await sleep(500);
        },
        { namespaces: namespaces ? [...namespaces] : undefined },
      );
      assert.deepEqual([...seen].sort(), [...expected]);
    });
  }

  it('/readyz is 503 until the caches have synced, then 200', async () => {
    // A user that may not list ConfigMaps keeps the cache from syncing until RBAC is granted.
    const kubeConfig = await env.addUser({ name: 'late-reader' });
    const mgr = new Manager({
      kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '127.0.0.1:0',
      handleSignals: false,
      logger: capturingLogger().logger,
      cache: { backoffMaxMs: 1000 },
    });
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .named('readiness')
      .complete({ reconcile: async () => ({}) });
    const running = mgr.start();
    try {
      await eventually('the probe server', () => mgr.getHealthProbeAddress());
      const before = await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`);
      assert.equal(before.status, 503);
      assert.match(await before.text(), /cache-sync failed/);
      await api.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'configmap-reader' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
      });
      await api.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'late-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'configmap-reader' },
        subjects: [{ kind: 'User', name: 'late-reader', apiGroup: 'rbac.authorization.k8s.io' }],
      });
      await eventually(
        'readyz 200',
        async () => (await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`)).status === 200,
        20_000,
      );
    } finally {
      mgr.stop();
      await running;
    }
  });
});

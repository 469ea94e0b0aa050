/**
 * The manager's lifecycle promises, on operator processes against the real
 * API server: start() fails (and the process exits 1) when the operator
 * cannot do its job, a stop that overruns the grace period fails without
 * releasing the lease, runnables are leader-only by default, and controllers
 * and runnables added to a running manager start.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Client, Manager } from '../../src/runtime/index.js';
import { Lease } from '../../src/runtime/api/index.js';
import { silentLogger } from '../../src/runtime/log/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { memcachedCRD } from './fixtures/memcached.js';
import { exitWithin, firstAt, killAll, linesOf, monotonicNow, startReplica, type Replica } from './replicas.js';

const LEASE = { namespace: 'default', name: 'memcached-operator.example.com' };

describe('manager lifecycle', () => {
  let env: Environment;
  let api: Client;
  const replicas: Replica[] = [];
  const replica = (name: string, extraEnv: Record<string, string> = {}): Replica => {
    const started = startReplica(name, env.kubeConfigPath(), extraEnv);
    replicas.push(started);
    return started;
  };
  const create = (name: string) =>
    api.create({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name, namespace: 'default' },
      spec: { size: 1 },
    });
  const failure = (r: Replica) =>
    linesOf(r, 'test: manager failed')[0]?.err as { message?: string; type?: string } | undefined;
  /** Stop a leader and let its lease go, so the next test starts from a free lease. */
  const stopCleanly = async (r: Replica) => {
    r.child.kill('SIGTERM');
    assert.equal(await exitWithin(r, 60_000), 0, `${r.name} exits 0 on a clean stop`);
  };

  before(async () => {
    env = await startControlPlane({ crds: [memcachedCRD] });
    api = new Client({ rest: new RestClient(env.kubeConfig) });
  });
  after(async () => {
    killAll(replicas);
    await env?.stop();
  });

  it('an owned kind whose CRD is missing: exit 1 with "no matches for kind", within the cache-sync timeout', async () => {
    const syncTimeoutMs = 5_000;
    const startedAt = monotonicNow();
    const r = replica('no-crd', { OWN_MISSING_KIND: 'true', CACHE_SYNC_TIMEOUT_MS: String(syncTimeoutMs) });
    const code = await exitWithin(r, 60_000);
    assert.equal(code, 1, 'a controller whose cache cannot sync makes the process exit 1');
    const message = failure(r)?.message ?? '';
    assert.match(
      message,
      /^no matches for kind "Route" in version "route\.openshift\.io\/v1": install its CustomResourceDefinition/,
    );
    assert.ok(!message.includes('\n'), 'one line');
    assert.equal(failure(r)?.type, 'NoKindMatchError', 'the one NoKindMatchError class, as the REST mapper throws');
    // Generous: the sync timeout plus process start-up on a busy machine, far below the 2 min default.
    assert.ok(
      r.exitedAt! - startedAt < syncTimeoutMs + 30_000,
      `exited after ${Math.round(r.exitedAt! - startedAt)} ms`,
    );
  });

  it('a runnable that throws: start() rejects with its error, exit 1', async () => {
    const r = replica('failing-runnable', { LEADER_ELECT: 'true', FAILING_RUNNABLE: 'true' });
    const code = await exitWithin(r, 60_000);
    assert.equal(code, 1);
    assert.equal(failure(r)?.message, 'test: the runnable failed');
  });

  it('shutdown overrun: exit non-zero, and the lease stays held while the reconcile runs', async () => {
    const r = replica('overrun', {
      LEADER_ELECT: 'true',
      GRACEFUL_SHUTDOWN_TIMEOUT_MS: '2000',
      RECONCILE_DELAY_MS: '600000',
      IGNORE_ABORT: 'true',
    });
    await eventually('elected', () => firstAt(r, 'test: elected'), 30_000);
    const identity = linesOf(r, 'successfully acquired lease')[0]?.identity as string;
    assert.ok(identity);
    await create('overrun');
    await eventually('a reconcile in flight', () => linesOf(r, 'test: reconcile started').length > 0);
    r.child.kill('SIGTERM');
    // Until the process is gone its reconcile still runs: the lease must name it the whole time.
    let exited = false;
    void r.exited.then(() => (exited = true));
    const signalledAt = monotonicNow();
    while (!exited && monotonicNow() - signalledAt < 60_000) {
      const lease = await api.get(Lease, LEASE);
      if (!exited) assert.equal(lease.spec?.holderIdentity, identity, 'the lease is held while a reconcile may run');
      await sleep(100);
    }
    const code = await exitWithin(r, 1_000);
    assert.ok(
      code !== 0 && code !== 'still running',
      `a stop that overran the grace period is a failure (got ${code})`,
    );
    assert.match(failure(r)?.message ?? '', /failed waiting for all runnables to end within grace period of 2s: /);
    assert.equal(failure(r)?.type, 'GracePeriodExceededError');
    assert.equal(linesOf(r, 'test: reconcile finished').length, 0, 'the reconcile was still running at exit');
    assert.equal(linesOf(r, 'released leader lease').length, 0);
    const lease = await api.get(Lease, LEASE);
    assert.equal(lease.spec?.holderIdentity, identity, 'not released: it expires on its own');
    // The next leader waits for the lease to expire (15 s), as after a crash.
    const successor = replica('successor', { LEADER_ELECT: 'true' });
    await eventually('a successor once the lease expired', () => firstAt(successor, 'test: elected'), 45_000);
    await stopCleanly(successor);
  });

  it('runnables run only on the leader unless they say otherwise', async () => {
    const runnableLine = (r: Replica, name: string) =>
      linesOf(r, 'test: runnable started').find((line) => line.runnable === name);
    const first = replica('runnables-1', { LEADER_ELECT: 'true', TEST_RUNNABLES: 'true' });
    await eventually('first elected', () => firstAt(first, 'test: elected'), 30_000);
    const second = replica('runnables-2', { LEADER_ELECT: 'true', TEST_RUNNABLES: 'true' });
    await eventually('the every-replica runnable on the follower', () => runnableLine(second, 'every-replica'), 30_000);
    await sleep(3_000);
    assert.ok(runnableLine(first, 'default'), 'the leader runs the default runnable');
    assert.ok(
      (runnableLine(first, 'default')!.at as number) >= firstAt(first, 'test: elected')!,
      'only after election',
    );
    assert.equal(
      runnableLine(second, 'default'),
      undefined,
      'a follower does not run a runnable that did not opt out of leader election',
    );

    await stopCleanly(first);
    await eventually('second elected', () => firstAt(second, 'test: elected'), 30_000);
    await eventually('the default runnable on the new leader', () => runnableLine(second, 'default'), 10_000);
    assert.ok((runnableLine(second, 'default')!.at as number) >= firstAt(second, 'test: elected')!);
    await stopCleanly(second);
  });

  it('a controller and a runnable added to a running manager start (after election)', async () => {
    const r = replica('late', { LEADER_ELECT: 'true', ADD_LATE: 'true' });
    await eventually('elected', () => firstAt(r, 'test: elected'), 30_000);
    await eventually(
      'the late runnable to start',
      () => linesOf(r, 'test: runnable started').find((line) => line.runnable === 'late'),
      20_000,
    );
    await api.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'late-one', namespace: 'default' },
      data: {},
    });
    await eventually(
      'the late controller to reconcile',
      () => linesOf(r, 'test: late reconcile').find((line) => line.name === 'late-one'),
      30_000,
    );
    await stopCleanly(r);
  });

  it('the library installs no unhandledRejection handler (the generated main.ts owns that policy); adding to a stopped manager throws', async () => {
    const listenersBefore = process.listeners('unhandledRejection').length;
    const mgr = new Manager({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: silentLogger,
    });
    const running = mgr.start();
    await mgr.elected();
    assert.equal(process.listeners('unhandledRejection').length, listenersBefore);
    mgr.stop();
    await running;
    assert.throws(() => mgr.add({ start: async () => undefined }), /the manager is stopping/);
  });
});

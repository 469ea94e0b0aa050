/**
 * Leader election under failure, on operator processes against the real API
 * server. Each replica talks through its own fault proxy (a fault injector in
 * front of the real kube-apiserver, not a mock), so the tests can black-hole
 * one replica's Lease requests or make them fail at once: a renewal that
 * hangs or fails must cost the leader its leadership at the renew deadline,
 * and it must stop reconciling before any other replica can start. The
 * elector's own tests run it in this process, with its write fence.
 * (A leader frozen past its lease is leader-freeze.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Client } from '../../src/runtime/index.js';
import { ConfigMap } from '../../src/runtime/api/index.js';
import { mergePatch } from '../../src/runtime/client/index.js';
import { LeaderElectionLostError, LeaderElector } from '../../src/runtime/leaderelection/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { memcachedCRD } from './fixtures/memcached.js';
import {
  exitWithin,
  firstAt,
  killAll,
  linesOf,
  monotonicNow,
  reconcileIntervals,
  startReplica,
  type Interval,
  type Replica,
} from './replicas.js';

/** Short timings so a takeover fits in a test; the same ratios as controller-runtime's 15/10/2 s. */
const RENEW_DEADLINE_MS = 6_000;
const TIMINGS = { LEASE_DURATION_MS: '10000', RENEW_DEADLINE_MS: String(RENEW_DEADLINE_MS), RETRY_PERIOD_MS: '1000' };
/** Busy work: reconciles always running or queued, so "nothing starts after X" is tested, not vacuous. */
const BUSY = { RECONCILE_DELAY_MS: '1500', REQUEUE_AFTER_MS: '100', MAX_CONCURRENT_RECONCILES: '3' };
/** Timers fire late on a loaded machine; lateness this large never comes from a working elector. */
const TIMER_SLACK_MS = 2_000;
const LEASE_REQUESTS = { path: /\/apis\/coordination\.k8s\.io\/v1\/namespaces\/[^/]+\/leases(\/|$)/ };
/** Timings for the tests that only need a leader to lose, fast: the 15/10/2 s ratios, shorter. */
const FAST_TIMINGS = { LEASE_DURATION_MS: '3000', RENEW_DEADLINE_MS: '2000', RETRY_PERIOD_MS: '500' };

describe('leader election under failure', () => {
  let env: Environment;
  let api: Client;
  const replicas: Replica[] = [];
  const proxies: FaultProxy[] = [];
  let lease = 0;

  before(async () => {
    env = await startControlPlane({ crds: [memcachedCRD] });
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    for (let i = 0; i < 8; i++) {
      await api.create({
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: `busy-${i}`, namespace: 'default' },
        spec: { size: 1 },
      });
    }
  });
  after(async () => {
    killAll(replicas);
    for (const proxy of proxies) await proxy.stop();
    await env?.stop();
  });

  /** A replica behind its own fault proxy, competing for a lease of its test's own. */
  async function replicaBehindProxy(
    name: string,
    leaseNamespace: string,
    extraEnv: Record<string, string> = {},
  ): Promise<{ replica: Replica; proxy: FaultProxy }> {
    const proxy = await startFaultProxy(env);
    proxies.push(proxy);
    const replica = startReplica(name, proxy.kubeConfigPath(), {
      LEADER_ELECT: 'true',
      LEADER_ELECTION_NAMESPACE: leaseNamespace,
      ...TIMINGS,
      ...BUSY,
      ...extraEnv,
    });
    replicas.push(replica);
    return { replica, proxy };
  }

  /** A fresh namespace for each test's Lease, so no test inherits another's holder. */
  async function leaseNamespace(): Promise<string> {
    const name = `lease-${++lease}`;
    await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return name;
  }

  /**
   * Black-holes the leader's Lease requests and checks what losing the lease
   * must do: leadership ends by the renew deadline (measured from the fault,
   * on the monotonic clock), nothing starts after it, in-flight reconciles
   * see their signal abort, and the process exits non-zero.
   */
  async function assertLosesLeadershipOnTime(
    t: TestContext,
    replica: Replica,
    proxy: FaultProxy,
    stepClock = false,
  ): Promise<void> {
    await eventually('a few reconciles', () => linesOf(replica, 'test: reconcile started').length >= 6, 30_000);
    const faultAt = monotonicNow();
    proxy.addRule({ match: LEASE_REQUESTS, action: { type: 'hang' } });
    // Fixture hook: with CLOCK_JUMP_MS set, SIGHUP steps its wall clock, now that renewals fail.
    if (stepClock) replica.child.kill('SIGHUP');
    const code = await exitWithin(replica, RENEW_DEADLINE_MS + 60_000);
    assert.ok(code !== 0 && code !== 'still running', `a replica that lost leadership exits non-zero (got ${code})`);
    assert.match(
      (linesOf(replica, 'test: manager failed')[0]?.err as { message?: string })?.message ?? '',
      /leader election lost/,
    );

    const deadline = faultAt + RENEW_DEADLINE_MS + TIMER_SLACK_MS;
    const lateStarts = linesOf(replica, 'test: reconcile started').filter((line) => (line.at as number) > deadline);
    assert.deepEqual(lateStarts, [], 'no reconcile starts after the renew deadline');
    assert.ok(
      replica.exitedAt! <= deadline + 15_000,
      `exited ${Math.round(replica.exitedAt! - faultAt)} ms after the fault`,
    );

    // The first aborted reconcile marks the loss; everything running then must have been aborted with it.
    const intervals = reconcileIntervals(replica);
    const abortedAt = Math.min(...intervals.filter((interval) => interval.aborted).map((interval) => interval.end));
    assert.ok(Number.isFinite(abortedAt), 'in-flight reconciles see ctx.signal.aborted');
    const runningAtLoss = intervals.filter((interval) => interval.start < abortedAt && interval.end >= abortedAt);
    for (const interval of runningAtLoss)
      assert.equal(
        interval.aborted,
        true,
        `the reconcile of ${interval.name} in flight at the loss saw ctx.signal.aborted`,
      );
    const startedAfterLoss = intervals.filter((interval) => interval.start > abortedAt);
    assert.deepEqual(startedAfterLoss, [], 'nothing starts once leadership is lost, not even keys already queued');
    t.diagnostic(
      `reconciles aborted ${Math.round(abortedAt - faultAt)} ms after the fault (renew deadline ${RENEW_DEADLINE_MS} ms), process exited after ${Math.round(replica.exitedAt! - faultAt)} ms`,
    );
  }

  it('lost leadership: nothing starts after the renew deadline, in-flight reconciles are aborted, exit non-zero', async (t) => {
    const { replica, proxy } = await replicaBehindProxy('lost', await leaseNamespace());
    await eventually('elected', () => firstAt(replica, 'test: elected'), 30_000);
    await assertLosesLeadershipOnTime(t, replica, proxy);
  });

  it('a wall clock stepped back 60 s does not keep a failing leader in charge', async (t) => {
    const { replica, proxy } = await replicaBehindProxy('clock-step', await leaseNamespace(), {
      CLOCK_JUMP_MS: '-60000',
    });
    await eventually('elected', () => firstAt(replica, 'test: elected'), 30_000);
    await assertLosesLeadershipOnTime(t, replica, proxy, true);
    assert.ok(linesOf(replica, 'test: wall clock stepped').length > 0, 'the wall clock was stepped');
  });

  it('release() has a deadline: a hung Lease API does not hang a clean stop', async () => {
    const { replica, proxy } = await replicaBehindProxy('release', await leaseNamespace(), {
      RECONCILE_DELAY_MS: '0',
      REQUEUE_AFTER_MS: '0',
    });
    await eventually('elected', () => firstAt(replica, 'test: elected'), 30_000);
    proxy.addRule({ match: LEASE_REQUESTS, action: { type: 'hang' } });
    const stoppedAt = monotonicNow();
    replica.child.kill('SIGTERM');
    const code = await exitWithin(replica, RENEW_DEADLINE_MS + 60_000);
    assert.equal(code, 0, 'a clean stop is still clean when the lease cannot be released');
    assert.ok(linesOf(replica, 'failed to release leader lease').length > 0);
    assert.ok(
      replica.exitedAt! - stoppedAt < RENEW_DEADLINE_MS + 15_000,
      `stopped after ${Math.round(replica.exitedAt! - stoppedAt)} ms`,
    );
  });

  it('two replicas: the black-holed leader stops before the other starts, and no reconciles of the two ever overlap', async (t) => {
    const namespace = await leaseNamespace();
    const first = await replicaBehindProxy('first', namespace);
    await eventually('first elected', () => firstAt(first.replica, 'test: elected'), 30_000);
    const second = await replicaBehindProxy('second', namespace);
    await eventually(
      'the first leader busy',
      () => linesOf(first.replica, 'test: reconcile started').length >= 6,
      30_000,
    );
    assert.equal(firstAt(second.replica, 'test: elected'), undefined, 'one leader at a time');

    first.proxy.addRule({ match: LEASE_REQUESTS, action: { type: 'hang' } });
    const code = await exitWithin(first.replica, RENEW_DEADLINE_MS + 60_000);
    assert.ok(code !== 0 && code !== 'still running', `the old leader exits non-zero (got ${code})`);
    await eventually('second elected', () => firstAt(second.replica, 'test: elected'), 60_000);
    await eventually(
      'the new leader busy',
      () => linesOf(second.replica, 'test: reconcile started').length >= 6,
      30_000,
    );

    const old = reconcileIntervals(first.replica);
    const current = reconcileIntervals(second.replica);
    assert.ok(old.length > 0 && current.length > 0);
    const oldStoppedAt = Math.max(...old.map((interval) => interval.end));
    const newStartedAt = Math.min(
      ...current.map((interval) => interval.start),
      firstAt(second.replica, 'test: elected')!,
    );
    assert.ok(
      oldStoppedAt < newStartedAt,
      `the old leader stopped ${Math.round(oldStoppedAt - newStartedAt)} ms after the new one started`,
    );
    t.diagnostic(
      `old leader's last reconcile ended ${Math.round(newStartedAt - oldStoppedAt)} ms before the new leader started`,
    );
    const overlapping = (a: Interval, b: Interval) => a.start < b.end && b.start < a.end;
    const overlaps = old.flatMap((a) =>
      current.filter((b) => overlapping(a, b)).map((b) => `${a.name}@first overlaps ${b.name}@second`),
    );
    assert.deepEqual(overlaps, [], 'no two reconciles of different replicas overlap');
    second.replica.child.kill('SIGTERM');
    assert.equal(await exitWithin(second.replica, 60_000), 0);
  });
  it('lease requests that fail at once (500, reset, refused), three times each: no unhandled rejection, start() rejects with the lease-lost error, exit 1', async (t) => {
    const faults: Record<string, (proxy: FaultProxy) => unknown> = {
      500: (proxy) => proxy.addRule({ match: LEASE_REQUESTS, action: { type: 'status', status: 500 } }),
      reset: (proxy) => proxy.addRule({ match: LEASE_REQUESTS, action: { type: 'reset' } }),
      refused: (proxy) => proxy.refuseConnections(),
    };
    for (const [fault, inject] of Object.entries(faults)) {
      await Promise.all(
        [1, 2, 3].map(async (run) => {
          const { replica, proxy } = await replicaBehindProxy(`fails-${fault}-${run}`, await leaseNamespace(), {
            ...FAST_TIMINGS,
            RECONCILE_DELAY_MS: '0',
            REQUEUE_AFTER_MS: '0',
          });
          await eventually('elected', () => firstAt(replica, 'test: elected'), 30_000);
          await inject(proxy);
          const code = await exitWithin(replica, 30_000);
          const unhandled = linesOf(replica, 'test: unhandled rejection').map(
            (line) => (line.err as { message?: string })?.message,
          );
          assert.deepEqual(unhandled, [], `${fault} #${run}: no unhandled rejection`);
          assert.equal(code, 1, `${fault} #${run}: exit 1 (got ${code})`);
          const err = linesOf(replica, 'test: manager failed')[0]?.err as
            { type?: string; message?: string } | undefined;
          assert.equal(
            err?.type,
            'LeaderElectionLostError',
            `${fault} #${run}: start() rejected with the lease-lost error (got ${err?.type}: ${err?.message})`,
          );
          assert.match(err?.message ?? '', /^leader election lost/);
        }),
      );
      t.diagnostic(`${fault}: 3 leaders lost their lease and exited 1, none through an unhandled rejection`);
    }
  });

  /** A LeaderElector in this process, through its own fault proxy, with a client that shares its (fenced) transport. */
  async function electorBehindProxy(
    name: string,
    timings: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number },
  ): Promise<{ elector: LeaderElector; proxy: FaultProxy; client: Client; rest: RestClient }> {
    const proxy = await startFaultProxy(env);
    proxies.push(proxy);
    const rest = new RestClient(proxy.kubeConfig);
    const elector = new LeaderElector({
      rest,
      name,
      namespace: await leaseNamespace(),
      identity: name,
      logger: capturingLogger().logger,
      ...timings,
    });
    return { elector, proxy, client: new Client({ rest }), rest };
  }

  it('the renew deadline counts from the start of the last successful renewal, not its end', async (t) => {
    const renewDeadlineMs = 6_000;
    // The request timeout is half the renew deadline (3 s): a renewal whose update takes 2.5 s still succeeds.
    const slowUpdateMs = 2_500;
    const { elector, proxy, rest } = await electorBehindProxy('slow-renewal', {
      leaseDurationMs: 10_000,
      renewDeadlineMs,
      retryPeriodMs: 1_000,
    });
    const stop = new AbortController();
    try {
      await elector.acquire(stop.signal);
      const holding = elector.holdUntil(stop.signal).then(
        () => 'returned',
        (err: unknown) => err,
      );
      proxy.addRule({
        match: { ...LEASE_REQUESTS, method: 'PUT' },
        action: { type: 'delay', ms: slowUpdateMs },
        times: 1,
      });
      const slowUpdate = await eventually(
        'the slow renewal to succeed',
        () => proxy.requests.find((r) => r.fault === 'delay' && r.status === 200),
        20_000,
        10,
      );
      proxy.addRule({ match: LEASE_REQUESTS, action: { type: 'hang' } });
      // The renewal began with its read of the Lease, just before the slow update.
      const renewalStartedAt = proxy.requests
        .filter((r) => r.method === 'GET' && LEASE_REQUESTS.path.test(r.path) && r.at <= slowUpdate.at)
        .at(-1)!.at;
      const answeredAt = performance.now();
      assert.ok(
        answeredAt - renewalStartedAt >= slowUpdateMs - 1,
        'the renewal took as long as the update was delayed',
      );
      assert.doesNotThrow(() => elector.assertHoldsLease(), 'the lease is held right after a renewal');

      // Just past the deadline counted from the renewal's start (the elector's start was earlier still).
      await sleep(Math.max(0, renewalStartedAt + renewDeadlineMs + 100 - performance.now()));
      assert.throws(
        () => elector.assertHoldsLease(),
        LeaderElectionLostError,
        `${Math.round(performance.now() - renewalStartedAt)} ms after the renewal started, ${Math.round(performance.now() - answeredAt)} ms after it ended: the deadline counts from its start`,
      );
      const outcome = await holding;
      assert.ok(
        outcome instanceof LeaderElectionLostError,
        `holdUntil() rejects with the lease-lost error (got ${String(outcome)})`,
      );
      assert.equal(elector.isLeader(), false);
      t.diagnostic(
        `renewal took ${Math.round(answeredAt - renewalStartedAt)} ms; writes refused from ${renewDeadlineMs} ms after its start`,
      );
    } finally {
      stop.abort();
      proxy.clearRules();
      await rest.close();
    }
  });

  it('once the renew deadline passes, no write leaves (create, update, patch, delete, eviction, exec), reads still do, and holdUntil() rejects with the same error', async () => {
    const { elector, proxy, client, rest } = await electorBehindProxy('fenced-writes', {
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
    });
    const stop = new AbortController();
    try {
      await elector.acquire(stop.signal);
      const holding = elector.holdUntil(stop.signal).then(
        () => 'returned',
        (err: unknown) => err,
      );
      const name = 'fenced-writes';
      const created = await client.create<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'default' },
      });
      assert.equal(created.metadata?.name, name, 'a leader writes');

      proxy.addRule({ match: LEASE_REQUESTS, action: { type: 'hang' } });
      const lost = await holding;
      assert.ok(
        lost instanceof LeaderElectionLostError,
        `holdUntil() rejects with the lease-lost error (got ${String(lost)})`,
      );
      const writesBefore = proxy.requests.filter((r) => r.method !== 'GET').length;
      const pod = { namespace: 'default', name: 'no-such-pod' };
      const attempts: Array<[string, () => Promise<unknown>]> = [
        [
          'create',
          () =>
            client.create({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `${name}-2`, namespace: 'default' },
            }),
        ],
        ['update', () => client.update({ ...created, data: { late: 'true' } })],
        ['patch', () => client.patch(created, mergePatch({ data: { late: 'true' } }))],
        ['delete', () => client.delete(created)],
        [
          'eviction',
          () =>
            rest.request('POST', '/api/v1/namespaces/default/pods/no-such-pod/eviction', {
              body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: pod },
            }),
        ],
        ['exec', () => client.exec(pod, undefined, ['true'])],
      ];
      for (const [what, attempt] of attempts) {
        await assert.rejects(
          attempt(),
          (err: unknown) => err === lost,
          `${what} is refused with the error that ended the leadership`,
        );
      }
      assert.equal(
        proxy.requests.filter((r) => r.method !== 'GET').length - writesBefore,
        0,
        'no write reached the server',
      );
      assert.equal(proxy.count({ path: /\/exec$/ }), 0, 'no exec reached the server');
      assert.equal(
        (await client.apiReader().get(ConfigMap, { namespace: 'default', name })).data,
        undefined,
        'reads still go, and the object is unchanged',
      );
    } finally {
      stop.abort();
      proxy.clearRules();
      await rest.close();
    }
  });
});

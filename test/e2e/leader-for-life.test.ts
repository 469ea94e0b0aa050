/**
 * Leader for life on the real API server with the real garbage collector:
 * the lock lives exactly as long as the leader's Pod. Pods are created
 * through the API to stand for the replicas' pods; nothing runs in them.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { Client, isNotFound } from '../../src/runtime/index.js';
import { ConfigMap, Node, Pod } from '../../src/runtime/api/index.js';
import { LeaderForLife, type LeaderForLifeOutcome } from '../../src/runtime/leaderelection/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { resourcePath } from '../../src/runtime/api/kinds.js';
import { startControlPlaneWithControllers, type ControlPlaneWithControllers } from './control-plane.js';
import { collectJsonLines } from './child-logs.js';
import { eventually } from './eventually.js';
import { memcachedCRD } from './fixtures/memcached.js';
import { capturingLogger } from './log-capture.js';

const replicaScript = fileURLToPath(new URL('./fixtures/leader-for-life-manager.js', import.meta.url));
const NAMESPACE = 'default';
/** Pod deletion, garbage collection and a waiter's backoff (up to 16 s) on a busy machine. */
const FAILOVER_MS = 120_000;

interface Replica {
  name: string;
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  /** Resolves with the exit code, and records when the test saw the exit. */
  exited: Promise<number | null>;
  exitedAt?: number;
}

describe('leader for life with the real garbage collector', () => {
  let plane: ControlPlaneWithControllers;
  let api: Client;
  let rest: RestClient;
  const replicas: Replica[] = [];

  before(async () => {
    plane = await startControlPlaneWithControllers({ crds: [memcachedCRD] });
    rest = new RestClient(plane.env.kubeConfig);
    api = new Client({ rest });
  });
  after(async () => {
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await plane?.stop();
  });

  const createPod = (name: string, spec: Partial<V1Pod['spec']> = {}): Promise<V1Pod> =>
    api.create<V1Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NAMESPACE },
      spec: { containers: [{ name: 'operator', image: 'example.com/operator:v1' }], ...spec },
    });
  const findLock = (name: string): Promise<V1ConfigMap | undefined> =>
    api
      .get(ConfigMap, { namespace: NAMESPACE, name })
      .catch((err) => (isNotFound(err) ? undefined : Promise.reject(err)));
  const lockOwnerUid = async (name: string): Promise<string | undefined> => {
    const owners = (await findLock(name))?.metadata?.ownerReferences ?? [];
    assert.ok(owners.length <= 1, 'a lock has one owner');
    return owners[0]?.uid;
  };
  /** An in-process candidate with explicit Pod and namespace, and a short backoff cap to keep the test quick. */
  const newElection = (
    podName: string,
    lockName: string,
  ): { election: LeaderForLife; lines: Array<Record<string, unknown>> } => {
    const { logger, lines } = capturingLogger();
    return {
      election: new LeaderForLife({
        rest,
        lockName,
        podName,
        namespace: NAMESPACE,
        maxBackoffIntervalMs: 2000,
        logger,
      }),
      lines,
    };
  };

  function startReplica(name: string, podName: string): Replica {
    const child = spawn(process.execPath, [replicaScript], {
      env: {
        ...process.env,
        KUBECONFIG: plane.env.kubeConfigPath(),
        POD_NAME: podName,
        POD_NAMESPACE: NAMESPACE,
        REPLICA_NAME: name,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const lines = collectJsonLines(child.stderr);
    const replica: Replica = { name, child, lines, exited: Promise.resolve(null) };
    replica.exited = once(child, 'exit').then(([code]) => {
      replica.exitedAt = Date.now();
      return code as number | null;
    });
    replicas.push(replica);
    return replica;
  }
  const timeOf = (line: Record<string, unknown> | undefined): number => Date.parse(String(line?.time));
  const electedLine = (replica: Replica) => replica.lines.find((line) => line.msg === 'test: elected');
  const reconcileStarts = (replica: Replica) => replica.lines.filter((line) => line.msg === 'test: reconcile started');
  const waitingCount = (replica: Replica) =>
    replica.lines.filter((line) => line.msg === 'not the leader: waiting').length;
  const reconciledBy = (replica: Replica, name: string) => reconcileStarts(replica).some((line) => line.name === name);
  const createMemcached = (name: string) =>
    api.create({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name, namespace: NAMESPACE },
      spec: { size: 1 },
    });

  it("two replicas: the second waits while the first one's Pod exists, and leads once the garbage collector removed the lock", async () => {
    const podA = await createPod('operator-a');
    const podB = await createPod('operator-b');

    const first = startReplica('first', 'operator-a');
    await eventually('the first replica to lead', () => electedLine(first), 60_000);
    assert.equal(
      await lockOwnerUid('memcached-operator-lock'),
      podA.metadata?.uid,
      "the lock is owned by the first replica's Pod",
    );
    const second = startReplica('second', 'operator-b');
    await eventually('the second replica to find the lock taken', () => waitingCount(second) > 0, 60_000);
    await createMemcached('lfl-one');
    await eventually('lfl-one reconciled by the leader', () => reconciledBy(first, 'lfl-one'), 60_000);

    // A crashed leader whose Pod still exists keeps the lock: its container restarts and carries on.
    first.child.kill('SIGKILL');
    await first.exited;
    const waitedFrom = waitingCount(second);
    await eventually('the second replica to look at the lock again', () => waitingCount(second) > waitedFrom, 60_000);
    assert.equal(electedLine(second), undefined, "the second replica must not lead while the first one's Pod exists");
    const restarted = startReplica('first-restarted', 'operator-a');
    await eventually('the restarted first replica to lead again at once', () => electedLine(restarted), 60_000);
    assert.ok(
      restarted.lines.some((line) => String(line.msg).startsWith('found the lock owned by this Pod')),
      'it recognised its own lock',
    );

    // The kubelet stops the container before the Pod goes; here the test plays the kubelet.
    restarted.child.kill('SIGTERM');
    assert.equal(await restarted.exited, 0);
    const podDeletedAt = Date.now();
    await api.delete(podA);
    await eventually(
      'the garbage collector to delete the lock',
      async () => (await lockOwnerUid('memcached-operator-lock')) !== podA.metadata?.uid,
      FAILOVER_MS,
    );
    await eventually('the second replica to lead', () => electedLine(second), FAILOVER_MS);
    assert.equal(
      await lockOwnerUid('memcached-operator-lock'),
      podB.metadata?.uid,
      "the lock is now owned by the second replica's Pod",
    );
    await createMemcached('lfl-two');
    await eventually('lfl-two reconciled by the new leader', () => reconciledBy(second, 'lfl-two'), 60_000);

    // At no moment did two replicas lead: each leadership interval, from its
    // elected line to its exit, ends before the next begins.
    const intervals = [first, restarted, second].map((replica) => ({
      name: replica.name,
      from: timeOf(electedLine(replica)),
      to: replica.exitedAt ?? Infinity,
    }));
    for (let i = 1; i < intervals.length; i++) {
      assert.ok(
        intervals[i]!.from > intervals[i - 1]!.to,
        `${intervals[i]!.name} led from ${new Date(intervals[i]!.from).toISOString()}, before ${intervals[i - 1]!.name} exited at ${new Date(intervals[i - 1]!.to).toISOString()}`,
      );
    }
    assert.ok(
      timeOf(electedLine(second)) >= podDeletedAt,
      "the second replica led only after the first one's Pod was deleted",
    );
    for (const replica of [first, restarted, second]) {
      const interval = intervals.find((candidate) => candidate.name === replica.name)!;
      for (const start of reconcileStarts(replica)) {
        const at = timeOf(start);
        assert.ok(
          at >= interval.from && at <= interval.to,
          `${replica.name} reconciled ${String(start.name)} at ${String(start.time)}, outside its leadership`,
        );
      }
    }
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
    await api.delete(podB);
  });

  it('a waiter deletes an evicted leader Pod and takes over once its lock is collected', async () => {
    const podA = await createPod('evicted-a');
    const podB = await createPod('evicted-b');
    const { election: leader } = newElection('evicted-a', 'evict-lock');
    assert.equal(await leader.become(AbortSignal.timeout(60_000)), 'leader');

    const { election: waiter, lines: waiterLines } = newElection('evicted-b', 'evict-lock');
    const stopWaiting = new AbortController();
    let outcome: LeaderForLifeOutcome | undefined;
    // Bounded, so a waiter that never takes over fails the test instead of hanging it.
    const becoming = waiter
      .become(AbortSignal.any([stopWaiting.signal, AbortSignal.timeout(FAILOVER_MS)]))
      .then((result) => (outcome = result));
    try {
      await eventually(
        'the waiter to see the lock taken',
        () => waiterLines.some((line) => line.msg === 'not the leader: waiting'),
        60_000,
      );
      assert.equal(outcome, undefined, 'no takeover while the leader Pod is fine');
      // What the kubelet reports for an evicted Pod (its containers are stopped by then).
      await rest.request('PUT', resourcePath(Pod, NAMESPACE, 'evicted-a', 'status'), {
        body: {
          ...(await api.get(Pod, { namespace: NAMESPACE, name: 'evicted-a' })),
          status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' },
        },
      });
      await becoming;
      assert.equal(outcome, 'leader');
      assert.equal(waiter.isLeader(), true);
      assert.ok(
        waiterLines.some(
          (line) => line.msg === 'the leader Pod failed and will not run again: deleting it so its lock is collected',
        ),
      );
      await eventually(
        'the evicted Pod to be deleted',
        async () =>
          await api.get(Pod, { namespace: NAMESPACE, name: 'evicted-a' }).then(
            () => false,
            (err) => isNotFound(err),
          ),
        60_000,
      );
      assert.equal(await lockOwnerUid('evict-lock'), podB.metadata?.uid);
      assert.notEqual(podA.metadata?.uid, podB.metadata?.uid);
    } finally {
      stopWaiting.abort();
      await becoming.catch(() => undefined);
    }
  });

  it("a waiter deletes the leader Pod and the lock when the leader's Node is not Ready", async () => {
    await api.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'lfl-node' } });
    const node = await api.get(Node, { name: 'lfl-node' });
    await rest.request('PUT', resourcePath(Node, undefined, 'lfl-node', 'status'), {
      body: {
        ...node,
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              reason: 'KubeletNotReady',
              message: 'kubelet stopped posting node status',
              lastHeartbeatTime: new Date().toISOString(),
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      },
    });
    await createPod('unreachable-a', { nodeName: 'lfl-node' });
    const podB = await createPod('unreachable-b');
    const { election: leader } = newElection('unreachable-a', 'node-lock');
    assert.equal(await leader.become(AbortSignal.timeout(60_000)), 'leader');

    const { election: waiter, lines: waiterLines } = newElection('unreachable-b', 'node-lock');
    // No kubelet will ever confirm the Pod's deletion, so only deleting the lock itself frees it.
    assert.equal(await waiter.become(AbortSignal.timeout(60_000)), 'leader');
    assert.ok(
      waiterLines.some(
        (line) => line.msg === 'the leader Pod runs on a Node that is not Ready: deleting the Pod and the lock',
      ),
    );
    assert.equal(await lockOwnerUid('node-lock'), podB.metadata?.uid);
    const terminating = await api.get(Pod, { namespace: NAMESPACE, name: 'unreachable-a' });
    assert.ok(
      terminating.metadata?.deletionTimestamp,
      'the leader Pod was deleted (it stays Terminating without a kubelet)',
    );
    await api.delete(terminating, { gracePeriodSeconds: 0 });
  });

  it('a lock left by an earlier Pod of the same name is not taken: the new Pod waits for garbage collection', async () => {
    const old = await createPod('reused-name');
    assert.equal(await newElection('reused-name', 'reuse-lock').election.become(AbortSignal.timeout(60_000)), 'leader');
    await api.delete(old, { gracePeriodSeconds: 0 });
    await eventually(
      'the old Pod to be gone',
      async () =>
        await api.get(Pod, { namespace: NAMESPACE, name: 'reused-name' }).then(
          () => false,
          (err) => isNotFound(err),
        ),
      60_000,
    );
    const renewed = await createPod('reused-name');
    assert.notEqual(renewed.metadata?.uid, old.metadata?.uid);
    assert.equal(
      await newElection('reused-name', 'reuse-lock').election.become(AbortSignal.timeout(FAILOVER_MS)),
      'leader',
    );
    // Became leader by creating a fresh lock: claiming the stale one would lose it to the garbage collector.
    assert.equal(await lockOwnerUid('reuse-lock'), renewed.metadata?.uid);
    await sleep(3000);
    assert.equal(await lockOwnerUid('reuse-lock'), renewed.metadata?.uid, 'the lock survives garbage collection');
  });

  it('outside a cluster it returns at once without a lock; without POD_NAME it names the fix', async () => {
    const { logger } = capturingLogger();
    const savedNamespace = process.env.POD_NAMESPACE;
    const savedPodName = process.env.POD_NAME;
    delete process.env.POD_NAMESPACE;
    delete process.env.POD_NAME;
    try {
      const outside = new LeaderForLife({
        rest,
        lockName: 'outside-lock',
        podName: 'whatever',
        namespaceFile: '/nonexistent/namespace',
        logger,
      });
      assert.equal(await outside.become(AbortSignal.timeout(5000)), 'not-in-cluster');
      assert.equal(await findLock('outside-lock'), undefined);
      const unnamed = new LeaderForLife({ rest, lockName: 'unnamed-lock', namespace: NAMESPACE, logger });
      await assert.rejects(unnamed.become(AbortSignal.timeout(5000)), /set POD_NAME from the downward API/);
    } finally {
      if (savedNamespace !== undefined) process.env.POD_NAMESPACE = savedNamespace;
      if (savedPodName !== undefined) process.env.POD_NAME = savedPodName;
    }
  });
});

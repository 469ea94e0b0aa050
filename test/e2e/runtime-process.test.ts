/**
 * Process-level behaviour that needs real signals: leader election between
 * two replicas (clean stop and SIGKILL) and SIGTERM during a reconcile.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client, Deployment, isNotFound } from '../../src/runtime/index.js';
import { Lease } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { collectJsonLines } from './child-logs.js';
import { eventually } from './eventually.js';
import { memcachedCRD } from './fixtures/memcached.js';

const managerScript = fileURLToPath(new URL('./fixtures/memcached-manager.js', import.meta.url));

interface Replica {
  name: string;
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

describe('operator processes', () => {
  let env: Environment;
  let api: Client;
  const replicas: Replica[] = [];

  before(async () => {
    env = await startControlPlane({ crds: [memcachedCRD] });
    api = new Client({ rest: new RestClient(env.kubeConfig) });
  });
  after(async () => {
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await env?.stop();
  });

  function startReplica(name: string, extraEnv: Record<string, string> = {}): Replica {
    const child = spawn(process.execPath, [managerScript], {
      env: { ...process.env, KUBECONFIG: env.kubeConfigPath(), LEADER_ELECT: 'true', REPLICA_NAME: name, ...extraEnv },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const lines = collectJsonLines(child.stderr);
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    const replica = { name, child, lines, exited };
    replicas.push(replica);
    return replica;
  }

  const reconciledBy = (replica: Replica, name: string) =>
    replica.lines.some((line) => line.msg === 'test: reconcile started' && line.name === name);
  const isElected = (replica: Replica) => replica.lines.some((line) => line.msg === 'test: elected');
  const create = (name: string, size = 1) =>
    api.create({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name, namespace: 'default' },
      spec: { size },
    });
  const deploymentExists = (name: string) =>
    api.get(Deployment, { namespace: 'default', name }).then(
      () => true,
      (err) => (isNotFound(err) ? false : Promise.reject(err)),
    );

  it('two managers with leader election: exactly one reconciles; a clean stop hands over within the lease duration', async () => {
    const first = startReplica('first');
    await eventually('first to be elected', () => isElected(first), 30_000);
    const second = startReplica('second');
    await create('le-one');
    await eventually('le-one reconciled', () => deploymentExists('le-one'));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.equal(isElected(second), false, 'the second replica must wait');
    assert.equal(reconciledBy(second, 'le-one'), false, 'only the leader reconciles');

    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    await eventually('second to be elected', () => isElected(second), 20_000);
    assert.ok(
      Date.now() - stoppedAt < 15_000,
      `handover took ${Date.now() - stoppedAt} ms, more than the lease duration`,
    );
    const handedOver = await api.get(Lease, { namespace: 'default', name: 'memcached-operator.example.com' });
    assert.equal(handedOver.spec?.leaseTransitions, 1, 'taking over a released lease is a transition');
    await create('le-two');
    await eventually('le-two reconciled by the new leader', () => reconciledBy(second, 'le-two'));

    // SIGKILL: no release, so the third replica waits for the lease to expire.
    const third = startReplica('third');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const killedAt = Date.now();
    second.child.kill('SIGKILL');
    await second.exited;
    await eventually('third to be elected after expiry', () => isElected(third), 40_000);
    const waited = Date.now() - killedAt;
    assert.ok(waited >= 8_000, `took over after ${waited} ms: before the 15 s lease could have expired`);
    const expired = await api.get(Lease, { namespace: 'default', name: 'memcached-operator.example.com' });
    assert.equal(expired.spec?.leaseTransitions, 2, 'taking over an expired lease is a transition');
    await create('le-three');
    await eventually('le-three reconciled', () => reconciledBy(third, 'le-three'));
    third.child.kill('SIGTERM');
    assert.equal(await third.exited, 0);
  });

  it('SIGTERM mid-reconcile: the reconcile finishes, the lease is released, the process exits 0', async () => {
    const replica = startReplica('slow', { RECONCILE_DELAY_MS: '3000' });
    await eventually('elected', () => isElected(replica), 30_000);
    await create('graceful');
    await eventually('a reconcile in flight', () => reconciledBy(replica, 'graceful'));
    const signalledAt = replica.lines.length;
    replica.child.kill('SIGTERM');
    assert.equal(await replica.exited, 0);
    const afterSignal = replica.lines.slice(signalledAt);
    assert.ok(
      afterSignal.some((line) => line.msg === 'test: reconcile finished' && line.name === 'graceful'),
      'the in-flight reconcile finished after SIGTERM',
    );
    assert.ok(afterSignal.some((line) => line.msg === 'released leader lease'));
    const lease = await api.get(Lease, { namespace: 'default', name: 'memcached-operator.example.com' });
    assert.equal(lease.spec?.holderIdentity, undefined, 'the lease has no holder');
  });
});

/**
 * What owner references and finalizers promise, carried out by the real
 * kube-controller-manager (garbage collector, Deployment and ReplicaSet
 * controllers, namespace controller) against the Memcached operator's objects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubernetesObject, V1ReplicaSet } from '@kubernetes/client-node';
import { Client, Deployment, Manager, defineKind, isNotFound } from '../../src/runtime/index.js';
import { ConfigMap, Namespace, Pod, isConflict, type Kind } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { startControlPlaneWithControllers, type ControlPlaneWithControllers } from './control-plane.js';
import { locateControllerManager } from './controller-manager.js';
import { eventually } from './eventually.js';
import { FINALIZER, Memcached, MemcachedReconciler, memcachedCRD } from './fixtures/memcached.js';
import { capturingLogger } from './log-capture.js';

const ReplicaSet = defineKind<V1ReplicaSet>({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  plural: 'replicasets',
  namespaced: true,
});
/** A finalizer of the test's own, to hold a dependent in Terminating while the test looks at its owner. */
const HOLD = 'test.example.com/hold';
/** The garbage collector and namespace controller are fast, but a busy 2-core machine is not. */
const CONVERGE_MS = 90_000;

describe('garbage collection, Deployments and namespaces through the real kube-controller-manager', () => {
  let plane: ControlPlaneWithControllers;
  let mgr: Manager;
  let running: Promise<void>;
  let api: Client;
  const { logger } = capturingLogger();

  before(async () => {
    plane = await startControlPlaneWithControllers({ crds: [memcachedCRD] });
    mgr = new Manager({
      kubeConfig: plane.env.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger,
    });
    new MemcachedReconciler(mgr.getClient(), mgr.getEventRecorderFor('memcached-controller')).setupWithManager(mgr);
    running = mgr.start();
    // Uncached: the test observes the cluster itself, not the operator's view of it.
    api = new Client({ rest: new RestClient(plane.env.kubeConfig) });
  });

  after(async () => {
    mgr?.stop();
    await running;
    await plane?.stop();
  });

  const find = <T extends KubernetesObject>(kind: Kind<T>, namespace: string, name: string): Promise<T | undefined> =>
    api.get(kind, { namespace, name }).catch((err) => (isNotFound(err) ? undefined : Promise.reject(err)));
  const gone = async <T extends KubernetesObject>(kind: Kind<T>, namespace: string, name: string): Promise<boolean> =>
    (await find(kind, namespace, name)) === undefined;
  const ownedBy =
    (owner: KubernetesObject) =>
    (object: KubernetesObject): boolean =>
      (object.metadata?.ownerReferences ?? []).some(
        (ref) => ref.controller === true && ref.uid === owner.metadata?.uid,
      );
  const createMemcached = (name: string, namespace = 'default', size = 1): Promise<Memcached> =>
    api.create<Memcached>({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name, namespace },
      spec: { size },
    });

  it('names the fix when kube-controller-manager is missing from the assets', () => {
    assert.throws(
      () => locateControllerManager('/nonexistent-assets'),
      /kube-controller-manager not found \(looked in KUBEBUILDER_ASSETS \(\/nonexistent-assets\)\): run `bash scripts\/build-test-assets.sh`/,
    );
  });

  it('the Deployment controller creates a ReplicaSet and Pods; deleting the Memcached collects all of them', async () => {
    const memcached = await createMemcached('gc-cascade', 'default', 2);
    const deployment = await eventually(
      'the operator to create the Deployment',
      () => find(Deployment, 'default', 'gc-cascade'),
      CONVERGE_MS,
    );
    assert.ok(ownedBy(memcached)(deployment), 'the Deployment is controlled by the Memcached');
    const replicaSet = await eventually(
      'the Deployment controller to create a ReplicaSet',
      async () => (await api.list(ReplicaSet, { namespace: 'default' })).find(ownedBy(deployment)),
      CONVERGE_MS,
    );
    assert.equal(replicaSet.spec?.replicas, 2);
    const pods = await eventually(
      'the ReplicaSet controller to create 2 Pods',
      async () => {
        const owned = (await api.list(Pod, { namespace: 'default' })).filter(ownedBy(replicaSet));
        return owned.length === 2 && owned;
      },
      CONVERGE_MS,
    );

    await api.delete(memcached);
    await eventually(
      'the Memcached to be gone (its finalizer removed by the operator)',
      () => gone(Memcached, 'default', 'gc-cascade'),
      CONVERGE_MS,
    );
    // Nothing but the garbage collector deletes these: the operator never does.
    await eventually(
      'the garbage collector to delete the Deployment',
      () => gone(Deployment, 'default', 'gc-cascade'),
      CONVERGE_MS,
    );
    await eventually(
      'the garbage collector to delete the ReplicaSet',
      () => gone(ReplicaSet, 'default', replicaSet.metadata.name),
      CONVERGE_MS,
    );
    for (const pod of pods)
      await eventually(
        `the garbage collector to delete Pod ${pod.metadata.name}`,
        () => gone(Pod, 'default', pod.metadata.name),
        CONVERGE_MS,
      );
  });

  it('foreground deletion keeps the Memcached until its blockOwnerDeletion Deployment is gone', async () => {
    const memcached = await createMemcached('gc-foreground');
    const deployment = await eventually(
      'the Deployment',
      () => find(Deployment, 'default', 'gc-foreground'),
      CONVERGE_MS,
    );
    assert.equal(deployment.metadata?.ownerReferences?.find((ref) => ref.controller)?.blockOwnerDeletion, true);
    await updateWithRetry(Deployment, 'gc-foreground', (d) => ({
      ...d,
      metadata: { ...d.metadata, finalizers: [...(d.metadata?.finalizers ?? []), HOLD] },
    }));

    await api.delete(memcached, { propagationPolicy: 'Foreground' });
    await eventually(
      'the garbage collector to delete the held Deployment',
      async () => (await find(Deployment, 'default', 'gc-foreground'))?.metadata?.deletionTimestamp,
      CONVERGE_MS,
    );
    const waiting = await eventually(
      'the Memcached to wait with only the foregroundDeletion finalizer',
      async () => {
        const current = await find(Memcached, 'default', 'gc-foreground');
        return current?.metadata?.finalizers?.join(',') === 'foregroundDeletion' && current;
      },
      CONVERGE_MS,
    );
    assert.ok(waiting.metadata?.deletionTimestamp, 'the Memcached is being deleted');
    assert.ok(!waiting.metadata?.finalizers?.includes(FINALIZER), 'the operator ran its own finalizer meanwhile');
    // The owner must stay for as long as the dependent does: watch it for a while.
    for (let i = 0; i < 10; i++) {
      await sleep(500);
      assert.ok(
        await find(Memcached, 'default', 'gc-foreground'),
        'the Memcached vanished while its blocking Deployment still existed',
      );
    }

    await updateWithRetry(Deployment, 'gc-foreground', (d) => ({
      ...d,
      metadata: { ...d.metadata, finalizers: (d.metadata?.finalizers ?? []).filter((f) => f !== HOLD) },
    }));
    await eventually('the Deployment to be gone', () => gone(Deployment, 'default', 'gc-foreground'), CONVERGE_MS);
    await eventually('the Memcached to follow it', () => gone(Memcached, 'default', 'gc-foreground'), CONVERGE_MS);
  });

  it('deleting a namespace completes, with the operator finalizing its Memcached there', async () => {
    await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc-doomed' } });
    await createMemcached('in-doomed', 'gc-doomed');
    await api.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'plain', namespace: 'gc-doomed' },
      data: { a: 'b' },
    });
    await eventually('the Deployment', () => find(Deployment, 'gc-doomed', 'in-doomed'), CONVERGE_MS);
    await eventually(
      'the operator to add its finalizer',
      async () => (await find(Memcached, 'gc-doomed', 'in-doomed'))?.metadata?.finalizers?.includes(FINALIZER),
      CONVERGE_MS,
    );

    await api.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc-doomed' } });
    await eventually(
      'the namespace controller to empty and delete the namespace',
      () => gone(Namespace, '', 'gc-doomed'),
      CONVERGE_MS,
    );
    assert.equal(await find(ConfigMap, 'gc-doomed', 'plain'), undefined);
  });

  it('stopping kube-controller-manager leaves no process behind', async () => {
    const pid = plane.controllerManager.pid;
    assert.ok(pid, 'kube-controller-manager runs');
    await plane.controllerManager.stop();
    assert.equal(plane.controllerManager.pid, undefined);
    assert.throws(
      () => process.kill(pid, 0),
      { code: 'ESRCH' },
      `kube-controller-manager (pid ${pid}) still runs after stop()`,
    );
  });

  /** Read-modify-write that retries on conflicts: the garbage collector writes these objects too. */
  async function updateWithRetry<T extends KubernetesObject>(
    kind: Kind<T>,
    name: string,
    change: (current: T) => T,
  ): Promise<void> {
    await eventually(
      `an update of ${kind.kind} ${name}`,
      async () => {
        const current = await api.get(kind, { namespace: 'default', name });
        try {
          await api.update(change(current));
          return true;
        } catch (err) {
          if (isConflict(err)) return false;
          throw err;
        }
      },
      CONVERGE_MS,
    );
  }
});

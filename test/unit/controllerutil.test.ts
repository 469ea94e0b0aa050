import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { addFinalizer, containsFinalizer, removeFinalizer, setControllerReference } from '../../src/runtime/index.js';
import {
  AlreadyOwnedError,
  hasControllerReference,
  removeOwnerReference,
  setOwnerReference,
} from '../../src/runtime/controllerutil/index.js';

function owner(name: string, overrides: Partial<KubernetesObject> = {}): KubernetesObject {
  return {
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    ...overrides,
  };
}

function deployment(namespace: string | undefined = 'ns'): KubernetesObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace } };
}

describe('setControllerReference', () => {
  it('adds a controller reference with blockOwnerDeletion', () => {
    const obj = deployment();
    setControllerReference(owner('a'), obj);
    assert.deepEqual(obj.metadata?.ownerReferences, [
      {
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        name: 'a',
        uid: 'uid-a',
        blockOwnerDeletion: true,
        controller: true,
      },
    ]);
    assert.equal(hasControllerReference(obj), true);
  });

  it('is idempotent for the same owner and updates its uid and version in place', () => {
    const obj = deployment();
    setControllerReference(owner('a'), obj);
    setControllerReference(
      owner('a', { apiVersion: 'cache.example.com/v2', metadata: { name: 'a', namespace: 'ns', uid: 'new-uid' } }),
      obj,
    );
    assert.equal(obj.metadata?.ownerReferences?.length, 1);
    assert.equal(obj.metadata?.ownerReferences?.[0]?.uid, 'new-uid');
    assert.equal(obj.metadata?.ownerReferences?.[0]?.apiVersion, 'cache.example.com/v2');
  });

  it('refuses a second controller with AlreadyOwnedError and leaves the object unchanged', () => {
    const obj = deployment();
    setControllerReference(owner('a'), obj);
    const before = structuredClone(obj);
    assert.throws(
      () => setControllerReference(owner('b'), obj),
      (err: unknown) => {
        assert.ok(err instanceof AlreadyOwnedError);
        assert.equal(err.owner.name, 'a');
        assert.match(err.message, /already controlled by Memcached "a"/);
        return true;
      },
    );
    assert.deepEqual(obj, before);
  });

  it('keeps existing non-controller owner references', () => {
    const obj = deployment();
    setOwnerReference(owner('other', { kind: 'Other' }), obj);
    setControllerReference(owner('a'), obj);
    assert.deepEqual(
      obj.metadata?.ownerReferences?.map((ref) => [ref.kind, ref.controller ?? false]),
      [
        ['Other', false],
        ['Memcached', true],
      ],
    );
  });

  it('rejects an owner without uid, naming what is missing', () => {
    const incomplete = owner('a');
    delete incomplete.metadata!.uid;
    assert.throws(() => setControllerReference(incomplete, deployment()), /has no metadata\.uid/);
    assert.throws(
      () => setControllerReference({ metadata: { name: 'x', uid: 'u' } }, deployment()),
      /has no apiVersion, kind/,
    );
  });

  it('rejects an owner in another namespace', () => {
    assert.throws(
      () => setControllerReference(owner('a'), deployment('elsewhere')),
      /cross-namespace owner references are not allowed/,
    );
  });

  it('rejects a namespaced owner for a cluster-scoped object', () => {
    const clusterRole: KubernetesObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'cr' },
    };
    assert.throws(
      () => setControllerReference(owner('a'), clusterRole),
      /cluster-scoped ClusterRole "cr" cannot have namespaced owner/,
    );
  });

  it('allows a cluster-scoped owner for a namespaced object', () => {
    const obj = deployment();
    setControllerReference({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', uid: 'ns-uid' } }, obj);
    assert.equal(obj.metadata?.ownerReferences?.[0]?.kind, 'Namespace');
  });
});

describe('setOwnerReference / removeOwnerReference', () => {
  it('adds a non-controller reference', () => {
    const obj = deployment();
    setOwnerReference(owner('a'), obj);
    assert.deepEqual(obj.metadata?.ownerReferences, [
      { apiVersion: 'cache.example.com/v1', kind: 'Memcached', name: 'a', uid: 'uid-a' },
    ]);
    assert.equal(hasControllerReference(obj), false);
  });

  it('updates an existing reference in place, keeping its controller flags', () => {
    const obj = deployment();
    setControllerReference(owner('a'), obj);
    setOwnerReference(owner('a', { metadata: { name: 'a', namespace: 'ns', uid: 'uid-2' } }), obj);
    assert.deepEqual(obj.metadata?.ownerReferences, [
      {
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        name: 'a',
        uid: 'uid-2',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it('adds owners of different names side by side', () => {
    const obj = deployment();
    setOwnerReference(owner('a'), obj);
    setOwnerReference(owner('b'), obj);
    assert.deepEqual(
      obj.metadata?.ownerReferences?.map((ref) => ref.name),
      ['a', 'b'],
    );
  });

  it('removes a reference and reports whether it was there', () => {
    const obj = deployment();
    setOwnerReference(owner('a'), obj);
    setOwnerReference(owner('b'), obj);
    assert.equal(removeOwnerReference(owner('a'), obj), true);
    assert.deepEqual(
      obj.metadata?.ownerReferences?.map((ref) => ref.name),
      ['b'],
    );
    assert.equal(removeOwnerReference(owner('a'), obj), false);
  });
});

describe('finalizers', () => {
  const F = 'cache.example.com/finalizer';

  it('adds a finalizer once', () => {
    const obj: KubernetesObject = { apiVersion: 'v1', kind: 'ConfigMap' };
    assert.equal(containsFinalizer(obj, F), false);
    assert.equal(addFinalizer(obj, F), true);
    assert.equal(addFinalizer(obj, F), false);
    assert.deepEqual(obj.metadata?.finalizers, [F]);
    assert.equal(containsFinalizer(obj, F), true);
  });

  it('keeps other finalizers and removes only the named one', () => {
    const obj: KubernetesObject = { metadata: { finalizers: ['other/one', F, 'other/two'] } };
    assert.equal(removeFinalizer(obj, F), true);
    assert.deepEqual(obj.metadata?.finalizers, ['other/one', 'other/two']);
    assert.equal(removeFinalizer(obj, F), false);
    assert.deepEqual(obj.metadata?.finalizers, ['other/one', 'other/two']);
  });

  it('removes duplicates of the finalizer', () => {
    const obj: KubernetesObject = { metadata: { finalizers: [F, F] } };
    assert.equal(removeFinalizer(obj, F), true);
    assert.deepEqual(obj.metadata?.finalizers, []);
  });
});

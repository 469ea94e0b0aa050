/**
 * How a controller turns source events into queued keys, without a server:
 * updates map the old and the new object (union), async mappers enqueue when
 * they resolve, and a failing mapper drops only its own event. The same
 * behaviours on a real API server are in test/e2e/runtime-cache.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ConfigMap } from '../../src/runtime/api/index.js';
import { Controller } from '../../src/runtime/controller/index.js';
import { enqueueForOwner } from '../../src/runtime/handler/index.js';
import { silentLogger } from '../../src/runtime/log/index.js';
import { ManagerMetrics } from '../../src/runtime/metrics/index.js';
import { ChannelSource, type EventSource, type SourceEventHandler } from '../../src/runtime/source/index.js';

/** A source the test drives by hand (stands in for an informer). */
class ManualSource implements EventSource {
  handler!: SourceEventHandler;
  addEventHandler(handler: SourceEventHandler): void {
    this.handler = handler;
  }
  waitForSync(): Promise<void> {
    return Promise.resolve();
  }
}

const owned = (...owners: string[]): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    namespace: 'ns',
    name: 's',
    ownerReferences: owners.map((name) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid: name, controller: true })),
  },
});

/** Keys in the order the queue hands them out. */
async function handedOut(controller: Controller): Promise<string[]> {
  await new Promise((resolve) => setImmediate(resolve));
  const keys: string[] = [];
  while (controller.queue.len() > 0) {
    const key = (await controller.queue.get())!;
    keys.push(key);
    controller.queue.done(key);
  }
  return keys;
}

/** The queued keys, sorted. */
async function queued(controller: Controller): Promise<string[]> {
  return (await handedOut(controller)).sort();
}

function newController(): Controller {
  return new Controller('events', { async reconcile() {} }, ConfigMap, silentLogger, new ManagerMetrics());
}

test('an update enqueues the owners of the old and of the new object', async () => {
  const controller = newController();
  const source = new ManualSource();
  controller.watch({ source, mapper: enqueueForOwner(ConfigMap), predicates: [] });
  source.handler.onUpdate!(owned('a'), owned('b'));
  assert.deepEqual(await queued(controller), ['ns/a', 'ns/b'], 'an owner moved from a to b reconciles both');
  source.handler.onUpdate!(owned('b'), owned());
  assert.deepEqual(await queued(controller), ['ns/b'], 'orphaning reconciles the old owner');
});

test('async mappers enqueue when they resolve; a rejected one drops only its event', async () => {
  const controller = newController();
  const source = new ManualSource();
  controller.watch({
    source,
    mapper: async (object) => {
      if (object.metadata?.name === 'bad') throw new Error('map failed');
      return [{ namespace: 'ns', name: `target-of-${object.metadata!.name}` }];
    },
    predicates: [],
  });
  source.handler.onAdd!({ metadata: { namespace: 'ns', name: 'bad' } }, { isInInitialList: false });
  source.handler.onUpdate!(
    { metadata: { namespace: 'ns', name: 'old' } },
    { metadata: { namespace: 'ns', name: 'new' } },
  );
  assert.deepEqual(await queued(controller), ['ns/target-of-new', 'ns/target-of-old']);
});

test('channel events are generic events: predicates see them, the mapper maps them', async () => {
  const controller = newController();
  const channel = new ChannelSource();
  controller.watch({
    source: channel,
    mapper: (object) => [{ name: object.metadata!.name! }],
    predicates: [{ generic: (object) => object.metadata?.name !== 'skip' }],
  });
  channel.send({ metadata: { name: 'one' } });
  channel.send({ metadata: { name: 'skip' } });
  assert.deepEqual(await queued(controller), ['one']);
});

test('an update whose old and new object map to the same key is reconciled once', async () => {
  const controller = newController();
  const source = new ManualSource();
  controller.watch({ source, mapper: (object) => [{ namespace: 'ns', name: object.metadata!.name! }], predicates: [] });
  // A worker already waiting: the first add hands it the key at once, so a second add would mark it dirty.
  const handed = controller.queue.get();
  source.handler.onUpdate!(
    { metadata: { namespace: 'ns', name: 'same' } },
    { metadata: { namespace: 'ns', name: 'same' } },
  );
  const key = (await handed)!;
  controller.queue.done(key);
  assert.equal(key, 'ns/same');
  assert.equal(controller.queue.len(), 0, 'the key was queued again: one event reconciled it twice');
});

test('requeueAfterMs is the requeue delay', async () => {
  const { requeueDelayMs } = await import('../../src/runtime/controller/controller.js');
  assert.equal(requeueDelayMs({ requeueAfterMs: 700 }), 700);
  assert.equal(requeueDelayMs({}), 0);
  assert.equal(requeueDelayMs(undefined), 0);
  assert.equal(requeueDelayMs({ requeueAfterMs: -1 }), 0);
});

test('the initial list and unchanged resyncs queue at low priority, behind real changes', async () => {
  const controller = newController();
  const source = new ManualSource();
  controller.watch({ source, mapper: (object) => [{ namespace: 'ns', name: object.metadata!.name! }], predicates: [] });
  const object = (name: string, resourceVersion: string): KubernetesObject => ({
    metadata: { namespace: 'ns', name, resourceVersion },
  });
  source.handler.onAdd!(object('listed', '1'), { isInInitialList: true });
  source.handler.onUpdate!(object('resynced', '2'), object('resynced', '2'));
  source.handler.onAdd!(object('created', '3'), { isInInitialList: false });
  source.handler.onUpdate!(object('changed', '4'), object('changed', '5'));
  source.handler.onDelete!(object('deleted', '6'), { finalStateUnknown: false });
  assert.deepEqual(await handedOut(controller), ['ns/created', 'ns/changed', 'ns/deleted', 'ns/listed', 'ns/resynced']);
});

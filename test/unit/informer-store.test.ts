/**
 * The informer's store and its indexes, without a server: the namespace index
 * (a namespaced list must not read other namespaces' objects), field indexes
 * kept right across updates and deletes, the delete flag a relist sets, the
 * resync jitter, and the channel source. The list+watch loop itself is tested
 * against the real API server in test/e2e/runtime-cache*.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ConfigMap } from '../../src/runtime/api/index.js';
import { Informer, type DeleteInfo } from '../../src/runtime/cache/index.js';
import { silentLogger } from '../../src/runtime/log/index.js';
import { ChannelSource } from '../../src/runtime/source/index.js';
import { type RestClient } from '../../src/runtime/transport/index.js';
import { apiErrorFrom } from '../../src/runtime/api/errors.js';
import { isResourceVersionTooLarge, jitteredResyncPeriod } from '../../src/runtime/cache/informer.js';
import { admits, and, not, or, type Predicate } from '../../src/runtime/predicate/predicate.js';

/** The store is never started here, so it never uses its REST client. */
const notStarted = {} as RestClient;
const newInformer = (): Informer => new Informer(notStarted, ConfigMap, { logger: silentLogger });

let metadataReads = 0;
/** A ConfigMap whose metadata reads are counted: a scan over the store reads every object's metadata. */
function countedConfigMap(
  namespace: string,
  name: string,
  data: Record<string, string> = {},
  resourceVersion = '1',
): KubernetesObject {
  const metadata = { namespace, name, resourceVersion };
  const object = { apiVersion: 'v1', kind: 'ConfigMap', data } as KubernetesObject;
  Object.defineProperty(object, 'metadata', { enumerable: true, get: () => (metadataReads++, metadata) });
  return object;
}
const configMap = (
  namespace: string,
  name: string,
  data: Record<string, string> = {},
  resourceVersion = '1',
): KubernetesObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name, resourceVersion }, data }) as KubernetesObject;

test('a namespaced list reads only that namespace (namespace index), not the whole store', () => {
  const informer = newInformer();
  for (let ns = 0; ns < 50; ns++)
    for (let i = 0; i < 100; i++) informer.upsert(countedConfigMap(`ns-${ns}`, `cm-${i}`));
  metadataReads = 0;
  const listed = informer.list('ns-7');
  assert.equal(listed.length, 100);
  assert.equal(
    metadataReads,
    0,
    `listing one namespace read the metadata of ${metadataReads} objects: it scanned the store`,
  );
  assert.deepEqual(informer.keysIn('ns-7').length, 100);
  assert.equal(metadataReads, 0, 'keysIn (the relist diff) must use the index too');

  informer.remove('ns-7/cm-3');
  assert.equal(informer.list('ns-7').length, 99, 'a delete leaves the namespace index');
  for (let i = 0; i < 100; i++) informer.remove(`ns-8/cm-${i}`);
  assert.deepEqual(informer.list('ns-8'), []);
  assert.equal(informer.list().length, 50 * 100 - 101);
});

test('field indexes follow updates and deletes, and can be added after objects are cached', () => {
  const informer = newInformer();
  informer.upsert(configMap('a', 'one', { owner: 'x' }));
  informer.upsert(configMap('b', 'two', { owner: 'x' }));
  informer.addIndex('data.owner', (object) => {
    const owner = (object as { data?: Record<string, string> }).data?.owner;
    return owner ? [owner] : [];
  });
  assert.throws(() => informer.addIndex('data.owner', () => []), /already has an index named "data.owner"/);
  const names = (value: string, namespace?: string): string[] =>
    informer
      .byIndex('data.owner', value, namespace)
      .map((o) => o.metadata!.name!)
      .sort();

  assert.deepEqual(names('x'), ['one', 'two'], 'objects cached before the index was added are indexed');
  assert.deepEqual(names('x', 'b'), ['two'], 'an index read can be narrowed to a namespace');

  informer.upsert(configMap('a', 'one', { owner: 'y' }, '2'));
  assert.deepEqual(names('x'), ['two'], 'an update unfiles the old value');
  assert.deepEqual(names('y'), ['one']);
  assert.equal(informer.indexedUnder('data.owner', configMap('a', 'one'), 'y'), true);

  informer.upsert(configMap('a', 'one', {}, '3'));
  assert.deepEqual(names('y'), [], 'an object whose index function returns nothing is in no value');
  informer.remove('b/two');
  assert.deepEqual(names('x'), [], 'a delete unfiles the object');
  assert.throws(
    () => informer.byIndex('spec.missing', 'v'),
    /no index named "spec.missing": call cache.indexField\(ConfigMap, 'spec.missing', fn\)/,
  );
});

test('a delete seen on the watch has a known final state; one found by a relist does not', () => {
  const informer = newInformer();
  const deletes: Array<[string, DeleteInfo]> = [];
  informer.addEventHandler({ onDelete: (object, info) => deletes.push([object.metadata!.name!, info]) });
  informer.upsert(configMap('a', 'watched', {}, '1'));
  informer.upsert(configMap('a', 'relisted', {}, '1'));
  informer.remove('a/watched', configMap('a', 'watched', {}, '2'));
  informer.remove('a/relisted');
  assert.deepEqual(deletes, [
    ['watched', { finalStateUnknown: false }],
    ['relisted', { finalStateUnknown: true }],
  ]);
});

test('delete predicates see finalStateUnknown, also through and/or/not', () => {
  const onlyKnown: Predicate = { delete: (_object, info) => !info.finalStateUnknown };
  const object = configMap('a', 'x');
  const unknown = { type: 'delete' as const, object, finalStateUnknown: true };
  const known = { type: 'delete' as const, object };
  assert.equal(admits(onlyKnown, unknown), false);
  assert.equal(admits(onlyKnown, known), true);
  assert.equal(admits(and(onlyKnown), unknown), false);
  assert.equal(admits(or(onlyKnown), unknown), false);
  assert.equal(admits(not(onlyKnown), unknown), true);
});

test('the resync period is jittered within [0.9, 1.1) of the setting, and 0 turns it off', () => {
  const samples = Array.from({ length: 2000 }, () => jitteredResyncPeriod(10_000));
  assert.ok(
    samples.every((ms) => ms >= 9000 && ms <= 11_000),
    `out of range: ${samples
      .filter((ms) => ms < 9000 || ms > 11_000)
      .slice(0, 5)
      .join(', ')}`,
  );
  assert.ok(
    Math.min(...samples) < 9200 && Math.max(...samples) > 10_800,
    'the jitter must spread informers over the whole range',
  );
  assert.equal(jitteredResyncPeriod(0), 0);
  assert.equal(
    jitteredResyncPeriod(365 * 24 * 3600 * 1000),
    2 ** 31 - 1,
    'capped where Node timers would overflow and fire at once',
  );
});

test('ResourceVersionTooLarge is recognised by its cause and by its message', () => {
  const byCause = apiErrorFrom(
    504,
    {
      kind: 'Status',
      code: 504,
      reason: 'Timeout',
      message: 'Too large resource version: 99, current: 12',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
    },
    'watch',
  );
  const byMessage = apiErrorFrom(
    504,
    { kind: 'Status', code: 504, reason: 'Timeout', message: 'Too large resource version: 99, current: 12' },
    'watch',
  );
  const otherTimeout = apiErrorFrom(
    504,
    { kind: 'Status', code: 504, reason: 'Timeout', message: 'request timed out' },
    'list',
  );
  assert.equal(isResourceVersionTooLarge(byCause), true);
  assert.equal(isResourceVersionTooLarge(byMessage), true);
  assert.equal(isResourceVersionTooLarge(otherTimeout), false);
});

test('a channel source keeps objects sent before anyone watches, then delivers to every watcher', () => {
  const channel = new ChannelSource();
  channel.send(configMap('a', 'early'));
  const first: string[] = [];
  const second: string[] = [];
  channel.addEventHandler({ onGeneric: (object) => first.push(object.metadata!.name!) });
  channel.addEventHandler({ onGeneric: (object) => second.push(object.metadata!.name!) });
  channel.send(configMap('a', 'late'));
  assert.deepEqual(first, ['early', 'late']);
  assert.deepEqual(second, ['late']);
});

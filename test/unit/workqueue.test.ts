import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManagerMetrics } from '../../src/runtime/metrics/metrics.js';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from '../../src/runtime/workqueue/ratelimiter.js';
import { LOW_PRIORITY, WorkQueue } from '../../src/runtime/workqueue/workqueue.js';

test('duplicate adds of a waiting key fold into one', async () => {
  const queue = new WorkQueue({ name: 'fold' });
  queue.add('ns/a');
  queue.add('ns/a');
  queue.add('ns/b');
  assert.equal(queue.len(), 2);
  assert.equal(await queue.get(), 'ns/a');
  assert.equal(await queue.get(), 'ns/b');
});

/** What `get()` resolves within `ms`, or 'nothing'. */
const getWithin = (queue: WorkQueue, ms: number): Promise<string | undefined> =>
  Promise.race([queue.get(), sleep(ms).then(() => 'nothing')]);

test('a key added while processing is handed out again only after done()', async () => {
  const queue = new WorkQueue({ name: 'dirty' });
  queue.add('k');
  const key = await queue.get();
  queue.add('k');
  const second = queue.get();
  assert.equal(
    await Promise.race([second, sleep(50).then(() => 'nothing')]),
    'nothing',
    'must not be handed to a second worker while processing',
  );
  queue.done(key!);
  assert.equal(await second, 'k', 'the add made while processing is not lost');
});

test('a key being processed does not hold up the keys behind it', async () => {
  const queue = new WorkQueue({ name: 'skip' });
  queue.add('a');
  assert.equal(await queue.get(), 'a');
  queue.add('a');
  queue.add('b');
  assert.equal(await queue.get(), 'b');
  queue.done('a');
  assert.equal(await queue.get(), 'a');
});

test('get() waits for an add, and resolves undefined at once after shutDown, dropping queued keys', async () => {
  const queue = new WorkQueue({ name: 'wait' });
  const pending = queue.get();
  queue.add('x');
  assert.equal(await pending, 'x');
  const waiting = queue.get();
  queue.shutDown();
  assert.equal(await waiting, undefined, 'a waiting worker is released');
  queue.add('y');
  assert.equal(await queue.get(), undefined, 'as controller-runtime: queued keys are not drained after shutdown');
  assert.equal(queue.len(), 0, 'no adds after shutdown');
});

test('a requeue that its own watch event follows reconciles once, not twice', async () => {
  const queue = new WorkQueue({ name: 'merge', rateLimiter: new ItemExponentialFailureRateLimiter(30, 1000) });
  queue.add('k');
  assert.equal(await queue.get(), 'k');
  queue.addRateLimited('k'); // the reconcile asked to requeue
  queue.done('k');
  queue.add('k'); // and its write came back as a watch event
  assert.equal(await getWithin(queue, 20), 'k', 'the event makes the waiting key ready at once');
  queue.done('k');
  assert.equal(await getWithin(queue, 100), 'nothing', 'the backoff does not hand it out a second time');
  queue.shutDown();
});

test('a waiting key that an event makes ready keeps the place of its first add', async () => {
  const queue = new WorkQueue({ name: 'place', rateLimiter: new ItemExponentialFailureRateLimiter(1000, 1000) });
  queue.addRateLimited('first');
  queue.add('second');
  queue.add('first');
  assert.equal(await queue.get(), 'first', 'ahead of a key added after its requeue');
  assert.equal(await queue.get(), 'second');
  queue.shutDown();
});

test('higher priorities go first; a raised key goes last among its new priority', async () => {
  const queue = new WorkQueue({ name: 'priority' });
  queue.add('low-1', LOW_PRIORITY);
  queue.add('low-2', LOW_PRIORITY);
  queue.add('normal');
  queue.add('high', 10);
  queue.add('low-2', 0);
  queue.add('normal', LOW_PRIORITY); // a lower priority never demotes
  const order: string[] = [];
  for (let i = 0; i < 4; i++) order.push((await queue.get())!);
  assert.deepEqual(order, ['high', 'normal', 'low-2', 'low-1']);
  queue.shutDown();
});

test('a key that waited is ordered by when it became ready', async () => {
  const queue = new WorkQueue({ name: 'ready-order' });
  queue.addAfter('late', 30);
  queue.add('held');
  assert.equal(await queue.get(), 'held');
  await sleep(60);
  queue.add('after');
  queue.done('held');
  assert.deepEqual([await queue.get(), await queue.get()], ['late', 'after']);
  queue.shutDown();
});

test('the default backoff has no overall bucket: many keys requeue after 5 ms each', async () => {
  const queue = new WorkQueue({ name: 'no-bucket' });
  for (let i = 0; i < 300; i++) queue.addRateLimited(`k${i}`);
  await sleep(200);
  assert.equal(queue.len(), 300, "with client-go's 10 qps / 100 bucket, 200 of them would still wait");
  queue.shutDown();
});

test('addAfter delays and keeps the earliest pending time', async () => {
  const queue = new WorkQueue({ name: 'delay' });
  const started = Date.now();
  queue.addAfter('k', 200);
  queue.addAfter('k', 60);
  queue.addAfter('k', 500);
  assert.equal(await queue.get(), 'k');
  const waited = Date.now() - started;
  assert.ok(waited >= 55 && waited < 190, `waited ${waited} ms`);
  queue.done('k');
  await sleep(250);
  assert.equal(queue.len(), 0, 'the later timers were dropped');
  queue.shutDown();
});

test('per-item exponential backoff doubles from 5 ms and is capped at 1000 s', () => {
  const limiter = new ItemExponentialFailureRateLimiter(5, 1_000_000);
  const delays = Array.from({ length: 5 }, () => limiter.when('k'));
  assert.deepEqual(delays, [5, 10, 20, 40, 80]);
  for (let i = 0; i < 40; i++) limiter.when('k');
  assert.equal(limiter.when('k'), 1_000_000);
  assert.equal(limiter.numRequeues('k'), 46);
  limiter.forget('k');
  assert.equal(limiter.when('k'), 5);
  assert.equal(limiter.when('other'), 5, 'keys back off independently');
});

test('the bucket allows a burst of 100 and then 10 per second', () => {
  let now = 0;
  const bucket = new BucketRateLimiter(10, 100, () => now);
  for (let i = 0; i < 100; i++) assert.equal(bucket.when(), 0);
  assert.equal(bucket.when(), 100);
  assert.equal(bucket.when(), 200);
  now = 1000;
  // One second refills ten tokens: the debt of two is repaid and eight are left.
  for (let i = 0; i < 8; i++) assert.equal(bucket.when(), 0);
  assert.equal(bucket.when(), 100);
});

test("defaultControllerRateLimiter is client-go's max of both limiters", () => {
  const limiter = new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(5, 1_000_000),
    new BucketRateLimiter(10, 100, () => 0),
  );
  assert.equal(limiter.when('a'), 5);
  assert.equal(limiter.when('a'), 10);
  assert.ok(defaultControllerRateLimiter().when('x') === 5);
});

test('workqueue metrics count adds, retries and depth under controller-runtime names', async () => {
  const metrics = new ManagerMetrics();
  const queue = new WorkQueue({
    name: 'memcached',
    metrics,
    rateLimiter: new ItemExponentialFailureRateLimiter(1, 10),
  });
  queue.add('a');
  queue.add('b');
  queue.addRateLimited('c');
  await sleep(20);
  const key = await queue.get();
  queue.done(key!);
  const text = await metrics.registry.metrics();
  assert.match(text, /workqueue_adds_total\{name="memcached",controller="memcached"\} 3/);
  assert.match(text, /workqueue_retries_total\{name="memcached",controller="memcached"\} 1/);
  assert.match(text, /workqueue_depth\{name="memcached",controller="memcached",priority="0"\} 2/);
  assert.match(text, /workqueue_work_duration_seconds_count\{name="memcached",controller="memcached"\} 1/);
  queue.shutDown();
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManagerMetrics } from '../../src/runtime/metrics.js';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, defaultControllerRateLimiter } from '../../src/runtime/ratelimiter.js';
import { WorkQueue } from '../../src/runtime/workqueue.js';

test('duplicate adds of a waiting key fold into one', async () => {
  const queue = new WorkQueue({ name: 'fold' });
  queue.add('ns/a');
  queue.add('ns/a');
  queue.add('ns/b');
  assert.equal(queue.len(), 2);
  assert.equal(await queue.get(), 'ns/a');
  assert.equal(await queue.get(), 'ns/b');
});

test('a key added while processing is handed out again only after done()', async () => {
  const queue = new WorkQueue({ name: 'dirty' });
  queue.add('k');
  const key = await queue.get();
  queue.add('k');
  assert.equal(queue.len(), 0, 'must not be available to a second worker while processing');
  queue.done(key!);
  assert.equal(queue.len(), 1);
  assert.equal(await queue.get(), 'k');
});

test('get() waits for an add, and resolves undefined after shutDown once drained', async () => {
  const queue = new WorkQueue({ name: 'wait' });
  const pending = queue.get();
  queue.add('x');
  assert.equal(await pending, 'x');
  queue.add('y');
  queue.shutDown();
  assert.equal(await queue.get(), 'y', 'waiting keys still drain');
  assert.equal(await queue.get(), undefined);
  queue.add('z');
  assert.equal(queue.len(), 0, 'no adds after shutdown');
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

test('the controller default is the max of both limiters', () => {
  const limiter = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1_000_000), new BucketRateLimiter(10, 100, () => 0));
  assert.equal(limiter.when('a'), 5);
  assert.equal(limiter.when('a'), 10);
  assert.ok(defaultControllerRateLimiter().when('x') === 5);
});

test('workqueue metrics count adds, retries and depth under controller-runtime names', async () => {
  const metrics = new ManagerMetrics();
  const queue = new WorkQueue({ name: 'memcached', metrics, rateLimiter: new ItemExponentialFailureRateLimiter(1, 10) });
  queue.add('a');
  queue.add('b');
  queue.addRateLimited('c');
  await sleep(20);
  const key = await queue.get();
  queue.done(key!);
  const text = await metrics.registry.metrics();
  assert.match(text, /workqueue_adds_total\{name="memcached",controller="memcached"\} 3/);
  assert.match(text, /workqueue_retries_total\{name="memcached",controller="memcached"\} 1/);
  assert.match(text, /workqueue_depth\{name="memcached",controller="memcached"\} 2/);
  assert.match(text, /workqueue_work_duration_seconds_count\{name="memcached",controller="memcached"\} 1/);
  queue.shutDown();
});

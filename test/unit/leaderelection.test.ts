import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jitter } from '../../src/runtime/leaderelection/lease.js';

test('acquire retries wait the retry period plus 0–120 % of it, as client-go (JitterFactor 1.2)', () => {
  assert.equal(
    jitter(2_000, () => 0),
    2_000,
  );
  assert.equal(
    jitter(2_000, () => 0.5),
    3_200,
  );
  assert.ok(Math.abs(jitter(2_000, () => 0.999_999) - 4_400) < 1);
});

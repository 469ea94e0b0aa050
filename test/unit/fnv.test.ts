/**
 * FNV-1a (src/fnv.ts), the CLI's hash for file fingerprints and the
 * leader-election ID: the published test vectors (the ones Go's hash/fnv
 * tests use), non-ASCII text hashed as its UTF-8 bytes, and the 64-bit
 * form's two 32-bit halves checked against exact BigInt arithmetic on
 * inputs long enough to carry across the halves many times.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fnv1a32, fnv1a64 } from '../../src/fnv.js';

test('FNV-1a 32 and 64 give the published vectors', () => {
  assert.equal(fnv1a32(''), '811c9dc5');
  assert.equal(fnv1a32('a'), 'e40c292c');
  assert.equal(fnv1a32('foobar'), 'bf9cf968');
  assert.equal(fnv1a64(''), 'cbf29ce484222325');
  assert.equal(fnv1a64('a'), 'af63dc4c8601ec8c');
  assert.equal(fnv1a64('foobar'), '85944171f73967e8');
});

/** FNV-1a 64 the slow, obviously right way. */
function reference64(bytes: Uint8Array): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash.toString(16).padStart(16, '0');
}

test('FNV-1a 64 agrees with BigInt arithmetic, and a string hashes as its UTF-8 bytes', () => {
  const text = 'größe: 1 Ω — ünïcode ✓';
  assert.equal(fnv1a64(text), fnv1a64(Buffer.from(text, 'utf8')));
  assert.equal(fnv1a32(text), fnv1a32(Buffer.from(text, 'utf8')));
  // Every byte value, in a sequence where each high bit and carry pattern occurs.
  const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 167 + (i >> 8)) & 0xff);
  for (const length of [1, 2, 3, 7, 64, 255, 1000, 4096])
    assert.equal(fnv1a64(bytes.subarray(0, length)), reference64(bytes.subarray(0, length)), `length ${length}`);
});

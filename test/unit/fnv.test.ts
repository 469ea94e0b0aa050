/**
 * The CLI's hashes (src/fnv.ts): FNV-1a 32 gives the published test vectors
 * (the ones Go's hash/fnv tests use); hash64's first lane is FNV-1a 32 and
 * its second the same loop with MurmurHash2's multiplier, checked against
 * BigInt arithmetic; text hashes as its UTF-8 bytes; and a one-byte change
 * anywhere in a file changes the hash.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fnv1a32, hash64 } from '../../src/fnv.js';

test('FNV-1a 32 gives the published vectors', () => {
  assert.equal(fnv1a32(''), '811c9dc5');
  assert.equal(fnv1a32('a'), 'e40c292c');
  assert.equal(fnv1a32('foobar'), 'bf9cf968');
});

/** One 32-bit multiplicative lane, the slow and obviously right way. */
function lane(bytes: Uint8Array, offset: bigint, prime: bigint): string {
  let hash = offset;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * prime) & 0xffffffffn;
  return hash.toString(16).padStart(8, '0');
}

test('hash64 is FNV-1a 32 beside a MurmurHash2-multiplier lane, over the UTF-8 bytes', () => {
  const text = 'größe: 1 Ω — ünïcode ✓';
  assert.equal(hash64(text), hash64(Buffer.from(text, 'utf8')));
  assert.equal(hash64(''), '811c9dc584222325');
  const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 167 + (i >> 8)) & 0xff);
  for (const length of [1, 2, 3, 7, 64, 255, 1000, 4096]) {
    const part = bytes.subarray(0, length);
    assert.equal(hash64(part), lane(part, 0x811c9dc5n, 0x01000193n) + lane(part, 0x84222325n, 0x5bd1e995n));
    assert.equal(hash64(part).slice(0, 8), fnv1a32(part));
  }
});

test('hash64 changes with any one byte changed', () => {
  const bytes = Uint8Array.from({ length: 2048 }, (_, i) => (i * 31) & 0xff);
  const seen = new Set([hash64(bytes)]);
  for (let i = 0; i < bytes.length; i += 97) {
    const changed = Uint8Array.from(bytes);
    changed[i] = changed[i]! ^ 1;
    seen.add(hash64(changed));
  }
  assert.equal(seen.size, 1 + Math.ceil(bytes.length / 97));
});

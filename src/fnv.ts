/**
 * FNV-1a, the non-cryptographic hash kubebuilder's scaffold uses for the
 * leader-election ID (`hashFNV`), and a 64-bit hash built on it for what the
 * CLI only compares: a file's fingerprint (did it change since it was read?). Not node:crypto:
 * importing it costs 12-17 ms (its internal modules compile on first use),
 * 5 % of a whole `init` or `generate bundle`, for hashes of a few kilobytes.
 * Neither use is adversarial: a user edit that happened to collide in 64 bits
 * is as unlikely as a disk error.
 */

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1a 32-bit of `data`'s bytes (a string as UTF-8), as 8 hex digits (Go's hash/fnv New32a). */
export function fnv1a32(data: string | Uint8Array): string {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let hash = FNV32_OFFSET;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i]!, FNV32_PRIME);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * A 64-bit hash for file fingerprints: two 32-bit lanes over each byte, the
 * first FNV-1a 32 itself, the second the same loop with MurmurHash2's
 * multiplier (0x5bd1e995) from FNV's 64-bit offset's low half, as 16 hex
 * digits. Not FNV-1a 64: emulating its 64-bit multiply with 32-bit halves
 * took 15 ms for a cold 100 KB (V8 runs a new function in its interpreter
 * first, and a command hashes each file once), against 2-3 ms for these two
 * plain multiplies.
 */
export function hash64(data: string | Uint8Array): string {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let fnv = FNV32_OFFSET;
  let murmur = 0x84222325;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    fnv = Math.imul(fnv ^ byte, FNV32_PRIME);
    murmur = Math.imul(murmur ^ byte, 0x5bd1e995);
  }
  return (fnv >>> 0).toString(16).padStart(8, '0') + (murmur >>> 0).toString(16).padStart(8, '0');
}

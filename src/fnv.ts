/**
 * FNV-1a, the non-cryptographic hash kubebuilder's scaffold uses for the
 * leader-election ID (`hashFNV`), for what the CLI only compares: a file's
 * fingerprint (did it change since it was read?) and that ID. Not node:crypto:
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
 * FNV-1a 64-bit of `data`'s bytes (a string as UTF-8), as 16 hex digits (Go's
 * hash/fnv New64a). The 64-bit state is two 32-bit halves. The prime is
 * 2^40 + 0x1b3, so the product's low half is the low half times 0x1b3 (mod
 * 2^32), and its high half is the high half times 0x1b3, plus that first
 * product's carry, plus the low half shifted up by 40 bits (only 8 of which
 * land in the high half), all mod 2^32. Integer operations only: 1 MiB
 * hashes in a few milliseconds.
 */
export function fnv1a64(data: string | Uint8Array): string {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let low = 0x84222325;
  let high = 0xcbf29ce4;
  for (let i = 0; i < bytes.length; i++) {
    low = (low ^ bytes[i]!) >>> 0;
    // The carry of low * 0x1b3 out of 32 bits, from its 16-bit halves (each product stays exact).
    const carry = ((low >>> 16) * 0x1b3 + (((low & 0xffff) * 0x1b3) >>> 16)) >>> 16;
    high = (Math.imul(high, 0x1b3) + carry + (low << 8)) >>> 0;
    low = Math.imul(low, 0x1b3) >>> 0;
  }
  return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0');
}

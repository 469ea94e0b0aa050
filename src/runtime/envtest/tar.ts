import { closeSync, openSync, writeSync } from 'node:fs';

const BLOCK = 512;

/** One entry of a tar archive, as far as extraction needs it. */
export interface TarEntryHeader {
  /** Full path inside the archive (ustar prefix, GNU long name or pax `path` applied). */
  path: string;
  /** `file`, `directory`, or `other` (links, devices: never extracted). */
  type: 'file' | 'directory' | 'other';
  size: number;
  mode: number;
}

/**
 * Streams a (decompressed) tar archive and writes the regular files that
 * `destinationFor` maps to a path; everything else is skipped. Supports
 * ustar, GNU long names and pax path headers, which is what Go's
 * archive/tar and GNU tar produce. Header checksums are verified, so a file
 * that is not a tar archive fails instead of extracting garbage.
 */
export async function extractTar(
  source: AsyncIterable<Uint8Array>,
  destinationFor: (entry: TarEntryHeader) => string | undefined,
): Promise<void> {
  let pending = Buffer.alloc(0);
  let ended = false;
  let header: TarEntryHeader | undefined;
  let remaining = 0;
  let padding = 0;
  let output: number | undefined;
  // Metadata entries (GNU 'L', pax 'x') carry the next entry's path in their body.
  let metadata: { kind: 'gnu-long-name' | 'pax'; chunks: Buffer[] } | undefined;
  let nextPath: string | undefined;

  try {
    for await (const chunk of source) {
      if (ended) break;
      pending = pending.length ? Buffer.concat([pending, chunk]) : Buffer.from(chunk);
      for (;;) {
        if (remaining > 0) {
          if (pending.length === 0) break;
          const take = Math.min(remaining, pending.length);
          const piece = pending.subarray(0, take);
          if (output !== undefined) writeSync(output, piece);
          else if (metadata) metadata.chunks.push(Buffer.from(piece));
          pending = pending.subarray(take);
          remaining -= take;
          if (remaining > 0) break;
          if (output !== undefined) {
            closeSync(output);
            output = undefined;
          }
          if (metadata) {
            nextPath = pathFromMetadata(metadata.kind, Buffer.concat(metadata.chunks)) ?? nextPath;
            metadata = undefined;
          }
        }
        if (padding > 0) {
          const skip = Math.min(padding, pending.length);
          pending = pending.subarray(skip);
          padding -= skip;
          if (padding > 0) break;
        }
        if (pending.length < BLOCK) break;
        const block = pending.subarray(0, BLOCK);
        pending = pending.subarray(BLOCK);
        if (block.every((byte) => byte === 0)) {
          ended = true;
          break;
        }
        const parsed = parseHeader(block);
        remaining = parsed.size;
        padding = (BLOCK - (parsed.size % BLOCK)) % BLOCK;
        if (parsed.typeflag === 'L' || parsed.typeflag === 'x') {
          metadata = { kind: parsed.typeflag === 'L' ? 'gnu-long-name' : 'pax', chunks: [] };
        } else if (parsed.typeflag === 'g') {
          metadata = undefined;
          output = undefined;
        } else {
          header = {
            path: nextPath ?? parsed.path,
            type: entryType(parsed.typeflag),
            size: parsed.size,
            mode: parsed.mode,
          };
          nextPath = undefined;
          const destination = header.type === 'file' ? destinationFor(header) : undefined;
          if (destination !== undefined) output = openSync(destination, 'w', 0o755);
          if (remaining === 0 && output !== undefined) {
            closeSync(output);
            output = undefined;
          }
        }
        if (remaining === 0 && metadata) {
          nextPath = pathFromMetadata(metadata.kind, Buffer.alloc(0)) ?? nextPath;
          metadata = undefined;
        }
      }
    }
  } finally {
    if (output !== undefined) closeSync(output);
  }
  if (!ended && (remaining > 0 || pending.length > 0 || header === undefined)) {
    throw new Error(`truncated tar archive${header ? ` (inside ${header.path})` : ''}`);
  }
}

function parseHeader(block: Buffer): { path: string; typeflag: string; size: number; mode: number } {
  const storedChecksum = parseOctal(block.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  if (storedChecksum !== sum) throw new Error('not a tar archive (header checksum mismatch)');
  const name = cString(block.subarray(0, 100));
  const isUstar = block.subarray(257, 262).toString('latin1') === 'ustar';
  const prefix = isUstar ? cString(block.subarray(345, 500)) : '';
  return {
    path: prefix ? `${prefix}/${name}` : name,
    typeflag: String.fromCharCode(block[156] ?? 0),
    size: parseSize(block.subarray(124, 136)),
    mode: parseOctal(block.subarray(100, 108)),
  };
}

function entryType(typeflag: string): TarEntryHeader['type'] {
  if (typeflag === '0' || typeflag === '\0' || typeflag === '7') return 'file';
  if (typeflag === '5') return 'directory';
  return 'other';
}

/** Sizes over 8 GiB use GNU base-256 (high bit set); nothing here is that big, but the encoding is cheap to honour. */
function parseSize(field: Buffer): number {
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let value = (field[0] ?? 0) & 0x7f;
    for (let i = 1; i < field.length; i++) value = value * 256 + (field[i] ?? 0);
    return value;
  }
  return parseOctal(field);
}

function parseOctal(field: Buffer): number {
  const text = cString(field).trim();
  return text ? Number.parseInt(text, 8) : 0;
}

function cString(field: Buffer): string {
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
}

/** pax records are `<len> key=value\n`; only `path` matters for extraction. */
function pathFromMetadata(kind: 'gnu-long-name' | 'pax', body: Buffer): string | undefined {
  if (kind === 'gnu-long-name') return cString(body) || undefined;
  let offset = 0;
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number.parseInt(body.subarray(offset, space).toString('latin1'), 10);
    if (!Number.isFinite(length) || length <= 0) break;
    const record = body.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (record.slice(0, equals) === 'path') return record.slice(equals + 1);
    offset += length;
  }
  return undefined;
}

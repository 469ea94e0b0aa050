/*
 * The SDK's one tar reader: setup-envtest streams the control-plane binaries
 * out of a release archive to disk, and the CLI's registry client reads the
 * files of an operator bundle's image layers into memory. Supports ustar, GNU
 * long names, GNU base-256 sizes and pax `path` records, which is what Go's
 * archive/tar, GNU tar and image builders write. Header checksums are
 * verified, so a file that is not a tar archive fails instead of yielding
 * garbage.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

const BLOCK = 512;

/** One entry of a tar archive. */
export interface TarEntryHeader {
  /** Full path inside the archive (ustar prefix, GNU long name or pax `path` applied), without a leading `./` or `/`. */
  path: string;
  /** `file`, `directory`, or `other` (links, devices: never read). */
  type: 'file' | 'directory' | 'other';
  size: number;
  mode: number;
}

/** Where one entry's body goes: its bytes in order, then `end()` once all of them arrived. */
interface TarEntrySink {
  write(chunk: Buffer): void;
  end(): void;
}

/**
 * A push parser: `push` chunks as they arrive (a stream or one buffer), then
 * `finish()`. `onEntry` sees every regular file, directory and link, and
 * returns a sink for the body it wants, or `undefined` to skip it.
 */
class TarParser {
  private pending = Buffer.alloc(0);
  /** Bytes of the archive consumed so far, for the offsets errors name. */
  private consumed = 0;
  /** The entry whose body or padding is being read. */
  private current: TarEntryHeader | undefined;
  private sawEntry = false;
  private remaining = 0;
  private padding = 0;
  private sink: TarEntrySink | undefined;
  // Metadata entries (GNU 'L', pax 'x') carry the next entry's path in their body.
  private metadata: { kind: 'gnu-long-name' | 'pax'; chunks: Buffer[] } | undefined;
  private nextPath: string | undefined;
  /** True once the end-of-archive block was read; later bytes are ignored. */
  ended = false;

  constructor(private readonly onEntry: (header: TarEntryHeader) => TarEntrySink | undefined) {}

  push(chunk: Uint8Array): void {
    if (this.ended) return;
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk);
    while (!this.ended && this.step());
  }

  /** Throws if the archive stopped inside an entry, or held nothing at all. */
  finish(): void {
    if (this.ended) return;
    if (this.remaining > 0 || this.pending.length > 0 || !this.sawEntry) {
      throw new Error(`truncated tar archive${this.current ? ` (inside ${this.current.path})` : ''}`);
    }
  }

  /** Consumes what it can of `pending`; false when it needs more bytes. */
  private step(): boolean {
    if (this.remaining > 0) {
      if (this.pending.length === 0) return false;
      const take = Math.min(this.remaining, this.pending.length);
      const piece = this.take(take);
      if (this.sink) this.sink.write(piece);
      else if (this.metadata) this.metadata.chunks.push(Buffer.from(piece));
      this.remaining -= take;
      if (this.remaining > 0) return false;
      this.endBody();
      return true;
    }
    if (this.padding > 0) {
      const skip = Math.min(this.padding, this.pending.length);
      this.take(skip);
      this.padding -= skip;
      return this.padding === 0;
    }
    if (this.pending.length < BLOCK) return false;
    const offset = this.consumed;
    const block = this.take(BLOCK);
    // Two zero blocks end the archive; one is enough to stop reading.
    if (block.every((byte) => byte === 0)) {
      this.ended = true;
      return false;
    }
    const parsed = parseHeader(block, offset);
    this.sawEntry = true;
    this.remaining = parsed.size;
    this.padding = (BLOCK - (parsed.size % BLOCK)) % BLOCK;
    if (parsed.typeflag === 'L' || parsed.typeflag === 'x') {
      this.metadata = { kind: parsed.typeflag === 'L' ? 'gnu-long-name' : 'pax', chunks: [] };
    } else if (parsed.typeflag !== 'g') {
      this.current = {
        path: stripLeadingSlashes(this.nextPath ?? parsed.path),
        type: entryType(parsed.typeflag),
        size: parsed.size,
        mode: parsed.mode,
      };
      this.nextPath = undefined;
      this.sink = this.onEntry(this.current);
    }
    if (this.remaining === 0) this.endBody();
    return true;
  }

  private endBody(): void {
    if (this.sink) {
      this.sink.end();
      this.sink = undefined;
    }
    if (this.metadata) {
      this.nextPath = pathFromMetadata(this.metadata.kind, Buffer.concat(this.metadata.chunks)) ?? this.nextPath;
      this.metadata = undefined;
    }
  }

  private take(length: number): Buffer {
    const piece = this.pending.subarray(0, length);
    this.pending = this.pending.subarray(length);
    this.consumed += length;
    return piece;
  }
}

/**
 * Streams a (decompressed) tar archive and writes the regular files that
 * `destinationFor` maps to a path; everything else is skipped.
 */
export async function extractTar(
  source: AsyncIterable<Uint8Array>,
  destinationFor: (entry: TarEntryHeader) => string | undefined,
): Promise<void> {
  let output: number | undefined;
  const parser = new TarParser((header) => {
    const destination = header.type === 'file' ? destinationFor(header) : undefined;
    if (destination === undefined) return undefined;
    const fd = openSync(destination, 'w', 0o755);
    output = fd;
    return {
      write: (chunk) => writeSync(fd, chunk),
      end: () => {
        closeSync(fd);
        output = undefined;
      },
    };
  });
  try {
    for await (const chunk of source) {
      parser.push(chunk);
      if (parser.ended) break;
    }
    parser.finish();
  } finally {
    if (output !== undefined) closeSync(output);
  }
}

/** One regular file read into memory by {@link readTar}. */
export interface TarFile {
  /** Path inside the archive, without a leading `./` or `/`. */
  path: string;
  data: Buffer;
}

/** The regular files of an archive held in memory, in archive order. Throws on a truncated or corrupt archive. */
export function readTar(archive: Buffer): TarFile[] {
  const files: TarFile[] = [];
  const parser = new TarParser((header) => {
    if (header.type !== 'file') return undefined;
    const chunks: Buffer[] = [];
    return {
      write: (chunk) => chunks.push(Buffer.from(chunk)),
      end: () => files.push({ path: header.path, data: Buffer.concat(chunks) }),
    };
  });
  parser.push(archive);
  parser.finish();
  return files;
}

function parseHeader(block: Buffer, offset: number): { path: string; typeflag: string; size: number; mode: number } {
  const storedChecksum = parseOctal(block.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  if (storedChecksum !== sum) throw new Error(`not a tar archive (bad header checksum at byte ${offset})`);
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

function stripLeadingSlashes(path: string): string {
  return path.replace(/^(\.\/|\/)+/, '');
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

/** pax records are `<len> key=value\n`; only `path` matters here. */
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

/**
 * Reads the regular files of a tar stream (ustar, with PAX and GNU long
 * names), which is all an image layer of an operator bundle holds that we
 * need. Links, devices and directories are skipped.
 */

/** One regular file from an archive. */
export interface TarFile {
  /** Path inside the archive, without a leading `./` or `/`. */
  path: string;
  data: Buffer;
}

const BLOCK = 512;

/** The regular files of `archive`, in archive order. Throws on a truncated or corrupt archive. */
export function readTar(archive: Buffer): TarFile[] {
  const files: TarFile[] = [];
  let offset = 0;
  let longName: string | undefined;
  let paxPath: string | undefined;
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK);
    // Two zero blocks end the archive; one is enough to stop reading.
    if (header.every((byte) => byte === 0)) break;
    checkChecksum(header, offset);
    const size = parseOctal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156]!);
    const dataStart = offset + BLOCK;
    const dataEnd = dataStart + size;
    if (dataEnd > archive.length)
      throw new Error(`tar archive is truncated: an entry at byte ${offset} needs ${size} bytes`);
    const data = archive.subarray(dataStart, dataEnd);
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'L') {
      longName = cString(data);
      continue;
    }
    if (type === 'x') {
      paxPath = paxRecords(data).get('path') ?? paxPath;
      continue;
    }
    if (type === 'g') continue;
    const name = paxPath ?? longName ?? ustarName(header);
    paxPath = undefined;
    longName = undefined;
    if (type !== '0' && type !== '\0' && type !== '7') continue;
    files.push({ path: name.replace(/^(\.\/|\/)+/, ''), data: Buffer.from(data) });
  }
  return files;
}

function ustarName(header: Buffer): string {
  const name = cString(header.subarray(0, 100));
  const magic = header.subarray(257, 262).toString('latin1');
  const prefix = magic === 'ustar' ? cString(header.subarray(345, 500)) : '';
  return prefix ? `${prefix}/${name}` : name;
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end < 0 ? bytes.length : end).toString('utf8');
}

function parseOctal(field: Buffer): number {
  // GNU base-256 for sizes of 8 GiB and more: no bundle layer is that big.
  if ((field[0]! & 0x80) !== 0) throw new Error('tar entry larger than 8 GiB');
  const text = cString(field).trim();
  return text === '' ? 0 : parseInt(text, 8);
}

function checkChecksum(header: Buffer, offset: number): void {
  const stored = parseOctal(header.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  if (sum !== stored) throw new Error(`not a tar archive (bad header checksum at byte ${offset})`);
}

/** PAX extended header records: `<length> <key>=<value>\n`. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let position = 0;
  while (position < data.length) {
    const space = data.indexOf(0x20, position);
    if (space < 0) break;
    const length = parseInt(data.subarray(position, space).toString('latin1'), 10);
    if (!(length > 0)) break;
    const record = data.subarray(space + 1, position + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    position += length;
  }
  return records;
}

import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { UsageError } from '../errors.js';
import { ownedPath, writeBoundary, type WriteBoundary } from './boundary.js';
import { bytesFingerprint, existenceFingerprint, listingFingerprint, type Fingerprint } from './fingerprint.js';
import { commitChanges, type CommitOptions } from './journal.js';
import { byteOrder } from '../byte-order.js';

/** One pending change, as `--dry-run` reports it. */
export interface TreeChange {
  action: 'CREATE' | 'UPDATE' | 'DELETE';
  /** Project-relative, forward slashes. */
  path: string;
}

/** Options of a {@link VirtualTree}. */
export interface TreeOptions {
  /**
   * Directories outside the root that the user named as the command's output
   * (absolute, or relative to the root). Default: none, so every write stays
   * inside the root.
   */
  outputs?: readonly string[];
}

/** Directories the tree never looks into when listing files. */
const UNLISTED_DIRECTORIES = new Set(['node_modules', 'dist', '.git']);

/** Decodes project files; `fatal` so a file in another encoding is refused rather than rewritten with U+FFFD, `ignoreBOM` so a BOM survives. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * An in-memory view of a project directory. Commands read and change files
 * here; nothing touches the disk until {@link VirtualTree.commit}, so a command
 * that fails half-way leaves the directory exactly as it was.
 *
 * The tree remembers what it saw of the disk (every file read, checked for or
 * listed). The commit refuses, and writes nothing, when any of it changed in
 * the meantime: another command or an editor wrote the project while this
 * command was rendering from its older view.
 */
export class VirtualTree {
  /** Pending content per path (bytes for a binary file); `null` marks a deletion. */
  private readonly pending = new Map<string, string | Buffer | null>();
  /** What each path looked like on disk when this command first looked at it. */
  private readonly seen = new Map<string, Fingerprint>();
  private readonly boundary: WriteBoundary;

  constructor(
    readonly root: string,
    private readonly options: TreeOptions = {},
  ) {
    this.boundary = writeBoundary(root, options.outputs);
  }

  /** Whether `path` exists after the pending changes. */
  exists(path: string): boolean {
    const key = normalise(path);
    if (this.pending.has(key)) return this.pending.get(key) !== null;
    if (!this.seen.has(key)) this.seen.set(key, existenceFingerprint(join(this.root, key)));
    return this.seen.get(key) !== 'exists:no' && this.seen.get(key) !== 'content:absent';
  }

  /**
   * The text of `path` after the pending changes, or undefined if absent.
   * A file that is not UTF-8 is a {@link UsageError} naming it: a command
   * edits text, and decoding other bytes would rewrite them as U+FFFD.
   */
  read(path: string): string | undefined {
    const key = normalise(path);
    const content = this.pending.has(key) ? this.pending.get(key) : this.readFromDisk(key);
    if (content === null || content === undefined) return undefined;
    return typeof content === 'string' ? content : decode(key, content);
  }

  /** Sets the content of `path`, creating or replacing it. */
  write(path: string, content: string): void {
    this.pending.set(this.checked(path, 'write'), content);
  }

  /** Sets the bytes of a binary `path` (never read back as text by a command), creating or replacing it. */
  writeBytes(path: string, content: Buffer): void {
    this.pending.set(this.checked(path, 'write'), content);
  }

  /** Removes `path`. */
  delete(path: string): void {
    this.pending.set(this.checked(path, 'delete'), null);
  }

  /** Moves a file, bytes as they are; the destination must not exist. */
  move(from: string, to: string): void {
    const key = normalise(from);
    const content = this.pending.has(key) ? this.pending.get(key) : this.readFromDisk(key);
    if (content === undefined || content === null) throw new Error(`cannot move ${from}: it does not exist`);
    if (this.exists(to)) {
      throw new UsageError(
        `cannot move ${from} to ${to}: the destination already exists`,
        `remove or rename ${to} and run the command again`,
      );
    }
    this.delete(from);
    this.pending.set(this.checked(to, 'write'), content);
  }

  /**
   * Files under `directory` (project-relative, forward slashes), after
   * pending changes. Symbolically linked directories are not entered (a
   * link may lead out of the project, or back into it forever), and entries
   * that cannot be read are left out.
   */
  list(directory = ''): string[] {
    const base = normalise(directory);
    const found = new Set<string>();
    const walk = (rel: string): void => {
      const abs = join(this.root, rel);
      let entries: string[];
      try {
        entries = readdirSync(abs);
      } catch {
        return;
      }
      const listingKey = `${rel}/`;
      if (!this.seen.has(listingKey)) this.seen.set(listingKey, listingFingerprint(abs));
      for (const entry of entries) {
        if (UNLISTED_DIRECTORIES.has(entry)) continue;
        const child = rel ? `${rel}/${entry}` : entry;
        const kind = entryKind(join(this.root, child));
        if (kind === 'directory') walk(child);
        else if (kind === 'file') found.add(child);
      }
    };
    walk(base);
    for (const [path, content] of this.pending) {
      if (base && !path.startsWith(`${base}/`)) continue;
      if (content === null) found.delete(path);
      else found.add(path);
    }
    return [...found].sort();
  }

  /** The pending changes that differ from the disk, sorted by path. */
  changes(): TreeChange[] {
    const result: TreeChange[] = [];
    for (const [path, content] of [...this.pending].sort(([a], [b]) => byteOrder(a, b))) {
      const onDisk = this.readFromDisk(path);
      if (content === null) {
        if (onDisk !== undefined) result.push({ action: 'DELETE', path });
      } else if (onDisk === undefined) {
        result.push({ action: 'CREATE', path });
      } else if (!(typeof content === 'string' ? Buffer.from(content) : content).equals(onDisk)) {
        result.push({ action: 'UPDATE', path });
      }
    }
    return result;
  }

  /**
   * Writes every pending change through the journal ({@link commitChanges}):
   * each path is checked against the project root and the named outputs,
   * everything this command read must be as it read it, and on any error
   * everything is undone and a {@link UsageError} is thrown; a signal or a
   * crash leaves the project either as before or as after (after the next
   * command's recovery, for a crash).
   */
  async commit(options: Pick<CommitOptions, 'beforeApply'> = {}): Promise<TreeChange[]> {
    const changes = this.changes();
    await commitChanges(
      this.root,
      changes.map((change) => ({ ...change, content: this.pending.get(change.path) ?? undefined })),
      { ...options, outputs: this.options.outputs, seen: this.seen },
    );
    this.pending.clear();
    return changes;
  }

  /** The key for a change of `path`, once the boundary has accepted it (so a bad name fails where it is used). */
  private checked(path: string, action: 'write' | 'delete'): string {
    const key = normalise(path);
    ownedPath(this.boundary, key, action);
    return key;
  }

  /** The bytes of `path` on disk (undefined if absent), remembering what was seen the first time. */
  private readFromDisk(path: string): Buffer | undefined {
    const absolute = join(this.root, path);
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(absolute);
    } catch {
      bytes = undefined;
    }
    // The first look is what the command's decisions rest on; an existence
    // check is refined into the content only while it still holds.
    const previous = this.seen.get(path);
    if (previous === undefined || previous === (bytes === undefined ? 'exists:no' : 'exists:yes'))
      this.seen.set(path, bytes === undefined ? 'content:absent' : bytesFingerprint(bytes));
    return bytes;
  }
}

function decode(path: string, bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    const offset = firstInvalidByte(bytes);
    const line = bytes.subarray(0, offset).toString('latin1').split('\n').length;
    throw new UsageError(
      `${path} is not UTF-8 text (byte 0x${bytes[offset]?.toString(16).padStart(2, '0')} on line ${line} is not valid UTF-8), and ts-operator-sdk edits it as text`,
      `convert it to UTF-8 (e.g. \`iconv -f latin1 -t utf-8 ${path}\`) and run the command again; nothing was changed`,
    );
  }
}

/** The offset of the first byte that does not belong to a well-formed UTF-8 sequence. */
function firstInvalidByte(bytes: Buffer): number {
  for (let index = 0; index < bytes.length;) {
    const lead = bytes[index]!;
    if (lead < 0x80) {
      index++;
      continue;
    }
    // The continuation bytes each lead allows (Unicode 15, table 3-7): no overlong forms, no surrogates, nothing above U+10FFFF.
    const [count, low, high] =
      lead >= 0xc2 && lead <= 0xdf
        ? [1, 0x80, 0xbf]
        : lead === 0xe0
          ? [2, 0xa0, 0xbf]
          : lead === 0xed
            ? [2, 0x80, 0x9f]
            : lead >= 0xe1 && lead <= 0xef
              ? [2, 0x80, 0xbf]
              : lead === 0xf0
                ? [3, 0x90, 0xbf]
                : lead === 0xf4
                  ? [3, 0x80, 0x8f]
                  : lead >= 0xf1 && lead <= 0xf3
                    ? [3, 0x80, 0xbf]
                    : [0, 0, 0];
    if (count === 0) return index;
    for (let next = 1; next <= count; next++) {
      const byte = bytes[index + next];
      const [min, max] = next === 1 ? [low, high] : [0x80, 0xbf];
      if (byte === undefined || byte < min || byte > max) return index;
    }
    index += count + 1;
  }
  return bytes.length;
}

function entryKind(path: string): 'file' | 'directory' | 'other' {
  try {
    const entry = lstatSync(path);
    if (entry.isDirectory()) return 'directory';
    if (entry.isFile()) return 'file';
    // A link to a file is a file of the project; a link to a directory is not entered.
    if (entry.isSymbolicLink()) return statSync(path).isFile() ? 'file' : 'other';
    return 'other';
  } catch {
    return 'other';
  }
}

function normalise(path: string): string {
  return path.split(sep).join('/').replace(/^\.\//, '').replace(/\/+$/, '');
}

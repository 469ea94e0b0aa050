import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { UsageError } from '../errors.js';
import { commitChanges, type CommitOptions } from './journal.js';

/** One pending change, as `--dry-run` reports it. */
export interface TreeChange {
  action: 'CREATE' | 'UPDATE' | 'DELETE';
  /** Project-relative, forward slashes. */
  path: string;
}

/** Directories the tree never looks into when listing files. */
const UNLISTED_DIRECTORIES = new Set(['node_modules', 'dist', '.git']);

/**
 * An in-memory view of a project directory. Commands read and change files
 * here; nothing touches the disk until {@link VirtualTree.commit}, so a command
 * that fails half-way leaves the directory exactly as it was.
 */
export class VirtualTree {
  /** Pending content per path (bytes for a binary file); `null` marks a deletion. */
  private readonly pending = new Map<string, string | Buffer | null>();

  constructor(readonly root: string) {}

  /** Whether `path` exists after the pending changes. */
  exists(path: string): boolean {
    const key = normalise(path);
    if (this.pending.has(key)) return this.pending.get(key) !== null;
    return existsSync(join(this.root, key));
  }

  /** The content of `path` after the pending changes, or undefined if absent. */
  read(path: string): string | undefined {
    const key = normalise(path);
    if (this.pending.has(key)) {
      const content = this.pending.get(key);
      return Buffer.isBuffer(content) ? content.toString('utf8') : content ?? undefined;
    }
    return this.readFromDisk(key);
  }

  /** Sets the content of `path`, creating or replacing it. */
  write(path: string, content: string): void {
    this.pending.set(normalise(path), content);
  }

  /** Sets the bytes of a binary `path` (never read back as text by a command), creating or replacing it. */
  writeBytes(path: string, content: Buffer): void {
    this.pending.set(normalise(path), content);
  }

  /** Removes `path`. */
  delete(path: string): void {
    this.pending.set(normalise(path), null);
  }

  /** Moves a file; the destination must not exist. */
  move(from: string, to: string): void {
    const content = this.read(from);
    if (content === undefined) throw new Error(`cannot move ${from}: it does not exist`);
    if (this.exists(to)) {
      throw new UsageError(`cannot move ${from} to ${to}: the destination already exists`, `remove or rename ${to} and run the command again`);
    }
    this.delete(from);
    this.write(to, content);
  }

  /** Files under `directory` (project-relative, forward slashes), after pending changes. */
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
      for (const entry of entries) {
        if (UNLISTED_DIRECTORIES.has(entry)) continue;
        const child = rel ? `${rel}/${entry}` : entry;
        if (statSync(join(this.root, child)).isDirectory()) walk(child);
        else found.add(child);
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
    for (const [path, content] of [...this.pending].sort(([a], [b]) => a.localeCompare(b))) {
      const onDisk = this.readFromDisk(path);
      if (content === null) {
        if (onDisk !== undefined) result.push({ action: 'DELETE', path });
      } else if (onDisk === undefined) {
        result.push({ action: 'CREATE', path });
      } else if (Buffer.isBuffer(content) ? !content.equals(readFileSync(join(this.root, path))) : onDisk !== content) {
        result.push({ action: 'UPDATE', path });
      }
    }
    return result;
  }

  /**
   * Writes every pending change through the journal ({@link commitChanges}):
   * on any error everything is undone and a {@link UsageError} is thrown;
   * a signal or a crash leaves the project either as before or as after
   * (after the next command's recovery, for a crash).
   */
  async commit(options: CommitOptions = {}): Promise<TreeChange[]> {
    const changes = this.changes();
    await commitChanges(
      this.root,
      changes.map((change) => ({ ...change, content: this.pending.get(change.path) ?? undefined })),
      options,
    );
    this.pending.clear();
    return changes;
  }

  private readFromDisk(path: string): string | undefined {
    try {
      return readFileSync(join(this.root, path), 'utf8');
    } catch {
      return undefined;
    }
  }
}

function normalise(path: string): string {
  return path.split(sep).join('/').replace(/^\.\//, '').replace(/\/+$/, '');
}

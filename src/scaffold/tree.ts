import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, posix, relative, sep } from 'node:path';
import { UsageError } from '../errors.js';

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
  /** Pending content per path; `null` marks a deletion. */
  private readonly pending = new Map<string, string | null>();

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
    if (this.pending.has(key)) return this.pending.get(key) ?? undefined;
    return this.readFromDisk(key);
  }

  /** Sets the content of `path`, creating or replacing it. */
  write(path: string, content: string): void {
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
      } else if (onDisk !== content) {
        result.push({ action: 'UPDATE', path });
      }
    }
    return result;
  }

  /**
   * Writes every pending change. New content goes to temporary files next to
   * their targets first and is renamed into place only when all of them were
   * written; on any error, everything already done is undone (files restored,
   * created directories removed) and a {@link UsageError} is thrown.
   */
  async commit(): Promise<TreeChange[]> {
    const changes = this.changes();
    const suffix = `.ts-operator-sdk-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    const createdDirectories: string[] = [];
    const staged: string[] = [];
    const applied: { path: string; previous: string | undefined }[] = [];
    try {
      for (const change of changes) {
        if (change.action === 'DELETE') continue;
        const target = join(this.root, change.path);
        await this.makeDirectory(dirname(target), createdDirectories);
        const temp = target + suffix;
        staged.push(temp);
        await writeFile(temp, this.pending.get(change.path) as string);
      }
      for (const change of changes) {
        const target = join(this.root, change.path);
        const previous = this.readFromDisk(change.path);
        if (change.action === 'DELETE') {
          await rm(target);
        } else {
          await rename(target + suffix, target);
          staged.splice(staged.indexOf(target + suffix), 1);
        }
        applied.push({ path: change.path, previous });
      }
      await this.removeEmptiedDirectories(changes);
    } catch (error) {
      await this.rollBack(staged, applied, createdDirectories);
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      const path = (error as NodeJS.ErrnoException).path;
      throw new UsageError(
        `could not write the project files (${reason}${path ? ` at ${relative(this.root, path) || '.'}` : ''}); nothing was changed`,
        this.fixForWriteError(error as NodeJS.ErrnoException),
        { cause: error },
      );
    }
    this.pending.clear();
    return changes;
  }

  /** The advice for a failed write: only permission errors are fixed by making the directory writable. */
  private fixForWriteError(error: NodeJS.ErrnoException): string {
    switch (error.code) {
      case 'ENOTDIR':
      case 'EEXIST': {
        // A file sits where the project needs a directory (e.g. a file named `.github`).
        const blocker = error.path ? this.fileInTheWay(error.path) : undefined;
        return `${blocker ? `"${relative(this.root, blocker)}" is a file where a directory is needed` : 'a file is in the way of a directory'}: move it away and run the command again`;
      }
      case 'EISDIR':
        return `a directory is in the way of a file${error.path ? ` ("${relative(this.root, error.path)}")` : ''}: move it away and run the command again`;
      case 'ENOSPC':
      case 'EDQUOT':
        return 'free some disk space and run the command again';
      default:
        return 'make the directory writable and run the command again';
    }
  }

  /** The nearest existing ancestor of `path` (or `path` itself) that is not a directory. */
  private fileInTheWay(path: string): string | undefined {
    for (let current = path; current.startsWith(this.root) && current !== this.root; current = dirname(current)) {
      try {
        if (!statSync(current).isDirectory()) return current;
      } catch {
        // Missing or unreachable: look further up.
      }
    }
    return undefined;
  }

  private async makeDirectory(directory: string, created: string[]): Promise<void> {
    if (existsSync(directory)) return;
    await this.makeDirectory(dirname(directory), created);
    await mkdir(directory);
    created.push(directory);
  }

  private async rollBack(staged: string[], applied: { path: string; previous: string | undefined }[], createdDirectories: string[]): Promise<void> {
    // Best effort: each step is independent so one failure does not stop the rest.
    for (const temp of staged) await rm(temp, { force: true }).catch(() => undefined);
    for (const { path, previous } of applied.reverse()) {
      const target = join(this.root, path);
      if (previous === undefined) await rm(target, { force: true }).catch(() => undefined);
      else await writeFile(target, previous).catch(() => undefined);
    }
    for (const directory of createdDirectories.reverse()) await rmdir(directory).catch(() => undefined);
  }

  /** A move leaves its old directory behind; drop it when nothing is left in it. */
  private async removeEmptiedDirectories(changes: TreeChange[]): Promise<void> {
    const candidates = new Set<string>();
    for (const change of changes) {
      if (change.action !== 'DELETE') continue;
      for (let dir = posix.dirname(change.path); dir !== '.'; dir = posix.dirname(dir)) candidates.add(dir);
    }
    for (const dir of [...candidates].sort((a, b) => b.length - a.length)) {
      const abs = join(this.root, dir);
      if (existsSync(abs) && readdirSync(abs).length === 0) await rmdir(abs).catch(() => undefined);
    }
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

/**
 * The CLI's file boundary: a command writes, moves and deletes only inside
 * the project root and the output directories the user named, after
 * resolving symbolic links. The journal ({@link commitChanges}) passes every
 * change through {@link ownedPath} before it touches the disk, and the
 * journal is the only way project files reach the disk, so no command can
 * write around the check, whatever names its input holds.
 */
import { lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';

// The C library's realpath: one call per lookup, where fs.realpathSync walks
// the path in JavaScript with an lstat per component. Every file a command
// writes is resolved twice (when the tree records it and when the journal
// commits it), and for init's ~45 files the walks were a good part of the
// command's time. Same answers and error codes for what is checked here
// (ENOENT, ENOTDIR, ELOOP).
const realpath = realpathSync.native;
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';

/** Where a command may write: its root and the output directories the user named, as real paths. */
export interface WriteBoundary {
  /** The project root (or the directory `init` creates), as given. */
  readonly root: string;
  /** The root with every symbolic link resolved (its missing tail kept as written). */
  readonly realRoot: string;
  /** Output directories outside the root that the user named (e.g. `generate bundle --output-dir`), resolved likewise. */
  readonly realOutputs: readonly string[];
}

/** A boundary for `root` and the output directories the user named (absolute, or relative to `root`). */
export function writeBoundary(root: string, outputs: readonly string[] = []): WriteBoundary {
  const absoluteRoot = resolve(root);
  return {
    root: absoluteRoot,
    realRoot: realPathOf(absoluteRoot),
    realOutputs: outputs.map((output) => realPathOf(resolve(absoluteRoot, output))),
  };
}

/**
 * The path a change of `path` (relative to the boundary's root, forward
 * slashes) really writes, relative to the real root, once symbolic links are
 * followed: a symlinked project file is written at its target, so the link
 * stays a link. A deletion removes the entry itself (a link, not what it
 * points at). Throws a {@link UsageError} naming the path when it lies
 * outside the root and every named output, directly or through a link.
 */
export function ownedPath(boundary: WriteBoundary, path: string, action: 'write' | 'delete'): string {
  checkShape(boundary, path);
  const absolute = join(boundary.root, path);
  const parent = realPathOf(dirname(absolute));
  let target = join(parent, absolute.slice(dirname(absolute).length + 1));
  if (action === 'write' && isSymbolicLink(target)) {
    try {
      target = realpath(target);
    } catch {
      throw new UsageError(
        `refusing to write ${path}: it is a symbolic link to ${readlinkSync(target)}, which does not exist`,
        'point the link at an existing file, or remove it, and run the command again',
      );
    }
  }
  if (!isInside(boundary.realRoot, target) && !boundary.realOutputs.some((output) => isInside(output, target))) {
    const link = firstLinkOutside(boundary, path);
    throw new UsageError(
      link
        ? `refusing to ${action} ${path}: ${link.path} is a symbolic link to ${link.target}, outside the project`
        : `refusing to ${action} ${path}: it lies outside the project${boundary.realOutputs.length > 0 ? ' and the output directory you named' : ''}`,
      link
        ? 'ts-operator-sdk writes only inside the project and the output you name: replace the link with a real file or directory, or name the real directory as the output'
        : 'ts-operator-sdk writes only inside the project and the output you name: check the names in your input (they must be valid Kubernetes names)',
    );
  }
  return relative(boundary.realRoot, target).split(sep).join('/');
}

/**
 * A path from a name must not climb: `..` may only lead it out of the root
 * towards a named output, never appear after a directory name, and an
 * absolute path or an empty segment never comes from a valid name.
 */
function checkShape(boundary: WriteBoundary, path: string): void {
  const segments = path.split('/');
  const firstNamed = segments.findIndex((segment) => segment !== '..');
  const climbsAfterName = segments
    .slice(firstNamed)
    .some((segment) => segment === '..' || segment === '.' || segment === '');
  if (
    path === '' ||
    isAbsolute(path) ||
    path.includes('\0') ||
    firstNamed === -1 ||
    climbsAfterName ||
    (firstNamed > 0 && boundary.realOutputs.length === 0)
  ) {
    throw new UsageError(
      `refusing to write ${JSON.stringify(path)}: it is not a path inside the project`,
      'ts-operator-sdk writes only inside the project and the output you name: check the names in your input (they must be valid Kubernetes names)',
    );
  }
}

/** The first component of `path` (walking from the root) that is a symbolic link leading outside. */
function firstLinkOutside(boundary: WriteBoundary, path: string): { path: string; target: string } | undefined {
  const segments = path.split('/');
  for (let count = 1; count <= segments.length; count++) {
    const partial = segments.slice(0, count).join('/');
    const absolute = join(boundary.root, partial);
    if (!isSymbolicLink(absolute)) continue;
    const target = realPathOf(absolute);
    if (!isInside(boundary.realRoot, target) && !boundary.realOutputs.some((output) => isInside(output, target)))
      return { path: partial, target: readlinkSync(absolute) };
  }
  return undefined;
}

/** `path` with every symbolic link resolved; a missing tail is appended as written. */
export function realPathOf(path: string): string {
  const missing: string[] = [];
  for (let current = resolve(path); ; current = dirname(current)) {
    // A missing entry is the common case (init's directories, a new API's):
    // lstat says so without an exception, which cost more than the lookup.
    // Anything else (present, a link, ENOTDIR) is decided by realpath below.
    if (dirname(current) !== current && lstatIfPresent(current) === null) {
      missing.push(current.slice(dirname(current).length).replace(/^[/\\]/, ''));
      continue;
    }
    try {
      return join(realpath(current), ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A dangling link or a loop is not "missing": the write would follow it.
      // A file where a directory is needed (ENOTDIR) is left to the write, which names it.
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || isSymbolicLink(current)) {
        throw new UsageError(
          `refusing to write under ${current}: ${code === 'ELOOP' ? 'it is a symbolic link loop' : isSymbolicLink(current) ? `it is a symbolic link to ${readlinkSync(current)}, which does not exist` : `it cannot be read (${code})`}`,
          'fix or remove that path and run the command again',
          { cause: error },
        );
      }
      if (dirname(current) === current) return resolve(path);
      missing.push(current.slice(dirname(current).length).replace(/^[/\\]/, ''));
    }
  }
}

/** lstat of `path`: null when nothing is there (ENOENT), undefined when lstat fails otherwise. */
function lstatIfPresent(path: string): Stats | null | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return undefined;
  }
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Whether `path` is `directory` or below it (both real, absolute). */
export function isInside(directory: string, path: string): boolean {
  const rel = relative(directory, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

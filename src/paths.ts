/**
 * Path flags and arguments: every command takes them relative to the
 * directory it runs in, or absolute, and prints them the way the user can
 * find them again.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** The absolute path a flag value means, for a command running in `base`. */
export function resolveFlagPath(base: string, value: string): string {
  return resolve(base, value);
}

/**
 * `absolute` as messages print it: relative to `base` (forward slashes)
 * when it is inside it, else absolute, so a path outside the project never
 * turns into a chain of `../`.
 */
export function displayPath(base: string, absolute: string): string {
  const rel = relative(base, absolute);
  if (rel === '') return '.';
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return absolute;
  return rel.split(sep).join('/');
}

/**
 * The path a VirtualTree rooted at `base` uses for `absolute`: relative,
 * forward slashes, with `../` when it lies outside (the tree joins it onto
 * its root, which resolves the `..`).
 */
export function treePath(base: string, absolute: string): string {
  return relative(base, absolute).split(sep).join('/') || '.';
}

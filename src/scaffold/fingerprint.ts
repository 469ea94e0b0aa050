/**
 * What a command saw of the disk, so that at commit time it can tell whether
 * anything it read has changed since: another command writing the same
 * project, or an editor saving a file. A command that read a stale PROJECT
 * must not write its view of it back (the other command's update would be
 * lost), so the journal refuses the commit instead.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { hash64 } from '../fnv.js';

/**
 * `content:<bytes>:<hash64>` or `content:absent` for a file read,
 * `exists:yes|no` for a file only checked for, `listing:<bytes>:<hash64>`
 * for a directory listed. Each form is compared only with its own form.
 */
export type Fingerprint = `content:${string}` | `exists:${'yes' | 'no'}` | `listing:${string}`;

/** The fingerprint of a file's bytes, or `content:absent`. */
export function contentFingerprint(path: string): Fingerprint {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return 'content:absent';
  }
  return `content:${hashOf(bytes)}`;
}

/** The fingerprint of given bytes, as {@link contentFingerprint} would give for a file holding them. */
export function bytesFingerprint(bytes: string | Buffer): Fingerprint {
  return `content:${hashOf(bytes)}`;
}

/** Whether `path` exists (a dangling link counts: it is an entry a write would meet). */
export function existenceFingerprint(path: string): Fingerprint {
  try {
    lstatSync(path);
    return 'exists:yes';
  } catch {
    // ENOENT, or ENOTDIR when a file sits where a parent directory would be.
    return 'exists:no';
  }
}

/**
 * The journal's own files (the journal, its temp files, staged files and
 * backups): they come and go while a command commits, and are not part of
 * the project a command lists.
 */
const JOURNAL_OWN_FILE = /^\.ts-operator-sdk-journal\.json|\.ts-operator-sdk-[0-9]+-[0-9a-f]{8}\.(tmp|bak)$/;

/** The sorted names in a directory (none when it is missing or not a directory), the journal's own files left out. */
export function listingFingerprint(path: string): Fingerprint {
  let names: string[];
  try {
    names = readdirSync(path)
      .filter((name) => !JOURNAL_OWN_FILE.test(name))
      .sort();
  } catch {
    names = [];
  }
  return `listing:${hashOf(names.join('\0'))}`;
}

/** `path`'s fingerprint now, of the same form as `seen`. */
export function fingerprintLike(seen: Fingerprint, path: string): Fingerprint {
  if (seen.startsWith('exists:')) return existenceFingerprint(path);
  if (seen.startsWith('listing:')) return listingFingerprint(path);
  return contentFingerprint(path);
}

/** The length and 64-bit hash of the bytes (a string as UTF-8): see src/fnv.ts for why not SHA-256. */
function hashOf(data: string | Buffer): string {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return `${bytes.length}:${hash64(bytes)}`;
}

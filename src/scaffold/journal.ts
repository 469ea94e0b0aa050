/**
 * Crash-safe commits of a command's file changes, and their recovery.
 *
 * A commit goes through three durable states, each recorded in a journal at
 * the project root before the disk is touched for it:
 *
 * 1. `staging`: every new content is written (and fsynced) to a staged file
 *    next to its target, every file that will be replaced or deleted gets a
 *    backup (a hard link, or a copy where links are not supported), and every
 *    missing directory is created. No project file has changed yet, so an
 *    interruption here is undone: staged files, backups and new directories
 *    are removed.
 * 2. `applying`: the point of no return. Staged files are renamed onto their
 *    targets and deleted files are unlinked. Each step can be told done or not
 *    from the disk alone (a staged file still there was not renamed yet), so
 *    finishing is idempotent and needs nothing but the journal. An
 *    interruption here is therefore finished rather than undone: it is a few
 *    renames, it keeps the result the user asked for, and undoing would need
 *    every backup to be intact as well.
 * 3. `undoing`: only when applying failed (a rename refused, e.g. EACCES); the
 *    backups are put back.
 *
 * The journal is removed once the backups are gone. `kill -9` at any point
 * leaves a journal that {@link recoverInterruptedWrite}, called by the CLI
 * entry before any command runs, completes or undoes. The journal records a
 * fingerprint of each target before and after, so recovery never overwrites
 * a file that the user changed after the interruption: it names the file and
 * stops instead.
 *
 * Two more guarantees are checked here, because every project file reaches
 * the disk through this module and nothing else:
 * - the boundary ({@link ownedPath}): every path is inside the project or an
 *   output directory the user named, after resolving symbolic links; a
 *   symlinked file is written at its target, so the link stays a link;
 * - no lost update: once the journal (which only one command can hold) is
 *   created, everything the command read must still be as it read it, or
 *   the commit is refused and nothing is written.
 */
import {
  close,
  fchmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsync,
  link as linkCallback,
  linkSync,
  lstatSync,
  mkdir as mkdirCallback,
  mkdirSync,
  open as openCallback,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rename as renameCallback,
  renameSync,
  rmdir as rmdirCallback,
  statSync,
  unlink as unlinkCallback,
  writeFileSync,
} from 'node:fs';
import { constants as fsConstants } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { UsageError } from '../errors.js';
import { ownedPath, realPathOf, writeBoundary } from './boundary.js';
import {
  bytesFingerprint,
  contentFingerprint,
  fingerprintLike,
  listingFingerprint,
  type Fingerprint,
} from './fingerprint.js';
import { beginUninterruptible, exitForInterruption, type UninterruptibleSection } from './interruption.js';
import { byteOrder } from '../byte-order.js';

/** The journal's name at the project root. */
export const JOURNAL_FILE = '.ts-operator-sdk-journal.json';

/**
 * TEST-ONLY hook: milliseconds to sleep before each staged write and each
 * rename or unlink of a commit, so tests can send signals while a commit is in
 * progress. Never set it outside tests.
 */
export const TEST_WRITE_DELAY_ENV = 'TS_OPERATOR_SDK_TEST_WRITE_DELAY_MS';

/** One file change of a commit; `content` is required unless deleting. */
export interface FileChange {
  action: 'CREATE' | 'UPDATE' | 'DELETE';
  /** Relative to the project root, forward slashes. */
  path: string;
  /** Text, or bytes for a binary file (a vendored package tarball). */
  content?: string | Buffer;
}

type JournalState = 'staging' | 'applying' | 'undoing';

/** The journal's JSON. Paths are relative to the project root. */
interface Journal {
  format: typeof JOURNAL_FORMAT;
  /** `<pid>-<hex>`; staged and backup files end in `.ts-operator-sdk-<id>.tmp|.bak`. */
  id: string;
  state: JournalState;
  /** The process that wrote it, so a journal of a command still running is left alone. */
  owner: { pid: number; started?: string };
  /** The command line, shortened, for the recovery message. */
  command: string;
  /** Directories this commit creates, parents first. */
  directories: string[];
  /**
   * `before`: the target's content when the commit began (`content:absent`
   * for a file it creates); `after`: what the commit writes (none for a
   * deletion). Recovery compares the disk with them, so it never overwrites
   * a change made after the interruption.
   */
  changes: { action: FileChange['action']; path: string; before: Fingerprint; after?: Fingerprint }[];
}

/** Options of {@link commitChanges}. */
export interface CommitOptions {
  /** Output directories outside the root that the user named; every other path must be inside the root. */
  outputs?: readonly string[];
  /**
   * What the command saw of the disk, by path relative to the root (a
   * directory listing's path ends in `/`): checked once the journal is held,
   * and the commit is refused if any of it changed.
   */
  seen?: ReadonlyMap<string, Fingerprint>;
  /**
   * Runs once every file is staged, before any target changes: the last
   * point where the commit can still stop with the project untouched (the
   * CLI prints its report here). If it throws, the staging is discarded and
   * its error is rethrown as it is.
   */
  beforeApply?: () => void;
}

// 3: fingerprints are the length and src/fnv.ts's hash64 (2 had SHA-256); a journal of the
// other form is refused by name rather than compared wrongly.
const JOURNAL_FORMAT = 3;
const ID_PATTERN = /^[0-9]+-[0-9a-f]{8}$/;
/** Journal temp files are `<JOURNAL_FILE>.<id>.tmp`; the id's pid tells whether the writer still runs. */
const JOURNAL_TEMP_PATTERN = /^\.ts-operator-sdk-journal\.json\.([0-9]+)-[0-9a-f]{8}\.tmp$/;
/** The suffix of staged files and backups. */
const OWN_FILE_SUFFIX = /\.ts-operator-sdk-[0-9]+-[0-9a-f]{8}\.(tmp|bak)$/;
const COMMAND_SHOWN_CHARACTERS = 100;
/** Staged files kept open at once before they are fsynced together; well under any descriptor limit. */
const FILES_SYNCED_TOGETHER = 64;
/** Errors of link(2) that mean "this file system has no hard links": copy instead. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);

/** Ids of the commits this process is running, so its own journals are never taken for stale ones. */
const commitsInProgress = new Set<string>();

/**
 * Writes `changes` under `root` so that, whatever happens (an error, a
 * signal, `kill -9`, power loss after the journal is durable), the project
 * ends up either fully as before or fully as after. On an error everything is
 * undone and a {@link UsageError} is thrown. On SIGINT/SIGTERM/SIGHUP the
 * write is undone (if no file was changed yet) or finished, and the process
 * exits with 128 + the signal number.
 */
export async function commitChanges(
  root: string,
  requested: readonly FileChange[],
  options: CommitOptions = {},
): Promise<void> {
  if (requested.length === 0) return;
  const givenRoot = resolve(root);
  const boundary = writeBoundary(givenRoot, options.outputs);
  root = boundary.realRoot;
  const changes = ownedChanges(boundary, requested);
  const id = `${process.pid}-${randomHex8()}`;
  checkNameLengths(changes, id);
  const delayMs = testWriteDelay();
  const section = beginUninterruptible();
  commitsInProgress.add(id);
  try {
    const createdRoot = await createMissingDirectory(root);
    const journal: Journal = {
      format: JOURNAL_FORMAT,
      id,
      state: 'staging',
      owner: { pid: process.pid, started: processStart(process.pid) },
      command: currentCommand(),
      directories: missingDirectories(root, changes),
      changes: changes.map(({ action, path, content }) => ({
        action,
        path,
        before: contentFingerprint(join(root, path)),
        ...(action === 'DELETE' ? {} : { after: bytesFingerprint(content ?? '') }),
      })),
    };
    let journalCreated = false;
    let hookError: { error: unknown } | undefined;
    try {
      await createJournal(root, journal, section);
      journalCreated = true;
      // Holding the journal, no other command can commit: what this one read
      // (and each target) is checked now, and stays so until the write ends.
      checkNothingChanged(givenRoot, options.seen);
      checkNothingChanged(root, new Map(journal.changes.map((change) => [change.path, change.before])));
      await stage(root, journal, changes, section, delayMs);
      if (section.signal) throw new Interrupted();
      try {
        options.beforeApply?.();
      } catch (error) {
        hookError = { error };
        throw error;
      }
      await replaceJournal(root, { ...journal, state: 'applying' });
    } catch (error) {
      if (journalCreated)
        await discardStaging(root, journal).catch((undoError: unknown) => {
          throw undoFailed(root, error, undoError);
        });
      for (const directory of createdRoot.reverse()) await rmdir(directory).catch(() => undefined);
      const signal = section.end();
      if (signal) exitForInterruption(signal, 'no project file had been changed yet, and none was');
      if (hookError) throw hookError.error;
      throw writeFailed(root, error);
    }
    // Past this line the journal says `applying`: finish, or undo only if finishing fails.
    try {
      await applyChanges(root, journal, delayMs);
    } catch (error) {
      try {
        await replaceJournal(root, { ...journal, state: 'undoing' }).catch(() => undefined);
        await undoApplied(root, journal, { insideRootOnly: false });
      } catch (undoError) {
        throw undoFailed(root, error, undoError);
      }
      const signal = section.end();
      if (signal) exitForInterruption(signal, 'the project files could not all be written, so the write was undone');
      throw writeFailed(root, error);
    }
    // The files are in place; if tidying up fails, the journal stays and the
    // next command's recovery finishes it.
    await finishApplied(root, journal).catch(() => undefined);
    const signal = section.end();
    if (signal)
      exitForInterruption(
        signal,
        'the project files were being written, so the write was completed first; the command stopped after it',
      );
  } finally {
    section.end();
    commitsInProgress.delete(id);
  }
}

/**
 * Completes or undoes a write that a killed command left behind in the
 * project that `directory` is in (the directory itself, or the nearest parent
 * holding a journal or a PROJECT file, so a command started in a
 * subdirectory recovers too), and removes its staged files and backups.
 * Reports what it did in one line. Does nothing when there is no journal, or
 * when its command is still running. Stops with a {@link UsageError} naming
 * the file when finishing (or undoing) would overwrite a change made after
 * the interruption. Call it before any command reads the project.
 */
export async function recoverInterruptedWrite(directory: string, report: (line: string) => void): Promise<void> {
  const found = projectRootOf(directory);
  let root: string;
  let names: string[];
  try {
    root = realPathOf(found);
    names = readdirSync(root);
  } catch {
    // No readable working directory: the command itself reports that.
    return;
  }
  for (const name of names) {
    const pid = JOURNAL_TEMP_PATTERN.exec(name)?.[1];
    if (pid !== undefined && !isRunning({ pid: Number(pid) })) await removeIfPresent(join(root, name));
  }
  if (!names.includes(JOURNAL_FILE)) return;
  const journal = readJournal(root);
  // Gone since the listing: another command's write ended meanwhile, so there is nothing to recover.
  if (!journal || isWriteInProgress(journal)) return;
  const command = `\`ts-operator-sdk ${journal.command}\``;
  const count = `${journal.changes.length} file change${journal.changes.length === 1 ? '' : 's'}`;
  const where = resolve(found) === resolve(directory) ? '' : ` in ${found}`;
  try {
    if (journal.state === 'staging') {
      await discardStaging(root, journal);
      report(
        `Recovered an interrupted write${where}: ${command} was stopped before it changed any project file; removed its staged files.`,
      );
      return;
    }
    if (journal.state === 'applying') {
      refuseToOverwriteNewerChanges(root, journal, command, 'finish');
      try {
        await applyChanges(root, journal, 0);
      } catch (error) {
        refuseToOverwriteNewerChanges(root, journal, command, 'undo');
        await replaceJournal(root, { ...journal, state: 'undoing' });
        await undoApplied(root, journal, { insideRootOnly: true });
        report(
          `Recovered an interrupted write${where}: undid the ${count} of ${command}, which could not be completed (${describeError(root, error)}).`,
        );
        return;
      }
      await finishApplied(root, journal);
      report(`Recovered an interrupted write${where}: completed the ${count} of ${command}.`);
      return;
    }
    refuseToOverwriteNewerChanges(root, journal, command, 'undo');
    await undoApplied(root, journal, { insideRootOnly: true });
    report(`Recovered an interrupted write${where}: finished undoing the ${count} of ${command}.`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `could not recover the interrupted write of ${command} recorded in ${JOURNAL_FILE} (${describeError(root, error)})`,
      'fix the cause (e.g. make the directory writable) and run the command again; the journal is kept until recovery succeeds',
      { cause: error },
    );
  }
}

/** `directory`, or the nearest parent holding a journal or a PROJECT file (the project root); `directory` when there is none. */
function projectRootOf(directory: string): string {
  for (let current = resolve(directory); ; current = dirname(current)) {
    if (exists(join(current, JOURNAL_FILE)) || exists(join(current, 'PROJECT'))) return current;
    if (dirname(current) === current) return directory;
  }
}

/**
 * Throws, naming the file, when finishing (or undoing) the journal's write
 * would replace a file that is not as the interrupted command left it: the
 * user edited it since, and recovery must not lose that edit. The journal
 * and the command's staged files and backups stay, so nothing is lost
 * either way.
 */
function refuseToOverwriteNewerChanges(
  root: string,
  journal: Journal,
  command: string,
  direction: 'finish' | 'undo',
): void {
  for (const change of journal.changes) {
    const target = join(root, change.path);
    const staged = stagedPath(target, journal.id);
    const backup = backupPath(target, journal.id);
    let expected: Fingerprint | undefined;
    if (direction === 'finish') {
      // Steps not taken yet replace the target, which must still be as the command found it.
      const pending = change.action === 'DELETE' ? exists(backup) && exists(target) : exists(staged);
      if (pending) expected = change.before;
    } else if (
      change.action !== 'DELETE' &&
      !exists(staged) &&
      exists(target) &&
      (change.action === 'CREATE' || exists(backup))
    ) {
      // Steps taken are reverted, so the target must still be what the command wrote.
      expected = change.after;
    }
    if (expected === undefined || contentFingerprint(target) === expected) continue;
    const ownFiles = `the files ending in .ts-operator-sdk-${journal.id}.tmp or .bak`;
    const version =
      direction === 'finish'
        ? `its version of ${change.path} is ${relative(root, staged)}`
        : change.action === 'UPDATE'
          ? `the version from before it is ${relative(root, backup)}`
          : `it created ${change.path}`;
    throw new UsageError(
      `the interrupted write of ${command} was not ${direction === 'finish' ? 'finished' : 'undone'}: ${change.path} changed after the command was interrupted, and ${direction === 'finish' ? 'finishing' : 'undoing'} the write would overwrite that change`,
      `${version}: keep what you need, then delete ${JOURNAL_FILE} and ${ownFiles}, and run the command again`,
    );
  }
}

/** Thrown inside a commit to undo its staging after a signal. */
class Interrupted extends Error {}

/** The changes with the paths they really write ({@link ownedPath}); two names for one file are refused. */
function ownedChanges(boundary: ReturnType<typeof writeBoundary>, requested: readonly FileChange[]): FileChange[] {
  const byRealPath = new Map<string, string>();
  return requested.map((change) => {
    const path = ownedPath(boundary, change.path, change.action === 'DELETE' ? 'delete' : 'write');
    const other = byRealPath.get(path);
    if (other !== undefined) {
      throw new UsageError(
        `${other} and ${change.path} are the same file (through a symbolic link), and this command would write both`,
        'replace one of the links with its own file and run the command again',
      );
    }
    byRealPath.set(path, change.path);
    return { ...change, path };
  });
}

/** The longest file name (in bytes) that Linux, macOS and Windows file systems take. */
const MAX_NAME_BYTES = 255;

/**
 * Refuses, before anything is written, a file name too long to stage: the
 * staged copy and the backup add `.ts-operator-sdk-<id>.tmp` to it, and a
 * name from a long (but valid) group or kind can fit alone and not with that.
 */
function checkNameLengths(changes: readonly FileChange[], id: string): void {
  const suffix = Buffer.byteLength(basename(stagedPath('', id)));
  for (const change of changes) {
    const name = basename(change.path);
    const bytes = Buffer.byteLength(name);
    if (bytes + suffix <= MAX_NAME_BYTES) continue;
    throw new UsageError(
      `the file name ${name.length > 40 ? `${name.slice(0, 40)}… (${bytes} bytes)` : name} is too long to write safely: file names hold at most ${MAX_NAME_BYTES} bytes, and the write needs ${suffix} more for its temporary copy`,
      'use shorter names (the group, kind or object name this file is named after), at most ' +
        `${MAX_NAME_BYTES - suffix} bytes for the whole file name`,
    );
  }
}

/** Throws, naming the first path, unless everything in `seen` is on disk as it was seen. */
function checkNothingChanged(root: string, seen: ReadonlyMap<string, Fingerprint> | undefined): void {
  for (const [path, fingerprint] of seen ?? []) {
    const absolute = join(root, path);
    const now = path.endsWith('/') ? listingFingerprint(absolute) : fingerprintLike(fingerprint, absolute);
    if (now !== fingerprint) {
      throw new UsageError(
        `${path.replace(/\/$/, '') || '.'} changed while this command ran (another ts-operator-sdk command, or an editor, wrote to the project), so nothing was written`,
        'run the command again',
      );
    }
  }
}

async function stage(
  root: string,
  journal: Journal,
  changes: readonly FileChange[],
  section: UninterruptibleSection,
  delayMs: number,
): Promise<void> {
  // The many small steps (mkdir, open, write, link, and the renames of
  // applyChanges) are synchronous calls: each asynchronous one is a round
  // trip through libuv's thread pool, ~0.1-0.5 ms on a busy machine, paid one
  // after another for every file of an `init`. Only the fsyncs, which wait for
  // the disk, go to the pool, all together. Same calls in the same order, so
  // the same durable states.
  for (const directory of journal.directories) mkdirSync(join(root, directory));
  // Files are written one by one and fsynced together: concurrent fsyncs
  // share the file system's journal commits, one at a time would each wait
  // for their own (tens of milliseconds apiece on a busy disk).
  const unsynced: number[] = [];
  try {
    for (const change of changes) {
      if (section.signal) throw new Interrupted();
      if (delayMs > 0) await sleep(delayMs);
      const target = join(root, change.path);
      if (change.action !== 'DELETE') {
        // A replaced file keeps its mode (an executable script stays executable).
        const mode = change.action === 'UPDATE' ? statSync(target).mode & 0o7777 : undefined;
        unsynced.push(writeNewFile(stagedPath(target, journal.id), change.content ?? '', mode));
      }
      if (change.action !== 'CREATE') {
        const copy = preserve(target, backupPath(target, journal.id));
        if (copy !== undefined) unsynced.push(copy);
      }
      if (unsynced.length >= FILES_SYNCED_TOGETHER) await syncAndClose(unsynced.splice(0));
    }
    await syncAndClose(unsynced.splice(0));
  } finally {
    for (const fd of unsynced) closeQuietly(fd);
  }
  await syncDirectories(root, journal);
}

// Node's callback functions, promisified, instead of node:fs/promises and
// node:timers/promises: loading those pulls in their FileHandle, readline and
// stream modules, about 3 ms of every command that writes (2026-11-27).
const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);
const link = promisify(linkCallback);
const mkdir = promisify(mkdirCallback);
const openAsync = promisify(openCallback);
const rename = promisify(renameCallback);
const rmdir = promisify(rmdirCallback);
const unlink = promisify(unlinkCallback);
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Fsyncs the open files together (see {@link stage}), then closes them. */
async function syncAndClose(fds: number[]): Promise<void> {
  try {
    await Promise.all(fds.map((fd) => fsyncAsync(fd)));
  } finally {
    for (const fd of fds) closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already failing, or closed: the error that matters is the one being thrown.
  }
}

/** Renames staged files into place and unlinks deleted files; each step is skipped if already done. */
async function applyChanges(root: string, journal: Journal, delayMs: number): Promise<void> {
  for (const change of journal.changes) {
    if (delayMs > 0) await sleep(delayMs);
    const target = join(root, change.path);
    if (change.action === 'DELETE') {
      // The backup is the proof that this commit planned the deletion.
      if (exists(backupPath(target, journal.id)) && exists(target)) await unlink(target);
    } else {
      const staged = stagedPath(target, journal.id);
      if (exists(staged)) renameSync(staged, target);
    }
  }
  await syncDirectories(root, journal);
}

/** After a complete apply: drops backups and directories a move emptied, then the journal. */
async function finishApplied(root: string, journal: Journal): Promise<void> {
  for (const change of journal.changes) {
    if (change.action !== 'CREATE') await removeIfPresent(backupPath(join(root, change.path), journal.id));
  }
  const emptied = new Set<string>();
  for (const change of journal.changes) {
    if (change.action !== 'DELETE') continue;
    for (let dir = dirname(join(root, change.path)); isStrictlyInside(root, dir); dir = dirname(dir)) emptied.add(dir);
  }
  for (const dir of [...emptied].sort((a, b) => b.length - a.length)) {
    if (existsSync(dir) && readdirSync(dir).length === 0) await rmdir(dir).catch(() => undefined);
  }
  await unlink(join(root, JOURNAL_FILE));
}

/** Undoes a commit still in `staging`: no target was touched, so only its own files go. */
async function discardStaging(root: string, journal: Journal): Promise<void> {
  for (const change of journal.changes) {
    const target = join(root, change.path);
    await removeIfPresent(stagedPath(target, journal.id));
    await removeIfPresent(backupPath(target, journal.id));
  }
  await removeCreatedDirectories(root, journal);
  await unlink(join(root, JOURNAL_FILE));
}

/**
 * Puts back what a partly applied commit changed, telling each step's state
 * from the disk. When recovering a journal found on disk, a created file is
 * only removed inside the project (the journal is data from the directory,
 * not proof that this tool wrote elsewhere).
 */
async function undoApplied(root: string, journal: Journal, options: { insideRootOnly: boolean }): Promise<void> {
  for (const change of [...journal.changes].reverse()) {
    const target = join(root, change.path);
    const staged = stagedPath(target, journal.id);
    const backup = backupPath(target, journal.id);
    if (change.action === 'CREATE') {
      if (exists(staged)) await unlink(staged);
      else if (exists(target) && (!options.insideRootOnly || isInsideProject(root, target))) await unlink(target);
    } else if (change.action === 'UPDATE') {
      if (exists(staged)) {
        await unlink(staged);
        await removeIfPresent(backup);
      } else if (exists(backup)) {
        await rename(backup, target);
      }
    } else if (exists(backup)) {
      if (exists(target)) {
        await unlink(backup);
      } else {
        await mkdir(dirname(target), { recursive: true });
        await rename(backup, target);
      }
    }
  }
  await removeCreatedDirectories(root, journal);
  await syncDirectories(root, journal);
  await unlink(join(root, JOURNAL_FILE));
}

async function removeCreatedDirectories(root: string, journal: Journal): Promise<void> {
  for (const directory of [...journal.directories].reverse()) {
    const path = join(root, directory);
    if (!isStrictlyInside(root, path)) continue;
    // Only if empty: anything else in it is not ours.
    await rmdir(path).catch((error: NodeJS.ErrnoException) => {
      if (!['ENOENT', 'ENOTDIR', 'ENOTEMPTY', 'EEXIST'].includes(error.code ?? '')) throw error;
    });
  }
}

/**
 * Creates the journal so that it appears complete or not at all (written to a
 * temp file, fsynced, then hard-linked into place), and only if no other
 * journal is there: two commands writing one project would undo each other.
 */
async function createJournal(root: string, journal: Journal, section: UninterruptibleSection): Promise<void> {
  const path = join(root, JOURNAL_FILE);
  const temp = `${path}.${journal.id}.tmp`;
  await writeDurably(temp, serialise(journal));
  const waitUntil = Date.now() + JOURNAL_WAIT_MS;
  try {
    for (;;) {
      try {
        await link(temp, path);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (NO_HARD_LINKS.has(code)) {
          // No hard links here: a rename is as atomic, only not exclusive.
          if (!existsSync(path)) {
            await rename(temp, path);
            break;
          }
        } else if (code !== 'EEXIST') throw error;
        // Another command holds the journal. A short write is waited for (its
        // changes then decide, through the read check, whether this one may
        // go on); a long one, or a Ctrl-C here, ends this command instead.
        const owner = journalOwner(root);
        if (owner === 'gone') continue;
        if (section.signal) throw new Interrupted();
        if (owner === 'unreadable' || !isRunning(owner) || Date.now() >= waitUntil) {
          throw new UsageError(
            `another ts-operator-sdk command${typeof owner === 'object' ? ` (pid ${owner.pid})` : ''} is writing this project (${JOURNAL_FILE} exists)`,
            typeof owner === 'object' && !isRunning(owner)
              ? 'run the command again: it first completes or undoes that interrupted write'
              : 'wait for it to finish and run the command again',
          );
        }
        await sleep(JOURNAL_POLL_MS);
      }
    }
  } finally {
    await removeIfPresent(temp);
  }
  await syncDirectory(root);
}

/** How long a commit waits for another command's write to end before giving up. */
const JOURNAL_WAIT_MS = 5_000;
const JOURNAL_POLL_MS = 50;

/** Who holds the journal now: its owner, `gone` (it ended meanwhile), or `unreadable`. */
function journalOwner(root: string): Journal['owner'] | 'gone' | 'unreadable' {
  try {
    const value = JSON.parse(readFileSync(join(root, JOURNAL_FILE), 'utf8')) as Partial<Journal>;
    return typeof value.owner?.pid === 'number' ? value.owner : 'unreadable';
  } catch (error) {
    return isGone(join(root, JOURNAL_FILE), error) ? 'gone' : 'unreadable';
  }
}

/**
 * Whether a read of `path` failed because nothing is there any more. A
 * dangling symbolic link also reads as ENOENT, but it stays: it is not gone.
 */
function isGone(path: string, error: unknown): boolean {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  try {
    lstatSync(path);
    return false;
  } catch {
    return true;
  }
}

/** Moves the journal to a new state atomically (temp file, fsync, rename, fsync of the directory). */
async function replaceJournal(root: string, journal: Journal): Promise<void> {
  const path = join(root, JOURNAL_FILE);
  const temp = `${path}.${journal.id}.tmp`;
  await removeIfPresent(temp);
  await writeDurably(temp, serialise(journal));
  await rename(temp, path);
  await syncDirectory(root);
}

function serialise(journal: Journal): string {
  return `${JSON.stringify(journal, null, 2)}\n`;
}

/** The journal in `root`, or undefined when there is none (it may end between a listing and this read). */
function readJournal(root: string): Journal | undefined {
  const path = join(root, JOURNAL_FILE);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    if (isGone(path, error)) return undefined;
    throw new UsageError(
      `the interrupted-write journal ${JOURNAL_FILE} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      `if no ts-operator-sdk command was interrupted in this directory, delete ${JOURNAL_FILE}`,
      { cause: error },
    );
  }
  if (!isJournal(value)) {
    throw new UsageError(
      `${JOURNAL_FILE} is not a journal this version of ts-operator-sdk understands`,
      `finish the interrupted write with the ts-operator-sdk version that started it, or delete ${JOURNAL_FILE} and check the project files`,
    );
  }
  return value;
}

function isJournal(value: unknown): value is Journal {
  const journal = value as Journal;
  const relativePath = (path: unknown): boolean =>
    typeof path === 'string' && path.length > 0 && !isAbsolute(path) && !path.includes('\0');
  return (
    typeof value === 'object' &&
    value !== null &&
    journal.format === JOURNAL_FORMAT &&
    typeof journal.id === 'string' &&
    ID_PATTERN.test(journal.id) &&
    ['staging', 'applying', 'undoing'].includes(journal.state) &&
    typeof journal.owner?.pid === 'number' &&
    typeof journal.command === 'string' &&
    Array.isArray(journal.directories) &&
    journal.directories.every(relativePath) &&
    Array.isArray(journal.changes) &&
    journal.changes.every(
      (change) =>
        ['CREATE', 'UPDATE', 'DELETE'].includes(change?.action) &&
        relativePath(change.path) &&
        typeof change.before === 'string',
    )
  );
}

/** Writes a new file and fsyncs it, so a journal saying "staged" is never ahead of the data. */
async function writeDurably(path: string, content: string): Promise<void> {
  await syncAndClose([writeNewFile(path, content)]);
}

/** Creates `path` with `content` (and `mode`); returns the open descriptor, still to be fsynced. */
function writeNewFile(path: string, content: string | Buffer, mode?: number): number {
  const fd = openSync(path, 'wx');
  try {
    writeFileSync(fd, content);
    if (mode !== undefined) fchmodSync(fd, mode);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Keeps the current file under `backup`: a hard link is instant and needs no
 * fsync of data; a copy (where links are not supported) keeps the mode too,
 * and its handle is returned to be fsynced with the staged files.
 */
function preserve(target: string, backup: string): number | undefined {
  try {
    linkSync(target, backup);
    return undefined;
  } catch (error) {
    if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    copyFileSync(target, backup, fsConstants.COPYFILE_EXCL);
    return openSync(backup, 'r');
  }
}

/** Fsyncs every directory whose entries the commit changes, so renames survive a power loss. */
async function syncDirectories(root: string, journal: Journal): Promise<void> {
  const directories = new Set<string>([root]);
  for (const change of journal.changes) directories.add(dirname(join(root, change.path)));
  for (const directory of journal.directories) directories.add(dirname(join(root, directory)));
  await Promise.all([...directories].map(syncDirectory));
}

async function syncDirectory(directory: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = await openAsync(directory, 'r');
    await fsyncAsync(fd);
  } catch {
    // Directories cannot be opened or fsynced everywhere (Windows, some network
    // file systems); the data files themselves were fsynced.
  } finally {
    if (fd !== undefined) await closeAsync(fd);
  }
}

/** Directories that must be created for `changes`, relative to `root`, parents first. */
function missingDirectories(root: string, changes: readonly FileChange[]): string[] {
  const missing = new Set<string>();
  for (const change of changes) {
    if (change.action === 'DELETE') continue;
    const chain: string[] = [];
    for (let dir = dirname(join(root, change.path)); dir !== root && !existsSync(dir); dir = dirname(dir))
      chain.unshift(dir);
    for (const dir of chain) missing.add(relative(root, dir));
  }
  return [...missing].sort((a, b) => a.split('/').length - b.split('/').length || byteOrder(a, b));
}

/** Creates `directory` and its missing parents; returns those created, outermost first. */
async function createMissingDirectory(directory: string): Promise<string[]> {
  if (existsSync(directory)) return [];
  const created = await createMissingDirectory(dirname(directory));
  await mkdir(directory);
  return [...created, directory];
}

/**
 * 8 random hex digits, telling apart two commits of one pid (the pid comes
 * first): uniqueness, not secrecy, so Math.random rather than node:crypto
 * (src/fnv.ts says what importing that costs).
 */
function randomHex8(): string {
  return Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');
}

function stagedPath(target: string, id: string): string {
  return `${target}.ts-operator-sdk-${id}.tmp`;
}

function backupPath(target: string, id: string): string {
  return `${target}.ts-operator-sdk-${id}.bak`;
}

/** Removes a file this module made; one that is not there (or whose parent is not a directory) is fine. */
async function removeIfPresent(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    // ENAMETOOLONG: a name that long was never created, so there is nothing to remove.
    if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR' && error.code !== 'ENAMETOOLONG') throw error;
  });
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isStrictlyInside(root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(path));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** Inside the project after resolving symbolic links of the parent directory. */
function isInsideProject(root: string, path: string): boolean {
  try {
    return isStrictlyInside(realpathSync(root), join(realpathSync(dirname(path)), 'x'));
  } catch {
    return false;
  }
}

/**
 * Whether the journal belongs to a write still going on: another live
 * process's, or one of this process's commits (a journal of this pid that no
 * commit here is running is stale, e.g. after a failed undo in a test run).
 */
function isWriteInProgress(journal: Journal): boolean {
  if (journal.owner.pid === process.pid) return commitsInProgress.has(journal.id);
  return isRunning(journal.owner);
}

/** Whether the journal's writer is still running (same pid and, on Linux, same start time). */
function isRunning(owner: { pid: number; started?: string }): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = processStart(owner.pid);
  return owner.started === undefined || started === undefined || started === owner.started;
}

/** The start time of `pid` in clock ticks since boot (Linux), to tell a reused pid apart. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "pid (comm)"; the command name may contain spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function currentCommand(): string {
  const command = process.argv.slice(2).join(' ');
  return command.length > COMMAND_SHOWN_CHARACTERS ? `${command.slice(0, COMMAND_SHOWN_CHARACTERS)}…` : command;
}

function testWriteDelay(): number {
  const value = Number(process.env[TEST_WRITE_DELAY_ENV] ?? 0);
  return Number.isFinite(value) && value > 0 ? Math.min(value, 10_000) : 0;
}

/** `CODE at <project file>`: a rename's error names its destination, and staged names are shown as their targets. */
function describeError(root: string, error: unknown): string {
  const failure = error as NodeJS.ErrnoException & { dest?: string };
  const reason = failure.code ?? failure.message;
  const path = (failure.dest ?? failure.path)?.replace(OWN_FILE_SUFFIX, '');
  return `${reason}${path ? ` at ${relative(root, path) || '.'}` : ''}`;
}

function writeFailed(root: string, error: unknown): Error {
  if (error instanceof UsageError) return error;
  return new UsageError(
    `could not write the project files (${describeError(root, error)}); nothing was changed`,
    fixForWriteError(root, error as NodeJS.ErrnoException),
    { cause: error },
  );
}

/** The advice for a failed write: only permission errors are fixed by making the directory writable. */
function fixForWriteError(root: string, error: NodeJS.ErrnoException & { dest?: string }): string {
  const path = (error.dest ?? error.path)?.replace(OWN_FILE_SUFFIX, '');
  switch (error.code) {
    case 'ENOTDIR':
    case 'EEXIST': {
      // A file sits where the project needs a directory (e.g. a file named `.github`).
      const blocker = path ? fileInTheWay(root, path) : undefined;
      return `${blocker ? `"${relative(root, blocker)}" is a file where a directory is needed` : 'a file is in the way of a directory'}: move it away and run the command again`;
    }
    case 'EISDIR':
      return `a directory is in the way of a file${path ? ` ("${relative(root, path)}")` : ''}: move it away and run the command again`;
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some disk space and run the command again';
    default:
      return 'make the directory writable and run the command again';
  }
}

/** The nearest existing ancestor of `path` (or `path` itself) that is not a directory. */
function fileInTheWay(root: string, path: string): string | undefined {
  for (let current = path; current.startsWith(root) && current !== root; current = dirname(current)) {
    try {
      if (!statSync(current).isDirectory()) return current;
    } catch {
      // Missing or unreachable: look further up.
    }
  }
  return undefined;
}

function undoFailed(root: string, error: unknown, undoError: unknown): Error {
  return new UsageError(
    `could not write the project files (${describeError(root, error)}), and undoing the partial write failed too (${describeError(root, undoError)})`,
    `fix the cause and run any ts-operator-sdk command in this directory: it completes or undoes the write recorded in ${JOURNAL_FILE}`,
    { cause: error },
  );
}

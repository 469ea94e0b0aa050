/**
 * The kubeconfig `envtest start` writes, and what it may do to the file that
 * --kubeconfig names. It owns a file it created (or one an earlier run of it
 * created and left behind, e.g. after kill -9: the marker comment says so),
 * and deletes that when it stops. Into any other kubeconfig it merges one
 * cluster, user and context, as kind does, and makes that context current;
 * when it stops it puts the file back byte for byte (or, if something else
 * changed the file meanwhile, removes only its own entries). A file that is
 * not a kubeconfig, or that it cannot rewrite safely, is refused before
 * anything starts. Every write is a temp file renamed over the target in the
 * target's directory, with the target's mode, under kubectl's `<path>.lock`;
 * a symlink is followed to the file it names.
 */
import {
  accessSync,
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Document, isMap, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import type { CommandIO } from '../../cli/io.js';
import { UsageError } from '../../errors.js';
import { displayPath, treePath } from '../../paths.js';
import { ownedPath, writeBoundary } from '../../scaffold/boundary.js';

/** The first line of a kubeconfig `envtest start` created; the pid is the run's. */
const MARKER = 'Written by ts-operator-sdk envtest start';
const MARKER_LINE = /^# Written by ts-operator-sdk envtest start \(pid (\d+)\)/;
/** Prefix of the cluster, user and context names envtest start adds; the API server's port follows. */
export const ENTRY_PREFIX = 'ts-operator-sdk-envtest-';
/** A kubeconfig is a few kB; a file this big is not one, and is not read into memory. */
const MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024;
const ENTRY_LISTS = ['clusters', 'users', 'contexts'] as const;

/** What `envtest start` will do with --kubeconfig, decided before the control plane starts. */
export interface KubeconfigPlan {
  /** The path as given, for messages and the export line. */
  path: string;
  /** The file that is written: `path` with symlinks resolved. */
  target: string;
  /**
   * `create`: there is no file; `replace`: a file an earlier run created and
   * left behind; `merge`: the user's kubeconfig, which gets our entries.
   */
  action: 'create' | 'replace' | 'merge';
  /** The file's bytes and mode before the run (replace, merge). */
  original?: Buffer;
  mode?: number;
  uid?: number;
  gid?: number;
}

/** The admin credentials of the running control plane. */
export interface EnvtestAccess {
  server: string;
  caData: string;
  certData: string;
  keyData: string;
}

/** A kubeconfig as written: what to compare with, and what to put back, when the run stops. */
export interface WrittenKubeconfig {
  plan: KubeconfigPlan;
  /** The entries' name (cluster, user and context alike). */
  name: string;
  written: Buffer;
  /** The first directory the write had to create (create only), for the stop to remove again. */
  createdDir?: string;
}

/**
 * Looks at --kubeconfig and decides what to do with it, or refuses it in one
 * line. Touches nothing.
 */
export function planKubeconfig(cwd: string, path: string, named = true): KubeconfigPlan {
  const shown = displayPath(cwd, path);
  // The one path guard of the CLI's writers: the default kubeconfig stays
  // inside the project (bin/ may not link out of it). One the user named is
  // the output they chose, anywhere, written where its links lead.
  if (!named) ownedPath(writeBoundary(cwd), treePath(cwd, path), 'write');
  const fix = 'pass another path with --kubeconfig, e.g. --kubeconfig bin/envtest.kubeconfig';
  const link = lstatIfAny(path);
  if (!link) {
    checkCreatable(cwd, path, shown);
    return { path, target: path, action: 'create' };
  }
  let target = path;
  if (link.isSymbolicLink()) {
    try {
      target = realpathSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT'
          ? 'which does not exist'
          : code === 'ELOOP'
            ? 'a loop of symlinks'
            : `which cannot be resolved (${code ?? 'realpath failed'})`;
      throw new UsageError(`--kubeconfig ${shown} is a symlink to ${readlinkSync(path)}, ${why}`, fix, { cause: err });
    }
  }
  const stat = statSync(target);
  if (stat.isDirectory())
    throw new UsageError(
      `--kubeconfig ${shown} is a directory`,
      'pass a file path, e.g. --kubeconfig bin/envtest.kubeconfig',
    );
  if (!stat.isFile()) throw new UsageError(`--kubeconfig ${shown} is not a regular file`, fix);
  if (stat.size > MAX_KUBECONFIG_BYTES)
    throw new UsageError(`--kubeconfig ${shown} is ${stat.size} bytes, too big for a kubeconfig`, fix);
  let original: Buffer;
  try {
    original = readFileSync(target);
  } catch (err) {
    throw new UsageError(
      `cannot read --kubeconfig ${shown} (${(err as NodeJS.ErrnoException).code ?? 'read failed'})`,
      `make it readable, or ${fix}`,
      { cause: err },
    );
  }
  for (const [what, file] of [
    ['it is', target],
    ['its directory is', dirname(target)],
  ] as const) {
    if (!isWritable(file))
      throw new UsageError(
        `cannot add envtest's context to --kubeconfig ${shown}: ${what} not writable`,
        `make it writable, or ${fix}`,
      );
  }
  const text = original.toString('utf8');
  const owner = MARKER_LINE.exec(text);
  const kept = { path, target, original, mode: stat.mode & 0o7777, uid: stat.uid, gid: stat.gid };
  if (!owner && writtenByEarlierVersion(text)) return { ...kept, action: 'replace' };
  if (owner) {
    const pid = Number(owner[1]);
    if (pid !== process.pid && isRunningEnvtest(pid)) {
      throw new UsageError(
        `--kubeconfig ${shown} belongs to an envtest start that is still running (pid ${pid})`,
        `stop that one (kill -INT ${pid}), or ${fix}`,
      );
    }
    return { ...kept, action: 'replace' };
  }
  kubeconfigDocument(text, shown);
  return { ...kept, action: 'merge' };
}

/**
 * Writes the kubeconfig: a new file, or our entries merged into the user's.
 * Planned again here, under kubectl's lock: the file may have changed (or
 * appeared) while the control plane started.
 */
export function writeKubeconfig(
  cwd: string,
  path: string,
  access: EnvtestAccess,
  io: CommandIO,
  named = true,
): WrittenKubeconfig {
  const name = `${ENTRY_PREFIX}${new URL(access.server).port || '443'}`;
  return withKubectlLock(path, () => {
    const plan = planKubeconfig(cwd, path, named);
    if (plan.action !== 'merge') {
      const doc = new Document({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [],
        users: [],
        contexts: [],
        'current-context': name,
        preferences: {},
      });
      doc.commentBefore = ` ${MARKER} (pid ${process.pid}); removed when it stops.`;
      addEntries(doc, name, access);
      const createdDir = plan.action === 'create' ? mkdirSync(dirname(plan.target), { recursive: true }) : undefined;
      const written = Buffer.from(doc.toString({ lineWidth: 0, indentSeq: false }));
      // Only this user may read it: it holds the admin's private key.
      replaceFile(plan.target, written, 0o600);
      return { plan, name, written, createdDir };
    }
    const text = plan.original!.toString('utf8');
    const doc = kubeconfigDocument(text, plan.path);
    for (const list of ENTRY_LISTS) removeNamed(doc, list, name);
    addEntries(doc, name, access);
    (doc.contents as YAMLMap).set('current-context', name);
    const written = Buffer.from(renderLike(doc, text));
    replaceFile(plan.target, written, plan.mode!, plan);
    io.progress(
      `envtest: added the context ${name} to ${displayPath(cwd, plan.path)} and made it current; it is removed when envtest stops`,
    );
    return { plan, name, written };
  });
}

/**
 * Undoes `writeKubeconfig`: deletes the file it owns, or puts the user's
 * kubeconfig back. Either is exact when the file still holds what was
 * written; when something else changed it meanwhile, only our entries are
 * removed (and the current context put back if it is still ours).
 */
export function restoreKubeconfig(written: WrittenKubeconfig, io: CommandIO, cwd: string): void {
  withKubectlLock(written.plan.path, () => restoreUnlocked(written, io, cwd));
}

function restoreUnlocked(written: WrittenKubeconfig, io: CommandIO, cwd: string): void {
  const { plan, name } = written;
  const shown = displayPath(cwd, plan.path);
  const current = existsSync(plan.target) ? readFileSync(plan.target) : undefined;
  if (current === undefined) return;
  if (current.equals(written.written)) {
    if (plan.action === 'merge') replaceFile(plan.target, plan.original!, plan.mode!, plan);
    else rmSync(plan.target, { force: true });
    return;
  }
  // Changed while we ran (kubectl config use-context, another tool's context): take out only what is ours.
  const text = current.toString('utf8');
  let doc: Document;
  try {
    doc = kubeconfigDocument(text, shown);
  } catch {
    io.progress(
      `envtest: ${shown} was changed while envtest ran and is no longer a kubeconfig; left as it is (remove the context ${name} yourself)`,
    );
    return;
  }
  for (const list of ENTRY_LISTS) removeNamed(doc, list, name);
  const root = doc.contents as YAMLMap<unknown, unknown>;
  if (root.get('current-context') === name) {
    // The context that was current before, if it is still there (another envtest's may be gone by now).
    const before =
      plan.action === 'merge'
        ? (
            kubeconfigDocument(plan.original!.toString('utf8'), shown).contents as YAMLMap<unknown, unknown> | null
          )?.get('current-context')
        : undefined;
    const contexts = root.get('contexts');
    const stillThere = isSeq(contexts) && contexts.items.some((item) => isMap(item) && item.get('name') === before);
    if (typeof before === 'string' && stillThere) root.set('current-context', before);
    else root.delete('current-context');
  }
  if (doc.commentBefore?.trimStart().startsWith(MARKER)) doc.commentBefore = null;
  const stat = statSync(plan.target);
  replaceFile(plan.target, Buffer.from(renderLike(doc, text)), stat.mode & 0o7777, stat);
  io.progress(`envtest: ${shown} was changed while envtest ran; removed only the context ${name} from it`);
}

/** How long to wait for kubectl's lock on a kubeconfig before giving up. */
const LOCK_WAIT_MS = 2000;

/**
 * Runs `edit` holding `<path>.lock`, the lock kubectl and client-go take to
 * edit a kubeconfig, so neither overwrites the other's change. A path whose
 * directory does not exist yet needs no lock (nothing can be editing it).
 */
function withKubectlLock<T>(path: string, edit: () => T): T {
  const lock = `${path}.lock`;
  const giveUp = Date.now() + LOCK_WAIT_MS;
  let fd: number | undefined;
  for (;;) {
    try {
      fd = openSync(lock, 'wx', 0o600);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return edit();
      if (code !== 'EEXIST') throw err;
      if (Date.now() >= giveUp)
        throw new UsageError(
          `${lock} exists: kubectl (or another tool) is editing the kubeconfig`,
          `try again; if nothing is editing it, delete ${lock}`,
        );
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  try {
    return edit();
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}

/**
 * Whether `text` is the kubeconfig versions before the marker wrote: client-node's
 * JSON export of the plane's admin config (cluster and context `envtest` on
 * 127.0.0.1, user `default`), and nothing else.
 */
function writtenByEarlierVersion(text: string): boolean {
  if (!text.startsWith('{')) return false;
  try {
    const config = JSON.parse(text) as {
      clusters?: { name?: string; cluster?: { server?: string } }[];
      users?: { name?: string }[];
      contexts?: { name?: string }[];
      'current-context'?: string;
    };
    return (
      config.clusters?.length === 1 &&
      config.clusters[0]!.name === 'envtest' &&
      /^https:\/\/127\.0\.0\.1:\d+$/.test(config.clusters[0]!.cluster?.server ?? '') &&
      config.users?.length === 1 &&
      config.users[0]!.name === 'default' &&
      config.contexts?.length === 1 &&
      config.contexts[0]!.name === 'envtest' &&
      config['current-context'] === 'envtest'
    );
  } catch {
    return false;
  }
}

/**
 * The kubeconfig document in `text` (an empty file is an empty kubeconfig,
 * as kubectl reads it); refuses YAML that is not one, in one line.
 */
function kubeconfigDocument(text: string, shown: string): Document {
  const fix = 'fix the file (kubectl config view shows what kubectl reads), or pass another path with --kubeconfig';
  const doc = parseDocument(text, { keepSourceTokens: false, uniqueKeys: false });
  if (doc.errors.length > 0)
    throw new UsageError(`--kubeconfig ${shown} is not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`, fix);
  if (doc.contents === null) {
    doc.contents = doc.createNode({ apiVersion: 'v1', kind: 'Config' }) as unknown as typeof doc.contents;
    return doc;
  }
  if (!isMap(doc.contents))
    throw new UsageError(`--kubeconfig ${shown} is not a kubeconfig (its top level is not a mapping)`, fix);
  const root = doc.contents as YAMLMap<unknown, unknown>;
  const kind = root.get('kind');
  // `{}` is an empty kubeconfig too.
  const looksLikeOne =
    root.items.length === 0 ||
    kind === 'Config' ||
    ['clusters', 'users', 'contexts', 'current-context'].some((key) => root.has(key));
  if ((kind !== undefined && kind !== 'Config') || !looksLikeOne) {
    throw new UsageError(
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a mapping or list under kind is a yaml node, whose toString() prints it as YAML
      `--kubeconfig ${shown} is not a kubeconfig (${kind !== undefined ? `it has kind: ${String(kind)}` : 'it has no clusters, users or contexts'})`,
      fix,
    );
  }
  for (const list of ENTRY_LISTS) {
    // Absent, empty (`clusters:`) or a list; anything else is not a kubeconfig.
    const value = root.get(list);
    if (value !== undefined && value !== null && !isSeq(value)) {
      throw new UsageError(`--kubeconfig ${shown} is not a kubeconfig (its ${list} is not a list)`, fix);
    }
    const unnamed = isSeq(value)
      ? value.items.findIndex((item) => !isMap(item) || typeof item.get('name') !== 'string')
      : -1;
    if (unnamed >= 0)
      throw new UsageError(`--kubeconfig ${shown} is not a kubeconfig (its ${list}[${unnamed}] has no name)`, fix);
  }
  return doc;
}

/** Adds our cluster, user and context (all called `name`) to the document's lists. */
function addEntries(doc: Document, name: string, access: EnvtestAccess): void {
  const root = doc.contents as YAMLMap<unknown, unknown>;
  const entries = {
    clusters: { name, cluster: { server: access.server, 'certificate-authority-data': access.caData } },
    users: { name, user: { 'client-certificate-data': access.certData, 'client-key-data': access.keyData } },
    contexts: { name, context: { cluster: name, user: name } },
  };
  for (const list of ENTRY_LISTS) {
    let seq: unknown = root.get(list, true);
    if (!isSeq(seq)) {
      seq = doc.createNode([]);
      root.set(list, seq);
    }
    (seq as YAMLSeq).add(doc.createNode(entries[list]));
  }
}

/** Removes the entries called `name` from one of the lists. */
function removeNamed(doc: Document, list: (typeof ENTRY_LISTS)[number], name: string): void {
  const seq = (doc.contents as YAMLMap | null)?.get(list, true);
  if (!isSeq(seq)) return;
  for (let index = seq.items.length - 1; index >= 0; index--) {
    const item = seq.items[index];
    if (isMap(item) && item.get('name') === name) seq.delete(index);
  }
}

/**
 * The document as text in the form of `original`: JSON stays JSON (no YAML
 * flow style for Go's YAML reader to trip on); YAML keeps its sequence
 * indentation (kubectl writes `- ` flush with the key).
 */
function renderLike(doc: Document, original: string): string {
  if (isJson(original)) return `${JSON.stringify(doc.toJS(), null, 2)}\n`;
  return doc.toString({ lineWidth: 0, indentSeq: !/^[\w-]+:[ \t]*\r?\n-[ \t]/m.test(original) });
}

function isJson(text: string): boolean {
  if (!text.trimStart().startsWith('{')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes `content` to `target` whole or not at all: a temp file in the same
 * directory, given `mode` (and the owner, when root rewrites another user's
 * file), renamed over it.
 */
function replaceFile(target: string, content: Buffer, mode: number, owner?: { uid?: number; gid?: number }): void {
  const staging = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
  rmSync(staging, { force: true });
  try {
    writeFileSync(staging, content, { mode: 0o600, flag: 'wx' });
    chmodSync(staging, mode);
    if (owner?.uid !== undefined && owner.gid !== undefined && process.getuid?.() === 0)
      chownSync(staging, owner.uid, owner.gid);
    renameSync(staging, target);
  } catch (err) {
    rmSync(staging, { force: true });
    throw err;
  }
}

/**
 * Fails before anything starts when a new kubeconfig could not be written: in
 * a directory this user cannot write, or under a file. Creates nothing.
 */
function checkCreatable(cwd: string, path: string, shown: string): void {
  let ancestor = dirname(path);
  while (!existsSync(ancestor) && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
  const problem = !statSync(ancestor).isDirectory()
    ? `${displayPath(cwd, ancestor)} is not a directory`
    : !isWritable(ancestor)
      ? 'permission denied'
      : undefined;
  if (problem)
    throw new UsageError(`cannot write the kubeconfig ${shown}: ${problem}`, 'pass a writable path with --kubeconfig');
}

/** The path's own stat, or undefined when there is nothing there (including a path under a file). */
function lstatIfAny(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

function isWritable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether `pid` is a running `envtest start` (its command line says envtest; without /proc, whether it runs at all). */
function isRunningEnvtest(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('envtest');
  } catch {
    return !existsSync('/proc/self');
  }
}

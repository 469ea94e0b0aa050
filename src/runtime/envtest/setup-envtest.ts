import { createHash } from 'node:crypto';
import { createReadStream, existsSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { createGunzip } from 'node:zlib';
import semver from 'semver';
import { Agent, fetch, type Dispatcher } from 'undici';
import { parse as parseYaml } from 'yaml';
import { UsageError } from '../../errors.js';
import { extractTar } from './tar.js';

/** controller-runtime's setup-envtest index: controller-tools publishes one archive per version and platform. */
export const DEFAULT_ENVTEST_INDEX_URL =
  'https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml';
/** The binaries an envtest archive must contain for the Environment to run. */
const REQUIRED_BINARIES = ['etcd', 'kube-apiserver'];
/** Where controller-tools puts the binaries inside each archive. */
const ARCHIVE_BINARY_DIR = 'controller-tools/envtest/';
const ARCHIVE_NAME = /^envtest-v(\d+\.\d+\.\d+)-([a-z0-9]+)-([a-z0-9]+)\.tar\.gz$/;
const CACHED_DIR_NAME = /^(\d+\.\d+\.\d+)-([a-z0-9]+)-([a-z0-9]+)$/;
/** setup-envtest's selector grammar: X.Y.Z, X.Y, X.Y.{x,*}, optionally after ~, < or <=, optionally ending in ! (ask the index even if a local match exists). */
const SELECTOR = /^(~|<=|<)?v?(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*|x|\*))?(!)?$/;
const INDEX_TIMEOUT_MS = 30_000;
/** Index documents are a few hundred KiB; anything far larger is not an index. */
const MAX_INDEX_BYTES = 16 * 1024 * 1024;
/** The staging directory of a download: `.download-<version>-<pid>-<random>`, so a later run can tell whose it is. */
const STAGING_DIR_NAME = /^\.download-.*?-(\d+)-[A-Za-z0-9]+$/;
/** Staging directories without a pid (older releases) count as abandoned after this long. */
const STALE_STAGING_MS = 24 * 60 * 60 * 1000;
/** The signals that end a CLI run early; a download in flight removes its staging directory first. */
const INTERRUPTING_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Network bounds of setup-envtest. A connect, the response headers, or a gap
 * in the body longer than these fails the run instead of hanging it. The
 * body has no total bound (archives are ~100 MiB on slow links), only an
 * idle one.
 */
export interface EnvtestNetworkTimeouts {
  /** TCP (and TLS) connect. Default 30 s. */
  connectMs?: number;
  /** From request to response headers. Default 30 s. */
  headersMs?: number;
  /** The longest pause between two body chunks. Default 60 s. */
  idleMs?: number;
}

const DEFAULT_TIMEOUTS: Required<EnvtestNetworkTimeouts> = { connectMs: 30_000, headersMs: 30_000, idleMs: 60_000 };

/** Which envtest binaries to fetch, from where, and where to keep them. */
export interface SetupEnvtestOptions {
  /** `latest`, `1.36.3`, `1.36`, `1.36.x`, `~1.36.0`, `<1.37.0`; a trailing `!` checks the index even when a cached version matches. Default: `latest`. */
  version?: string;
  /** The envtest-releases.yaml index, e.g. a mirror. Default: DEFAULT_ENVTEST_INDEX_URL (controller-tools' published index). */
  indexUrl?: string;
  /** Where versions are kept, so a matching one is reused offline. Default: `$XDG_DATA_HOME/ts-operator-sdk/envtest`, else `~/.local/share/ts-operator-sdk/envtest`. */
  cacheDir?: string;
  /** Go-style OS name (`linux`, `darwin`, `windows`). Default: this machine's. */
  platform?: string;
  /** Go-style architecture (`amd64`, `arm64`, `ppc64le`, `s390x`). Default: this machine's. */
  arch?: string;
  /** Receives one line per step (resolving, downloading, the result). Default: nothing is logged. */
  log?: (line: string) => void;
  /** Bounds on each network read; defaults in {@link EnvtestNetworkTimeouts}. */
  timeouts?: EnvtestNetworkTimeouts;
}

interface IndexedArchive {
  version: string;
  name: string;
  hash: string;
  url: string;
}

/** The cache directory used when none is given. */
export function defaultEnvtestCacheDir(): string {
  const dataHome = process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(dataHome, 'ts-operator-sdk', 'envtest');
}

/**
 * The newest complete envtest version already in `cacheDir` for this
 * machine, found without network access; undefined when there is none.
 */
export async function cachedEnvtestAssets(cacheDir: string = defaultEnvtestCacheDir()): Promise<string | undefined> {
  const { os, arch } = goPlatform();
  const storeDir = join(resolve(cacheDir), 'k8s');
  const newest = semver.rsort(await cachedVersions(storeDir, os, arch))[0];
  return newest === undefined ? undefined : join(storeDir, `${newest}-${os}-${arch}`);
}

/** Maps Node's `process.platform` / `process.arch` to the Go names archives use. */
export function goPlatform(
  nodePlatform: string = process.platform,
  nodeArch: string = process.arch,
): { os: string; arch: string } {
  const os = nodePlatform === 'win32' ? 'windows' : nodePlatform;
  const arch =
    ({ x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[nodeArch] ??
    nodeArch;
  return { os, arch };
}

/**
 * Makes envtest binaries available and returns their directory (use it as
 * KUBEBUILDER_ASSETS). A cached version that matches is used without
 * network access; otherwise the newest matching release in the index is
 * downloaded, its sha512 verified, and unpacked into
 * `<cacheDir>/k8s/<version>-<os>-<arch>/`. Failures leave no partial directory.
 */
export async function setupEnvtestAssets(options: SetupEnvtestOptions = {}): Promise<string> {
  const log = options.log ?? (() => undefined);
  const selector = parseSelector(options.version ?? 'latest');
  const defaults = goPlatform();
  const os = options.platform ?? defaults.os;
  const arch = options.arch ?? defaults.arch;
  const indexUrl = options.indexUrl ?? DEFAULT_ENVTEST_INDEX_URL;
  const storeDir = join(resolve(options.cacheDir ?? defaultEnvtestCacheDir()), 'k8s');
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const dispatcher = new Agent({
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.idleMs,
  });
  try {
    return await setupWith(options, { selector, os, arch, indexUrl, storeDir, timeouts, dispatcher, log });
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}

interface Resolved {
  selector: ReturnType<typeof parseSelector>;
  os: string;
  arch: string;
  indexUrl: string;
  storeDir: string;
  timeouts: Required<EnvtestNetworkTimeouts>;
  dispatcher: Dispatcher;
  log: (line: string) => void;
}

async function setupWith(
  options: SetupEnvtestOptions,
  { selector, os, arch, indexUrl, storeDir, timeouts, dispatcher, log }: Resolved,
): Promise<string> {
  const cached = await cachedVersions(storeDir, os, arch);
  const cachedMatch = semver.maxSatisfying(cached, selector.range);
  if (cachedMatch && !selector.checkIndex) {
    const dir = join(storeDir, `${cachedMatch}-${os}-${arch}`);
    log(`using cached envtest ${cachedMatch} (${os}/${arch}) in ${dir}`);
    return dir;
  }

  log(`resolving envtest ${selector.text} for ${os}/${arch} from ${indexUrl}`);
  let archives: IndexedArchive[];
  try {
    archives = await readIndex(indexUrl, os, arch, dispatcher);
  } catch (err) {
    if (!cachedMatch) throw err;
    // "!" asked for a fresher check, but a cached match still beats failing offline.
    log(`${(err as Error).message}; using cached envtest ${cachedMatch} instead`);
    return join(storeDir, `${cachedMatch}-${os}-${arch}`);
  }
  const available = archives.map((archive) => archive.version);
  const chosen = semver.maxSatisfying(available, selector.range);
  if (!chosen) {
    const listed =
      semver
        .rsort([...available])
        .slice(0, 8)
        .join(', ') || 'none';
    throw new UsageError(
      `no release matches version "${selector.text}" for ${os}/${arch} in ${indexUrl} (newest available: ${listed})`,
      'pick one of those',
      { component: 'envtest' },
    );
  }
  const targetDir = join(storeDir, `${chosen}-${os}-${arch}`);
  if (cached.includes(chosen)) {
    log(`using cached envtest ${chosen} (${os}/${arch}) in ${targetDir}`);
    return targetDir;
  }
  const archive = archives.find((candidate) => candidate.version === chosen) as IndexedArchive;
  await mkdir(storeDir, { recursive: true });
  await removeAbandonedStaging(storeDir, log);
  const staging = await mkdtemp(join(storeDir, `.download-${chosen}-${process.pid}-`));
  // A signal would end the process without running `finally`; remove the
  // partial download first, then let the signal do what it would have done.
  const onSignal = (signal: NodeJS.Signals): void => {
    rmSync(staging, { recursive: true, force: true });
    for (const name of INTERRUPTING_SIGNALS) process.removeListener(name, onSignal);
    process.kill(process.pid, signal);
  };
  for (const name of INTERRUPTING_SIGNALS) process.once(name, onSignal);
  try {
    const archivePath = join(staging, archive.name);
    log(`downloading ${archive.url}`);
    await download(archive, archivePath, dispatcher, timeouts);
    const binDir = join(staging, 'bin');
    await mkdir(binDir);
    await unpack(archivePath, binDir, archive.name);
    try {
      await rename(binDir, targetDir);
    } catch (err) {
      // Another process finished the same download first; its copy is as good as ours.
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !isComplete(targetDir)) throw err;
    }
  } finally {
    for (const name of INTERRUPTING_SIGNALS) process.removeListener(name, onSignal);
    await rm(staging, { recursive: true, force: true });
  }
  log(`envtest ${chosen} (${os}/${arch}) installed in ${targetDir}`);
  return targetDir;
}

function parseSelector(text: string): { text: string; range: string; checkIndex: boolean } {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'latest' || trimmed === 'latest!')
    return { text: 'latest', range: '*', checkIndex: trimmed.endsWith('!') };
  const match = SELECTOR.exec(trimmed);
  if (!match) {
    throw new UsageError(
      `cannot read version "${text}"`,
      'use latest, X.Y.Z, X.Y, X.Y.x, ~X.Y.Z, <X.Y.Z or <=X.Y.Z (optionally ending in !)',
      { component: 'envtest' },
    );
  }
  const [, operator, major, minor, patch, bang] = match;
  const wildcard = patch === undefined || patch === 'x' || patch === '*';
  const base = `${major}.${minor}.${wildcard ? (operator ? '0' : 'x') : patch}`;
  const range = operator === '~' ? `~${base}` : operator ? `${operator}${base}` : base;
  return { text: trimmed, range, checkIndex: bang === '!' };
}

async function cachedVersions(storeDir: string, os: string, arch: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(storeDir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const match = CACHED_DIR_NAME.exec(name);
    return match && match[2] === os && match[3] === arch && isComplete(join(storeDir, name))
      ? [match[1] as string]
      : [];
  });
}

/**
 * Removes staging directories a killed run left (kill -9 skips every
 * cleanup): those whose process is gone, or is this one (a reused pid), and
 * pid-less ones older than a day. A live run's directory is left alone.
 */
async function removeAbandonedStaging(storeDir: string, log: (line: string) => void): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(storeDir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (!name.startsWith('.download-')) continue;
    const path = join(storeDir, name);
    const pid = STAGING_DIR_NAME.exec(name)?.[1];
    const abandoned =
      pid !== undefined
        ? !processIsAlive(Number(pid))
        : Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now()) > STALE_STAGING_MS;
    if (!abandoned) continue;
    log(`removing ${name}, left by an interrupted download`);
    await rm(path, { recursive: true, force: true });
  }
}

function processIsAlive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isComplete(dir: string): boolean {
  return REQUIRED_BINARIES.every((binary) => existsSync(join(dir, binary)) || existsSync(join(dir, `${binary}.exe`)));
}

async function readIndex(
  indexUrl: string,
  os: string,
  arch: string,
  dispatcher: Dispatcher,
): Promise<IndexedArchive[]> {
  let text: string;
  try {
    const response = await fetch(indexUrl, { signal: AbortSignal.timeout(INDEX_TIMEOUT_MS), dispatcher });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    text = await boundedText(response.body, MAX_INDEX_BYTES);
  } catch (err) {
    throw new UsageError(
      `cannot fetch the envtest index ${indexUrl}: ${describe(err)}`,
      'check the network, or pass --index-url / set KUBEBUILDER_ASSETS to binaries you already have',
      { component: 'envtest', cause: err },
    );
  }
  let index: { releases?: Record<string, Record<string, { hash?: string; selfLink?: string }>> };
  try {
    index = parseYaml(text) as typeof index;
  } catch (err) {
    throw new UsageError(`the index ${indexUrl} is not valid YAML (${describe(err)})`, 'check --index-url', {
      component: 'envtest',
      cause: err,
    });
  }
  if (!index || typeof index !== 'object' || !index.releases || typeof index.releases !== 'object') {
    throw new UsageError(
      `the index ${indexUrl} has no "releases" map`,
      'check --index-url points at an envtest-releases.yaml',
      { component: 'envtest' },
    );
  }
  const archives: IndexedArchive[] = [];
  for (const release of Object.values(index.releases)) {
    for (const [name, entry] of Object.entries(release ?? {})) {
      const match = ARCHIVE_NAME.exec(name);
      if (!match || match[2] !== os || match[3] !== arch || !entry?.hash || !entry.selfLink) continue;
      archives.push({
        version: match[1] as string,
        name,
        hash: entry.hash.toLowerCase(),
        url: new URL(entry.selfLink, indexUrl).toString(),
      });
    }
  }
  return archives;
}

/** The body as UTF-8, refusing more than `limit` bytes. */
async function boundedText(body: AsyncIterable<Uint8Array> | null, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    size += chunk.length;
    if (size > limit) throw new Error(`the response is larger than ${limit / (1024 * 1024)} MiB`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Streams the archive to disk while hashing it, then compares with the index's sha512. */
async function download(
  archive: IndexedArchive,
  destination: string,
  dispatcher: Dispatcher,
  timeouts: Required<EnvtestNetworkTimeouts>,
): Promise<void> {
  const hash = createHash('sha512');
  const file = await open(destination, 'w');
  try {
    let response;
    try {
      response = await fetch(archive.url, { dispatcher });
    } catch (err) {
      throw new UsageError(
        `cannot download ${archive.url}: ${describe(err)}`,
        "check the network or the index's selfLink",
        { component: 'envtest', cause: err },
      );
    }
    if (response.status !== 200 || !response.body) {
      throw new UsageError(`cannot download ${archive.url}: HTTP ${response.status}`, "check the index's selfLink", {
        component: 'envtest',
      });
    }
    try {
      const body: AsyncIterable<Uint8Array> = response.body;
      for await (const chunk of body) {
        hash.update(chunk);
        await file.write(chunk);
      }
    } catch (err) {
      // undici reports the idle timeout as a "terminated" error caused by BodyTimeoutError.
      const stalled = [err, (err as { cause?: unknown }).cause].some(
        (e) => (e as { code?: string } | undefined)?.code === 'UND_ERR_BODY_TIMEOUT',
      );
      const problem = stalled
        ? `the download of ${archive.url} stalled (no data for ${timeouts.idleMs / 1000} s)`
        : `the download of ${archive.url} broke off: ${describe(err)}`;
      throw new UsageError(problem, 'check the network and run it again; nothing was installed', {
        component: 'envtest',
        cause: err,
      });
    }
  } finally {
    await file.close();
  }
  const actual = hash.digest('hex');
  if (actual !== archive.hash) {
    throw new UsageError(
      `checksum mismatch for ${archive.name}: the index says sha512 ${archive.hash.slice(0, 16)}…, the download is ${actual.slice(0, 16)}…`,
      'the download is corrupt or the index is wrong; retry, or check --index-url',
      { component: 'envtest' },
    );
  }
}

async function unpack(archivePath: string, binDir: string, archiveName: string): Promise<void> {
  const extracted: string[] = [];
  try {
    await extractTar(createReadStream(archivePath).pipe(createGunzip()), (entry) => {
      if (!entry.path.startsWith(ARCHIVE_BINARY_DIR)) return undefined;
      // basename() keeps a crafted "../" entry inside binDir.
      const name = basename(entry.path);
      if (!name || entry.path.slice(ARCHIVE_BINARY_DIR.length).includes('/')) return undefined;
      extracted.push(name);
      return join(binDir, name);
    });
  } catch (err) {
    throw new UsageError(`cannot unpack ${archiveName}`, describe(err), { component: 'envtest', cause: err });
  }
  for (const name of extracted) await chmod(join(binDir, name), 0o755);
  const missing = REQUIRED_BINARIES.filter(
    (binary) => !extracted.includes(binary) && !extracted.includes(`${binary}.exe`),
  );
  if (missing.length > 0) {
    throw new UsageError(
      `${archiveName} lacks ${missing.join(' and ')} under ${ARCHIVE_BINARY_DIR}`,
      'the index points at an archive that is not an envtest release',
      { component: 'envtest' },
    );
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

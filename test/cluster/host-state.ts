import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
  renameSync,
  lstatSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * What the one-node test cluster changes on the host, recorded before it
 * starts and put back when it stops, even after a crash of the test process.
 *
 * Several clusters may run at once (one per test process, several helpers on
 * one machine), and kubelet changes process-wide kernel settings. So the host
 * settings are recorded once, by the first cluster to start, in `host.json`,
 * and restored only when the last live cluster is gone. Each cluster has its
 * own state file naming what it created (network namespace, cgroup root,
 * work directory) and the process that owns it; a state file whose owner is
 * dead is a leftover, cleaned up by the next start or by `cleanup.js`.
 */

/** Kernel settings kubelet, kube-proxy, containerd or the CNI plugins may change, read in the host's namespaces. */
export const WATCHED_SYSCTLS: readonly string[] = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.forwarding',
  'net.ipv4.conf.all.route_localnet',
  'net.bridge.bridge-nf-call-iptables',
  'net.bridge.bridge-nf-call-ip6tables',
  'net.netfilter.nf_conntrack_max',
  'net.nf_conntrack_max',
  'net.netfilter.nf_conntrack_tcp_timeout_established',
  'net.netfilter.nf_conntrack_tcp_timeout_close_wait',
  'net.netfilter.nf_conntrack_udp_timeout',
  'net.netfilter.nf_conntrack_udp_timeout_stream',
  'fs.inotify.max_user_watches',
  'fs.inotify.max_user_instances',
  'net.core.somaxconn',
];

/**
 * Well-known host paths a component creates when a setting is missed. The
 * harness points every component at its work directory; any of these that
 * did not exist before the first cluster started is removed after the last.
 */
export const WATCHED_PATHS: readonly string[] = [
  '/run/netns',
  '/var/lib/cni',
  '/etc/cni',
  '/opt/cni',
  '/run/containerd',
  '/var/lib/containerd',
  '/opt/containerd',
  '/etc/containerd',
  '/var/lib/kubelet',
  '/var/log/pods',
  '/var/log/containers',
  '/etc/kubernetes',
  '/run/kubernetes',
  '/var/run/kubernetes',
  '/var/lib/kube-proxy',
  '/run/runc',
  '/var/run/nri',
  '/run/nri',
  '/etc/cdi',
  '/var/run/cdi',
  '/var/lib/etcd',
  '/var/lib/registry',
  '/etc/nri',
];

/** The host as it was before the first of the currently live clusters started. */
export interface HostRecord {
  recordedAt: string;
  /** sysctl name → value; absent names did not exist. */
  sysctls: Record<string, string>;
  /** path → whether it existed. */
  paths: Record<string, boolean>;
  /** Whether /run/netns was a mount point (iproute2 makes it one on the first `ip netns add`). */
  runNetnsMounted: boolean;
}

/** What one cluster created, for its own cleanup and for a later run's leftover cleanup. */
export interface ClusterState {
  id: string;
  ownerPid: number;
  /** Field 22 of /proc/<pid>/stat, so a recycled pid is not mistaken for the owner. */
  ownerStartTime: string;
  netns: string;
  workDir: string;
  /** Cgroup path (relative to each v1 hierarchy) that holds kubelet's kubepods tree. */
  cgroupRoot: string;
  /** CNI network name: libcni keeps per-attachment cache files named after it in /var/lib/cni. */
  cniNetwork: string;
  /** Processes spawned by the harness (also found by work dir, netns and cgroup). */
  pids: number[];
}

/** Where state lives: outside the repo and outside the work dir, beside the other caches. */
export function stateDir(): string {
  const cacheRoot =
    process.env.TS_OPERATOR_SDK_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'ts-operator-sdk');
  return join(cacheRoot, 'cluster-state');
}

const hostRecordPath = (): string => join(stateDir(), 'host.json');
const clusterStatePath = (id: string): string => join(stateDir(), `cluster-${id}.json`);

function sysctlPath(name: string): string {
  return join('/proc/sys', ...name.split('.'));
}

/** Reads every watched sysctl that exists, as the host's namespaces see it. */
export function readSysctls(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of WATCHED_SYSCTLS) {
    try {
      values[name] = readFileSync(sysctlPath(name), 'utf8').trim();
    } catch {
      // Absent on this kernel (or its module is not loaded): nothing to restore.
    }
  }
  return values;
}

/** Existence of every watched path. */
export function readWatchedPaths(): Record<string, boolean> {
  return Object.fromEntries(WATCHED_PATHS.map((path) => [path, pathExists(path)]));
}

function pathExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Mount points from /proc/self/mountinfo, with octal escapes (`\040` for a space) decoded. */
export function mountPoints(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) =>
      (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_m, octal: string) =>
        String.fromCharCode(parseInt(octal, 8)),
      ),
    );
}

export function isMountPoint(path: string): boolean {
  return mountPoints().includes(path);
}

/** Start time of a process (field 22 of its stat), or undefined when it is gone. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ownerAlive(state: ClusterState): boolean {
  return state.ownerPid === process.pid || processStartTime(state.ownerPid) === state.ownerStartTime;
}

/** Sleeps synchronously: cleanup runs from `exit` handlers too, where nothing asynchronous runs. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn` holding the state directory's lock (an atomic mkdir). A lock
 * older than a minute belongs to a process that died holding it.
 */
export function withStateLock<T>(fn: () => T): T {
  mkdirSync(stateDir(), { recursive: true });
  const lock = join(stateDir(), 'lock');
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // Released meanwhile.
      }
      if (Date.now() > deadline)
        throw new Error(`test cluster: the state lock ${lock} stays taken; if no cluster test runs, remove it`, {
          cause: err,
        });
      sleepSync(50);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The recorded original host settings, if a cluster is (or was, before a crash) running. */
export function readHostRecord(): HostRecord | undefined {
  return readJson<HostRecord>(hostRecordPath());
}

export function listClusterStates(): ClusterState[] {
  let names: string[];
  try {
    names = readdirSync(stateDir());
  } catch {
    return [];
  }
  return names
    .filter((name) => /^cluster-.*\.json$/.test(name))
    .map((name) => readJson<ClusterState>(join(stateDir(), name)))
    .filter((state): state is ClusterState => state !== undefined);
}

/**
 * Registers a new cluster: records the host first if no live cluster did.
 * Called before anything is changed, so a crash right after still restores.
 */
export function registerCluster(state: ClusterState): void {
  withStateLock(() => {
    if (readHostRecord() === undefined) {
      const record: HostRecord = {
        recordedAt: new Date().toISOString(),
        sysctls: readSysctls(),
        paths: readWatchedPaths(),
        runNetnsMounted: isMountPoint('/run/netns'),
      };
      writeJson(hostRecordPath(), record);
    }
    writeJson(clusterStatePath(state.id), state);
  });
}

/** Rewrites a cluster's state (e.g. with new pids). */
export function updateClusterState(state: ClusterState): void {
  withStateLock(() => writeJson(clusterStatePath(state.id), state));
}

/** What a cleanup could not undo, for the caller to report. */
export type CleanupProblems = string[];

/**
 * Tears down one cluster synchronously: kills its processes, unmounts, deletes
 * its network namespace, cgroups and files, forgets its state, and restores
 * the host when no other live cluster remains.
 */
export function cleanupClusterSync(state: ClusterState): CleanupProblems {
  const problems: CleanupProblems = [];
  killClusterProcesses(state, problems);
  unmountUnder(state.workDir, problems);
  if (existsSync(`/run/netns/${state.netns}`)) {
    const result = spawnSync('ip', ['netns', 'delete', state.netns], { encoding: 'utf8' });
    if (result.status !== 0) problems.push(`ip netns delete ${state.netns}: ${result.stderr.trim()}`);
  }
  removeCgroups(state.cgroupRoot, problems);
  removeCniCache(state.cniNetwork);
  removeContainerLogLinks(state.workDir);
  if (mountPoints().some((mount) => mount.startsWith(`${state.workDir}/`))) {
    problems.push(`mounts remain under ${state.workDir}; not deleting it`);
  } else {
    rmSync(state.workDir, { recursive: true, force: true, maxRetries: 3 });
  }
  // A cleanup that could not finish keeps its state file: the next start (or cleanup.js) tries again,
  // and the host settings stay recorded until it succeeds.
  if (problems.length > 0) return problems;
  withStateLock(() => {
    rmSync(clusterStatePath(state.id), { force: true });
    if (listClusterStates().length === 0) restoreHost(problems);
  });
  return problems;
}

/**
 * Cleans up every cluster whose owning process is gone (a test killed with
 * SIGKILL, a machine that lost power), then restores the host if none is left.
 */
export function cleanupLeftovers(): CleanupProblems {
  const problems: CleanupProblems = [];
  for (const state of listClusterStates()) {
    if (!ownerAlive(state)) problems.push(...cleanupClusterSync(state));
  }
  withStateLock(() => {
    if (listClusterStates().length === 0 && readHostRecord() !== undefined) restoreHost(problems);
  });
  return problems;
}

/** Puts back what `registerCluster` recorded; called with the lock held, when no cluster is left. */
function restoreHost(problems: CleanupProblems): void {
  const record = readHostRecord();
  if (record === undefined) return;
  const now = readSysctls();
  for (const [name, value] of Object.entries(record.sysctls)) {
    if (now[name] === value) continue;
    try {
      writeFileSync(sysctlPath(name), value);
    } catch (err) {
      problems.push(`cannot restore ${name}=${value}: ${(err as Error).message}`);
    }
  }
  for (const [path, existed] of Object.entries(record.paths)) {
    if (existed || !pathExists(path)) continue;
    if (path === '/run/netns') continue; // Below, after its mount.
    unmountUnder(path, problems);
    rmSync(path, { recursive: true, force: true });
  }
  if (!record.runNetnsMounted && isMountPoint('/run/netns') && readdirSync('/run/netns').length === 0) {
    const result = spawnSync('umount', ['/run/netns'], { encoding: 'utf8' });
    if (result.status !== 0) problems.push(`umount /run/netns: ${result.stderr.trim()}`);
  }
  if (record.paths['/run/netns'] === false && pathExists('/run/netns')) {
    try {
      if (readdirSync('/run/netns').length === 0 && !isMountPoint('/run/netns')) rmdirSync('/run/netns');
    } catch (err) {
      problems.push(`cannot remove /run/netns: ${(err as Error).message}`);
    }
  }
  rmSync(hostRecordPath(), { force: true });
}

function netnsInode(netns: string): number | undefined {
  try {
    return statSync(`/run/netns/${netns}`).ino;
  } catch {
    return undefined;
  }
}

/**
 * Processes of this cluster: those spawned by the harness, any whose command
 * line names the work dir (components, containerd's shims, forwarders), any in
 * its network namespace, and any in its cgroup tree (the pods' containers).
 */
export function clusterProcesses(state: ClusterState): number[] {
  const inode = netnsInode(state.netns);
  const found = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline === '') continue; // Kernel thread or zombie.
      if (cmdline.includes(state.workDir)) found.add(pid);
      else if (inode !== undefined && readlinkSync(`/proc/${pid}/ns/net`) === `net:[${inode}]`) found.add(pid);
      else if (
        readFileSync(`/proc/${pid}/cgroup`, 'utf8')
          .split('\n')
          .some(
            (line) =>
              (line.split(':')[2] ?? '').startsWith(`${state.cgroupRoot}/`) || line.split(':')[2] === state.cgroupRoot,
          )
      )
        found.add(pid);
    } catch {
      // Exited while we looked.
    }
  }
  return [...found];
}

function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  }
}

/** SIGTERM, a grace period, then SIGKILL until nothing of the cluster runs. */
function killClusterProcesses(state: ClusterState, problems: CleanupProblems): void {
  const listed = (): number[] =>
    [
      ...new Set([
        ...state.pids.filter((pid) => processStartTime(pid) !== undefined && !isZombie(pid)),
        ...clusterProcesses(state),
      ]),
    ].filter((pid) => !isZombie(pid));
  let alive = listed();
  signal(alive, 'SIGTERM');
  const graceEnd = Date.now() + 5000;
  while (alive.length > 0 && Date.now() < graceEnd) {
    sleepSync(100);
    alive = listed();
  }
  const killEnd = Date.now() + 15_000;
  while (alive.length > 0 && Date.now() < killEnd) {
    signal(alive, 'SIGKILL');
    sleepSync(100);
    alive = listed();
  }
  if (alive.length > 0) problems.push(`processes still alive after SIGKILL: ${alive.join(', ')}`);
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Unmounts every mount at or below `dir`, deepest first, lazily if busy. */
export function unmountUnder(dir: string, problems: CleanupProblems): void {
  for (let pass = 0; pass < 5; pass++) {
    const mounts = mountPoints()
      .filter((mount) => mount === dir || mount.startsWith(`${dir}/`))
      .sort((a, b) => b.length - a.length);
    if (mounts.length === 0) return;
    for (const mount of mounts) {
      const result = spawnSync('umount', [mount], { encoding: 'utf8' });
      if (result.status !== 0) spawnSync('umount', ['-l', mount]);
    }
  }
  const left = mountPoints().filter((mount) => mount === dir || mount.startsWith(`${dir}/`));
  if (left.length > 0) problems.push(`cannot unmount ${left.join(', ')}`);
}

/** The v1 hierarchies (and the v2 unified one, if any) under /sys/fs/cgroup, without the co-mount symlinks. */
export function cgroupHierarchies(): string[] {
  const base = '/sys/fs/cgroup';
  try {
    return readdirSync(base)
      .map((name) => join(base, name))
      .filter((path) => !lstatSync(path).isSymbolicLink() && lstatSync(path).isDirectory());
  } catch {
    return [];
  }
}

/** Every directory of the cluster's cgroup tree, in every hierarchy. */
export function clusterCgroupDirs(cgroupRoot: string): string[] {
  const dirs: string[] = [];
  const walk = (dir: string): void => {
    dirs.push(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
  };
  for (const hierarchy of cgroupHierarchies()) {
    const root = join(hierarchy, cgroupRoot);
    if (existsSync(root)) walk(root);
  }
  return dirs;
}

function removeCgroups(cgroupRoot: string, problems: CleanupProblems): void {
  // Deepest first; a cgroup whose last task just died may be busy for a moment.
  const dirs = clusterCgroupDirs(cgroupRoot).sort((a, b) => b.length - a.length);
  for (const dir of dirs) {
    for (let attempt = 0; ; attempt++) {
      try {
        rmdirSync(dir);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        if (attempt >= 20) {
          problems.push(`cannot remove cgroup ${dir}: ${code}`);
          break;
        }
        sleepSync(100);
      }
    }
  }
}

/** libcni caches each attachment's result under /var/lib/cni/results as `<network>-<container>-<ifname>`. */
function removeCniCache(network: string): void {
  for (const dir of ['/var/lib/cni/results']) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) if (name.startsWith(`${network}-`)) rmSync(join(dir, name), { force: true });
  }
}

/** kubelet links every container's log into /var/log/containers (a fixed path) even with podLogsDir set elsewhere. */
function removeContainerLogLinks(workDir: string): void {
  const dir = '/var/log/containers';
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    try {
      if (readlinkSync(join(dir, name)).startsWith(`${workDir}/`)) rmSync(join(dir, name), { force: true });
    } catch {
      // Not a link, or gone.
    }
  }
}

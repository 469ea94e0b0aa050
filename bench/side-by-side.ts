/**
 * Side-by-side benchmark: our runtime against a Go controller-runtime operator
 * with the same reconcile (scripts/go/memcached-operator-go, built by
 * scripts/build-bench-peer.sh), on a fresh control plane per operator per run,
 * alternating ours and Go. Prints numbers, not a test: on a shared machine
 * only the ratios mean much.
 *
 * Each operator runs in its own process; CPU (utime+stime) and RSS (VmRSS,
 * VmHWM) come from /proc/<pid>. API requests per operator come from the API
 * server's audit log (level Metadata), told apart by user agent from the
 * loader's. The loader (this process) is the same for both.
 *
 * Both run as the scaffold deploys them: ours with the Node flags of the
 * scaffolded image (the ENTRYPOINT of templates/init/Dockerfile.hbs, passed as NODE_OPTIONS),
 * and, when this process may create memory cgroups (root, cgroup v1 or v2),
 * each operator in its own cgroup limited to the scaffold's memory limit, so
 * the table also shows that the burst succeeds inside it (and the cgroup's
 * peak, which counts page cache as a container limit does).
 *
 * Environment: BENCH_RUNS (alternating runs, default 3), BENCH_CRS (Memcacheds,
 * default 1000), BENCH_CACHED (extra ConfigMaps for the big-cache figures,
 * default 9000), BENCH_GO_OPERATOR (the Go binary; npm run bench:side-by-side sets it).
 * For measuring while tuning: BENCH_ONLY=ours|go (one side, no ceiling),
 * BENCH_NODE_OPTIONS (ours' Node flags instead of the scaffold's),
 * BENCH_NODE_ARGS (extra flags for ours, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`),
 * BENCH_MEMORY_LIMIT_MIB (the cgroup limit instead of the scaffold's; 0: no cgroup),
 * BENCH_LOG_DIR (keep every operator's whole log there, one file per start, e.g. to compare reconcile orders),
 * BENCH_CPU_TRACE=1 (per half second of the burst's first 10 s: CPU used by the operator, kube-apiserver,
 * etcd and this loader, and the operator's reconciles finished, to see who holds the two cores early).
 * BENCH_IDLE_ONLY=1 (`npm run bench:idle`): only idle RSS and start → synced, no burst and no
 * ceiling, in a few seconds per run; the Go peer only if it is already built (BENCH_GO_OPERATOR set).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Deployment } from '../src/runtime/index.js';
import { RestClient } from '../src/runtime/transport/index.js';
import { Environment } from '../src/runtime/envtest/index.js';
import { collectJsonLines } from '../test/e2e/child-logs.js';
import { eventually } from '../test/e2e/eventually.js';
import { Memcached, memcachedCRD } from '../test/e2e/fixtures/memcached.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const COUNT = Number(process.env.BENCH_CRS ?? 1000);
const EXTRA = Number(process.env.BENCH_CACHED ?? 9000);
const PARALLEL = 32;
const LOADER_AGENT = 'side-by-side-loader';
const IDLE_ONLY = process.env.BENCH_IDLE_ONLY === '1';
const CPU_TRACE = process.env.BENCH_CPU_TRACE === '1';
const goBinary = process.env.BENCH_GO_OPERATOR || undefined;
if (!goBinary && !IDLE_ONLY) {
  console.error(
    'side-by-side: BENCH_GO_OPERATOR is not set; run `npm run bench:side-by-side`, which builds the Go peer (scripts/build-bench-peer.sh)',
  );
  process.exit(1);
}
const managerScript = fileURLToPath(new URL('../test/e2e/fixtures/memcached-manager.js', import.meta.url));
const ONLY = (process.env.BENCH_ONLY as Operator | undefined) ?? (goBinary ? undefined : 'ours');

/**
 * The scaffolded manager's Node flags (the Dockerfile's ENTRYPOINT) and memory
 * limit (config/manager/manager.yaml), read from the templates so the bench
 * and the scaffold never drift.
 */
function scaffoldedManager(): { nodeOptions: string; memoryLimitMiB: number } {
  const template = (path: string): string =>
    readFileSync(fileURLToPath(new URL(`../../templates/init/${path}`, import.meta.url)), 'utf8');
  const entrypoint = /^ENTRYPOINT \[(.*)\]$/m.exec(template('Dockerfile.hbs'))?.[1];
  const limit = /limits:\s+cpu: \S+\s+memory: (\d+)Mi/.exec(template('config/manager/manager.yaml.hbs'))?.[1];
  if (entrypoint === undefined || limit === undefined)
    throw new Error(
      'side-by-side: cannot find the ENTRYPOINT in templates/init/Dockerfile.hbs or the memory limit in templates/init/config/manager/manager.yaml.hbs',
    );
  const flags = (JSON.parse(`[${entrypoint}]`) as string[]).filter((arg) => arg.startsWith('--'));
  return { nodeOptions: flags.join(' '), memoryLimitMiB: Number(limit) };
}
const scaffold = scaffoldedManager();
const NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? scaffold.nodeOptions;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const MEMORY_LIMIT_MIB = Number(process.env.BENCH_MEMORY_LIMIT_MIB ?? scaffold.memoryLimitMiB);
const LOG_DIR = process.env.BENCH_LOG_DIR;
let operatorStarts = 0;

/**
 * A memory cgroup limited to `limitMiB`, under this process's own (v1: the
 * memory hierarchy; v2: the unified one), or undefined when this process may
 * not create one. Swap is limited too, so going over the limit means the
 * OOM killer, as in a container.
 */
class MemoryCgroup {
  private constructor(
    readonly dir: string,
    private readonly v2: boolean,
  ) {}

  static create(name: string, limitMiB: number): MemoryCgroup | undefined {
    if (!(limitMiB > 0) || process.getuid?.() !== 0) return undefined;
    const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
    const v1 = own.find((line) => /^\d+:memory:/.test(line));
    const v2 = own.find((line) => line.startsWith('0::'));
    const dir = v1
      ? join('/sys/fs/cgroup/memory', v1.split(':')[2]!, name)
      : v2 && existsSync('/sys/fs/cgroup/cgroup.controllers')
        ? join('/sys/fs/cgroup', v2.slice(3), name)
        : undefined;
    if (!dir) return undefined;
    try {
      mkdirSync(dir);
      const bytes = String(limitMiB * 1024 * 1024);
      if (v1) {
        writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
        if (existsSync(join(dir, 'memory.memsw.limit_in_bytes')))
          writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), bytes);
      } else {
        writeFileSync(join(dir, 'memory.max'), bytes);
        writeFileSync(join(dir, 'memory.swap.max'), '0');
      }
      return new MemoryCgroup(dir, !v1);
    } catch (err) {
      console.error(`side-by-side: no memory cgroup (${(err as Error).message}); running without the limit`);
      return undefined;
    }
  }

  /** Peak memory charged to the cgroup (RSS and page cache), in MiB. */
  peakMiB(): number {
    const file = this.v2 ? 'memory.peak' : 'memory.max_usage_in_bytes';
    return existsSync(join(this.dir, file)) ? Number(readFileSync(join(this.dir, file), 'utf8')) / 1024 / 1024 : NaN;
  }

  /** Processes the OOM killer ended in this cgroup. */
  oomKills(): number {
    const text = readFileSync(join(this.dir, this.v2 ? 'memory.events' : 'memory.oom_control'), 'utf8');
    return Number(/oom_kill (\d+)/.exec(text)?.[1] ?? 0);
  }

  /** A command line that enters the cgroup and then runs `argv` in the same process. */
  wrap(argv: string[]): string[] {
    return ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', this.dir, ...argv];
  }

  remove(): void {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        rmdirSync(this.dir);
        return;
      } catch {
        // The last process may still be leaving it.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      }
    }
  }
}
const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

type Operator = 'ours' | 'go';
/** One operator's figures from one run; seconds, MiB, or a count. */
type Figures = Record<string, number>;

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ", field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** A VmRSS / VmHWM figure of a process, in MiB. */
function memoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since: number): number => (performance.now() - since) / 1000;

/** Creates `count` objects, `parallel` at a time, as bench/runtime.ts does. */
async function createAll<T extends object>(
  api: Client,
  count: number,
  make: (i: number) => T,
  parallel = PARALLEL,
): Promise<T[]> {
  const created: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        created[i] = await api.create(make(i) as never);
      }
    }),
  );
  return created;
}

const memcachedNamed =
  (namespace: string) =>
  (i: number): Memcached => ({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name: `m${i}`, namespace },
    spec: { size: 1 + (i % 3) },
  });

/**
 * One Memcached created and deleted before any operator starts. A kube-apiserver
 * a few seconds old holds its first custom-resource creates for about 2 s while
 * it finishes starting: in the audit log, the loader's first 32 creates took
 * 2.0-2.1 s each whenever the burst began 3.1-3.3 s after the API server's first
 * request, and at most 0.14 s when it began 4.1 s after. Ours syncs its caches
 * about 1.2 s sooner than the Go peer, so without this its bursts (and its first
 * Deployment) met that wait in about half the runs and Go's never did. An
 * operator in a real cluster meets a long-running API server.
 */
async function warmUp(api: Client): Promise<void> {
  const memcached = await api.create({
    ...memcachedNamed('default')(0),
    metadata: { name: 'warm-up', namespace: 'default' },
  });
  await api.delete(memcached);
}

/** A fresh control plane whose API server writes an audit log at level Metadata, warmed up, and the loader's clients for it. */
async function freshControlPlane(): Promise<{
  env: Environment;
  auditLog: string;
  dir: string;
  rest: RestClient;
  api: Client;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'side-by-side-'));
  const policy = join(dir, 'audit-policy.yaml');
  const auditLog = join(dir, 'audit.log');
  // Metadata for every request; only the final stage of each (watches: when they start).
  writeFileSync(
    policy,
    'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: ["RequestReceived"]\nrules:\n- level: Metadata\n',
  );
  const env = new Environment({
    crds: [memcachedCRD],
    apiServerExtraArgs: {
      'audit-policy-file': policy,
      'audit-log-path': auditLog,
      'audit-log-format': 'json',
      'audit-log-maxsize': '0',
    },
  });
  await env.start();
  const rest = new RestClient(env.kubeConfig, LOADER_AGENT);
  const api = new Client({ rest });
  try {
    await warmUp(api);
  } catch (err) {
    await env.stop();
    throw err;
  }
  return { env, auditLog, dir, rest, api };
}

/**
 * Requests by the operator in the audit log after byte `from` (where it stood when the
 * operator started, so envtest's own CRD install is left out): the admin user, any
 * agent but the loader's. Returns all requests and the writes among them.
 */
function operatorRequests(auditLog: string, from: number): { all: number; writes: number } {
  let all = 0;
  let writes = 0;
  for (const line of readFileSync(auditLog).subarray(from).toString('utf8').split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line) as { stage: string; verb: string; userAgent?: string; user?: { username?: string } };
    if (event.user?.username !== 'default' || event.userAgent === LOADER_AGENT) continue;
    // A watch is counted once, when it starts; every other request when it completes.
    if (event.verb === 'watch' ? event.stage !== 'ResponseStarted' : event.stage !== 'ResponseComplete') continue;
    all++;
    if (['create', 'update', 'patch', 'delete'].includes(event.verb)) writes++;
  }
  return { all, writes };
}

/** An operator process and the log lines the benchmark reads from it. */
interface Running {
  child: ChildProcess;
  pid: number;
  startedAt: number;
  lines: Array<Record<string, unknown>>;
  /** Reconciles finished so far ("test: reconcile finished" lines). */
  reconciles: () => number;
}

function startOperator(which: Operator, kubeconfig: string, cgroup: MemoryCgroup | undefined): Running {
  const startedAt = performance.now();
  const argv = which === 'ours' ? [process.execPath, ...NODE_ARGS, managerScript] : [goBinary!, '--watch-configmaps'];
  const [command, ...args] = cgroup ? cgroup.wrap(argv) : argv;
  const env =
    which === 'ours'
      ? { ...process.env, KUBECONFIG: kubeconfig, CACHE_CONFIGMAPS: 'true', NODE_OPTIONS }
      : { ...process.env, KUBECONFIG: kubeconfig };
  const child = spawn(command!, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (LOG_DIR) {
    mkdirSync(LOG_DIR, { recursive: true });
    child.stderr.pipe(createWriteStream(join(LOG_DIR, `${++operatorStarts}-${which}.log`)));
  }
  // Every line is read (both write all of them); only the few the benchmark uses are kept.
  let reconciles = 0;
  const lines = collectJsonLines(child.stderr, (line) => {
    const finished = line.includes('"test: reconcile finished"');
    if (finished) reconciles++;
    return line.includes('"Starting workers"') || finished;
  });
  return { child, pid: child.pid!, startedAt, lines, reconciles: () => reconciles };
}

async function stopOperator(running: Running): Promise<void> {
  if (running.child.exitCode !== null) return;
  running.child.kill('SIGTERM');
  await once(running.child, 'exit');
}

/**
 * Samples, every half second for the burst's first 10 s, the CPU seconds each
 * process used in that half second; returns a function that stops and prints it.
 */
function cpuTrace(running: Running, env: Environment): () => string {
  const { apiServer, etcd } = env.pids;
  const loaderCpu = (): number => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  };
  const sample = () => ({
    operator: cpuSeconds(running.pid),
    apiServer: cpuSeconds(apiServer!),
    etcd: cpuSeconds(etcd!),
    loader: loaderCpu(),
    reconciles: running.reconciles(),
  });
  const rows: string[] = ['   t  operator  apiserver  etcd  loader  reconciles'];
  let last = sample();
  let t = 0;
  const timer = setInterval(() => {
    const now = sample();
    t += 0.5;
    rows.push(
      `${t.toFixed(1).padStart(4)}  ${(now.operator - last.operator).toFixed(2).padStart(8)}  ${(now.apiServer - last.apiServer).toFixed(2).padStart(9)}  ${(now.etcd - last.etcd).toFixed(2).padStart(4)}  ${(now.loader - last.loader).toFixed(2).padStart(6)}  ${String(now.reconciles).padStart(10)}`,
    );
    last = now;
    if (t >= 10) clearInterval(timer);
  }, 500);
  return () => {
    clearInterval(timer);
    return rows.join('\n');
  };
}

/** Waits for "Starting workers", the line both write once their caches are synced; returns seconds and CPU used. */
async function cachesSynced(running: Running): Promise<{ s: number; cpu: number }> {
  await eventually(
    'the operator to sync its caches',
    () => running.lines.some((line) => line.msg === 'Starting workers'),
    120_000,
    10,
  );
  return { s: seconds(running.startedAt), cpu: cpuSeconds(running.pid) };
}

/** One fresh control plane, one operator: every figure of the table but the ceiling. */
async function measure(which: Operator): Promise<Figures> {
  const { env, auditLog, dir, rest, api } = await freshControlPlane();
  const figures: Figures = {};
  let running: Running | undefined;
  const cgroup = MemoryCgroup.create(`side-by-side-${process.pid}-${which}`, MEMORY_LIMIT_MIB);
  try {
    const kubeconfig = env.kubeConfigPath();
    const auditFrom = statSync(auditLog).size;
    running = startOperator(which, kubeconfig, cgroup);
    const synced = await cachesSynced(running);
    figures.syncS = synced.s;
    figures.syncCpuS = synced.cpu;
    await sleep(1000);
    figures.idleRssMiB = memoryMiB(running.pid, 'VmRSS');
    if (IDLE_ONLY) return figures;

    // The burst: COUNT Memcacheds at once, until every Deployment and status is written.
    const cpuBefore = cpuSeconds(running.pid);
    let peakRss = 0;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, memoryMiB(running!.pid, 'VmRSS'));
    }, 100);
    const started = performance.now();
    const trace = CPU_TRACE ? cpuTrace(running, env) : undefined;
    let firstDeploymentS = NaN;
    const firstDeployment = (async () => {
      while (Number.isNaN(firstDeploymentS)) {
        const page = await rest.request<{ items?: unknown[] }>('GET', '/apis/apps/v1/namespaces/default/deployments', {
          query: { limit: 1 },
        });
        if (page.items?.length) firstDeploymentS = seconds(started);
        else await sleep(100);
      }
    })();
    await createAll(api, COUNT, memcachedNamed('default'));
    figures.createdS = seconds(started); // when the loader's last create returned (per-run line only)
    // An operator killed mid-burst (the OOM killer, in its cgroup) fails the run at once.
    const burstRunner = running;
    const died = new Promise<never>((_, reject) =>
      burstRunner.child.once('exit', (code, signal) =>
        reject(
          new Error(
            `${which} exited during the burst (${signal ?? code}; OOM kills in its cgroup: ${cgroup?.oomKills() ?? 'no cgroup'})`,
          ),
        ),
      ),
    );
    died.catch(() => undefined);
    await Promise.race([
      died,
      eventually(
        'every Deployment and status',
        async () => {
          const [deployments, memcacheds] = await Promise.all([
            api.list(Deployment, { namespace: 'default' }),
            api.list(Memcached, { namespace: 'default' }),
          ]);
          return (
            deployments.length === COUNT &&
            memcacheds.length === COUNT &&
            memcacheds.every((m) => m.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'))
          );
        },
        1_800_000,
        250,
      ),
    ]);
    figures.burstS = seconds(started);
    await firstDeployment;
    figures.firstDeploymentS = firstDeploymentS;
    if (trace)
      console.error(
        `${which} CPU trace (first Deployment ${firstDeploymentS.toFixed(1)} s, creates done ${figures.createdS.toFixed(1)} s):\n${trace()}`,
      );
    figures.burstCpuS = cpuSeconds(running.pid) - cpuBefore;
    clearInterval(sampler);
    figures.peakRssMiB = Math.max(peakRss, memoryMiB(running.pid, 'VmHWM'));
    if (cgroup) {
      figures.cgroupPeakMiB = cgroup.peakMiB();
      figures.oomKills = cgroup.oomKills();
    }
    await sleep(2000); // let the watch events of the last writes reach the audit log's count
    const burstRequests = operatorRequests(auditLog, auditFrom);
    figures.requestsPerCR = burstRequests.all / COUNT;
    figures.writesPerCR = burstRequests.writes / COUNT;

    // A big cache: EXTRA ConfigMaps more, which both cache.
    await createAll(api, EXTRA, (i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `c${i}`, namespace: 'default' },
      data: { index: String(i), payload: 'x'.repeat(200) },
    }));
    await sleep(5000); // both see the last ConfigMap within a second; the rest lets memory settle
    figures.cachedRssMiB = memoryMiB(running.pid, 'VmRSS');

    // Restart with the big cache: time until every CR was reconciled once more ("test: reconcile finished").
    await stopOperator(running);
    running = startOperator(which, kubeconfig, cgroup);
    const restarted = running;
    const reconciled = new Set<unknown>();
    await eventually(
      'every CR reconciled after the restart',
      () => {
        for (const line of restarted.lines.splice(0))
          if (line.msg === 'test: reconcile finished') reconciled.add(line.name);
        return reconciled.size >= COUNT;
      },
      600_000,
      10,
    );
    figures.restartReconciledS = seconds(restarted.startedAt);
    await sleep(1000);
    figures.restartRssMiB = memoryMiB(restarted.pid, 'VmRSS');
    if (cgroup) figures.oomKills = cgroup.oomKills();
    return figures;
  } finally {
    if (running) await stopOperator(running);
    cgroup?.remove();
    await env.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The raw ceiling: the operator's 4 writes per CR in a tight loop of our client, with 1 and with 32 workers. */
async function ceiling(): Promise<Figures> {
  const { env, dir, api } = await freshControlPlane();
  try {
    const figures: Figures = {};
    for (const [workers, namespace] of [
      [1, 'default'],
      [PARALLEL, 'kube-public'],
    ] as const) {
      const memcacheds = await createAll(api, COUNT, memcachedNamed(namespace));
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: workers }, async () => {
          while (next < COUNT) {
            const i = next++;
            let memcached = memcacheds[i]!; // as created: the operator reads it from its cache, so no read here either
            memcached.status = {
              conditions: [
                {
                  type: 'Available',
                  status: 'Unknown',
                  reason: 'Reconciling',
                  message: 'Starting reconciliation',
                  lastTransitionTime: new Date().toISOString(),
                },
              ],
            };
            memcached = await api.status().update(memcached);
            memcached.metadata!.finalizers = ['cache.example.com/finalizer'];
            memcached = await api.update(memcached);
            await api.create({
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: `m${i}`, namespace },
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: `m${i}` } },
                template: {
                  metadata: { labels: { app: `m${i}` } },
                  spec: { containers: [{ name: 'memcached', image: 'memcached:1.6.26-alpine3.19' }] },
                },
              },
            } as never);
            memcached.status = {
              conditions: [
                {
                  type: 'Available',
                  status: 'True',
                  reason: 'Reconciling',
                  message: 'created',
                  lastTransitionTime: new Date().toISOString(),
                },
              ],
            };
            await api.status().update(memcached);
          }
        }),
      );
      figures[`ceiling${workers}S`] = seconds(started);
    }
    return figures;
  } finally {
    await env.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]): number => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const results: Record<Operator, Figures[]> = { ours: [], go: [] };
const ceilings: Figures[] = [];
for (let run = 1; run <= RUNS; run++) {
  // Alternate which goes first, so neither always meets the machine in the same state.
  const order: Operator[] = ONLY ? [ONLY] : run % 2 ? ['ours', 'go'] : ['go', 'ours'];
  for (const which of order) {
    const load = loadavg()[0]!;
    const figures = await measure(which);
    figures.load = load;
    results[which].push(figures);
    console.error(
      `run ${run}/${RUNS} ${which}: load ${load.toFixed(2)} → ${JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Number(v.toFixed(3))])))}`,
    );
  }
  if (ONLY || IDLE_ONLY) continue;
  const load = loadavg()[0]!;
  const figures = await ceiling();
  figures.load = load;
  ceilings.push(figures);
  console.error(
    `run ${run}/${RUNS} ceiling: load ${load.toFixed(2)} → 1 worker ${figures.ceiling1S!.toFixed(1)} s, ${PARALLEL} workers ${figures[`ceiling${PARALLEL}S`]!.toFixed(1)} s`,
  );
}

const m = (which: Operator, key: string): number => median(results[which].map((f) => f[key]!));
const fmt = (value: number, digits: number): string => (Number.isNaN(value) ? 'n/a' : value.toFixed(digits));
const ratio = (key: string): string => `${fmt(m('ours', key) / m('go', key), 2)}×`;
/** OOM kills summed over the runs (any is a failure), and the median cgroup peak. */
const cgroupCell = (which: Operator): string => {
  const kills = results[which].map((f) => f.oomKills);
  if (kills.some((k) => k === undefined)) return 'not measured (needs root and a memory cgroup)';
  return `${kills.reduce((a, b) => a! + b!, 0)} / ${fmt(m(which, 'cgroupPeakMiB'), 0)}`;
};
const loads = (which: Operator): string => results[which].map((f) => f.load!.toFixed(2)).join(', ');
if (IDLE_ONLY) {
  console.log(
    `\nside-by-side, idle only: medians of ${RUNS} run(s), fresh control plane each; ours with NODE_OPTIONS="${NODE_OPTIONS}"${NODE_ARGS.length ? ` ${NODE_ARGS.join(' ')}` : ''}${goBinary ? '' : '; Go peer not built (npm run bench:side-by-side builds it)'}`,
  );
  console.log('| figure | ours | Go | ours / Go |\n|---|---:|---:|---:|');
  console.log(
    `| idle RSS right after start, 0 objects (MiB) | ${fmt(m('ours', 'idleRssMiB'), 1)} | ${fmt(m('go', 'idleRssMiB'), 1)} | ${ratio('idleRssMiB')} |`,
  );
  console.log(
    `| start → caches synced, 0 objects (s) / CPU used (s) | ${fmt(m('ours', 'syncS'), 2)} / ${fmt(m('ours', 'syncCpuS'), 2)} | ${fmt(m('go', 'syncS'), 2)} / ${fmt(m('go', 'syncCpuS'), 2)} | ${ratio('syncS')} / ${ratio('syncCpuS')} |`,
  );
  console.log(
    `ours idle RSS per run: ${results.ours.map((f) => f.idleRssMiB!.toFixed(1)).join(', ')}; load average (1 min) at the start of each run: ours ${loads('ours')}; Go ${loads('go')}`,
  );
  process.exit(0);
}
const rows: Array<[string, string, string, string]> = [
  ['every Deployment and status written (s)', fmt(m('ours', 'burstS'), 1), fmt(m('go', 'burstS'), 1), ratio('burstS')],
  [
    'first Deployment seen (s)',
    fmt(m('ours', 'firstDeploymentS'), 1),
    fmt(m('go', 'firstDeploymentS'), 1),
    ratio('firstDeploymentS'),
  ],
  [
    'operator CPU during the burst (s)',
    fmt(m('ours', 'burstCpuS'), 2),
    fmt(m('go', 'burstCpuS'), 2),
    ratio('burstCpuS'),
  ],
  [
    'peak RSS during the burst (MiB)',
    fmt(m('ours', 'peakRssMiB'), 0),
    fmt(m('go', 'peakRssMiB'), 1),
    ratio('peakRssMiB'),
  ],
  [
    `burst inside a ${MEMORY_LIMIT_MIB} MiB memory cgroup: OOM kills / cgroup peak incl. page cache (MiB)`,
    cgroupCell('ours'),
    cgroupCell('go'),
    ratio('cgroupPeakMiB'),
  ],
  [
    'idle RSS right after start, 0 objects (MiB)',
    fmt(m('ours', 'idleRssMiB'), 0),
    fmt(m('go', 'idleRssMiB'), 1),
    ratio('idleRssMiB'),
  ],
  [
    `RSS with ~${2 * COUNT + EXTRA} cached objects (MiB)`,
    fmt(m('ours', 'cachedRssMiB'), 0),
    fmt(m('go', 'cachedRssMiB'), 1),
    ratio('cachedRssMiB'),
  ],
  [
    `restarted process with ~${2 * COUNT + EXTRA} cached: RSS (MiB)`,
    fmt(m('ours', 'restartRssMiB'), 0),
    fmt(m('go', 'restartRssMiB'), 1),
    ratio('restartRssMiB'),
  ],
  [
    'start → caches synced, 0 objects (s) / CPU used (s)',
    `${fmt(m('ours', 'syncS'), 2)} / ${fmt(m('ours', 'syncCpuS'), 2)}`,
    `${fmt(m('go', 'syncS'), 2)} / ${fmt(m('go', 'syncCpuS'), 2)}`,
    `${ratio('syncS')} / ${ratio('syncCpuS')}`,
  ],
  [
    `restart with ~${2 * COUNT + EXTRA} cached → all ${COUNT} CRs reconciled (s)`,
    fmt(m('ours', 'restartReconciledS'), 2),
    fmt(m('go', 'restartReconciledS'), 2),
    ratio('restartReconciledS'),
  ],
  [
    'API requests per CR (writes per CR), burst',
    `${fmt(m('ours', 'requestsPerCR'), 2)} (${fmt(m('ours', 'writesPerCR'), 2)})`,
    `${fmt(m('go', 'requestsPerCR'), 2)} (${fmt(m('go', 'writesPerCR'), 2)})`,
    ratio('requestsPerCR'),
  ],
];
console.log(
  `\nside-by-side: ${COUNT} Memcacheds, ${EXTRA} extra ConfigMaps, medians of ${RUNS} alternating run(s), fresh control plane each; ours with NODE_OPTIONS="${NODE_OPTIONS}"${NODE_ARGS.length ? ` ${NODE_ARGS.join(' ')}` : ''}`,
);
console.log('| figure | ours | Go | ours / Go |\n|---|---:|---:|---:|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
const ceiling1 = median(ceilings.map((f) => f.ceiling1S!));
const ceilingN = median(ceilings.map((f) => f[`ceiling${PARALLEL}S`]!));
console.log(
  `\nraw ceiling (our client in a tight loop, the same ${4 * COUNT} writes): ${fmt(ceiling1, 1)} s with 1 worker, ${fmt(ceilingN, 1)} s with ${PARALLEL} workers`,
);
console.log(
  `load average (1 min) at the start of each run: ours ${loads('ours')}; Go ${loads('go')}; ceiling ${ceilings.map((f) => f.load!.toFixed(2)).join(', ')}`,
);

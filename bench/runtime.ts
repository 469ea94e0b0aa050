/**
 * Runtime benchmark on a real API server (prints numbers; not a test).
 * The operator runs in its own process (test/e2e/fixtures/memcached-manager)
 * so its memory is not mixed with this harness's.
 *
 * 1,000 Memcached CRs are created at once; we report the time until every
 * Deployment exists and every status is written, reconciles per second, API
 * requests per reconcile, the operator's CPU time for the burst, and the
 * manager's RSS and heap after sync with about 1,000 and 10,000 cached
 * objects. LEADER_ELECT=true runs the operator with leader election, so
 * every write passes its lease fence.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client, Deployment } from '../src/runtime/index.js';
import { RestClient } from '../src/runtime/transport/index.js';
import { Environment } from '../src/runtime/envtest/index.js';
import { collectJsonLines } from '../test/e2e/child-logs.js';
import { eventually } from '../test/e2e/eventually.js';
import { Memcached, memcachedCRD } from '../test/e2e/fixtures/memcached.js';

const COUNT = Number(process.env.BENCH_CRS ?? 1000);
const EXTRA = Number(process.env.BENCH_CACHED ?? 9000);
const managerScript = fileURLToPath(new URL('../test/e2e/fixtures/memcached-manager.js', import.meta.url));

async function createAll(api: Client, count: number, make: (i: number) => object, parallel = 32): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await api.create(make(next++) as never);
    }),
  );
}

const MiB = (bytes: unknown): string => `${(Number(bytes) / 2 ** 20).toFixed(1)} MiB`;

const env = new Environment({ crds: [memcachedCRD] });
await env.start();
const child = spawn(process.execPath, ['--expose-gc', managerScript], {
  env: { ...process.env, KUBECONFIG: env.kubeConfigPath(), CACHE_CONFIGMAPS: 'true', LOG_LEVEL: 'info' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
// Only the lines the benchmark reads: the manager logs every reconcile.
const lines = collectJsonLines(
  child.stderr,
  (line) => line.includes('"test: stats"') || line.includes('"test: elected"'),
);
async function stats(): Promise<Record<string, unknown>> {
  const before = lines.length;
  child.kill('SIGUSR2');
  return eventually('stats from the manager', () => lines.slice(before).find((line) => line.msg === 'test: stats'));
}

try {
  const api = new Client({ rest: new RestClient(env.kubeConfig) });
  await eventually('the manager to start', () => lines.some((line) => line.msg === 'test: elected'), 30_000);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const idle = await stats();
  console.log(`manager after sync, 0 objects: rss ${MiB(idle.rss)}, heap used ${MiB(idle.heapUsed)}`);

  const started = performance.now();
  await createAll(api, COUNT, (i) => ({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name: `m${i}`, namespace: 'default' },
    spec: { size: 1 + (i % 3) },
  }));
  const created = performance.now();
  await eventually(
    'every Deployment and status',
    async () => {
      const [deployments, memcacheds] = await Promise.all([
        api.list(Deployment, { namespace: 'default' }),
        api.list(Memcached, { namespace: 'default' }),
      ]);
      return (
        deployments.length === COUNT &&
        memcacheds.every((m) => m.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'))
      );
    },
    900_000,
    1000,
  );
  const seconds = (performance.now() - started) / 1000;
  const done = await stats();
  const reconciles = Number(done.reconciles);
  const requests = Number(done.requests) - Number(idle.requests);
  console.log(
    `${COUNT} CRs created in ${((created - started) / 1000).toFixed(1)} s; every Deployment and status after ${seconds.toFixed(1)} s`,
  );
  console.log(
    `reconciles ${reconciles} (${(reconciles / seconds).toFixed(0)}/s over the run); operator API requests ${requests}: ${(requests / reconciles).toFixed(2)} per reconcile, ${(requests / COUNT).toFixed(2)} per CR`,
  );
  console.log(
    `operator CPU for the burst: ${((Number(done.cpuMicros) - Number(idle.cpuMicros)) / 1e6).toFixed(2)} s${process.env.LEADER_ELECT === 'true' ? ' (leader election on: every write passes the lease fence)' : ''}`,
  );
  console.log(
    `manager with ${String(done.cached)} cached objects: rss ${MiB(done.rss)}, heap used ${MiB(done.heapUsed)} of ${MiB(done.heapTotal)}, external ${MiB(done.external)}`,
  );

  await createAll(api, EXTRA, (i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `c${i}`, namespace: 'default' },
    data: { index: String(i), payload: 'x'.repeat(200) },
  }));
  const big = await eventually(
    'the ConfigMaps in the cache',
    async () => {
      const s = await stats();
      return Number(s.cached) >= 2 * COUNT + EXTRA ? s : undefined;
    },
    900_000,
    2000,
  );
  console.log(
    `manager with ${String(big.cached)} cached objects: rss ${MiB(big.rss)}, heap used ${MiB(big.heapUsed)} of ${MiB(big.heapTotal)}, external ${MiB(big.external)}`,
  );
} finally {
  child.kill('SIGTERM');
  await once(child, 'exit');
  await env.stop();
}

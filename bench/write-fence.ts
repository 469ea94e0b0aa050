/**
 * What the leader's write fence costs (prints numbers; not a test). Every
 * write of a leader runs LeaderElector.assertHoldsLease twice (before the
 * request and when it gets its socket), plus one 'socket' listener.
 *
 * 1. The check alone, in a tight loop.
 * 2. Whole writes, fenced and not: PATCHes to a loopback HTTP server that
 *    answers at once (so the client's own cost dominates), 16 in flight,
 *    rounds alternating between a fenced and an unfenced client. CPU time,
 *    not wall time: on a shared machine the wall clock mostly measures the
 *    neighbours.
 *
 * The elector acquires and renews its lease on the same loopback server,
 * which answers every GET with 404 and accepts every write: enough for it.
 * No API server is involved; the 1,000-CR burst (bench/runtime.ts with
 * LEADER_ELECT=true) gives the end-to-end figure.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../src/runtime/index.js';
import { LeaderElector } from '../src/runtime/leaderelection/index.js';
import { RestClient, type KubeConfigSource } from '../src/runtime/transport/index.js';

const CHECKS = Number(process.env.BENCH_FENCE_CHECKS ?? 10_000_000);
const WRITES = Number(process.env.BENCH_FENCE_WRITES ?? 5_000);
const ROUNDS = Number(process.env.BENCH_FENCE_ROUNDS ?? 10);
const IN_FLIGHT = 16;

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const notFound = req.method === 'GET';
    res.writeHead(notFound ? 404 : 200, { 'content-type': 'application/json' });
    res.end(
      notFound ? '{"kind":"Status","code":404,"reason":"NotFound"}' : '{"kind":"Lease","metadata":{"name":"bench"}}',
    );
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const kubeConfig: KubeConfigSource = {
  getCurrentCluster: () => ({
    name: 'local',
    server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    skipTLSVerify: false,
  }),
  getCurrentUser: () => ({ name: 'local' }),
};

try {
  const fenced = new RestClient(kubeConfig);
  const plain = new RestClient(kubeConfig);
  const elector = new LeaderElector({
    rest: fenced,
    name: 'bench',
    namespace: 'default',
    identity: 'bench',
    logger: createLogger({ level: 'error' }),
  });
  const stop = new AbortController();
  await elector.acquire(stop.signal);
  const holding = elector.holdUntil(stop.signal);

  for (let i = 0; i < 100_000; i++) elector.assertHoldsLease();
  const started = performance.now();
  for (let i = 0; i < CHECKS; i++) elector.assertHoldsLease();
  const checkNs = ((performance.now() - started) * 1e6) / CHECKS;
  console.log(`assertHoldsLease: ${checkNs.toFixed(1)} ns per check (${CHECKS} checks)`);

  const path = '/api/v1/namespaces/default/configmaps/bench';
  /** CPU time (user + system, this process, the loopback server's share included) per write. */
  async function writes(rest: RestClient): Promise<number> {
    let left = WRITES;
    const before = process.cpuUsage();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (left-- > 0)
          await rest.request('PATCH', path, {
            body: '{"data":{"a":"b"}}',
            contentType: 'application/merge-patch+json',
          });
      }),
    );
    const used = process.cpuUsage(before);
    return (used.user + used.system) / WRITES;
  }
  await writes(fenced);
  await writes(plain);
  const perWrite: Record<'fenced' | 'plain', number[]> = { fenced: [], plain: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so a drift in the machine's load hits both.
    const order = round % 2 ? (['plain', 'fenced'] as const) : (['fenced', 'plain'] as const);
    for (const which of order) perWrite[which].push(await writes(which === 'fenced' ? fenced : plain));
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const [withFence, without] = [median(perWrite.fenced), median(perWrite.plain)];
  const spread = (values: number[]): string => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  console.log(
    `PATCH to a loopback server, ${IN_FLIGHT} in flight, CPU per write (client and server): fenced ${withFence.toFixed(1)} µs (${spread(perWrite.fenced)}), unfenced ${without.toFixed(1)} µs (${spread(perWrite.plain)}); medians of ${ROUNDS} rounds of ${WRITES}, difference ${(withFence - without).toFixed(1)} µs`,
  );
  stop.abort();
  await holding;
  await Promise.all([fenced.close(), plain.close()]);
} finally {
  server.close();
}

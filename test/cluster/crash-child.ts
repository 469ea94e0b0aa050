import { startCluster } from './cluster.js';
import { kubectl, runningPod } from './kubectl.js';
import { pushBusyboxImage } from './tiny-images.js';

/**
 * A test process that fails midway, for lifecycle.test.ts: it starts a
 * cluster, runs a pod (so there are mounts, cgroups and veths to clean),
 * prints the cluster's state as one JSON line, then, by `argv[2]`:
 * `throw` fails with an uncaught error; `wait` waits to be killed (the parent
 * sends SIGTERM, or SIGKILL, which no handler can catch).
 */
const mode = process.argv[2];
const cluster = await startCluster();
await pushBusyboxImage(cluster.registryUrl, 'crash-busybox', '1');
kubectl(cluster, [
  'run',
  'crash',
  `--image=${cluster.registry}/crash-busybox:1`,
  '--restart=Never',
  '--labels=test=crash',
  '--command',
  '--',
  'sleep',
  '3600',
]);
await runningPod(cluster, 'test=crash');
process.stdout.write(`${JSON.stringify(cluster.state)}\n`);
if (mode === 'throw') throw new Error('crash-child: a deliberate failure after the cluster started');
setInterval(() => undefined, 60_000);

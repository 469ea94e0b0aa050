import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../e2e/eventually.js';
import { KUBERNETES_SERVICE_IP, POD_SUBNET, startCluster, type TestClusterDetails } from './cluster.js';
import {
  cgroupHierarchies,
  clusterCgroupDirs,
  clusterProcesses,
  isMountPoint,
  listClusterStates,
  mountPoints,
  readHostRecord,
  readSysctls,
  readWatchedPaths,
  type ClusterState,
} from './host-state.js';
import { kubectl, runningPod, sh } from './kubectl.js';
import { pushBusyboxImage } from './tiny-images.js';

const here = dirname(fileURLToPath(import.meta.url));

/** What the host looks like, in every respect the cluster may change. */
interface HostSnapshot {
  sysctls: Record<string, string>;
  paths: Record<string, boolean>;
  runNetnsMounted: boolean;
  iptables: string;
  hostLinks: string[];
  /** Mount points, without those of test clusters (theirs or other processes' running meanwhile). */
  mounts: string[];
  /** Top-level cgroups of every hierarchy, without test clusters' own roots. */
  topCgroups: string[];
}

/**
 * Test clusters' own things, which other test processes may create or remove
 * while this test runs (/run/netns itself is checked by `runNetnsMounted`).
 */
const anyTestCluster = /^\/tmp\/tsc-|^\/run\/netns(\/tsosdk-|$)|\/tsosdk-[0-9a-z]+$/;

/** iptables-save without its timestamped comment lines and packet counters. */
function rules(command: string): string {
  const saved = sh([command]);
  return saved.stdout
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .map((line) => line.replace(/\[\d+:\d+\]/g, ''))
    .join('\n');
}

function snapshot(): HostSnapshot {
  return {
    sysctls: readSysctls(),
    paths: readWatchedPaths(),
    runNetnsMounted: isMountPoint('/run/netns'),
    iptables: `${rules('iptables-save')}\n${rules('ip6tables-save')}`,
    hostLinks: sh(['ip', '-o', 'link', 'show'])
      .stdout.split('\n')
      .filter(Boolean)
      .map((line) => line.split(': ')[1] ?? '')
      .sort(),
    mounts: mountPoints()
      .filter((mount) => !anyTestCluster.test(mount))
      .sort(),
    topCgroups: cgroupHierarchies()
      .flatMap((hierarchy) =>
        readdirSync(hierarchy, { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => join(hierarchy, entry.name)),
      )
      .filter((path) => !anyTestCluster.test(path))
      .sort(),
  };
}

function containerLogLinksInto(workDir: string): string[] {
  if (!existsSync('/var/log/containers')) return [];
  return readdirSync('/var/log/containers').filter((name) => {
    try {
      return readlinkSync(join('/var/log/containers', name)).startsWith(`${workDir}/`);
    } catch {
      return false;
    }
  });
}

/** Asserts nothing of `state`'s cluster is left, and (when no other cluster runs) the host equals `before`. */
function assertCleanedUp(state: ClusterState, before: HostSnapshot, diagnostic: (message: string) => void): void {
  assert.deepEqual(clusterProcesses(state), [], 'no process of the cluster may be left');
  assert.deepEqual(sh(['pgrep', '-f', state.workDir]).stdout.trim(), '', `pgrep -f ${state.workDir}`);
  assert.deepEqual(
    mountPoints().filter((mount) => mount.startsWith(`${state.workDir}/`)),
    [],
    'no mount under the work dir',
  );
  assert.equal(existsSync(state.workDir), false, 'the work dir is deleted');
  assert.doesNotMatch(
    sh(['ip', 'netns', 'list']).stdout,
    new RegExp(`^${state.netns}\\b`, 'm'),
    'the network namespace is deleted',
  );
  assert.deepEqual(clusterCgroupDirs(state.cgroupRoot), [], 'no cgroup dir is left');
  assert.deepEqual(
    containerLogLinksInto(state.workDir),
    [],
    "no link of kubelet's in /var/log/containers points into the work dir",
  );
  const now = snapshot();
  assert.equal(now.iptables, before.iptables, "the host's iptables rules are unchanged");
  assert.deepEqual(now.hostLinks, before.hostLinks, "the host's network devices are unchanged");
  assert.deepEqual(now.mounts, before.mounts, 'no mount is left (or removed) outside test clusters');
  assert.deepEqual(now.topCgroups, before.topCgroups, 'no top-level cgroup (e.g. kubepods) is left');
  assert.equal(
    listClusterStates().some((other) => other.id === state.id),
    false,
    "the cluster's state file is gone",
  );
  const others = listClusterStates();
  if (others.length > 0) {
    // Another cluster (another test process) still runs: the host is restored when the last one stops.
    diagnostic(`${others.length} other cluster(s) still running; kernel settings are restored by the last one`);
    assert.ok(readHostRecord(), 'the original host settings stay recorded while a cluster runs');
    return;
  }
  assert.deepEqual(now.sysctls, before.sysctls, 'every kernel setting is back to its value before the start');
  assert.deepEqual(now.paths, before.paths, 'no host directory is created or removed');
  assert.equal(now.runNetnsMounted, before.runNetnsMounted, '/run/netns is mounted as before');
  assert.equal(readHostRecord(), undefined, 'the host record is gone once no cluster is left');
}

/** Runs crash-child.js in `mode`; resolves with the cluster state it printed once its pod ran, and the child. */
async function startCrashChild(
  mode: 'throw' | 'wait',
): Promise<{ state: ClusterState; exited: Promise<number | null>; kill: (signal: NodeJS.Signals) => void }> {
  const child = spawn(process.execPath, [join(here, 'crash-child.js'), mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void exited.then(() => reject(new Error(`crash-child exited before its cluster ran a pod:\n${stderr}`)));
  });
  return { state: JSON.parse(first) as ClusterState, exited, kill: (signal) => child.kill(signal) };
}

test(
  'a Deployment runs from the local registry, a pod reaches the API server through the kubernetes Service, and stop() leaves the host as it was',
  { timeout: 600_000 },
  async (t) => {
    const before = snapshot();
    const started = Date.now();
    const cluster: TestClusterDetails = await startCluster();
    t.diagnostic(`cluster started in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    try {
      assert.notDeepEqual(readSysctls(), undefined);
      await pushBusyboxImage(cluster.registryUrl, 'lifecycle-busybox', '1');
      // A plain HTTP request to the API server's HTTPS port gets Go's unmistakable 400 answer:
      // proof that the ClusterIP led (through kube-proxy's DNAT) to the API server.
      // It also serves a page on 8080, behind a Service, to check Service → pod routing (webhooks and metrics rely on it).
      const probe = `mkdir -p /tmp/www && echo served-by-the-pod > /tmp/www/index.html && httpd -p 8080 -h /tmp/www && until printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${KUBERNETES_SERVICE_IP} 443 | grep -q 'HTTP request to an HTTPS server'; do sleep 1; done; echo reached-the-api-server; exec sleep 3600`;
      kubectl(
        cluster,
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'lifecycle', namespace: 'default' },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'lifecycle' } },
            template: {
              metadata: { labels: { app: 'lifecycle' } },
              spec: {
                containers: [
                  { name: 'probe', image: `${cluster.registry}/lifecycle-busybox:1`, command: ['sh', '-c', probe] },
                ],
              },
            },
          },
        }),
      );
      const pod = await runningPod(cluster, 'app=lifecycle');
      assert.ok(
        pod.status.podIP?.startsWith(POD_SUBNET.split('.').slice(0, 2).join('.')),
        `pod IP ${pod.status.podIP} is in ${POD_SUBNET}`,
      );
      await eventually(
        'the pod to reach the API server through the kubernetes Service',
        () => kubectl(cluster, ['logs', pod.metadata.name]).includes('reached-the-api-server'),
        120_000,
        1000,
      );
      kubectl(cluster, ['expose', 'deployment', 'lifecycle', '--port=80', '--target-port=8080']);
      const serviceIP = kubectl(cluster, ['get', 'service', 'lifecycle', '-o', 'jsonpath={.spec.clusterIP}']).trim();
      const get = `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3`;
      // Through its own Service (hairpin: the pod is the only endpoint), and from the namespace straight to the pod IP.
      await eventually(
        'the pod to reach itself through its Service',
        () =>
          kubectl(cluster, ['exec', pod.metadata.name, '--', 'sh', '-c', `${get} ${serviceIP} 80`]).includes(
            'served-by-the-pod',
          ),
        60_000,
        1000,
      );
      const direct = sh([
        ...cluster.inNetns,
        'sh',
        '-c',
        `${get.replace('nc', 'busybox nc')} ${pod.status.podIP} 8080`,
      ]);
      assert.match(direct.stdout, /served-by-the-pod/, direct.stderr);
      // The ServiceAccount token is mounted (ServiceAccount admission + the controller manager's token controller).
      const namespace = kubectl(cluster, [
        'exec',
        pod.metadata.name,
        '--',
        'cat',
        '/var/run/secrets/kubernetes.io/serviceaccount/namespace',
      ]);
      assert.equal(namespace, 'default');
    } finally {
      const stopping = Date.now();
      await cluster.stop();
      t.diagnostic(`cluster stopped in ${((Date.now() - stopping) / 1000).toFixed(1)}s`);
    }
    assertCleanedUp(cluster.state, before, (message) => t.diagnostic(message));
    // Idempotent.
    await cluster.stop();
  },
);

test(
  'a test process that throws after the start leaves nothing behind (its exit hook cleans up)',
  { timeout: 600_000 },
  async (t) => {
    const before = snapshot();
    const child = await startCrashChild('throw');
    assert.notEqual(await child.exited, 0, 'the child fails');
    assertCleanedUp(child.state, before, (message) => t.diagnostic(message));
  },
);

test('a test process stopped by SIGTERM cleans up in its signal handler', { timeout: 600_000 }, async (t) => {
  const before = snapshot();
  const child = await startCrashChild('wait');
  child.kill('SIGTERM');
  assert.equal(await child.exited, 143);
  assertCleanedUp(child.state, before, (message) => t.diagnostic(message));
});

test(
  'after a SIGKILLed test process, cleanup.js finds and removes its leftovers and restores the host',
  { timeout: 600_000 },
  async (t) => {
    const before = snapshot();
    const child = await startCrashChild('wait');
    child.kill('SIGKILL');
    await child.exited;
    // Nothing could run in the child: its cluster is still there.
    assert.match(sh(['ip', 'netns', 'list']).stdout, new RegExp(`^${child.state.netns}\\b`, 'm'));
    assert.notDeepEqual(clusterProcesses(child.state), []);
    const cleanup = sh([process.execPath, join(here, 'cleanup.js')]);
    assert.equal(cleanup.status, 0, cleanup.stderr);
    assert.match(cleanup.stdout, /[1-9]\d* leftover cluster\(s\) removed/);
    assertCleanedUp(child.state, before, (message) => t.diagnostic(message));
  },
);

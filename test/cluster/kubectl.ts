import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../e2e/eventually.js';
import { cgroupHierarchies } from './host-state.js';
import type { TestClusterDetails } from './cluster.js';

/** Runs kubectl against the cluster; throws with its stderr when it fails. */
export function kubectl(cluster: TestClusterDetails, args: string[], input?: string): string {
  const result = spawnSync('kubectl', args, { env: cluster.env(), input, encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed: ${(result.stderr || result.error?.message || '').trim()}`);
  return result.stdout;
}

/** Runs a command in the HOST's namespaces and returns its status and output (no throw). */
export function sh(argv: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const [command, ...args] = argv;
  const result = spawnSync(command as string, args, { encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

interface PodStatus {
  metadata: { uid: string; name: string };
  status: { phase?: string; podIP?: string };
}

/** Waits for a pod matching `selector` to run; returns it. */
export async function runningPod(
  cluster: TestClusterDetails,
  selector: string,
  timeoutMs = 120_000,
): Promise<PodStatus> {
  return eventually(
    `a Running pod with ${selector}`,
    () => {
      const list = JSON.parse(kubectl(cluster, ['get', 'pods', '-l', selector, '-o', 'json'])) as {
        items: PodStatus[];
      };
      return list.items.find((pod) => pod.status.phase === 'Running' && pod.status.podIP);
    },
    timeoutMs,
    500,
  );
}

/**
 * A process of the pod, found through kubelet's cgroup for it
 * (`<cgroupRoot>/kubepods/<qos>/pod<uid>/<container>`), for entering its network namespace.
 */
export function podProcess(cluster: TestClusterDetails, podUid: string): number {
  const memory = cgroupHierarchies().find((hierarchy) => hierarchy.endsWith('/memory')) ?? cgroupHierarchies()[0];
  if (!memory) throw new Error('no cgroup hierarchy');
  const search = (dir: string): number | undefined => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const child = join(dir, entry.name);
      if (dir.includes(`pod${podUid}`)) {
        const pid = readFileSync(join(child, 'cgroup.procs'), 'utf8').split('\n').find(Boolean);
        if (pid) return Number(pid);
      }
      const found = search(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const pid = search(join(memory, cluster.cgroupRoot));
  if (pid === undefined) throw new Error(`no process of pod ${podUid} under ${cluster.cgroupRoot}`);
  return pid;
}

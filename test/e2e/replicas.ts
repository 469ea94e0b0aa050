import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { collectJsonLines } from './child-logs.js';

const memcachedManager = fileURLToPath(new URL('./fixtures/memcached-manager.js', import.meta.url));

/** One operator process (a fixture such as fixtures/memcached-manager.ts) and what it logged. */
export interface Replica {
  name: string;
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  /** The exit code (null after a signal); `exitedAt` is set when it resolves. */
  exited: Promise<number | null>;
  exitedAt?: number;
}

/**
 * The same clock as the fixture's `at` field: epoch milliseconds from the
 * monotonic clock, comparable between processes on one machine.
 */
export const monotonicNow = (): number => performance.timeOrigin + performance.now();

/**
 * Starts an operator process against `kubeConfigPath`, configured by `env`:
 * the Memcached operator (fixtures/memcached-manager.ts) unless `script` names another fixture.
 */
export function startReplica(
  name: string,
  kubeConfigPath: string,
  env: Record<string, string> = {},
  script = memcachedManager,
): Replica {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, KUBECONFIG: kubeConfigPath, REPLICA_NAME: name, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = collectJsonLines(child.stderr);
  const replica: Replica = { name, child, lines, exited: Promise.resolve(null) };
  replica.exited = once(child, 'exit').then(([code]) => {
    replica.exitedAt = monotonicNow();
    return code as number | null;
  });
  return replica;
}

/**
 * The exit code, or 'still running' after `ms`: a test of a replica that
 * should exit must fail, not hang, when it does not.
 */
export async function exitWithin(replica: Replica, ms: number): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    replica.exited,
    new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms))),
  ]);
  clearTimeout(timer);
  return code;
}

/** Lines with message `msg`. */
export const linesOf = (replica: Replica, msg: string) => replica.lines.filter((line) => line.msg === msg);

/** When the replica logged `msg` first (fixture `at`), or undefined. */
export const firstAt = (replica: Replica, msg: string): number | undefined =>
  linesOf(replica, msg)[0]?.at as number | undefined;

export interface Interval {
  replica: string;
  name: string;
  start: number;
  /** When the reconcile returned, or when its process exited if it never did. */
  end: number;
  aborted?: boolean;
}

/**
 * Every reconcile a replica ran, from its start and finish lines. A key is
 * never reconciled twice at once, so a start pairs with the next finish of
 * the same name. A reconcile still running at exit ends at the exit.
 */
export function reconcileIntervals(replica: Replica): Interval[] {
  const open = new Map<string, number>();
  const intervals: Interval[] = [];
  for (const line of replica.lines) {
    const name = line.name as string;
    if (line.msg === 'test: reconcile started') open.set(name, line.at as number);
    if (line.msg === 'test: reconcile finished' && open.has(name)) {
      intervals.push({
        replica: replica.name,
        name,
        start: open.get(name)!,
        end: line.at as number,
        aborted: line.aborted as boolean,
      });
      open.delete(name);
    }
  }
  const end = replica.exitedAt ?? Number.POSITIVE_INFINITY;
  for (const [name, start] of open) intervals.push({ replica: replica.name, name, start, end });
  return intervals;
}

/** Stops every replica still running (test teardown). */
export function killAll(replicas: Replica[]): void {
  for (const replica of replicas)
    if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
}

import type { V1ConfigMap } from '@kubernetes/client-node/dist/gen/models/V1ConfigMap.js';
import type { V1Node } from '@kubernetes/client-node/dist/gen/models/V1Node.js';
import type { V1OwnerReference } from '@kubernetes/client-node/dist/gen/models/V1OwnerReference.js';
import type { V1Pod } from '@kubernetes/client-node/dist/gen/models/V1Pod.js';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlreadyExists, isConflict, isNotFound } from '../api/errors.js';
import { ConfigMap, Node, Pod, resourcePath } from '../api/kinds.js';
import type { Logger } from '../log/log.js';
import type { ManagerMetrics } from '../metrics/metrics.js';
import type { RestClient } from '../transport/rest.js';
import type { LeaderLock } from './lock.js';

/** Where Kubernetes mounts the pod's namespace; operator-lib detects "in a cluster" by this file. */
export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
/** operator-lib's cap on the wait between attempts: retries go 1 s, 2 s, 4 s, 8 s, 16 s, 16 s... */
export const DEFAULT_LEADER_FOR_LIFE_MAX_BACKOFF_MS = 16_000;
const INITIAL_BACKOFF_MS = 1_000;
/** The same +0–20 % jitter operator-lib applies (wait.Jitter(backoff, 0.2)), so waiters do not retry in step. */
const BACKOFF_JITTER = 0.2;

/** How {@link LeaderForLife} finds its Pod and its lock. */
export interface LeaderForLifeOptions {
  /** The client the lock, the Pod and its Node are read and written with. Required. */
  rest: RestClient;
  /** Name of the lock ConfigMap (the manager's `leaderElection.id`). Required. */
  lockName: string;
  /**
   * Namespace of the lock and of this process's Pod. Default: `POD_NAMESPACE`
   * (downward API), then the service-account namespace file. When neither
   * exists the process is not in a cluster and {@link LeaderForLife.become}
   * returns at once without a lock.
   */
  namespace?: string;
  /** This process's Pod, which will own the lock. Default: `POD_NAME` (downward API `metadata.name`). */
  podName?: string;
  /** Cap on the doubling wait (from 1 s) between attempts; 0 or less means the default. Default: 16 s, as operator-lib's. */
  maxBackoffIntervalMs?: number;
  /** The namespace file to read, so tests can fake being in a cluster. Default: the service-account namespace file. */
  namespaceFile?: string;
  /** Where attempts and the outcome are logged. Required. */
  logger: Logger;
  /** Sets `leader_election_master_status` for the lock. Default: no metrics. */
  metrics?: ManagerMetrics;
}

/** What {@link LeaderForLife.become} found: leader by holding the lock, or outside a cluster with nothing to lock. */
export type LeaderForLifeOutcome = 'leader' | 'not-in-cluster';

/**
 * operator-lib's "leader for life" (`leader.Become`): the leader is a Pod,
 * not a lease holder. The lock is a ConfigMap whose only ownerReference is
 * the leader's Pod, so it is never renewed and never released by the
 * process: it disappears only when the garbage collector deletes it after
 * that Pod is gone. A leader that stalls, loses the network or has its clock
 * jump keeps leading, and no second replica can start meanwhile, so two
 * leaders at once are impossible by construction. The price: failover waits
 * for the Pod's deletion and garbage collection, and needs a garbage
 * collector (kube-controller-manager), which every real cluster runs.
 *
 * Waiters create the lock in a loop with doubling backoff. Like operator-lib,
 * a waiter removes a leader that can no longer run:
 * - an evicted or preempted leader Pod (phase Failed, reason `Evicted` or
 *   `Preempting`, not already deleting) is deleted, and the garbage collector
 *   then removes its lock;
 * - a leader Pod on a Node whose Ready condition is not True is deleted, and
 *   the lock with it (a kubelet that is down would never confirm the Pod's
 *   deletion, so waiting for the garbage collector would wait forever).
 */
export class LeaderForLife implements LeaderLock {
  private leading = false;
  private readonly log: Logger;

  constructor(private readonly options: LeaderForLifeOptions) {
    this.log = options.logger.child({ lock: options.lockName });
    options.metrics?.leaderElectionMasterStatus.set({ name: options.lockName }, 0);
  }

  /** True once this process may lead: it holds the lock (for the rest of its Pod's life), or it runs outside a cluster. */
  isLeader(): boolean {
    return this.leading;
  }

  /** {@link LeaderLock.acquire}: {@link become}, for the manager, which needs no outcome. */
  async acquire(signal: AbortSignal): Promise<void> {
    await this.become(signal);
  }

  /** Leads until `signal` aborts: a leader for life never loses the lock while its Pod lives. */
  async holdUntil(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  }

  /** Nothing to give back: only the garbage collector removes the lock, after this Pod is deleted. */
  release(): Promise<void> {
    return Promise.resolve();
  }

  /** Nothing to stop: the lock stays this Pod's for the rest of its life. */
  abandon(): void {}

  /**
   * Resolves once this Pod owns the lock (`'leader'`), or at once when no
   * namespace can be detected (`'not-in-cluster'`, as operator-lib skips
   * election when run locally). Rejects on `signal`, on a missing `POD_NAME`
   * or Pod, and on API errors other than the lock already existing.
   */
  async become(signal: AbortSignal): Promise<LeaderForLifeOutcome> {
    this.log.info('trying to become the leader');
    const namespace =
      this.options.namespace ?? detectNamespace(this.options.namespaceFile ?? SERVICE_ACCOUNT_NAMESPACE_FILE);
    if (!namespace) {
      this.log.info(
        'skipping leader election: not running in a cluster (no POD_NAMESPACE and no service-account namespace file)',
      );
      this.leading = true;
      return 'not-in-cluster';
    }
    const owner = await this.ownerReference(namespace, signal);

    // A restarted container of the leader Pod finds its own lock and simply carries on.
    const existing = await this.getLock(namespace, signal);
    if (existing && ownedBy(existing, owner)) {
      this.log.info(
        { pod: owner.name },
        'found the lock owned by this Pod (the process was restarted): continuing as the leader',
      );
      return this.becameLeader();
    }
    if (existing) this.log.info({ lockOwners: ownerNames(existing) }, 'found an existing lock');
    else this.log.info('no lock exists yet');

    const lock: V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: this.options.lockName, namespace, ownerReferences: [owner] },
    };
    const maxBackoffMs =
      this.options.maxBackoffIntervalMs && this.options.maxBackoffIntervalMs > 0
        ? this.options.maxBackoffIntervalMs
        : DEFAULT_LEADER_FOR_LIFE_MAX_BACKOFF_MS;
    let backoffMs = INITIAL_BACKOFF_MS;
    for (;;) {
      signal.throwIfAborted();
      try {
        await this.options.rest.request('POST', resourcePath(ConfigMap, namespace), { body: lock, signal });
        return this.becameLeader();
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      if ((await this.inspectLock(namespace, owner, signal)) === 'retry-now') continue;
      await sleep(backoffMs * (1 + Math.random() * BACKOFF_JITTER), undefined, { signal });
      if (backoffMs < maxBackoffMs) backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
    }
  }

  /**
   * One look at the lock while waiting: log who holds it, and clear a leader
   * that can no longer run. `'retry-now'` when the lock is already gone.
   */
  private async inspectLock(
    namespace: string,
    self: V1OwnerReference,
    signal: AbortSignal,
  ): Promise<'retry-now' | 'wait'> {
    const lock = await this.getLock(namespace, signal);
    if (!lock) {
      this.log.info('the lock is gone: trying again at once');
      return 'retry-now';
    }
    const owners = lock.metadata?.ownerReferences ?? [];
    const leader = owners[0];
    if (owners.length !== 1 || !leader) {
      this.log.info({ lockOwners: ownerNames(lock) }, 'the lock must have exactly one owner reference: waiting');
      return 'wait';
    }
    if (leader.kind !== 'Pod') {
      this.log.info({ ownerKind: leader.kind }, 'the lock owner must be a Pod: waiting');
      return 'wait';
    }
    if (leader.name === self.name) {
      // Our own name but another uid: a previous Pod of that name. Its lock is
      // garbage once the GC sees the uid is gone; claiming it now could make two leaders.
      this.log.info(
        { pod: leader.name },
        'the lock belongs to an earlier Pod with this name: waiting for garbage collection',
      );
      return 'wait';
    }
    let leaderPod: V1Pod;
    try {
      leaderPod = await this.options.rest.request<V1Pod>('GET', resourcePath(Pod, namespace, leader.name), { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.log.info(
        { leader: leader.name },
        'the leader Pod is gone: waiting for garbage collection to remove the lock',
      );
      return 'wait';
    }
    const deleting = leaderPod.metadata?.deletionTimestamp !== undefined;
    const failedReason = leaderPod.status?.phase === 'Failed' ? leaderPod.status.reason : undefined;
    if ((failedReason === 'Evicted' || failedReason === 'Preempting') && !deleting) {
      this.log.info(
        { leader: leader.name, reason: failedReason },
        'the leader Pod failed and will not run again: deleting it so its lock is collected',
      );
      await this.deleteIgnoringErrors(
        resourcePath(Pod, namespace, leader.name),
        signal,
        'could not delete the failed leader Pod',
      );
      return 'wait';
    }
    if (await this.onNotReadyNode(leaderPod.spec?.nodeName, signal)) {
      this.log.info(
        { leader: leader.name, node: leaderPod.spec?.nodeName },
        'the leader Pod runs on a Node that is not Ready: deleting the Pod and the lock',
      );
      await this.deleteIfPresent(resourcePath(Pod, namespace, leader.name), signal);
      // Only this lock (by uid): another waiter may already have replaced it with its own.
      await this.deleteIfPresent(resourcePath(ConfigMap, namespace, this.options.lockName), signal, lock.metadata?.uid);
      return 'retry-now';
    }
    this.log.info({ leader: leader.name }, 'not the leader: waiting');
    return 'wait';
  }

  /** Whether the Pod's Node reports Ready other than True; unknown (no node, unreadable node) counts as ready, as in operator-lib. */
  private async onNotReadyNode(nodeName: string | undefined, signal: AbortSignal): Promise<boolean> {
    if (!nodeName) return false;
    let node: V1Node;
    try {
      node = await this.options.rest.request<V1Node>('GET', resourcePath(Node, undefined, nodeName), { signal });
    } catch (err) {
      this.log.debug({ node: nodeName, err }, "could not read the leader Pod's Node");
      return false;
    }
    return (node.status?.conditions ?? []).some(
      (condition) => condition.type === 'Ready' && condition.status !== 'True',
    );
  }

  private async ownerReference(namespace: string, signal: AbortSignal): Promise<V1OwnerReference> {
    const podName = this.options.podName ?? process.env.POD_NAME;
    if (!podName) {
      throw new Error(
        "leader for life needs this Pod's name: set POD_NAME from the downward API (env POD_NAME, valueFrom.fieldRef.fieldPath: metadata.name)",
      );
    }
    let pod: V1Pod;
    try {
      pod = await this.options.rest.request<V1Pod>('GET', resourcePath(Pod, namespace, podName), { signal });
    } catch (err) {
      if (isNotFound(err))
        throw new Error(
          `leader for life: Pod ${namespace}/${podName} not found: POD_NAME and the namespace must name the Pod this process runs in`,
          { cause: err },
        );
      throw err;
    }
    return { apiVersion: 'v1', kind: 'Pod', name: podName, uid: pod.metadata!.uid! };
  }

  private async getLock(namespace: string, signal: AbortSignal): Promise<V1ConfigMap | undefined> {
    try {
      return await this.options.rest.request<V1ConfigMap>(
        'GET',
        resourcePath(ConfigMap, namespace, this.options.lockName),
        { signal },
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Deletes `path` unless it is already gone or, with `uid`, already replaced by another object of that name. */
  private async deleteIfPresent(path: string, signal: AbortSignal, uid?: string): Promise<void> {
    const body = uid ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } } : undefined;
    try {
      await this.options.rest.request('DELETE', path, { body, signal });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  private async deleteIgnoringErrors(path: string, signal: AbortSignal, message: string): Promise<void> {
    try {
      await this.options.rest.request('DELETE', path, { signal });
    } catch (err) {
      // The next attempt looks again; the Pod may already be going.
      this.log.error({ err }, message);
    }
  }

  private becameLeader(): LeaderForLifeOutcome {
    this.leading = true;
    this.options.metrics?.leaderElectionMasterStatus.set({ name: this.options.lockName }, 1);
    this.log.info('became the leader');
    return 'leader';
  }
}

/** `POD_NAMESPACE` (downward API), then the service-account file every in-cluster Pod has. */
export function detectNamespace(namespaceFile: string): string | undefined {
  const fromEnv = process.env.POD_NAMESPACE?.trim();
  if (fromEnv) return fromEnv;
  if (existsSync(namespaceFile)) return readFileSync(namespaceFile, 'utf8').trim() || undefined;
  return undefined;
}

/** The lock is ours only if it names this very Pod: same name and same uid. */
function ownedBy(lock: V1ConfigMap, owner: V1OwnerReference): boolean {
  return (lock.metadata?.ownerReferences ?? []).some(
    (ref) => ref.kind === 'Pod' && ref.name === owner.name && ref.uid === owner.uid,
  );
}

function ownerNames(lock: V1ConfigMap): string[] {
  return (lock.metadata?.ownerReferences ?? []).map((ref) => `${ref.kind}/${ref.name}`);
}

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../log/log.js';
import type { ManagerMetrics } from '../metrics/metrics.js';
import type { RestClient } from '../transport/rest.js';
import { detectNamespace, LeaderForLife, SERVICE_ACCOUNT_NAMESPACE_FILE } from './leaderforlife.js';
import { LeaderElector, type LeaseClock } from './lease.js';
import type { LeaderLock } from './lock.js';

/**
 * How a manager's replicas elect the one that runs the controllers: the
 * manager's `leaderElection` option. Present turns election on; leave the
 * option out to run every replica's controllers at once.
 */
export interface LeaderElectionOptions {
  /** Name of the Lease (or leader-for-life ConfigMap), unique per operator, such as `1a2b3c4d.example.com`. Required. */
  id: string;
  /**
   * Namespace of the lock. Default: `POD_NAMESPACE`, then the service-account
   * namespace file; outside a cluster a Lease fails without it (leader-for-life runs unlocked).
   */
  namespace?: string;
  /**
   * What the replicas contend for.
   * - `'lease'`: a Lease renewed by the leader, as controller-runtime;
   *   failover after the lease duration. Once it has acquired the Lease, every
   *   write of the manager (its client, Events, exec) leaves only while the
   *   Lease is held by the monotonic clock (see LeaderElector.assertHoldsLease).
   * - `'leader-for-life'`: operator-lib's `leader.Become`. The leader's Pod
   *   (`POD_NAME`, from the downward API) owns a ConfigMap named `id` in
   *   `namespace`. Nothing renews or releases it: it goes only when the
   *   garbage collector collects it after that Pod is deleted, so two leaders
   *   are impossible, and failover waits for the Pod to go. Outside a cluster
   *   (no namespace found) the manager runs at once without a lock. The lease
   *   timings and `releaseOnCancel` do not apply. See {@link LeaderForLife}.
   *
   * Default: `'lease'`.
   */
  lock?: 'lease' | 'leader-for-life';
  /** How long a rival waits after the leader's last observed renewal before taking over. Default: 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading. Default: 10 s. */
  renewDeadlineMs?: number;
  /** Wait between renewals and between attempts to acquire. Default: 2 s. */
  retryPeriodMs?: number;
  /**
   * Release the Lease on a clean stop so a successor takes over at once
   * instead of waiting for it to expire. Default: true, unlike
   * controller-runtime's false, because here it is safe: the Manager releases
   * only after every leader-only runnable has returned and every in-flight
   * reconcile has finished. It never releases after lost leadership, after a
   * grace-period overrun, or while any reconcile may still run; then the
   * Lease simply expires.
   */
  releaseOnCancel?: boolean;
  /** Clock for the Lease, so tests can step the wall clock (see LeaseClock). Default: `systemLeaseClock`. */
  clock?: LeaseClock;
}

/** What {@link newLeaderLock} needs from the manager besides the options. */
export interface LeaderLockDependencies {
  /** The client the lock is read and written with; a Lease fences its writes. Required. */
  rest: RestClient;
  /** Where acquisitions, renewals and losses are logged. Required. */
  logger: Logger;
  /** Sets `leader_election_master_status` for the lock. Default: no metrics. */
  metrics?: ManagerMetrics;
}

/**
 * The lock `options.lock` names. Throws when `id` is empty, and, for a Lease,
 * when no namespace is given and none can be found (not in a cluster).
 */
export function newLeaderLock(options: LeaderElectionOptions, deps: LeaderLockDependencies): LeaderLock {
  if (!options.id)
    throw new Error(
      'leaderElection.id is required when leader election is on: pass a unique name such as 1a2b3c4d.example.com',
    );
  const { rest, logger, metrics } = deps;
  if (options.lock === 'leader-for-life')
    return new LeaderForLife({ rest, lockName: options.id, namespace: options.namespace, logger, metrics });
  const namespace = options.namespace ?? detectNamespace(SERVICE_ACCOUNT_NAMESPACE_FILE);
  if (!namespace)
    throw new Error(
      'no leader election namespace: not running in a cluster, so set leaderElection.namespace (or POD_NAMESPACE)',
    );
  return new LeaderElector({
    rest,
    name: options.id,
    namespace,
    identity: `${hostname()}_${randomUUID()}`,
    leaseDurationMs: options.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs,
    clock: options.clock,
    logger,
    metrics,
  });
}

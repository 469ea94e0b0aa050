/**
 * `ts-operator-sdk/leaderelection`: the manager's `leaderElection` options,
 * and the two locks behind one `LeaderLock` interface: Lease-based leader
 * election (`LeaderElector`) and operator-sdk's leader for life (`LeaderForLife`).
 * This file is only the package's public surface.
 */
export {
  LeaderElector,
  LeaderElectionLostError,
  isLeaderElectionLost,
  systemLeaseClock,
  type LeaseClock,
  type LeaderElectorOptions,
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from './lease.js';
export {
  LeaderForLife,
  type LeaderForLifeOptions,
  type LeaderForLifeOutcome,
  DEFAULT_LEADER_FOR_LIFE_MAX_BACKOFF_MS,
} from './leaderforlife.js';
export { newLeaderLock, type LeaderElectionOptions, type LeaderLockDependencies } from './election.js';
export type { LeaderLock } from './lock.js';

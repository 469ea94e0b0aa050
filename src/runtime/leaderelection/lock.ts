/**
 * What a manager holds while it leads, whichever lock backs it (client-go
 * hides its locks behind resourcelock.Interface the same way): the Lease
 * elector and leader-for-life both implement it, so the manager has one code
 * path for either.
 */
export interface LeaderLock {
  /** Resolves once this process leads; rejects if `signal` aborts first, or on an error that stops the attempt. */
  acquire(signal: AbortSignal): Promise<void>;
  /**
   * Keeps leading until `signal` aborts (resolves, still holding: see
   * release()), or rejects with LeaderElectionLostError once leadership is lost.
   */
  holdUntil(signal: AbortSignal): Promise<void>;
  /** Whether this process leads right now. */
  isLeader(): boolean;
  /** Gives leadership up so a successor can take over at once; only once nothing of ours reconciles any more. */
  release(): Promise<void>;
  /** Stops reporting leadership without giving the lock up (it expires, or stays, on its own). */
  abandon(): void;
}

/** Something the manager starts and stops with itself (a webhook server, say). */
export interface Runnable {
  /**
   * Runs until `signal` aborts, then returns within the grace period.
   * Throwing (or returning early with an error) stops the manager: start()
   * rejects with that error.
   */
  start(signal: AbortSignal): Promise<void>;
  /**
   * Whether this runnable may only run on the elected leader. Leaving it out
   * means true, as controller-runtime's LeaderElectionRunnable: return false
   * for work that every replica must do (serving webhooks, say).
   */
  needLeaderElection?(): boolean;
}

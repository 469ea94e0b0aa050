import type { V1ObjectMeta } from '../api/object.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorChainHas, isAlreadyExists, isConflict, isNotFound } from '../api/errors.js';
import { Lease, resourcePath } from '../api/kinds.js';
import type { Logger } from '../log/log.js';
import type { ManagerMetrics } from '../metrics/metrics.js';
import type { RestClient } from '../transport/rest.js';
import type { LeaderLock } from './lock.js';

/**
 * A Lease as it travels as JSON. client-node's LeaseRecord types the times as
 * Date, but the API sends and expects MicroTime strings, so we use our own.
 */
interface LeaseRecord {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** controller-runtime's leader-election timings. How long a rival waits after the last renewal it saw: 15 s. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
/** How long the leader keeps failing to renew before it stops leading: 10 s, safely under the lease duration. */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
/** The wait between renewals and between attempts to acquire: 2 s, so a deadline allows several tries. */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/**
 * Where the elector reads time. Only `monotonic` decides anything (lease
 * expiry, the renew deadline), so stepping the wall clock cannot keep a
 * failing leader in charge or make a healthy one give up. `now` only stamps
 * the Lease's acquireTime and renewTime, which candidates never compare with
 * their own clocks. Tests inject a clock to step the wall clock.
 */
export interface LeaseClock {
  /** Wall-clock time for the Lease's timestamps. */
  now(): Date;
  /** Milliseconds from a clock that never goes backwards. */
  monotonic(): number;
}

/** The process clocks: Date.now() for timestamps, performance.now() for timing. */
export const systemLeaseClock: LeaseClock = {
  now: () => new Date(Date.now()),
  monotonic: () => performance.now(),
};

/** client-go's JitterFactor for the acquire retry: wait retryPeriod plus 0–120 % of it. */
const ACQUIRE_JITTER_FACTOR = 1.2;
/** controller-runtime's floor for the lease client's per-request timeout. */
const MIN_LEASE_REQUEST_TIMEOUT_MS = 1_000;

/**
 * Which Lease a {@link LeaderElector} contends for, as whom, and how fast.
 * The timings must satisfy leaseDuration > renewDeadline > retryPeriod, or
 * the constructor throws.
 */
export interface LeaderElectorOptions {
  /** The client the Lease is read and written with. Required. */
  rest: RestClient;
  /** Lease name (the manager's `leaderElection.id`). Required. */
  name: string;
  /** Namespace of the Lease. Required: the manager resolves it from the Pod's namespace. */
  namespace: string;
  /** Who holds the Lease; unique per process (the manager uses hostname plus a random suffix). Required. */
  identity: string;
  /** How long a rival waits after the last renewal it observed before taking over. Default: 15 s. */
  leaseDurationMs?: number;
  /** How long renewal may keep failing before leadership is given up. Default: 10 s. */
  renewDeadlineMs?: number;
  /** Wait between renewals, and (plus up to 120 % jitter) between attempts to acquire. Default: 2 s. */
  retryPeriodMs?: number;
  /** Time source, so tests can step the wall clock (see LeaseClock). Default: `systemLeaseClock`. */
  clock?: LeaseClock;
  /** Where acquisitions, renewals and losses are logged. Required. */
  logger: Logger;
  /** Sets `leader_election_master_status` for this Lease. Default: no metrics. */
  metrics?: ManagerMetrics;
}

/**
 * Leadership is over: the lease could not be renewed within the renew
 * deadline. holdUntil() rejects with it, and so does every write the
 * elector's fence refuses from then on.
 */
export class LeaderElectionLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LeaderElectionLostError';
  }
}

/** Whether `err` is, or wraps (`cause`, AggregateError), a LeaderElectionLostError: a write refused once leadership was lost. */
export const isLeaderElectionLost = (err: unknown): boolean => errorChainHas(err, LeaderElectionLostError);

/**
 * Lease-based leader election as client-go's leaderelection package: acquire
 * when the lease is free or expired, renew every retry period, and give up
 * leadership if renewal keeps failing past the renew deadline. Expiry is
 * judged by when *we* last saw the record change, not by the holder's clock.
 *
 * Every attempt is bounded in time: each lease request times out after
 * max(renewDeadline/2, 1 s), as controller-runtime configures its lease
 * client, and a renewal that has not succeeded by the renew deadline is
 * abandoned even while a request still hangs. The deadline counts from the
 * *start* of the last successful renewal, so a slow answer cannot stretch it:
 * a leader stops leading at most renewDeadline after the last renewTime the
 * server accepted, while a rival waits leaseDuration after *observing* it.
 *
 * Timers alone cannot keep that promise: a process frozen past its deadline
 * (a long GC pause, a stopped container) runs the I/O callbacks that piled
 * up before its timers notice anything. So once acquired, the elector fences
 * every write of its RestClient ({@link LeaderElector.assertHoldsLease}): a
 * write leaves only while the deadline has not passed by the monotonic
 * clock, checked at the moment it is sent, and the first refusal ends the
 * leadership at once. The gap between the renew deadline and the lease
 * duration is the margin for a write that passed the check and is already
 * on its way.
 *
 * What no check in the process can cover: the check and the send are two
 * steps of one synchronous run (microseconds of work), and a process
 * stopped between them (SIGSTOP, or a preemption under heavy load that a
 * freeze then extends) sends that write when it resumes, however late.
 * leader-freeze.test.ts caught exactly that. A write that must not land
 * after a successor's should carry the resourceVersion it read: the API
 * server refuses it if the object changed since.
 */
export class LeaderElector implements LeaderLock {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly requestTimeoutMs: number;
  private readonly clock: LeaseClock;
  private observed?: { holder?: string; renewTime?: string; at: number };
  /** Monotonic start of the last attempt that acquired or renewed the lease. */
  private lastSuccessStartedAt = 0;
  private leading = false;
  /** Aborted, with the LeaderElectionLostError, when this term of leadership ends; renewed by each acquire(). */
  private term = new AbortController();
  private fenced = false;
  private readonly log: Logger;
  private readonly leasesPath: string;
  private readonly leasePath: string;

  constructor(private readonly options: LeaderElectorOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = Math.ceil(options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS);
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    this.requestTimeoutMs = Math.ceil(Math.max(this.renewDeadlineMs / 2, MIN_LEASE_REQUEST_TIMEOUT_MS));
    this.clock = options.clock ?? systemLeaseClock;
    if (this.leaseDurationMs <= this.renewDeadlineMs)
      throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= this.retryPeriodMs) throw new Error('renewDeadline must be greater than retryPeriod');
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
    this.leasesPath = resourcePath(Lease, options.namespace);
    this.leasePath = resourcePath(Lease, options.namespace, options.name);
    options.metrics?.leaderElectionMasterStatus.set({ name: options.name }, 0);
  }

  /** Whether this process holds the lease right now. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Blocks until this process holds the lease; rejects if `signal` aborts first. */
  async acquire(signal: AbortSignal): Promise<void> {
    this.log.info('attempting to acquire leader lease');
    for (;;) {
      signal.throwIfAborted();
      const startedAt = this.clock.monotonic();
      const attempt = AbortSignal.any([signal, AbortSignal.timeout(this.renewDeadlineMs)]);
      if (await this.tryAcquireOrRenew(attempt)) {
        this.lastSuccessStartedAt = startedAt;
        this.term = new AbortController();
        this.setLeading(true);
        if (!this.fenced) {
          this.fenced = true;
          this.options.rest.fenceWrites((_method, path) => this.fence(path));
        }
        this.log.info('successfully acquired lease');
        return;
      }
      await sleep(jitter(this.retryPeriodMs), undefined, { signal });
    }
  }

  /**
   * Renews every retry period until `signal` aborts (resolves; the lease is
   * kept: see release()) or leadership is lost (rejects with
   * LeaderElectionLostError): no renewal succeeded within the renew
   * deadline, or the write fence found the deadline passed first.
   */
  async holdUntil(signal: AbortSignal): Promise<void> {
    const term = this.term.signal;
    const stopped = AbortSignal.any([signal, term]);
    while (!signal.aborted) {
      await sleep(this.retryPeriodMs, undefined, { signal: stopped }).catch(() => undefined);
      if (signal.aborted) return;
      term.throwIfAborted();
      const deadlineAt = this.lastSuccessStartedAt + this.renewDeadlineMs;
      const round = AbortSignal.any([
        stopped,
        AbortSignal.timeout(Math.max(0, Math.ceil(deadlineAt - this.clock.monotonic()))),
      ]);
      for (;;) {
        const startedAt = this.clock.monotonic();
        if (await this.tryAcquireOrRenew(round)) {
          this.lastSuccessStartedAt = startedAt;
          break;
        }
        if (signal.aborted) return;
        if (round.aborted || this.clock.monotonic() >= deadlineAt)
          throw this.loseLease(
            `could not renew lease ${this.options.namespace}/${this.options.name} within the ${this.renewDeadlineMs / 1000}s renew deadline`,
          );
        await sleep(this.retryPeriodMs, undefined, { signal: round }).catch(() => undefined);
      }
      // A write the fence refused while this renewal was on its way ended the term all the same.
      term.throwIfAborted();
    }
  }

  /**
   * The write fence: returns if this process holds the lease by its own
   * monotonic clock, that is, it leads and the renew deadline, counted from
   * the start of the last successful renewal, has not passed; otherwise ends
   * the leadership and throws LeaderElectionLostError. Synchronous and one
   * clock read, because it runs before every write (see RestClient.fenceWrites).
   */
  assertHoldsLease(): void {
    if (this.leading && this.clock.monotonic() < this.lastSuccessStartedAt + this.renewDeadlineMs) return;
    const lease = `${this.options.namespace}/${this.options.name}`;
    throw this.loseLease(
      this.leading
        ? `lease ${lease} not renewed within the ${this.renewDeadlineMs / 1000}s renew deadline, so writes are refused`
        : `this process no longer holds lease ${lease}, so writes are refused`,
    );
  }

  /**
   * What the RestClient runs before each write. A candidate's own Lease
   * requests pass, so acquire() can run again after a loss (the server's
   * resourceVersion check keeps them safe); a leader's renewals are fenced
   * like any write, so none leaves after its deadline.
   */
  private fence(path: string): void {
    if (!this.leading && (path === this.leasesPath || path === this.leasePath)) return;
    this.assertHoldsLease();
  }

  /** Ends the term once, with one error for every later refusal and for holdUntil(). */
  private loseLease(why: string): LeaderElectionLostError {
    if (!this.term.signal.aborted) {
      this.setLeading(false);
      this.term.abort(new LeaderElectionLostError(`leader election lost: ${why}`));
    }
    return this.term.signal.reason as LeaderElectionLostError;
  }

  /**
   * Clears the holder so another candidate can take over at once, within the
   * renew deadline at most. Only safe once nothing of ours reconciles any
   * more: the Manager calls it after every leader-only runnable has returned.
   */
  async release(): Promise<void> {
    if (!this.leading) return;
    const signal = AbortSignal.timeout(this.renewDeadlineMs);
    try {
      const lease = await this.get(signal);
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      const now = microTime(this.clock.now());
      lease.spec = {
        ...lease.spec,
        holderIdentity: undefined,
        leaseDurationSeconds: 1,
        renewTime: now,
        acquireTime: now,
      };
      await this.options.rest.request('PUT', this.leasePath, { body: lease, signal: this.requestSignal(signal) });
      this.log.info('released leader lease');
    } catch (err) {
      this.log.error({ err }, 'failed to release leader lease');
    } finally {
      this.setLeading(false);
    }
  }

  /** Stops reporting leadership without touching the Lease (it expires on its own). */
  abandon(): void {
    this.setLeading(false);
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    try {
      return await untilAborted(this.acquireOrRenewOnce(signal), signal);
    } catch (err) {
      if (signal.aborted) return false;
      if (isConflict(err) || isAlreadyExists(err)) return false;
      this.log.warn({ err }, 'error acquiring or renewing lease');
      return false;
    }
  }

  private async acquireOrRenewOnce(signal: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    const { identity, name, namespace } = this.options;
    const leaseDurationSeconds = Math.round(this.leaseDurationMs / 1000);
    const existing = await this.get(signal);
    if (!existing) {
      const lease: LeaseRecord = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        },
      };
      await this.options.rest.request('POST', this.leasesPath, { body: lease, signal: this.requestSignal(signal) });
      this.observe(lease);
      return true;
    }
    const spec = existing.spec ?? {};
    this.observe(existing);
    const holder = spec.holderIdentity;
    const heldByOther = holder && holder !== identity;
    const observedDurationMs = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (heldByOther && this.observed!.at + observedDurationMs > this.clock.monotonic()) return false;
    // Any change of holder is a transition, including taking over a released (holderless) lease.
    const takingOver = holder !== identity;
    existing.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: microTime(now),
      acquireTime: takingOver ? microTime(now) : (spec.acquireTime ?? microTime(now)),
      leaseTransitions: (spec.leaseTransitions ?? 0) + (takingOver ? 1 : 0),
    };
    const updated = await this.options.rest.request<LeaseRecord>('PUT', this.leasePath, {
      body: existing,
      signal: this.requestSignal(signal),
    });
    this.observe(updated);
    if (takingOver) this.log.info({ previousHolder: holder || '(none)' }, 'lease taken over');
    return true;
  }

  private async get(signal: AbortSignal): Promise<LeaseRecord | undefined> {
    try {
      return await this.options.rest.request<LeaseRecord>('GET', this.leasePath, {
        signal: this.requestSignal(signal),
      });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One lease request: aborted with the attempt, or after the per-request timeout. */
  private requestSignal(signal: AbortSignal): AbortSignal {
    return AbortSignal.any([signal, AbortSignal.timeout(this.requestTimeoutMs)]);
  }

  private observe(lease: LeaseRecord): void {
    const holder = lease.spec?.holderIdentity;
    const renewTime = lease.spec?.renewTime;
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime) {
      this.observed = { holder, renewTime, at: this.clock.monotonic() };
    }
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.metrics?.leaderElectionMasterStatus.set({ name: this.options.name }, leading ? 1 : 0);
  }
}

/**
 * Settles with `promise`, or rejects as soon as `signal` aborts: a request
 * that ignores its abort must not hold up the renew deadline.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The request started all the same (a retry after the deadline passed in its wait): its failure is expected, not unhandled.
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** metav1.MicroTime wants exactly six fractional digits. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * @internal How long a candidate waits between acquire attempts: the retry
 * period plus a random 0–120 % of it (client-go's JitterFactor 1.2), so
 * candidates that start together don't keep colliding.
 */
export function jitter(ms: number, random: () => number = Math.random): number {
  return ms + random() * ms * ACQUIRE_JITTER_FACTOR;
}

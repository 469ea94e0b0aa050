import type { V1ObjectMeta } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { Lease, resourcePath } from './kinds.js';
import type { Logger } from './log.js';
import type { ManagerMetrics } from './metrics.js';
import type { RestClient } from './rest.js';

/**
 * A Lease as it travels as JSON. client-node's LeaseRecord types the times as
 * Date, but the API sends and expects MicroTime strings, so we use our own.
 */
interface LeaseRecord {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

/** controller-runtime's leader-election timings. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

export interface LeaderElectorOptions {
  rest: RestClient;
  /** Lease name (the manager's leaderElectionID). */
  name: string;
  namespace: string;
  /** Unique per process: hostname plus a random suffix. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Give the lease up on a clean stop, so the next leader need not wait for expiry. */
  releaseOnCancel?: boolean;
  logger: Logger;
  metrics?: ManagerMetrics;
}

/**
 * Lease-based leader election as client-go's leaderelection package: acquire
 * when the lease is free or expired, renew every retry period, and give up
 * leadership if renewal keeps failing past the renew deadline. Expiry is
 * judged by when *we* last saw the record change, not by the holder's clock.
 */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed?: { holder?: string; renewTime?: string; at: number };
  private leading = false;
  private readonly log: Logger;

  constructor(private readonly options: LeaderElectorOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= this.retryPeriodMs) throw new Error('renewDeadline must be greater than retryPeriod');
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
    options.metrics?.leaderElectionMasterStatus.set({ name: options.name }, 0);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Blocks until this process holds the lease; rejects if `signal` aborts first. */
  async acquire(signal: AbortSignal): Promise<void> {
    this.log.info('attempting to acquire leader lease');
    for (;;) {
      signal.throwIfAborted();
      if (await this.tryAcquireOrRenew(signal)) {
        this.setLeading(true);
        this.log.info('successfully acquired lease');
        return;
      }
      await sleep(jitter(this.retryPeriodMs), undefined, { signal });
    }
  }

  /**
   * Renews until `signal` aborts (resolves, releasing the lease if asked) or
   * renewal fails for longer than the renew deadline (rejects: leadership lost).
   */
  async holdUntil(signal: AbortSignal): Promise<void> {
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.retryPeriodMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew(signal)) {
        lastRenew = Date.now();
        continue;
      }
      if (Date.now() - lastRenew > this.renewDeadlineMs) {
        this.setLeading(false);
        throw new Error(`leader election lost: could not renew lease ${this.options.namespace}/${this.options.name} within ${this.renewDeadlineMs / 1000}s`);
      }
    }
    if (this.options.releaseOnCancel !== false) await this.release();
    this.setLeading(false);
  }

  /** Clears the holder so another candidate can take over at once. */
  async release(): Promise<void> {
    if (!this.leading) return;
    try {
      const lease = await this.get(undefined);
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      const now = microTime(new Date());
      lease.spec = { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: now, acquireTime: now };
      await this.options.rest.request('PUT', this.path(this.options.name), { body: lease });
      this.log.info('released leader lease');
    } catch (err) {
      this.log.error({ err }, 'failed to release leader lease');
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = new Date();
    const { identity, name, namespace } = this.options;
    const leaseDurationSeconds = Math.round(this.leaseDurationMs / 1000);
    try {
      const existing = await this.get(signal);
      if (!existing) {
        const lease: LeaseRecord = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        };
        await this.options.rest.request('POST', this.path(), { body: lease, signal });
        this.observe(lease);
        return true;
      }
      const spec = existing.spec ?? {};
      this.observe(existing);
      const holder = spec.holderIdentity;
      const heldByOther = holder && holder !== identity;
      const observedDurationMs = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
      if (heldByOther && this.observed!.at + observedDurationMs > Date.now()) return false;
      const takingOver = holder !== identity;
      existing.spec = {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds,
        renewTime: microTime(now),
        acquireTime: takingOver ? microTime(now) : spec.acquireTime ?? microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (takingOver && holder ? 1 : 0),
      };
      const updated = await this.options.rest.request<LeaseRecord>('PUT', this.path(name), { body: existing, signal });
      this.observe(updated);
      if (takingOver) this.log.info({ previousHolder: holder || '(none)' }, 'lease taken over');
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      if (isConflict(err) || isAlreadyExists(err)) return false;
      this.log.warn({ err }, 'error acquiring or renewing lease');
      return false;
    }
  }

  private async get(signal: AbortSignal | undefined): Promise<LeaseRecord | undefined> {
    try {
      return await this.options.rest.request<LeaseRecord>('GET', this.path(this.options.name), { signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private observe(lease: LeaseRecord): void {
    const holder = lease.spec?.holderIdentity;
    const renewTime = lease.spec?.renewTime;
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime) {
      this.observed = { holder, renewTime, at: Date.now() };
    }
  }

  private path(name?: string): string {
    return resourcePath(Lease, this.options.namespace, name);
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.metrics?.leaderElectionMasterStatus.set({ name: this.options.name }, leading ? 1 : 0);
  }
}

/** metav1.MicroTime wants exactly six fractional digits. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** client-go adds up to 20 % jitter to the retry period so candidates don't collide. */
function jitter(ms: number): number {
  return ms + Math.random() * ms * 0.2;
}

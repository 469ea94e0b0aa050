import type { ManagerMetrics } from './metrics.js';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimiter.js';

/** How a {@link WorkQueue} is named, paced and observed. */
export interface WorkQueueOptions {
  /** Queue name for the `workqueue_*` metrics (the controller name). Required. */
  name: string;
  /** Delay before each retry of a key. Default: {@link defaultControllerRateLimiter} (5 ms → 1000 s per key, 10 qps / 100 burst overall). */
  rateLimiter?: RateLimiter;
  /** Where the `workqueue_*` metrics go. Default: none are recorded. */
  metrics?: ManagerMetrics;
}

/**
 * client-go's rate-limited delaying work queue, keyed by `namespace/name`.
 *
 * - A key added while already waiting is folded into the waiting entry.
 * - A key added while being processed is parked ("dirty") and queued again
 *   only when `done` is called, so no key is ever handed to two workers at
 *   once, and no change is lost.
 * - `addAfter` keeps only the earliest pending time per key.
 */
export class WorkQueue {
  readonly name: string;
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private readonly rateLimiter: RateLimiter;
  private readonly metrics?: ManagerMetrics;
  private shuttingDown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.metrics = options.metrics;
  }

  /** Queues `key` now (folded with any waiting duplicate). */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics?.workqueueAdds.inc(this.labels());
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Queues `key` after `delayMs`; an earlier pending time wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, timer });
  }

  /** Queues `key` after the rate limiter's backoff for it. */
  addRateLimited(key: string): void {
    this.metrics?.workqueueRetries.inc(this.labels());
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Resets `key`'s backoff (after a successful reconcile). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  /** How many times `key` was retried with backoff since it was last forgotten. */
  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** Keys waiting to be handed out. */
  len(): number {
    return this.queue.length;
  }

  /**
   * Waits for the next key and marks it as processing. Resolves `undefined`
   * once the queue is shut down and empty: the worker should exit.
   */
  get(): Promise<string | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` as finished; queues it again if it was added meanwhile. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics?.workqueueWorkDuration.observe(this.labels(), (performance.now() - started) / 1000);
    if (this.dirty.has(key)) this.enqueue(key);
  }

  /** Stops accepting keys and drops pending delayed adds; waiting keys still drain. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    if (this.queue.length === 0) {
      for (const waiter of this.waiters.splice(0)) waiter(undefined);
    }
  }

  /** True once shutDown was called. */
  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Called on each metrics scrape: the gauges that depend on "now". */
  updateProgressMetrics(): void {
    if (!this.metrics) return;
    const now = performance.now();
    let unfinished = 0;
    let longest = 0;
    for (const started of this.processing.values()) {
      const seconds = (now - started) / 1000;
      unfinished += seconds;
      longest = Math.max(longest, seconds);
    }
    this.metrics.workqueueUnfinishedWork.set(this.labels(), unfinished);
    this.metrics.workqueueLongestRunningProcessor.set(this.labels(), longest);
  }

  private enqueue(key: string): void {
    this.addedAt.set(key, performance.now());
    const waiter = this.waiters.shift();
    if (waiter) {
      this.queue.push(key);
      waiter(this.take());
    } else {
      this.queue.push(key);
      this.metrics?.workqueueDepth.set(this.labels(), this.queue.length);
    }
  }

  private take(): string {
    const key = this.queue.shift()!;
    this.dirty.delete(key);
    this.processing.set(key, performance.now());
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (this.metrics) {
      this.metrics.workqueueDepth.set(this.labels(), this.queue.length);
      if (added !== undefined) this.metrics.workqueueQueueDuration.observe(this.labels(), (performance.now() - added) / 1000);
    }
    if (this.shuttingDown && this.queue.length === 0) {
      for (const waiter of this.waiters.splice(0)) waiter(undefined);
    }
    return key;
  }

  private labels(): { name: string; controller: string } {
    return { name: this.name, controller: this.name };
  }
}

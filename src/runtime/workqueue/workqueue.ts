import type { ManagerMetrics } from '../metrics/metrics.js';
import {
  ItemExponentialFailureRateLimiter,
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  type RateLimiter,
} from './ratelimiter.js';

/**
 * controller-runtime's `handler.LowPriority`: the priority of events that tell
 * nothing new — an informer's initial list and a resync of an unchanged object —
 * so that after a restart, real changes are reconciled before the backlog.
 */
export const LOW_PRIORITY = -100;

/** How a {@link WorkQueue} is named, paced and observed. */
export interface WorkQueueOptions {
  /** Queue name for the `workqueue_*` metrics (the controller name). Required. */
  name: string;
  /**
   * Delay before each retry of a key. Default: a per-key exponential backoff
   * from 5 ms to 1000 s, as controller-runtime's priority queue (no overall
   * 10 qps bucket; pass `defaultControllerRateLimiter()` to get one).
   */
  rateLimiter?: RateLimiter;
  /** Where the `workqueue_*` metrics go. Default: none are recorded. */
  metrics?: ManagerMetrics;
}

/** How one key is added; see {@link WorkQueue.addWithOptions}. */
export interface AddOptions {
  /** Higher is handed out first. Default: 0. A queued key keeps the highest priority it was added with. */
  priority?: number;
  /** Hand the key out no sooner than this many milliseconds from now. */
  afterMs?: number;
  /** Also wait the rate limiter's backoff for this key; the shorter of it and `afterMs` wins. */
  rateLimited?: boolean;
}

/** A queued key: ready (`readyAt` unset) or waiting for `readyAt`. */
interface Entry {
  key: string;
  priority: number;
  /** Orders ready keys of one priority: the order they were added, or became ready after waiting. */
  order: number;
  readyAt?: number;
  timer?: NodeJS.Timeout;
  /** performance.now() when it became ready, for `workqueue_queue_duration_seconds`. */
  readySince?: number;
}

/** A key handed to a worker, with the priority it was queued at. */
export interface Taken {
  key: string;
  priority: number;
}

/** A ready key as the heap holds it; stale once its entry is gone or was re-ordered. */
interface HeapNode {
  key: string;
  priority: number;
  order: number;
}

/**
 * controller-runtime's priority queue (its default since v0.23), keyed by
 * `namespace/name`:
 *
 * - Each key is queued at most once. Adding a queued key merges the two:
 *   the earliest readiness and the highest priority win, and a ready key
 *   keeps its place. So a reconcile that asks to requeue and also triggers
 *   its own watch event runs once more, not twice.
 * - Ready keys are handed out by priority, then in the order they were added
 *   (a key that waited is ordered by when it became ready). A waiting key that
 *   an event makes ready at once keeps the place of its first add.
 * - A key being processed is never handed to a second worker; adding it again
 *   queues it, to be handed out after `done`, so no change is lost.
 * - After `shutDown`, `get` resolves `undefined` at once: queued keys are
 *   dropped, as in controller-runtime, and only in-flight reconciles finish.
 */
export class WorkQueue {
  readonly name: string;
  private readonly entries = new Map<string, Entry>();
  /** Ready keys, a binary heap by (priority desc, order asc); may hold stale nodes, skipped on take. */
  private readonly heap: HeapNode[] = [];
  private readonly readyCount = new Map<number, number>();
  private readonly processing = new Map<string, number>();
  private readonly waiters: Array<(taken: Taken | undefined) => void> = [];
  private readonly rateLimiter: RateLimiter;
  private readonly metrics?: ManagerMetrics;
  private nextOrder = 0;
  private shuttingDown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.rateLimiter =
      options.rateLimiter ?? new ItemExponentialFailureRateLimiter(DEFAULT_BASE_DELAY_MS, DEFAULT_MAX_DELAY_MS);
    this.metrics = options.metrics;
    this.metrics?.workqueueDepth.set({ ...this.labels(), priority: '0' }, 0);
  }

  /** Queues `key` now, at `priority` (default 0). */
  add(key: string, priority?: number): void {
    this.addWithOptions(key, { priority });
  }

  /** Queues `key` after `delayMs`; an earlier readiness wins. */
  addAfter(key: string, delayMs: number, priority?: number): void {
    this.addWithOptions(key, { afterMs: delayMs, priority });
  }

  /** Queues `key` after the rate limiter's backoff for it. */
  addRateLimited(key: string, priority?: number): void {
    this.addWithOptions(key, { rateLimited: true, priority });
  }

  /** Queues `key` as `options` say, merged with its queued entry if it has one. */
  addWithOptions(key: string, options: AddOptions): void {
    if (this.shuttingDown) return;
    let after = options.afterMs ?? 0;
    if (options.rateLimited) {
      const backoff = this.rateLimiter.when(key);
      if (after <= 0 || backoff < after) after = backoff;
    }
    const priority = options.priority ?? 0;
    const readyAt = after > 0 ? performance.now() + after : undefined;
    if (readyAt !== undefined) this.metrics?.workqueueRetries.inc(this.labels());

    const entry = this.entries.get(key);
    if (!entry) {
      const fresh: Entry = { key, priority, order: this.nextOrder++ };
      this.entries.set(key, fresh);
      if (readyAt === undefined) this.makeReady(fresh);
      else this.wait(fresh, readyAt);
      return;
    }
    const wasReady = entry.readyAt === undefined;
    if (priority > entry.priority) {
      // Placed last among the keys of its new priority, as controller-runtime keeps FIFO per priority.
      if (wasReady) this.countReady(entry.priority, -1);
      entry.priority = priority;
      entry.order = this.nextOrder++;
      if (wasReady) {
        this.countReady(entry.priority, +1);
        this.push(entry);
      }
    }
    if (wasReady) {
      this.dispatch();
      return;
    }
    if (readyAt === undefined) {
      clearTimeout(entry.timer);
      this.makeReady(entry);
    } else if (readyAt < entry.readyAt!) {
      clearTimeout(entry.timer);
      this.wait(entry, readyAt);
    }
  }

  /** Resets `key`'s backoff (after a successful reconcile). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  /** How many times `key` was retried with backoff since it was last forgotten. */
  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** Keys ready to be handed out (waiting ones are not counted). */
  len(): number {
    let ready = 0;
    for (const count of this.readyCount.values()) ready += count;
    return ready;
  }

  /**
   * Waits for the next ready key that no worker holds and marks it as
   * processing. Resolves `undefined` once the queue is shut down: the worker
   * should exit.
   */
  get(): Promise<string | undefined> {
    return this.getWithPriority().then((taken) => taken?.key);
  }

  /** As {@link get}, with the priority the key was queued at (a requeue keeps it). */
  getWithPriority(): Promise<Taken | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const entry = this.take();
    if (entry) return Promise.resolve({ key: entry.key, priority: entry.priority });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` as finished; if it was added meanwhile, it can now be handed out. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics?.workqueueWorkDuration.observe(this.labels(), (performance.now() - started) / 1000);
    this.dispatch();
  }

  /** Stops handing out and accepting keys; waiting workers get `undefined`. In-flight keys may still call `done`. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const entry of this.entries.values()) clearTimeout(entry.timer);
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
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

  private wait(entry: Entry, readyAt: number): void {
    entry.readyAt = readyAt;
    // Whole milliseconds, rounded up: Node truncates a fractional delay, which would hand the key out early.
    const delayMs = Math.ceil(readyAt - performance.now());
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      // Ordered by when it became ready, not by when it was first added.
      entry.order = this.nextOrder++;
      this.makeReady(entry);
    }, delayMs);
  }

  private makeReady(entry: Entry): void {
    entry.readyAt = undefined;
    entry.readySince = performance.now();
    this.metrics?.workqueueAdds.inc(this.labels());
    this.countReady(entry.priority, +1);
    this.push(entry);
    this.dispatch();
  }

  /** Hands ready keys to waiting workers while both exist. */
  private dispatch(): void {
    while (this.waiters.length > 0 && !this.shuttingDown) {
      const entry = this.take();
      if (!entry) return;
      this.waiters.shift()!({ key: entry.key, priority: entry.priority });
    }
  }

  /** Removes and returns the first ready key no worker holds, marking it as processing. */
  private take(): Entry | undefined {
    const held: HeapNode[] = [];
    let found: Entry | undefined;
    while (this.heap.length > 0) {
      const node = this.pop();
      const entry = this.entries.get(node.key);
      if (!entry || entry.readyAt !== undefined || entry.order !== node.order) continue; // stale
      if (this.processing.has(node.key)) {
        held.push(node);
        continue;
      }
      found = entry;
      break;
    }
    for (const node of held) this.pushNode(node);
    if (!found) return undefined;
    this.entries.delete(found.key);
    this.countReady(found.priority, -1);
    const now = performance.now();
    this.processing.set(found.key, now);
    if (this.metrics && found.readySince !== undefined)
      this.metrics.workqueueQueueDuration.observe(this.labels(), (now - found.readySince) / 1000);
    return found;
  }

  private countReady(priority: number, delta: number): void {
    const count = (this.readyCount.get(priority) ?? 0) + delta;
    this.readyCount.set(priority, count);
    this.metrics?.workqueueDepth.set({ ...this.labels(), priority: String(priority) }, count);
  }

  private push(entry: Entry): void {
    this.pushNode({ key: entry.key, priority: entry.priority, order: entry.order });
  }

  /** True if `a` is handed out before `b`. */
  private static before(a: HeapNode, b: HeapNode): boolean {
    return a.priority !== b.priority ? a.priority > b.priority : a.order < b.order;
  }

  private pushNode(node: HeapNode): void {
    const heap = this.heap;
    let index = heap.push(node) - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!WorkQueue.before(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  private pop(): HeapNode {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        const right = left + 1;
        let first = index;
        if (left < heap.length && WorkQueue.before(heap[left]!, heap[first]!)) first = left;
        if (right < heap.length && WorkQueue.before(heap[right]!, heap[first]!)) first = right;
        if (first === index) break;
        [heap[index], heap[first]] = [heap[first]!, heap[index]!];
        index = first;
      }
    }
    return top;
  }

  private labels(): { name: string; controller: string } {
    return { name: this.name, controller: this.name };
  }
}

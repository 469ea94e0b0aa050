/**
 * Requeue delays for failed keys, as client-go's workqueue rate limiters.
 * A controller's default is a per-key exponential backoff alone, as with
 * controller-runtime's priority queue; `defaultControllerRateLimiter()` is
 * client-go's older default, which also caps a storm of retries across all
 * keys with a token bucket.
 */
export interface RateLimiter {
  /** Milliseconds to wait before retrying `key`; counts one more failure. */
  when(key: string): number;
  /** Clears the failure history of `key` (after a success). */
  forget(key: string): void;
  /** How many times `key` has failed since it was last forgotten. */
  numRequeues(key: string): number;
}

/** Per-key exponential backoff: base·2^failures, capped. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
  ) {}

  when(key: string): number {
    const exponent = this.failures.get(key) ?? 0;
    this.failures.set(key, exponent + 1);
    const delay = this.baseDelayMs * 2 ** exponent;
    return Number.isFinite(delay) && delay < this.maxDelayMs ? delay : this.maxDelayMs;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** A token bucket shared by all keys (golang.org/x/time/rate semantics). */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The largest delay of several limiters. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: string): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.numRequeues(key)));
  }
}

/** Per-item backoff start of client-go's DefaultControllerRateLimiter: the first retry waits 5 ms, doubling per failure. */
export const DEFAULT_BASE_DELAY_MS = 5;
/** Per-item backoff cap of client-go's DefaultControllerRateLimiter: 1000 s. */
export const DEFAULT_MAX_DELAY_MS = 1000 * 1000;
/** The overall retry budget of client-go's DefaultControllerRateLimiter: 10 retries per second... */
export const DEFAULT_QPS = 10;
/** ...with bursts of up to 100. */
export const DEFAULT_BURST = 100;

/**
 * client-go's DefaultTypedControllerRateLimiter: max(5 ms→1000 s per key, 10 qps / 100 burst).
 * controller-runtime uses it only with its priority queue turned off; pass it
 * as `rateLimiter` to cap retries across all keys.
 */
export function defaultControllerRateLimiter(): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(DEFAULT_BASE_DELAY_MS, DEFAULT_MAX_DELAY_MS),
    new BucketRateLimiter(DEFAULT_QPS, DEFAULT_BURST),
  );
}

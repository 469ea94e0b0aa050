/**
 * `ts-operator-sdk/workqueue`: the rate-limited, de-duplicating work queue and
 * its rate limiters.
 * This file is only the package's public surface.
 */
export { WorkQueue, LOW_PRIORITY, type WorkQueueOptions, type AddOptions, type Taken } from './workqueue.js';
export {
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_QPS,
  DEFAULT_BURST,
  type RateLimiter,
} from './ratelimiter.js';

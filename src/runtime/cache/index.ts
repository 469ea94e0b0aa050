/**
 * `ts-operator-sdk/cache`: the shared informer cache the manager's client
 * reads from, and `Informer` (list+watch, store, indexes).
 * This file is only the package's public surface.
 */
export { Cache, type CacheOptions, DEFAULT_CACHE_SYNC_TIMEOUT_MS } from './cache.js';
export {
  Informer,
  DEFAULT_RESYNC_PERIOD_MS,
  type InformerEventHandler,
  type InformerOptions,
  type AddInfo,
  type DeleteInfo,
  type IndexFunc,
} from './informer.js';

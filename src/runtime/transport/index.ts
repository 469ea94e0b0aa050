/**
 * `ts-operator-sdk/transport`: the HTTP layer to the API server: `RestClient`
 * (QPS limits, retries, watches, the leader's write fence), kubeconfig loading
 * and the REST mapper (kind → resource). controller-runtime spreads this over
 * `client/config` and `client/apiutil`.
 * This file is only the package's public surface.
 */
export {
  RestClient,
  WatchStalledError,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_MAX_RETRIES,
  type UpgradeTarget,
  type WriteFence,
  type RestClientOptions,
  type RequestObserver,
  type WatchEvent,
  type RequestOptions,
  type Query,
} from './rest.js';
export {
  loadKubeConfig,
  inClusterConfig,
  RestConfig,
  type KubeConfigSource,
  type KubeConfigCluster,
  type KubeConfigUser,
  type KubeConfigContext,
} from './kubeconfig.js';
export { RestMapper } from './restmapper.js';

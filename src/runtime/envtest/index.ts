/**
 * `ts-operator-sdk/envtest`: a real etcd + kube-apiserver for tests, and the
 * setup-envtest downloader that fetches those binaries. This file is only
 * the public surface.
 */
export { Environment, type EnvironmentOptions, ADMIN_USER, DEFAULT_CONTROL_PLANE_TIMEOUT_MS } from './environment.js';
export type { EnvtestUser } from './controlplane.js';
export type { WebhookInstallOptions } from './webhook-install.js';
export {
  locateBinary,
  binaryOverrideVariable,
  DEFAULT_BINARY_ASSETS_DIRECTORY,
  type ControlPlaneBinary,
} from './assets.js';
export { readCRDs, DEFAULT_CRD_INSTALL_TIMEOUT_MS } from './crds.js';
export {
  setupEnvtestAssets,
  cachedEnvtestAssets,
  defaultEnvtestCacheDir,
  goPlatform,
  DEFAULT_ENVTEST_INDEX_URL,
  type SetupEnvtestOptions,
} from './setup-envtest.js';
export {
  envtestSuite,
  sharedKubeConfig,
  skipEnvtest,
  envtestSkipped,
  reconcileContext,
  SHARED_KUBECONFIG_VARIABLE,
  SKIP_ENVTEST_VARIABLE,
  SUITE_START_TIMEOUT_MS,
  type EnvtestSuiteHooks,
  type EnvtestSuiteIO,
} from './suite.js';

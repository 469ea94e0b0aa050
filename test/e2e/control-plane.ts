import { Environment, type EnvironmentOptions } from '../../src/runtime/envtest/index.js';

/**
 * Starts the real etcd + kube-apiserver for a test file. Our end-to-end
 * tests never skip: without KUBEBUILDER_ASSETS they fail and say how to fix it.
 */
export async function startControlPlane(options: EnvironmentOptions = {}): Promise<Environment> {
  if (!process.env.KUBEBUILDER_ASSETS) {
    throw new Error('KUBEBUILDER_ASSETS is not set: run `bash ci/build-test-assets.sh` and export KUBEBUILDER_ASSETS=<the directory it prints> (npm test and npm run test:e2e do this for you)');
  }
  const env = new Environment(options);
  await env.start();
  return env;
}

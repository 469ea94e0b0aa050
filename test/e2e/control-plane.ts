import { Environment, type EnvironmentOptions } from '../../src/runtime/envtest/index.js';
import { ControllerManager, locateControllerManager } from './controller-manager.js';

/**
 * Starts the real etcd + kube-apiserver for a test file. Our end-to-end
 * tests never skip: without KUBEBUILDER_ASSETS they fail and say how to fix it.
 */
export async function startControlPlane(options: EnvironmentOptions = {}): Promise<Environment> {
  if (!process.env.KUBEBUILDER_ASSETS) {
    throw new Error(
      'KUBEBUILDER_ASSETS is not set: run `bash scripts/build-test-assets.sh` and export KUBEBUILDER_ASSETS=<the directory it prints> (npm test and npm run test:e2e do this for you)',
    );
  }
  const env = new Environment(options);
  await env.start();
  return env;
}

/** The test control plane with a real kube-controller-manager, and one way to stop both. */
export interface ControlPlaneWithControllers {
  env: Environment;
  controllerManager: ControllerManager;
  /** Stops kube-controller-manager first, so it does not log errors against a vanished API server. */
  stop(): Promise<void>;
}

/**
 * etcd, kube-apiserver and kube-controller-manager (garbage collector,
 * Deployments, ReplicaSets, namespaces), for tests where Kubernetes itself
 * must act on what the operator wrote. CRDs in `options` are installed before
 * the controller manager starts, so its garbage collector knows them at once.
 */
export async function startControlPlaneWithControllers(
  options: EnvironmentOptions = {},
): Promise<ControlPlaneWithControllers> {
  locateControllerManager();
  const env = await startControlPlane(options);
  let controllerManager: ControllerManager;
  try {
    controllerManager = await ControllerManager.start(env);
  } catch (err) {
    await env.stop();
    throw err;
  }
  return {
    env,
    controllerManager,
    async stop() {
      try {
        await controllerManager.stop();
      } finally {
        await env.stop();
      }
    },
  };
}

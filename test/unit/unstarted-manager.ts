/**
 * A real Manager that is never started, for tests of what gets registered on
 * it (webhook paths, controllers) without an API server: its kubeconfig
 * points at a loopback port nothing listens on.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Manager } from '../../src/runtime/index.js';
import { silentLogger } from '../../src/runtime/log/index.js';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
  users: [{ name: 'u' }],
  contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
  currentContext: 'c',
});

export function unstartedManager(): Manager {
  return new Manager({ kubeConfig, logger: silentLogger, handleSignals: false });
}

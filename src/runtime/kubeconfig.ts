import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads the REST config in controller-runtime's order: an explicit path
 * (the `--kubeconfig` flag), `KUBECONFIG`, in-cluster service account, then
 * `~/.kube/config`. In-cluster comes before the home directory so that a pod
 * never picks up a stray file baked into its image.
 */
export function loadKubeConfig(explicitPath?: string): KubeConfig {
  const kc = new KubeConfig();
  if (explicitPath) {
    kc.loadFromFile(explicitPath);
    return kc;
  }
  if (process.env.KUBECONFIG) {
    // client-node merges a colon-separated KUBECONFIG list as kubectl does.
    kc.loadFromDefault();
    return kc;
  }
  if (process.env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN)) {
    kc.loadFromCluster();
    return kc;
  }
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) {
    kc.loadFromFile(home);
    return kc;
  }
  throw new Error('no Kubernetes config found: set KUBECONFIG, create ~/.kube/config, or run inside a cluster');
}

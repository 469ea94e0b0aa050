/**
 * `ts-operator-sdk/client-node`: the bridge to @kubernetes/client-node, for
 * an operator that also uses client-node's own API clients, and for the
 * kubeconfig features the transport hands to client-node (a legacy
 * `auth-provider`, a cluster's `proxy-url`).
 *
 * Its own entry point, outside `ts-operator-sdk/transport`, because its
 * declarations name client-node's `KubeConfig`, which reaches client-node's
 * whole API (about 850 declaration files): every project importing the
 * transport would pay for them in each type check. client-node itself is
 * imported only when one of these functions runs.
 */
import type { KubeConfigSource } from './kubeconfig.js';

/**
 * A client-node `KubeConfig` holding the current cluster and user of
 * `source`, for client-node's own API clients. Imports client-node (about
 * 80 MiB and most of a second), so call it only where they are needed.
 */
export async function toClientNodeKubeConfig(
  source: KubeConfigSource,
): Promise<import('@kubernetes/client-node').KubeConfig> {
  return clientNodeKubeConfig(source, 'toClientNodeKubeConfig() builds a client-node KubeConfig');
}

/** {@link toClientNodeKubeConfig}, with `why` client-node is needed for the error when it is not installed. */
export async function clientNodeKubeConfig(
  source: KubeConfigSource,
  why: string,
): Promise<import('@kubernetes/client-node').KubeConfig> {
  const { KubeConfig } = await importClientNode(why);
  const cluster = source.getCurrentCluster();
  const user = source.getCurrentUser();
  if (!cluster || !user) throw new Error('the kubeconfig has no current cluster and user: set current-context');
  const kc = new KubeConfig();
  const { tokenFile, ...rest } = user;
  kc.loadFromClusterAndUser(
    { ...cluster, skipTLSVerify: cluster.skipTLSVerify === true },
    tokenFile && !rest.token && !rest.authProvider
      ? { ...rest, authProvider: { name: 'tokenFile', config: { tokenFile } } }
      : rest,
  );
  return kc;
}

/**
 * Imports client-node, or names the fix when it is not installed. The SDK
 * lists it as an optional dependency and a generated project as a
 * devDependency (its types), so an operator image, installed with
 * `--omit=dev --omit=optional`, does not carry it: only a kubeconfig that
 * needs it (`why`) must add it to the operator's dependencies.
 */
export async function importClientNode(why: string): Promise<typeof import('@kubernetes/client-node')> {
  try {
    return await import('@kubernetes/client-node');
  } catch (err) {
    const missing =
      (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      String((err as Error).message).includes("'@kubernetes/client-node'");
    if (!missing) throw err;
    throw new Error(
      `${why}, which needs @kubernetes/client-node, and it is not installed: add it to the operator's dependencies (npm install @kubernetes/client-node)`,
      { cause: err },
    );
  }
}

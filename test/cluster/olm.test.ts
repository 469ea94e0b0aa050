/**
 * Issue 15's OLM workflow on the real one-node cluster: OLM v0 built from
 * the module proxy (ci/build-olm-assets.sh) into local images, installed
 * from its own release manifests with `olm install`, then `olm status`,
 * `run bundle` of a fixture bundle until its CSV has Succeeded and its
 * operator pod runs, `run bundle-upgrade` to a second version, `cleanup`,
 * and `olm uninstall`, each leaving the cluster as the next step expects.
 *
 * The local OLM images and loopback-served manifests come from olm-local.ts.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { runCliAsync, type CliExit } from '../scaffold/harness.js';
import { FIXTURE_CRD, FIXTURE_PACKAGE, fixtureBundleFiles, pushImage } from '../e2e/olm-fixtures.js';
import { useCluster } from './cluster.js';
import { kubectl } from './kubectl.js';
import { prepareLocalOlm, type LocalOlm } from './olm-local.js';
import { pushBusyboxImage } from './tiny-images.js';

const cluster = useCluster();
/** Generous: every step pulls images and waits on OLM's controllers on a shared 2-core machine. */
const STEP_TIMEOUT = '5m';
const NAMESPACE = 'olm-e2e';
let localOlm: LocalOlm | undefined;

type Result = CliExit;

const cli = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> => runCliAsync([...args, '--kubeconfig', cluster().kubeconfigPath], { env });

function ok(result: Result, what: string): Result {
  assert.equal(result.code, 0, `${what} failed:\n${result.stderr}\n${result.stdout}`);
  return result;
}

/** Pushes the local OLM images and serves its manifests (olm-local.ts), then pushes the fixture operator and its two bundles. */
async function prepare(): Promise<void> {
  localOlm = await prepareLocalOlm(cluster());
  const { registry, registryUrl } = cluster();
  const pushHost = new URL(registryUrl).host;
  await pushBusyboxImage(registryUrl, 'widget-operator', 'v1');
  const operatorImage = `${registry}/widget-operator:v1`;
  for (const version of ['0.0.1', '0.0.2']) {
    await pushImage(pushHost, 'widget-operator-bundle', `v${version}`, fixtureBundleFiles(version, operatorImage, ['sleep', '100000']));
  }
}

after(async () => {
  await localOlm?.close();
});

test('olm install, status, run bundle, bundle-upgrade, cleanup and olm uninstall on the one-node cluster', { timeout: 3_600_000 }, async () => {
  await prepare();
  const olmEnv = localOlm!.env;
  const { registry } = cluster();

  const install = ok(await cli(['olm', 'install', '--timeout', STEP_TIMEOUT], olmEnv), 'olm install');
  assert.match(install.stderr, /Successfully installed OLM version "0\.28\.0"/);
  assert.match(install.stdout, /^NAME +NAMESPACE +KIND +STATUS$/m);
  assert.match(install.stdout, /^packageserver +olm +ClusterServiceVersion +Succeeded$/m);
  assert.match(install.stdout, /^olm-operator +olm +Deployment +Installed$/m);

  // A second install refuses: OLM is there.
  const again = await cli(['olm', 'install'], olmEnv);
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /^Error: OLM is already installed: CustomResourceDefinition .* exists\. Run `ts-operator-sdk olm status`/m);

  const status = ok(await cli(['olm', 'status'], olmEnv), 'olm status');
  assert.match(status.stderr, /Successfully got OLM status for version "0\.28\.0"/);
  assert.match(status.stdout, /^catalog-operator +olm +Deployment +Installed$/m);

  kubectl(cluster(), ['create', 'namespace', NAMESPACE]);
  const indexImage = localOlm!.opmImage;
  const run = ok(await cli(['run', 'bundle', `${registry}/widget-operator-bundle:v0.0.1`, '-n', NAMESPACE, '--index-image', indexImage, '--timeout', STEP_TIMEOUT, '--security-context-config', 'restricted'], olmEnv), 'run bundle');
  assert.match(run.stderr, /OLM has successfully installed "widget-operator\.v0\.0\.1"/);
  assert.equal(kubectl(cluster(), ['-n', NAMESPACE, 'get', 'csv', 'widget-operator.v0.0.1', '-o', 'jsonpath={.status.phase}']), 'Succeeded');
  assert.match(kubectl(cluster(), ['-n', NAMESPACE, 'get', 'pods', '-l', 'control-plane=widget-operator', '-o', 'jsonpath={.items[*].status.phase}']), /Running/);
  assert.equal(kubectl(cluster(), ['get', 'crd', FIXTURE_CRD, '-o', 'jsonpath={.metadata.name}']), FIXTURE_CRD);

  const upgrade = ok(await cli(['run', 'bundle-upgrade', `${registry}/widget-operator-bundle:v0.0.2`, '-n', NAMESPACE, '--timeout', STEP_TIMEOUT, '--security-context-config', 'restricted'], olmEnv), 'run bundle-upgrade');
  assert.match(upgrade.stderr, /Successfully upgraded to "widget-operator\.v0\.0\.2"/);
  assert.equal(kubectl(cluster(), ['-n', NAMESPACE, 'get', 'csv', 'widget-operator.v0.0.2', '-o', 'jsonpath={.status.phase}']), 'Succeeded');
  assert.equal(kubectl(cluster(), ['-n', NAMESPACE, 'get', 'csv', 'widget-operator.v0.0.2', '-o', 'jsonpath={.spec.replaces}']), 'widget-operator.v0.0.1');

  const cleanup = ok(await cli(['cleanup', FIXTURE_PACKAGE, '-n', NAMESPACE, '--timeout', STEP_TIMEOUT]), 'cleanup');
  assert.match(cleanup.stderr, /Operator "widget-operator" uninstalled/);
  for (const kind of ['subscriptions.operators.coreos.com', 'clusterserviceversions.operators.coreos.com', 'catalogsources.operators.coreos.com', 'operatorgroups.operators.coreos.com', 'installplans.operators.coreos.com']) {
    assert.equal(kubectl(cluster(), ['-n', NAMESPACE, 'get', kind, '-o', 'name']).trim(), '', `${kind} left after cleanup`);
  }
  assert.equal(kubectl(cluster(), ['-n', NAMESPACE, 'get', 'configmaps,pods', '-l', 'ts-operator-sdk.io/run-bundle-package', '-o', 'name']).trim(), '');
  assert.equal(kubectl(cluster(), ['get', 'crd', FIXTURE_CRD, '--ignore-not-found', '-o', 'name']).trim(), '');

  const uninstall = ok(await cli(['olm', 'uninstall', '--timeout', STEP_TIMEOUT], olmEnv), 'olm uninstall');
  assert.match(uninstall.stderr, /Successfully uninstalled OLM version "0\.28\.0"/);
  assert.equal(kubectl(cluster(), ['get', 'crd', '-o', 'name']).split('\n').filter((name) => name.endsWith('.operators.coreos.com')).length, 0);
  const afterStatus = await cli(['olm', 'status'], olmEnv);
  assert.notEqual(afterStatus.code, 0);
});

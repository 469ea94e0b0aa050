/**
 * The failure paths of `run bundle`, `olm install`, `olm status` and
 * `cleanup` on the real API server of envtest. envtest has no kubelet and no
 * OLM operators, so pods never run and CSVs never progress: exactly the
 * "OLM missing" and "timeout" situations. Each failure must be one line with
 * the fix and a non-zero exit, and whatever the command created must be gone
 * afterwards (operator-sdk cleans up on failure too). The image side is a
 * real `distribution` registry on loopback.
 *
 * Run: KUBEBUILDER_ASSETS=... node --test dist/test/e2e/olm-run-bundle.test.js
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { RestClient } from '../../src/runtime/transport/rest.js';
import { runCliAsync, type CliExit } from '../scaffold/harness.js';
import { startControlPlane } from './control-plane.js';
import { startFaultProxy } from './fault-proxy.js';
import {
  FIXTURE_CRD,
  FIXTURE_PACKAGE,
  fixtureBundleFiles,
  olmManifestFiles,
  pushImage,
  serveFiles,
  startRegistry,
  type LocalRegistry,
} from './olm-fixtures.js';

type Result = CliExit;

/** The CLI from an empty directory, without blocking this process (the loopback servers live here). */
const cli = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> =>
  runCliAsync(args, { env, cwd: mkdtempSync(join(tmpdir(), 'olm-cli-')), timeoutMs: 300_000 });

/** Asserts the one-line failure: non-zero exit, exactly one `Error:` line that matches, with a fix sentence. */
function assertOneLineFailure(result: Result, pattern: RegExp): string {
  assert.notEqual(result.code, 0, `expected a failure, got exit 0: ${result.stdout}`);
  const errors = result.stderr.split('\n').filter((line) => line.startsWith('Error:'));
  assert.equal(errors.length, 1, `expected one Error line, got:\n${result.stderr}`);
  assert.match(errors[0]!, pattern);
  // `<problem>. <Fix>.`: two sentences.
  assert.match(errors[0]!, /\. [A-Z`].*\.$/, `no fix sentence in: ${errors[0]}`);
  return errors[0]!;
}

const OLM_KINDS = [
  ['operators.coreos.com/v1alpha1', 'catalogsources'],
  ['operators.coreos.com/v1alpha1', 'subscriptions'],
  ['operators.coreos.com/v1alpha1', 'installplans'],
  ['operators.coreos.com/v1alpha1', 'clusterserviceversions'],
  ['operators.coreos.com/v1', 'operatorgroups'],
] as const;

describe('OLM commands fail cleanly on envtest', () => {
  let env: Environment;
  let rest: RestClient;
  let kubeconfig: string;
  let registry: LocalRegistry;
  let manifests: { crds: string; olm: string };

  before(async () => {
    manifests = olmManifestFiles();
    env = await startControlPlane();
    kubeconfig = env.kubeConfigPath();
    rest = new RestClient(env.kubeConfig);
    registry = await startRegistry();
  });
  after(async () => {
    await rest?.close();
    await registry?.stop();
    await env?.stop();
  });

  const names = async (path: string): Promise<string[]> =>
    ((await rest.request<{ items: { metadata: { name: string } }[] }>('GET', path)).items ?? []).map(
      (item) => item.metadata.name,
    );

  async function installOlmCrds(): Promise<void> {
    for (const doc of parseAllDocuments(manifests.crds)) {
      const crd = doc.toJS() as { kind?: string } | null;
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      // A CRD the olm install test deleted may still be finishing its deletion.
      for (const giveUp = Date.now() + 180_000; ;) {
        try {
          await rest.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
          break;
        } catch (err) {
          if (!/being deleted/.test((err as Error).message) || Date.now() > giveUp) throw err;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      // Every kind run bundle checks for must be in discovery, not just the first.
      let served = 0;
      for (const [apiVersion, plural] of OLM_KINDS) {
        const list = await rest
          .request<{ resources?: { name: string }[] }>('GET', `/apis/${apiVersion}`)
          .catch(() => undefined);
        if (list?.resources?.some((r) => r.name === plural)) served++;
      }
      if (served === OLM_KINDS.length) break;
      if (Date.now() > deadline) throw new Error('OLM CRDs were not served within 60s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  test('run bundle with a bad image reference fails before any cluster call', async () => {
    // The kubeconfig does not exist: reaching for the cluster would fail with another message.
    const result = await cli([
      'run',
      'bundle',
      'Quay.io//Example/Bundle:v1',
      '--kubeconfig',
      '/nonexistent/kubeconfig',
    ]);
    assertOneLineFailure(
      result,
      /^Error: bundle image "Quay\.io\/\/Example\/Bundle:v1" is not a valid image reference: .*Pass the bundle image as <registry>\/<repository>:<tag>/,
    );
    const badTag = await cli(['run', 'bundle', 'localhost:5000/bundle:-v1', '--kubeconfig', '/nonexistent/kubeconfig']);
    assertOneLineFailure(badTag, /tag "-v1"/);
  });

  test('olm status without OLM says it is not installed', async () => {
    const result = await cli(['olm', 'status', '--kubeconfig', kubeconfig]);
    assertOneLineFailure(result, /^Error: no existing OLM installation found: .*Run `ts-operator-sdk olm install`/);
  });

  test('run bundle without OLM names olm install as the fix and creates nothing', async () => {
    const result = await cli([
      'run',
      'bundle',
      `${registry.host}/anything:v1`,
      '--kubeconfig',
      kubeconfig,
      '-n',
      'default',
      '--timeout',
      '30s',
    ]);
    assertOneLineFailure(
      result,
      /^Error: OLM is not installed in this cluster: .*Run `ts-operator-sdk olm install` first\.$/,
    );
    assert.deepEqual(
      await names('/api/v1/namespaces/default/configmaps?labelSelector=ts-operator-sdk.io/run-bundle-package'),
      [],
    );
  });

  test('cleanup of a package that is not there fails', async () => {
    const result = await cli(['cleanup', FIXTURE_PACKAGE, '--kubeconfig', kubeconfig, '-n', 'default']);
    assertOneLineFailure(result, /no operator with package widget-operator found in namespace default/);
  });

  test('olm install that times out deletes what it created and fails, asking again where a DELETE failed', async (t) => {
    const server = await serveFiles({ '/v0.28.0/crds.yaml': manifests.crds, '/v0.28.0/olm.yaml': manifests.olm });
    // A fault injector in front of the real server: the first DELETE of one CRD gets a 500 (no Retry-After, so the
    // client does not retry it itself); the cleanup must ask again rather than wait for a deletion that never began.
    const proxy = await startFaultProxy(env);
    proxy.addRule({
      match: { method: 'DELETE', path: /\/customresourcedefinitions\/installplans\.operators\.coreos\.com$/ },
      action: { type: 'status', status: 500 },
      times: 1,
    });
    try {
      const started = Date.now();
      const result = await cli(['olm', 'install', '--kubeconfig', proxy.kubeConfigPath(), '--timeout', '20s'], {
        TS_OPERATOR_SDK_OLM_BASE_URL: server.url,
      });
      assert.match(
        result.stderr,
        /could not delete CustomResourceDefinition installplans\.operators\.coreos\.com/,
        'the fault was not hit',
      );
      // The API server's own CRD cleanup often fails at first here ("storage is (re)initializing") and backs off for minutes.
      t.diagnostic(
        `CRD cleanups the command had to ask the API server to retry: ${result.stderr.split('\n').filter((l) => l.includes('asking it to retry now')).length}`,
      );
      const line = assertOneLineFailure(
        result,
        /^Error: timed out after 20s waiting for OLM: Deployment olm\/olm-operator has 0 of 1 replicas available and no pods .*or pass a longer --timeout\.$/,
      );
      assert.ok(Date.now() - started < 240_000, `olm install took ${Date.now() - started}ms: ${line}`);
      // Every CRD and cluster-scoped object it created is gone; its namespaces are gone or terminating.
      const crds = await names('/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
      const leftCrds = crds.filter((name) => name.endsWith('.operators.coreos.com'));
      // If one is left, say what held it: the command's own lines and the CRD's deletion state and conditions.
      const why = await Promise.all(
        leftCrds.map(async (name) => {
          const crd = await rest.request<{
            metadata: { deletionTimestamp?: string; finalizers?: string[] };
            status?: { conditions?: unknown };
          }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
          return `${name}: deletionTimestamp=${crd.metadata.deletionTimestamp ?? 'none'} finalizers=${JSON.stringify(crd.metadata.finalizers)} conditions=${JSON.stringify(crd.status?.conditions)}`;
        }),
      );
      assert.deepEqual(leftCrds, [], `${result.stderr}\n${why.join('\n')}`);
      const roles = await names('/apis/rbac.authorization.k8s.io/v1/clusterroles');
      assert.deepEqual(
        roles.filter(
          (name) => name === 'system:controller:operator-lifecycle-manager' || name.startsWith('aggregate-olm-'),
        ),
        [],
      );
      for (const namespace of ['olm', 'operators']) {
        const ns = await rest
          .request<{ metadata: { deletionTimestamp?: string } }>('GET', `/api/v1/namespaces/${namespace}`)
          .catch(() => undefined);
        assert.ok(ns === undefined || ns.metadata.deletionTimestamp, `namespace ${namespace} was left behind`);
        if (ns)
          assert.deepEqual(
            await names(`/apis/apps/v1/namespaces/${namespace}/deployments`),
            [],
            `deployments left in ${namespace}`,
          );
      }
      // A version the release server does not have: one line, nothing created.
      const missing = await cli(['olm', 'install', '--kubeconfig', kubeconfig, '--version', '9.9.9'], {
        TS_OPERATOR_SDK_OLM_BASE_URL: server.url,
      });
      assertOneLineFailure(missing, /^Error: OLM has no release manifest at .*\/v9\.9\.9\/crds\.yaml \(HTTP 404\)/);
    } finally {
      await proxy.stop();
      await server.close();
    }
  });

  test("run bundle of an image the registry does not have fails with the registry's answer", async () => {
    await installOlmCrds();
    const result = await cli([
      'run',
      'bundle',
      `${registry.host}/no-such-bundle:v0.0.1`,
      '--kubeconfig',
      kubeconfig,
      '-n',
      'default',
      '--timeout',
      '30s',
    ]);
    assertOneLineFailure(
      result,
      /^Error: cannot pull bundle image localhost:\d+\/no-such-bundle:v0\.0\.1: image localhost:\d+\/no-such-bundle:v0\.0\.1 was not found in registry localhost:\d+ \(MANIFEST_UNKNOWN: manifest unknown\)\. Check the image name and tag, and push the bundle first/,
    );
    for (const [apiVersion, plural] of OLM_KINDS)
      assert.deepEqual(await names(`/apis/${apiVersion}/namespaces/default/${plural}`), [], `${plural} created`);
  });

  test('run bundle that times out deletes everything it created and names the blocker', async () => {
    await pushImage(
      registry.host,
      'widget-operator-bundle',
      'v0.0.1',
      fixtureBundleFiles('0.0.1', `${registry.host}/widget-operator:v0.0.1`, ['/manager']),
    );
    await rest.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm-timeout' } },
    });
    // A ConfigMap the user owns in the namespace must survive the cleanup.
    await rest.request('POST', '/api/v1/namespaces/olm-timeout/configmaps', {
      body: { metadata: { name: 'users-own' }, data: { keep: 'me' } },
    });
    const result = await cli([
      'run',
      'bundle',
      `${registry.host}/widget-operator-bundle:v0.0.1`,
      '--kubeconfig',
      kubeconfig,
      '-n',
      'olm-timeout',
      '--timeout',
      '15s',
      '--index-image',
      `${registry.host}/opm:v1.55.0`,
    ]);
    assert.match(result.stderr, /Pulling bundle image .*\n.*Created CatalogSource widget-operator-catalog/);
    assertOneLineFailure(
      result,
      /^Error: timed out after 15s waiting for the bundle to install: registry pod olm-timeout\/widget-operator-catalog-[0-9a-f]{8} is not ready: pod .* was never scheduled to a node .*or pass a longer --timeout\.$/,
    );
    for (const [apiVersion, plural] of OLM_KINDS)
      assert.deepEqual(
        await names(`/apis/${apiVersion}/namespaces/olm-timeout/${plural}`),
        [],
        `${plural} left behind`,
      );
    assert.deepEqual(await names('/api/v1/namespaces/olm-timeout/pods'), [], 'registry pod left behind');
    // No kube-controller-manager here, so no kube-root-ca.crt: only the user's ConfigMap remains.
    assert.deepEqual(
      await names('/api/v1/namespaces/olm-timeout/configmaps'),
      ['users-own'],
      'catalog ConfigMap left behind',
    );
    assert.equal((await names('/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).includes(FIXTURE_CRD), false);
  });

  test('run bundle refuses an install mode the CSV does not support, creating nothing', async () => {
    const result = await cli([
      'run',
      'bundle',
      `${registry.host}/widget-operator-bundle:v0.0.1`,
      '--kubeconfig',
      kubeconfig,
      '-n',
      'default',
      '--install-mode',
      'MultiNamespace=a,b',
    ]);
    assertOneLineFailure(
      result,
      /^Error: --install-mode MultiNamespace=a,b is not supported by widget-operator\.v0\.0\.1 \(it supports OwnNamespace, SingleNamespace, AllNamespaces\)/,
    );
    for (const [apiVersion, plural] of OLM_KINDS)
      assert.deepEqual(await names(`/apis/${apiVersion}/namespaces/default/${plural}`), []);
  });
});

/**
 * --timeout bounds the whole of a cluster command, on the real kube-apiserver
 * of envtest: a real server passes the first look (it is a Kubernetes API
 * server), and when it stops answering later (a fault proxy in front of it
 * holds chosen requests: a real server cannot be made to hang), the command
 * still ends at --timeout with one line naming the server, and an olm install
 * that has to undo its work gives up at the first request that gets no answer
 * instead of spending its cleanup budget. The unit tables
 * (test/unit/bad-input-cluster-*.test.ts) cover servers that never answer at
 * all and servers that are not Kubernetes.
 *
 * Cost: about 50 s (one control plane; the olm install case waits out 3 s
 * plus two 10 s request bounds).
 * Run: KUBEBUILDER_ASSETS=... node --test dist/test/e2e/cluster-timeouts.test.js
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { RestClient } from '../../src/runtime/transport/rest.js';
import { copyProject, hashTree, runCliAsync, SCENARIOS, scaffoldScenario, type CliExit } from '../scaffold/harness.js';
import { startControlPlane } from './control-plane.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { serveFiles } from './olm-fixtures.js';

/** How long past --timeout a command may take: its start-up on a busy shared machine. */
const SLACK_MS = 10_000;

/** The one `Error:` line of a failed run. */
function errorLine(result: CliExit): string {
  assert.equal(result.code, 1, result.stderr);
  const errors = result.stderr.split('\n').filter((line) => line.startsWith('Error:'));
  assert.equal(errors.length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /This is a bug|\n\s+at /);
  return errors[0]!;
}

async function timed(run: () => Promise<CliExit>): Promise<{ result: CliExit; ms: number }> {
  const started = Date.now();
  const result = await run();
  return { result, ms: Date.now() - started };
}

/** A tiny stand-in for OLM's release manifests: one CRD, and a namespace with a Deployment that never becomes available (no kubelet). */
const MANIFESTS = {
  '/v0.28.0/crds.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.timeouts.example.com
spec:
  group: timeouts.example.com
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
  '/v0.28.0/olm.yaml': `apiVersion: v1
kind: Namespace
metadata:
  name: timeouts-olm
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: olm-operator
  namespace: timeouts-olm
spec:
  selector: {matchLabels: {app: olm-operator}}
  template:
    metadata: {labels: {app: olm-operator}}
    spec:
      containers:
      - {name: olm-operator, image: example.com/none:v1}
`,
};

describe('cluster commands on a real API server that stops answering', () => {
  let env: Environment;
  let proxy: FaultProxy;
  let rest: RestClient;
  let project: string;

  before(async () => {
    project = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
    env = await startControlPlane();
    proxy = await startFaultProxy(env);
    rest = new RestClient(env.kubeConfig);
  });
  after(async () => {
    await proxy?.stop();
    await rest?.close();
    await env?.stop();
  });

  test('a real API server passes the first look: cleanup says the package is not there', async () => {
    const result = await runCliAsync(
      ['cleanup', 'widget-operator', '--kubeconfig', env.kubeConfigPath(), '-n', 'default', '--timeout', '20s'],
      { cwd: mkdtempSync(join(tmpdir(), 'cluster-cli-')) },
    );
    assert.match(errorLine(result), /^Error: no operator with package widget-operator found in namespace default\./);
  });

  test('a real API server that rejects the credentials is named as such, not as a missing OLM or CRD', async () => {
    const cluster = env.kubeConfig.getCurrentCluster()!;
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'cluster-cli-')), 'bad-token');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: ${cluster.server}\n    certificate-authority-data: ${cluster.caData}\nusers:\n- name: nobody\n  user:\n    token: not-a-valid-token\ncontexts:\n- name: envtest\n  context: {cluster: envtest, user: nobody}\ncurrent-context: envtest\n`,
    );
    const expected = `Error: the API server at ${cluster.server} rejected the kubeconfig's credentials (401 Unauthorized). Log in again (e.g. refresh the token), or use a kubeconfig whose user the cluster accepts.`;
    const status = await runCliAsync(['olm', 'status', '--kubeconfig', kubeconfig, '--timeout', '20s'], {
      cwd: mkdtempSync(join(tmpdir(), 'cluster-cli-')),
    });
    assert.equal(errorLine(status), expected);
    const dir = copyProject(project);
    const before = hashTree(dir);
    const args = [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v1',
      '--kind',
      'Route',
      '--external-api-domain',
      'openshift.io',
      '--external-api-path',
      'apis/external/route/v1',
      '--from-cluster',
      'routes.route.openshift.io',
    ];
    const fromCluster = await runCliAsync(args, { cwd: dir, env: { KUBECONFIG: kubeconfig } });
    assert.equal(errorLine(fromCluster), expected);
    assert.equal(hashTree(dir), before);
  });

  test('olm status ends at --timeout when discovery hangs after the first look, naming the server', async () => {
    const remove = proxy.addRule({ match: { path: /^\/apis\/operators\.coreos\.com/ }, action: { type: 'hang' } });
    try {
      const { result, ms } = await timed(() =>
        runCliAsync(['olm', 'status', '--kubeconfig', proxy.kubeConfigPath(), '--timeout', '3s'], {
          cwd: mkdtempSync(join(tmpdir(), 'cluster-cli-')),
        }),
      );
      assert.equal(
        errorLine(result),
        `Error: timed out after 3s while reading the OLM status: the API server at ${proxy.url} did not answer in time. Pass a longer --timeout, or check the cluster's health (kubectl get --raw /readyz).`,
      );
      assert.ok(ms < 3000 + SLACK_MS, `took ${ms} ms`);
    } finally {
      remove();
    }
  });

  test('create api --from-cluster ends at --timeout when the CRD read hangs, the project byte-identical', async () => {
    const remove = proxy.addRule({
      match: { path: /\/customresourcedefinitions\/routes\.route\.openshift\.io$/ },
      action: { type: 'hang' },
    });
    const dir = copyProject(project);
    const before = hashTree(dir);
    try {
      const args = [
        'create',
        'api',
        '--group',
        'route',
        '--version',
        'v1',
        '--kind',
        'Route',
        '--external-api-domain',
        'openshift.io',
        '--external-api-path',
        'apis/external/route/v1',
        '--from-cluster',
        'routes.route.openshift.io',
        '--timeout',
        '3s',
      ];
      const { result, ms } = await timed(() =>
        runCliAsync(args, { cwd: dir, env: { KUBECONFIG: proxy.kubeConfigPath() } }),
      );
      assert.match(
        errorLine(result),
        new RegExp(
          `^Error: timed out after 3s while reading the CRD routes\\.route\\.openshift\\.io: the API server at ${proxy.url.replace(/\./g, '\\.')} did not answer in time\\.`,
        ),
      );
      assert.ok(ms < 3000 + SLACK_MS, `took ${ms} ms`);
      assert.equal(result.stdout, '');
      assert.equal(hashTree(dir), before);
    } finally {
      remove();
    }
  });

  test('olm install that must undo its work stops at the first request the server does not answer', async () => {
    const server = await serveFiles(MANIFESTS);
    // Every read of the Deployment hangs: the wait runs out, then the diagnosis and the cleanup's check get no answer.
    const remove = proxy.addRule({
      match: { method: 'GET', path: /\/deployments\/olm-operator$/ },
      action: { type: 'hang' },
    });
    try {
      const { result, ms } = await timed(() =>
        runCliAsync(['olm', 'install', '--kubeconfig', proxy.kubeConfigPath(), '--timeout', '3s'], {
          cwd: mkdtempSync(join(tmpdir(), 'cluster-cli-')),
          env: { TS_OPERATOR_SDK_OLM_BASE_URL: server.url },
        }),
      );
      assert.match(
        errorLine(result),
        new RegExp(
          `^Error: the API server at ${proxy.url.replace(/\./g, '\\.')} did not answer GET /apis/apps/v1/namespaces/timeouts-olm/deployments/olm-operator within 10s\\.`,
        ),
      );
      assert.match(result.stderr, /Installing OLM failed; deleting the 3 resources it created/);
      assert.match(result.stderr, /still not deleted: .*Deployment timeouts-olm\/olm-operator/);
      // 3 s of --timeout, 10 s for the diagnosis's unanswered read, 10 s for the cleanup's: not the 180 s cleanup budget.
      assert.ok(ms < 23_000 + SLACK_MS, `took ${ms} ms`);
      // The DELETEs themselves were answered: the CRD is gone or going.
      const crd = await rest
        .request<{ metadata: { deletionTimestamp?: string } }>(
          'GET',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.timeouts.example.com',
        )
        .catch(() => undefined);
      assert.ok(crd === undefined || crd.metadata.deletionTimestamp, 'the CRD was not deleted');
    } finally {
      remove();
      await server.close();
    }
  });
});

/**
 * The scaffolded manager Deployment passes the Pod Security "restricted"
 * level: a Pod made from its template is admitted by a real kube-apiserver
 * (server-side dry-run) in a namespace that enforces restricted.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { ForbiddenError, Namespace, Pod } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { resourcePath } from '../../src/runtime/api/kinds.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { runCliOk, tempProjectDir } from '../scaffold/harness.js';
import { startControlPlane } from './control-plane.js';

describe('manager pod security', () => {
  let env: Environment;
  let rest: RestClient;
  let deployment: V1Deployment;

  before(async () => {
    const project = tempProjectDir('memcached-operator');
    runCliOk(['init', '--domain', 'example.com', '--skip-install'], project);
    runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], project);
    runCliOk(['generate', 'manifests'], project);
    const rendered = execFileSync('kubectl', ['kustomize', 'config/default'], { cwd: project, encoding: 'utf8' });
    deployment = parseAllDocuments(rendered)
      .map((doc) => doc.toJS() as V1Deployment)
      .find((doc) => doc.kind === 'Deployment')!;
    env = await startControlPlane();
    rest = new RestClient(env.kubeConfig);
    await rest.request('POST', resourcePath(Namespace), {
      body: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: 'restricted-ns',
          labels: {
            'pod-security.kubernetes.io/enforce': 'restricted',
            'pod-security.kubernetes.io/enforce-version': 'latest',
          },
        },
      },
    });
  });
  after(async () => {
    await env?.stop();
  });

  const dryRunPod = (spec: V1Pod['spec']) =>
    rest.request<V1Pod>('POST', resourcePath(Pod, 'restricted-ns'), {
      query: { dryRun: 'All' },
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'manager', namespace: 'restricted-ns' }, spec },
    });

  it('a Pod from the manager template is admitted under enforce=restricted', async () => {
    assert.equal(deployment.metadata?.name, 'memcached-operator-controller-manager');
    const admitted = await dryRunPod(deployment.spec!.template.spec);
    assert.equal(admitted.metadata?.name, 'manager');
  });

  it('the namespace really enforces restricted: a Pod without the securityContext is refused', async () => {
    const loose = structuredClone(deployment.spec!.template.spec!);
    delete loose.securityContext;
    for (const container of loose.containers) delete container.securityContext;
    await assert.rejects(
      dryRunPod(loose),
      (err: unknown) => err instanceof ForbiddenError && /violates PodSecurity "restricted:latest"/.test(err.message),
    );
  });
});

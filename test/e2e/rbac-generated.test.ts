/**
 * The generated RBAC is enough, and no more: the Memcached operator runs as a
 * user bound only to the ClusterRole generated from its +kubebuilder:rbac
 * markers, with the CRD generated from its types, and converges; with one
 * marker dropped it fails with Forbidden.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { Client, Deployment, Manager, isNotFound } from '../../src/runtime/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { generateManifests } from '../../src/generators/manifests.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { Memcached, MemcachedReconciler } from './fixtures/memcached.js';
import { capturingLogger } from './log-capture.js';

const fixtureSource = new URL('../../../test/e2e/fixtures/memcached.ts', import.meta.url);

/** The Memcached API types of the generator's golden fixture: the same types, here checked for RBAC. */
const fixtureApis = new URL('../../../test/fixtures/crd/memcached/apis', import.meta.url);

describe('generated RBAC', () => {
  let env: Environment;
  let api: Client;
  let project: string;

  before(async () => {
    env = await startControlPlane();
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    project = await mkdtemp(join(tmpdir(), 'rbac-project-'));
    await cp(fixtureApis, join(project, 'apis'), { recursive: true });
    await mkdir(join(project, 'controllers'), { recursive: true });
  });
  after(async () => {
    await env?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  /** Generates CRD and ClusterRole from the fixture's markers, minus the lines matching `drop`, plus `extra` lines. */
  async function generate(
    drop?: RegExp,
    extra: string[] = [],
  ): Promise<{ crd: object; role: Record<string, unknown> }> {
    const source = [
      ...(await readFile(fixtureSource, 'utf8')).split('\n').filter((line) => !drop || !drop.test(line)),
      ...extra,
    ].join('\n');
    await writeFile(join(project, 'controllers', 'memcached_controller.ts'), source);
    const files = await generateManifests({
      projectDir: project,
      domain: 'example.com',
      multigroup: false,
      resources: [
        { group: 'cache', domain: 'example.com', version: 'v1', kind: 'Memcached', path: 'apis/v1', namespaced: true },
      ],
    });
    const text = (path: string) => files.find((file) => file.path === path)!.content;
    const crd = parseAllDocuments(text('config/crd/bases/cache.example.com_memcacheds.yaml'))[0]!.toJS() as object;
    const role = parseAllDocuments(text('config/rbac/role.yaml'))
      .map((doc) => doc.toJS() as Record<string, unknown>)
      .find((doc) => doc.kind === 'ClusterRole')!;
    return { crd, role };
  }

  /** Creates `role` renamed `<user>-role` and binds it to `user`. */
  async function bindRole(user: string, role: Record<string, unknown>): Promise<void> {
    const name = `${user}-role`;
    await api.create({ ...role, metadata: { name } } as never);
    await api.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
    });
  }

  /** Binds `role` (renamed per user) to a fresh user and runs the operator as that user. */
  async function runAs(
    user: string,
    role: Record<string, unknown>,
    body: (mgr: Manager, lines: Array<Record<string, unknown>>) => Promise<void>,
  ): Promise<void> {
    await bindRole(user, role);
    const { logger, lines } = capturingLogger();
    const mgr = new Manager({
      kubeConfig: await env.addUser({ name: user }),
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger,
      cache: { backoffMaxMs: 1000, syncTimeoutMs: 60_000 },
      controller: { cacheSyncTimeoutMs: 60_000 },
    });
    new MemcachedReconciler(mgr.getClient(), mgr.getEventRecorderFor('memcached-controller')).setupWithManager(mgr);
    const running = mgr.start();
    try {
      await body(mgr, lines);
    } finally {
      mgr.stop();
      await running;
    }
  }

  const deploymentOf = (name: string) =>
    api
      .get(Deployment, { namespace: 'default', name })
      .catch((err) => (isNotFound(err) ? undefined : Promise.reject(err)));

  it('the operator converges with exactly the generated ClusterRole', async () => {
    const { crd, role } = await generate();
    await env.installCRDs({ crds: [crd] });
    await runAs('memcached-operator', role, async () => {
      await api.create({
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: 'least-privilege', namespace: 'default' },
        spec: { size: 2 },
      });
      const deployment = await eventually('the Deployment', () => deploymentOf('least-privilege'), 30_000);
      assert.equal(deployment.spec?.replicas, 2);
      await eventually('status written', async () =>
        (await api.get(Memcached, { namespace: 'default', name: 'least-privilege' })).status?.conditions?.some(
          (c) => c.status === 'True',
        ),
      );
      // The finalizer path needs configmaps/create and events/create.
      await api.delete(await api.get(Memcached, { namespace: 'default', name: 'least-privilege' }));
      await eventually(
        'finalized and gone',
        () =>
          api.get(Memcached, { namespace: 'default', name: 'least-privilege' }).then(
            () => false,
            (err) => isNotFound(err),
          ),
        30_000,
      );
    });
  });

  it('dropping the deployments marker makes the operator fail with Forbidden', async () => {
    const { role } = await generate(/resources=deployments/);
    const rules = role.rules as Array<{ resources?: string[] }>;
    assert.ok(
      !rules.some((rule) => rule.resources?.includes('deployments')),
      'the generated role no longer grants deployments',
    );
    await runAs('memcached-operator-without-deployments', role, async (_mgr, lines) => {
      await api.create({
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: 'forbidden', namespace: 'default' },
        spec: { size: 1 },
      });
      // Errors are logged as { err } (message and stack), so the text is err.message.
      const errorText = (l: Record<string, unknown>): string =>
        (l.err as { message?: string } | undefined)?.message ?? '';
      const line = await eventually(
        'a Forbidden error in the log',
        () => lines.find((l) => /forbidden/i.test(errorText(l)) && /deployments/.test(errorText(l))),
        30_000,
      );
      assert.match(errorText(line), /cannot list resource "deployments"/);
      assert.equal(await deploymentOf('forbidden'), undefined, 'no Deployment without the permission');
    });
  });

  it("a marker in the seeds' form (verbs=get;list; with a final ;) grants get and list, and no empty verb", async () => {
    const { role } = await generate(undefined, ['// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;']);
    const rules = role.rules as Array<{ apiGroups?: string[]; resources?: string[]; verbs?: string[] }>;
    assert.deepEqual(
      rules.find((rule) => rule.resources?.includes('pods')),
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    );
    await bindRole('seed-form', role);
    const asUser = new Client({ rest: new RestClient(await env.addUser({ name: 'seed-form' })) });
    const may = async (verb: string): Promise<boolean> => {
      const review = await asUser.create({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { namespace: 'default', verb, resource: 'pods' } },
      } as never);
      return (review as { status?: { allowed?: boolean } }).status?.allowed === true;
    };
    // RBAC is cached by the API server's authorizer: wait for the binding to count.
    await eventually('list pods allowed', () => may('list'), 30_000);
    assert.equal(await may('get'), true);
    assert.equal(await may('watch'), false);
  });
});

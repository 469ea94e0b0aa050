/**
 * client.exec and client.logs where they fail, on the real kube-apiserver
 * (envtest: no kubelet, so no pod ever runs): a missing pod, a missing or
 * unnamed container, a pod with no node or a node that does not exist,
 * RBAC refusing the subresource (and the Role our generator builds from the
 * documented markers granting it), and a node whose "kubelet" accepts the
 * connection and never answers, which only the exec's timeout or the
 * caller's signal ends. The silent kubelet is a plain TCP listener on
 * loopback, the one stand-in here: a real kubelet cannot be made to hang.
 * What happens when the command runs is tested on a real pod in
 * test/cluster/exec-logs.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildRoles, readRbacMarkers } from '../../src/generators/rbac/rbac.js';
import { ProblemList } from '../../src/generators/problems.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { Client } from '../../src/runtime/index.js';
import { ForbiddenError, NotFoundError, Pod, RequestTimeoutError } from '../../src/runtime/api/index.js';
import { ContainerNotFoundError, ExecTimeoutError, PodNotRunningError } from '../../src/runtime/pod/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { startControlPlane } from './control-plane.js';

const namespace = 'default';

/** The markers the README documents for a reconciler that execs and reads logs. */
const DOCUMENTED_MARKERS = [
  '// +kubebuilder:rbac:groups="",resources=pods/exec,verbs=create;get',
  '// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get',
].join('\n');

describe('client.exec and client.logs failures on the real API server', () => {
  let env: Environment;
  let admin: Client;
  let silentKubelet: Server;
  const kubeletSockets = new Set<Socket>();
  let kubeletConnections = 0;

  const pod = (name: string, spec: Record<string, unknown> = {}) =>
    admin.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
      spec: { containers: [{ name: 'main', image: 'busybox' }], ...spec },
    });

  before(async () => {
    env = await startControlPlane();
    admin = new Client({ rest: new RestClient(env.kubeConfig) });
    silentKubelet = createServer((socket) => {
      kubeletConnections++;
      kubeletSockets.add(socket);
      socket.on('close', () => kubeletSockets.delete(socket));
    });
    await new Promise<void>((resolve) => silentKubelet.listen(0, '127.0.0.1', resolve));
    const port = (silentKubelet.address() as { port: number }).port;
    const node = await admin.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'silent-node' } });
    await admin.status().patch(node, {
      type: 'merge',
      data: {
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: port } },
        },
      },
    });
    await pod('unscheduled');
    await pod('two-containers', {
      containers: [
        { name: 'a', image: 'busybox' },
        { name: 'b', image: 'busybox' },
      ],
    });
    await pod('on-ghost-node', { nodeName: 'ghost-node' });
    await pod('on-silent-node', { nodeName: 'silent-node' });
  });

  after(async () => {
    for (const socket of kubeletSockets) socket.destroy();
    silentKubelet?.close();
    await env?.stop();
  });

  it('a missing pod is a NotFoundError for exec and logs', async () => {
    await assert.rejects(
      admin.exec({ namespace, name: 'no-such-pod' }, 'main', ['echo', 'hi']),
      (err: unknown) => err instanceof NotFoundError && /pods "no-such-pod" not found/.test(err.message),
    );
    await assert.rejects(
      admin.logs({ namespace, name: 'no-such-pod' }),
      (err: unknown) => err instanceof NotFoundError && /pods "no-such-pod" not found/.test(err.message),
    );
  });

  it('a container the pod does not have, or none named in a two-container pod, is a ContainerNotFoundError', async () => {
    await assert.rejects(
      admin.exec({ namespace, name: 'unscheduled' }, 'sidecar', ['echo']),
      (err: unknown) =>
        err instanceof ContainerNotFoundError &&
        err.statusCode === 400 &&
        /container sidecar is not valid/.test(err.message),
    );
    await assert.rejects(
      admin.logs({ namespace, name: 'unscheduled' }, { container: 'sidecar' }),
      ContainerNotFoundError,
    );
    await assert.rejects(
      admin.exec({ namespace, name: 'two-containers' }, undefined, ['echo']),
      (err: unknown) => err instanceof ContainerNotFoundError && /choose one of: \[a b\]/.test(err.message),
    );
    await assert.rejects(admin.logs({ namespace, name: 'two-containers' }), ContainerNotFoundError);
  });

  it('a pod with no node yet is a PodNotRunningError for exec; its log is empty', async () => {
    const unscheduled = await admin.get(Pod, { namespace, name: 'unscheduled' });
    // A Pod object read from the API names the pod as well as a key does.
    await assert.rejects(
      admin.exec(unscheduled, 'main', ['echo']),
      (err: unknown) => err instanceof PodNotRunningError && /does not have a host assigned/.test(err.message),
    );
    assert.equal(await admin.logs({ namespace, name: 'unscheduled' }), '');
  });

  it('a pod bound to a node that does not exist is a PodNotRunningError naming the node, not a NotFoundError', async () => {
    for (const call of [
      () => admin.exec({ namespace, name: 'on-ghost-node' }, 'main', ['echo']),
      () => admin.logs({ namespace, name: 'on-ghost-node' }),
    ]) {
      await assert.rejects(
        call(),
        (err: unknown) =>
          err instanceof PodNotRunningError &&
          !(err instanceof NotFoundError) &&
          err.statusCode === 404 &&
          /bound to node "ghost-node", which does not exist/.test(err.message),
      );
    }
  });

  it('RBAC without pods/exec and pods/log is a ForbiddenError naming the marker; the generated Role from the documented markers grants both', async () => {
    const bob = new Client({ rest: new RestClient(await env.addUser({ name: 'bob', groups: ['exec-testers'] })) });
    await assert.rejects(
      bob.exec({ namespace, name: 'unscheduled' }, 'main', ['echo']),
      (err: unknown) =>
        err instanceof ForbiddenError &&
        /pods\/exec/.test(err.message) &&
        /\+kubebuilder:rbac:groups="",resources=pods\/exec,verbs=create;get/.test(err.message),
    );
    await assert.rejects(
      bob.logs({ namespace, name: 'unscheduled' }),
      (err: unknown) =>
        err instanceof ForbiddenError && /\+kubebuilder:rbac:groups="",resources=pods\/log,verbs=get/.test(err.message),
    );

    const problems = new ProblemList();
    const [role, ...others] = buildRoles(
      readRbacMarkers(DOCUMENTED_MARKERS, 'controller.ts', problems),
      problems,
      'exec-role',
    );
    assert.deepEqual(problems.items, []);
    assert.equal(others.length, 0);
    assert.deepEqual(role!['rules'], [
      { apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    ]);
    await admin.create(role as never);
    await admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'exec-testers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'exec-role' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'exec-testers' }],
    } as never);
    // Past authorization, the server answers about the pod itself.
    await waitFor(async () => {
      await assert.rejects(bob.exec({ namespace, name: 'unscheduled' }, 'main', ['echo']), PodNotRunningError);
      assert.equal(await bob.logs({ namespace, name: 'unscheduled' }), '');
    });
  });

  it('exec needs both get and create on pods/exec: the WebSocket upgrade is a GET, and the server also checks create', async () => {
    /** A user whose only permission is `verbs` on pods/exec. */
    const userWith = async (verb: string): Promise<Client> => {
      await admin.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `${verb}-only` },
        rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: [verb] }],
      } as never);
      await admin.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${verb}-only` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${verb}-only` },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${verb}-only` }],
      } as never);
      return new Client({
        rest: new RestClient(await env.addUser({ name: `${verb}-user`, groups: [`${verb}-only`] })),
      });
    };
    const createOnly = await userWith('create');
    const getOnly = await userWith('get');
    // Each refusal is checked after a grant-less user would pass the other check, so the binding must be in effect.
    await waitFor(async () => {
      await assert.rejects(
        createOnly.exec({ namespace, name: 'unscheduled' }, 'main', ['echo']),
        (err: unknown) => err instanceof ForbiddenError && /cannot get resource "pods\/exec"/.test(err.message),
      );
      // The server's second check (create) gives a bare "forbidden: " with no reason; our hint still names the fix.
      await assert.rejects(
        getOnly.exec({ namespace, name: 'unscheduled' }, 'main', ['echo']),
        (err: unknown) =>
          err instanceof ForbiddenError && !/cannot get/.test(err.message) && /verbs=create;get/.test(err.message),
      );
    });
  });

  it(
    'a kubelet that never answers: the exec times out with ExecTimeoutError, the log read with RequestTimeoutError',
    { timeout: 60_000 },
    async () => {
      const started = Date.now();
      const connectionsBefore = kubeletConnections;
      await assert.rejects(
        admin.exec({ namespace, name: 'on-silent-node' }, 'main', ['echo'], { timeoutMs: 1500 }),
        (err: unknown) =>
          err instanceof ExecTimeoutError &&
          err instanceof RequestTimeoutError &&
          /no exit status after 1.5s/.test(err.message) &&
          /timeoutMs/.test(err.message),
      );
      assert.ok(Date.now() - started < 30_000, 'the timeout ended the exec, not the API server giving up');
      assert.ok(kubeletConnections > connectionsBefore, 'the API server reached the silent kubelet');
      await assert.rejects(admin.logs({ namespace, name: 'on-silent-node' }, { timeoutMs: 1500 }), RequestTimeoutError);
    },
  );

  it(
    "the caller's AbortSignal ends a hung exec and a hung log follow with the signal's reason",
    { timeout: 60_000 },
    async () => {
      const reason = new Error('reconcile cancelled');
      const controller = new AbortController();
      const exec = admin.exec({ namespace, name: 'on-silent-node' }, 'main', ['echo'], {
        signal: controller.signal,
        timeoutMs: 0,
      });
      setTimeout(() => controller.abort(reason), 500);
      await assert.rejects(exec, (err: unknown) => err === reason);

      const follow = new AbortController();
      setTimeout(() => follow.abort(reason), 500);
      await assert.rejects(
        (async () => {
          for await (const _line of admin.followLogs(
            { namespace, name: 'on-silent-node' },
            { signal: follow.signal, timeoutMs: 0 },
          ))
            break;
        })(),
        (err: unknown) => err === reason,
      );
    },
  );

  it('bad arguments fail before any request, with the fix in the message', async () => {
    await assert.rejects(admin.exec({ namespace, name: 'unscheduled' }, 'main', []), /non-empty list of strings/);
    await assert.rejects(
      admin.exec({ name: 'unscheduled' } as never, 'main', ['echo']),
      /has no namespace; Pods are namespaced/,
    );
    await assert.rejects(
      admin.logs({ namespace, name: 'unscheduled' }, { tailLines: -1 }),
      /tailLines -1 is not valid/,
    );
    await assert.rejects(
      admin.exec({ namespace, name: 'unscheduled' }, 'main', ['echo'], { timeoutMs: -5 }),
      /timeoutMs -5 is not valid/,
    );
  });
});

/** Retries `check` until it passes: an RBAC binding reaches the authorizer's cache shortly after it is written. */
async function waitFor(check: () => Promise<void>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

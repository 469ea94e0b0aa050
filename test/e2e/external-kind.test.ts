/**
 * A kind the operator does not own, end to end on a real API server:
 * `create api --external-api-path --from-crd` writes OpenShift Route types
 * and a copy of the (stub) Route CRD to config/crd/external; envtest
 * installs that copy through `crdDirectoryPaths`, as the README documents;
 * `--from-cluster` reads the same CRD back from the cluster and gives the
 * same types. Then an operator whose controller is `for(ConfigMap)
 * .owns(Route)`, with the generated `Route` handle loaded at run time,
 * creates a Route owned by its ConfigMap; a change to that Route reconciles
 * the owner, which puts the Route back.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import {
  Client,
  Manager,
  ignoreNotFound,
  newControllerManagedBy,
  setControllerReference,
  type Reconciler,
  type Request,
  type Result,
} from '../../src/runtime/index.js';
import { ConfigMap, type Kind } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { REPO_ROOT, runCli, runCliOk, tempProjectDir } from '../scaffold/harness.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';

const ROUTE_CRD = join(REPO_ROOT, 'test', 'fixtures', 'external', 'route.crd.yaml');
const TYPES_FILE = 'apis/external/route/v1/route_types.ts';
/** The types, minus the line that says how they were made (it names the source). */
const withoutRegenerateLine = (text: string): string => text.replace(/^\/\/ Regenerate: .*\n/m, '');
const routeApi = (...source: string[]): string[] => [
  'create',
  'api',
  '--group',
  'route',
  '--version',
  'v1',
  '--kind',
  'Route',
  '--external-api-path',
  'apis/external/route/v1',
  '--external-api-domain',
  'openshift.io',
  ...source,
  '--controller=false',
];

/** The shape the test relies on; the generated interface is richer, and is what the loaded module's handle carries. */
interface Route extends KubernetesObject {
  spec: { host?: string; to: { kind: 'Service' | ''; name: string }; port?: { targetPort: string | number } };
}

describe('a Route the operator owns but does not define (external types, envtest CRD install)', () => {
  let project: string;
  let env: Environment;
  let api: Client;
  let Route: Kind<Route>;

  before(async () => {
    project = tempProjectDir('route-operator');
    runCliOk(['init', '--domain', 'example.com', '--skip-install'], project);
    runCliOk(routeApi('--from-crd', ROUTE_CRD), project);
    // The documented way: envtest installs the copy `create api` wrote.
    env = await startControlPlane({
      crdDirectoryPaths: [join(project, 'config', 'crd', 'external')],
      errorIfCRDPathMissing: true,
    });
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    // The generated module, run as it is (Node strips the types), against this repository's runtime.
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    symlinkSync(REPO_ROOT, join(project, 'node_modules', 'ts-operator-sdk'), 'dir');
    const generated = (await import(pathToFileURL(join(project, TYPES_FILE)).href)) as { Route: Kind<Route> };
    Route = generated.Route;
  });
  after(async () => {
    await env?.stop();
  });

  it('the copied CRD is served, and --from-cluster reads it back into the same types', async () => {
    assert.deepEqual(
      { ...Route },
      {
        group: 'route.openshift.io',
        version: 'v1',
        kind: 'Route',
        plural: 'routes',
        namespaced: true,
        apiVersion: 'route.openshift.io/v1',
      },
    );
    assert.deepEqual(await api.list(Route, { namespace: 'default' }), []);
    const fromCluster = tempProjectDir('route-operator');
    runCliOk(['init', '--domain', 'example.com', '--skip-install'], fromCluster);
    runCliOk(routeApi('--from-cluster', 'routes.route.openshift.io'), fromCluster, {
      env: { KUBECONFIG: env.kubeConfigPath() },
    });
    assert.equal(
      withoutRegenerateLine(readFileSync(join(fromCluster, TYPES_FILE), 'utf8')),
      withoutRegenerateLine(readFileSync(join(project, TYPES_FILE), 'utf8')),
    );
    const missing = runCli(routeApi('--from-cluster', 'nothings.example.com'), fromCluster, {
      env: { KUBECONFIG: env.kubeConfigPath() },
    });
    assert.equal(missing.status, 1);
    assert.match(
      missing.stderr,
      /^Error: the cluster https:\/\/127\.0\.0\.1:\d+ has no CRD named nothings\.example\.com\. Pass the name `kubectl get crd` lists/,
    );
  });

  it('owns(Route): the operator creates its Route, and a change to the Route reconciles the owner', async () => {
    const reconciled: Request[] = [];
    const desiredHost = 'web.apps.example.com';
    const client = (mgr: Manager): Client => mgr.getClient();
    const mgr = new Manager({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: capturingLogger().logger,
    });
    const reconciler: Reconciler = {
      async reconcile(_ctx, req): Promise<Result> {
        reconciled.push(req);
        const owner = await client(mgr).get(ConfigMap, req).catch(ignoreNotFound);
        if (!owner) return {};
        const existing = await client(mgr).get(Route, req).catch(ignoreNotFound);
        if (!existing) {
          const route: Route = {
            apiVersion: Route.apiVersion,
            kind: Route.kind,
            metadata: { name: req.name, namespace: req.namespace },
            spec: { host: desiredHost, to: { kind: 'Service', name: 'web' }, port: { targetPort: 8080 } },
          };
          setControllerReference(owner, route);
          await client(mgr).create(route);
        } else if (existing.spec.host !== desiredHost) {
          await client(mgr).update({ ...existing, spec: { ...existing.spec, host: desiredHost } });
        }
        return {};
      },
    };
    newControllerManagedBy(mgr).for(ConfigMap).owns(Route).named('route-owner').complete(reconciler);
    const running = mgr.start();
    try {
      await mgr.elected();
      const owner = await api.create<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'web', namespace: 'default' },
        data: { service: 'web' },
      });
      const route = await eventually(
        'the operator to create the Route',
        () => api.get(Route, { namespace: 'default', name: 'web' }).catch(ignoreNotFound),
        60_000,
      );
      assert.equal(route.metadata?.ownerReferences?.[0]?.uid, owner.metadata?.uid);
      assert.equal(route.metadata?.ownerReferences?.[0]?.controller, true);

      // Let the create's own events settle, then change only the Route.
      let settled = reconciled.length;
      for (let quiet = 0; quiet < 10; quiet++) {
        await sleep(200);
        if (reconciled.length !== settled) {
          settled = reconciled.length;
          quiet = 0;
        }
      }
      await api.patch(route, { type: 'merge', data: { spec: { host: 'drifted.example.com' } } });
      await eventually(
        'a reconcile of the owner after the Route changed',
        () =>
          reconciled.length > settled &&
          reconciled.slice(settled).some((r) => r.namespace === 'default' && r.name === 'web'),
        60_000,
      );
      await eventually(
        'the owner to put the Route back',
        async () => (await api.get(Route, { namespace: 'default', name: 'web' })).spec.host === desiredHost,
        60_000,
      );
    } finally {
      mgr.stop();
      await running;
    }
  });
});

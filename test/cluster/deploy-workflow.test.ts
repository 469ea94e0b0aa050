/**
 * The generated project's deploy workflow on the one-node test cluster, as a
 * user runs it: scaffold Memcached (with a controller that really creates a
 * Deployment), `make docker-build docker-push` with buildah into the
 * cluster's registry, `make deploy`, then prove the operator works as a pod:
 * restricted security context and memory limit, Ready, a sample CR gives a
 * Deployment whose pods run, deleting the CR garbage-collects them, two
 * replicas hand over leadership when the leader's pod is deleted, /metrics
 * answers over HTTPS to a pod whose ServiceAccount is bound to
 * metrics-reader, and `make undeploy` leaves no object behind. Then the same
 * operator image the OLM way: `make bundle bundle-build bundle-push`,
 * `olm install` (the local OLM of olm-local.ts), `run bundle`, a sample CR
 * reconciled by the operator OLM installed, `cleanup` and `olm uninstall`.
 *
 * Run (root): node --test dist/test/cluster/deploy-workflow.test.js
 * with TS_OPERATOR_SDK_CLUSTER_ASSETS and KUBEBUILDER_ASSETS set (scripts/test.sh does).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../e2e/eventually.js';
import { SCENARIOS, packRepository, runCliAsync, scaffoldScenario, type CliExit } from '../scaffold/harness.js';
import { NODE_VERSION, type BuildahEnvironment } from '../support/images.js';
import { useCluster } from './cluster.js';
import { kubectl } from './kubectl.js';
import { prepareLocalOlm, type LocalOlm } from './olm-local.js';
import { kubectlJson, makeInProject, prepareImageBuilds } from './project.js';
import { pushBusyboxImage } from './tiny-images.js';

const cluster = useCluster();

const SYSTEM = 'memcached-operator-system';
const MANAGER = 'memcached-operator-controller-manager';
const MANAGER_SELECTOR = 'control-plane=controller-manager';
/** The Lease name init derives from the project name and domain (leaderElectionId in src/commands/init/init.ts). */
let leaseName: string;

/** The test's controller edit: the tutorial's Memcached, creating an owned Deployment of `spec.size` pods running `spec.image`. */
const CONTROLLER = `import type { V1Deployment } from '@kubernetes/client-node';
import { Deployment, ignoreNotFound, isNotFound, newControllerManagedBy, setControllerReference, type Client, type Manager, type ReconcileContext, type Reconciler, type Request, type Result } from 'ts-operator-sdk';
import { Memcached } from '../apis/v1/memcached_types.js';

/**
 * +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch;create;update;patch;delete
 * +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=get;update;patch
 * +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
 * +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
 */
export class MemcachedReconciler implements Reconciler {
  constructor(private readonly client: Client) {}

  async reconcile(ctx: ReconcileContext, req: Request): Promise<Result> {
    const memcached = await this.client.get(Memcached, req).catch(ignoreNotFound);
    if (!memcached) return {};
    const size = memcached.spec?.size ?? 1;
    const image = memcached.spec?.image ?? 'memcached:1.6';
    const existing = await this.client.get(Deployment, req).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
    if (!existing) {
      const labels = { app: 'memcached', 'memcached.example.com/instance': req.name };
      const deployment: V1Deployment = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: req.name, namespace: req.namespace },
        spec: {
          replicas: size,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'memcached', image, command: ['sh', '-c', 'exec sleep 3600'] }] } },
        },
      };
      setControllerReference(memcached, deployment);
      await this.client.create(deployment);
      ctx.log.info({ deployment: req.name }, 'created the Deployment');
    } else if (existing.spec?.replicas !== size) {
      existing.spec!.replicas = size;
      await this.client.update(existing);
    }
    ctx.log.info({ memcached: req.name, size }, 'reconciled');
    return {};
  }

  setupWithManager(mgr: Manager): void {
    newControllerManagedBy(mgr).for(Memcached).owns(Deployment).named('memcached').complete(this);
  }
}
`;

let project: string;
let store: BuildahEnvironment;
let image: string;
let localOlm: LocalOlm | undefined;

const make = (args: string[], extraEnv: NodeJS.ProcessEnv = {}): string => makeInProject(cluster(), store, project, args, extraEnv);

/**
 * The CLI against the cluster, asynchronously: OLM's manifests are served
 * from this process (olm-local.ts), so a synchronous child would starve it.
 */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliExit> {
  return runCliAsync([...args, '--kubeconfig', cluster().kubeconfigPath], { env });
}

async function cliOk(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await cli(args, env);
  assert.equal(result.code, 0, `ts-operator-sdk ${args.join(' ')} failed:\n${result.stderr}\n${result.stdout}`);
  return result.stderr;
}

const json = <T>(args: string[]): T => kubectlJson<T>(cluster(), args);

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string; ownerReferences?: { kind: string; name: string }[] };
  spec: {
    securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
    containers: { name: string; image: string; securityContext?: Record<string, unknown>; resources?: { limits?: Record<string, string> } }[];
  };
  status: { phase?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { ready: boolean; restartCount: number }[] };
}

const isReady = (pod: Pod): boolean => !pod.metadata.deletionTimestamp && (pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);

function readyManagerPods(): Pod[] {
  return json<{ items: Pod[] }>(['get', 'pods', '-n', SYSTEM, '-l', MANAGER_SELECTOR]).items.filter(isReady);
}

function leaseHolder(): string | undefined {
  const result = spawnSync('kubectl', ['get', 'lease', '-n', SYSTEM, leaseName, '-o', 'jsonpath={.spec.holderIdentity}'], { env: cluster().env(), encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() || undefined : undefined;
}

/** Builds the image and scaffolds the project; a suite hook, so it runs once the cluster's root hook has started it. */
async function setUp(): Promise<void> {
  const tarball = packRepository();
  const images = prepareImageBuilds(cluster());
  store = images.store;
  await pushBusyboxImage(cluster().registryUrl, 'busybox', '1');
  project = scaffoldScenario(SCENARIOS[0]!, { env: { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` } });
  const types = join(project, 'apis', 'v1', 'memcached_types.ts');
  const typesText = spawnSync('cat', [types], { encoding: 'utf8' }).stdout;
  writeFileSync(types, typesText
    .replace('import { defineKind, type Condition } from', 'import { defineKind, type Condition, type int32 } from')
    .replace(/^( {2}foo\?: string;)$/m, '$1\n  /** +optional */\n  size?: int32;\n  /** +optional */\n  image?: string;'));
  writeFileSync(join(project, 'controllers', 'memcached_controller.ts'), CONTROLLER);
  const projectFile = spawnSync('cat', [join(project, 'PROJECT')], { encoding: 'utf8' }).stdout;
  const main = spawnSync('grep', ['-o', "leaderElectionID: '[^']*'", join(project, 'main.ts')], { encoding: 'utf8' }).stdout;
  leaseName = /'([^']+)'/.exec(main)?.[1] ?? '';
  assert.ok(leaseName, `main.ts names its Lease (PROJECT:\n${projectFile})`);
  image = `${cluster().registry}/memcached-operator:v0.0.1`;
  // The store gets its buildah variables; make gets the cluster's KUBECONFIG.
  make(images.dockerBuildPush(image));
}

describe('make deploy runs the operator as a pod on the cluster', { timeout: 3_600_000 }, () => {
  before(setUp, { timeout: 1_500_000 });
  after(async () => {
    await localOlm?.close();
    store?.remove();
  });

  test('make deploy: the manager pod runs restricted, with its memory limit, and becomes Ready', { timeout: 600_000 }, async () => {
    make(['deploy', `IMG=${image}`]);
    const [pod] = await eventually('a Ready manager pod', () => {
      const ready = readyManagerPods();
      return ready.length === 1 ? ready : undefined;
    }, 300_000, 2000);
    const manager = pod!.spec.containers.find((container) => container.name === 'manager')!;
    assert.equal(manager.image, image);
    assert.equal(pod!.spec.securityContext?.runAsNonRoot, true);
    assert.equal(pod!.spec.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    assert.equal(manager.securityContext?.['readOnlyRootFilesystem'], true);
    assert.equal(manager.securityContext?.['allowPrivilegeEscalation'], false);
    assert.deepEqual((manager.securityContext?.['capabilities'] as { drop?: string[] }).drop, ['ALL']);
    assert.equal(manager.resources?.limits?.['memory'], '256Mi');
    assert.equal(pod!.status.containerStatuses?.[0]?.restartCount, 0, 'the operator did not crash');
    // The restricted Pod Security level admits the pod as it is.
    const dryRun = spawnSync('kubectl', ['label', '--dry-run=server', '--overwrite', 'namespace', SYSTEM, 'pod-security.kubernetes.io/enforce=restricted'], { env: cluster().env(), encoding: 'utf8' });
    assert.equal(dryRun.status, 0, dryRun.stderr);
    assert.doesNotMatch(dryRun.stderr, /violate/);
    await eventually('the manager to hold the Lease', () => leaseHolder()?.startsWith(pod!.metadata.name), 120_000, 1000);
  });

  test('a sample CR gets a Deployment whose pods run, and deleting it garbage-collects them', { timeout: 600_000 }, async () => {
    kubectl(cluster(), ['apply', '-n', 'default', '-f', '-'], JSON.stringify({
      apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: 'memcached-sample', namespace: 'default' },
      spec: { size: 2, image: `${cluster().registry}/busybox:1` },
    }));
    await eventually('2 running memcached pods', () => {
      const pods = json<{ items: Pod[] }>(['get', 'pods', '-n', 'default', '-l', 'memcached.example.com/instance=memcached-sample']).items;
      return pods.filter((pod) => pod.status.phase === 'Running').length === 2;
    }, 300_000, 2000);
    const deployment = json<{ metadata: { ownerReferences?: { kind: string; name: string; controller?: boolean }[] } }>(['get', 'deployment', '-n', 'default', 'memcached-sample']);
    assert.deepEqual(deployment.metadata.ownerReferences?.map((ref) => [ref.kind, ref.name, ref.controller]), [['Memcached', 'memcached-sample', true]]);

    kubectl(cluster(), ['delete', '-n', 'default', 'memcached', 'memcached-sample', '--wait=true']);
    await eventually('the Deployment and its pods to be garbage-collected', () => {
      const deployments = json<{ items: unknown[] }>(['get', 'deployments', '-n', 'default', '-l', 'app=memcached']).items;
      const gone = spawnSync('kubectl', ['get', 'deployment', '-n', 'default', 'memcached-sample'], { env: cluster().env(), encoding: 'utf8' });
      const pods = json<{ items: unknown[] }>(['get', 'pods', '-n', 'default', '-l', 'memcached.example.com/instance=memcached-sample']).items;
      return deployments.length === 0 && gone.status !== 0 && pods.length === 0;
    }, 300_000, 2000);
  });

  test('with two replicas one leads; deleting the leader\'s pod hands the Lease to the other, which reconciles', { timeout: 900_000 }, async () => {
    kubectl(cluster(), ['scale', '-n', SYSTEM, `deployment/${MANAGER}`, '--replicas=2']);
    const pods = await eventually('2 Ready manager pods', () => {
      const ready = readyManagerPods();
      return ready.length === 2 ? ready : undefined;
    }, 300_000, 2000);
    const holder = await eventually('a Lease holder', () => leaseHolder(), 120_000, 1000);
    const leader = pods.find((pod) => holder.startsWith(`${pod.metadata.name}_`));
    const follower = pods.find((pod) => pod !== leader);
    assert.ok(leader && follower, `the holder ${holder} is one of ${pods.map((pod) => pod.metadata.name).join(', ')}`);

    // The node is cordoned first: otherwise the Deployment's replacement for the deleted pod can win the
    // race for the released Lease, and "the other replica takes over" would be left to chance.
    const node = kubectl(cluster(), ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
    kubectl(cluster(), ['cordon', node]);
    try {
      kubectl(cluster(), ['delete', 'pod', '-n', SYSTEM, leader.metadata.name, '--wait=false']);
      await eventually('the follower to take the Lease', () => leaseHolder()?.startsWith(`${follower.metadata.name}_`), 180_000, 1000);
    } finally {
      kubectl(cluster(), ['uncordon', node]);
    }
    // The new leader reconciles: a new CR gets its Deployment.
    kubectl(cluster(), ['apply', '-n', 'default', '-f', '-'], JSON.stringify({
      apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: 'after-failover', namespace: 'default' },
      spec: { size: 1, image: `${cluster().registry}/busybox:1` },
    }));
    await eventually('the Deployment of after-failover', () => spawnSync('kubectl', ['get', 'deployment', '-n', 'default', 'after-failover'], { env: cluster().env() }).status === 0, 180_000, 2000);
    const logs = kubectl(cluster(), ['logs', '-n', SYSTEM, follower.metadata.name]);
    assert.match(logs, /after-failover/, 'the new leader logged the reconcile');
    kubectl(cluster(), ['delete', '-n', 'default', 'memcached', 'after-failover', '--wait=true']);
  });

  test('/metrics answers over HTTPS to a pod whose ServiceAccount is bound to metrics-reader, and refuses one that is not', { timeout: 600_000 }, async () => {
    // One replica, the leader, that has reconciled: the Service then leads to the pod whose counters the
    // assertions read (with two, kube-proxy may pick the standby, which has reconciled nothing).
    kubectl(cluster(), ['scale', '-n', SYSTEM, `deployment/${MANAGER}`, '--replicas=1']);
    const [manager] = await eventually('one Ready manager pod holding the Lease', () => {
      const ready = json<{ items: Pod[] }>(['get', 'pods', '-n', SYSTEM, '-l', MANAGER_SELECTOR]).items.filter((pod) => !pod.metadata.deletionTimestamp);
      return ready.length === 1 && isReady(ready[0]!) && leaseHolder()?.startsWith(`${ready[0]!.metadata.name}_`) ? ready : undefined;
    }, 300_000, 2000);
    kubectl(cluster(), ['apply', '-n', 'default', '-f', '-'], JSON.stringify({
      apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: 'metrics-sample', namespace: 'default' },
      spec: { size: 1, image: `${cluster().registry}/busybox:1` },
    }));
    await eventually('the Deployment of metrics-sample', () => spawnSync('kubectl', ['get', 'deployment', '-n', 'default', 'metrics-sample'], { env: cluster().env() }).status === 0, 180_000, 2000);
    assert.ok(manager);
    // The test cluster runs no DNS: the Service by its ClusterIP (kube-proxy's rules lead it to the manager pod).
    const service = kubectl(cluster(), ['get', 'service', '-n', SYSTEM, `${MANAGER}-metrics-service`, '-o', 'jsonpath={.spec.clusterIP}']).trim();
    assert.match(service, /^\d+\.\d+\.\d+\.\d+$/);
    // Busybox's wget has no TLS: a tiny Node script in the runtime base image does the request.
    const script = [
      "const fs = require('node:fs'); const https = require('node:https');",
      "const token = fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8');",
      `const get = () => https.get({ host: '${service}', port: 8443, path: '/metrics', rejectUnauthorized: false, headers: { authorization: 'Bearer ' + token } }, (res) => {`,
      "  let body = ''; res.on('data', (d) => (body += d)); res.on('end', () => { console.log('STATUS ' + res.statusCode); console.log(body); });",
      "}).on('error', (err) => { console.log('ERROR ' + err.message); setTimeout(get, 2000); });",
      'get();',
    ].join('\n');
    kubectl(cluster(), ['apply', '-f', '-'], [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'metrics-scraper', namespace: 'default' } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'metrics-scraper' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'memcached-operator-metrics-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'metrics-scraper', namespace: 'default' }] },
    ].map((object) => JSON.stringify(object)).join('\n'));
    const scrape = (name: string, serviceAccount: string): void => {
      kubectl(cluster(), ['apply', '-f', '-'], JSON.stringify({
        apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
        spec: {
          serviceAccountName: serviceAccount, restartPolicy: 'Never',
          containers: [{ name: 'curl', image: `${cluster().registry}/node-runtime:${NODE_VERSION}`, command: ['/nodejs/bin/node', '-e', script] }],
        },
      }));
    };
    scrape('metrics-scraper', 'metrics-scraper');
    scrape('metrics-stranger', 'default');
    const output = await eventually('the scraper to finish', () => {
      const pod = json<Pod>(['get', 'pod', '-n', 'default', 'metrics-scraper']);
      return pod.status.phase === 'Succeeded' ? kubectl(cluster(), ['logs', '-n', 'default', 'metrics-scraper']) : undefined;
    }, 300_000, 2000);
    assert.match(output, /^STATUS 200$/m);
    assert.match(output, /^controller_runtime_reconcile_total\{controller="memcached",result="success"\} [1-9]/m);
    const refused = await eventually('the stranger to finish', () => {
      const pod = json<Pod>(['get', 'pod', '-n', 'default', 'metrics-stranger']);
      return pod.status.phase === 'Succeeded' ? kubectl(cluster(), ['logs', '-n', 'default', 'metrics-stranger']) : undefined;
    }, 300_000, 2000);
    assert.match(refused, /^STATUS 403$/m);
    kubectl(cluster(), ['delete', 'pod', '-n', 'default', 'metrics-scraper', 'metrics-stranger', '--wait=false']);
    kubectl(cluster(), ['delete', '-n', 'default', 'memcached', 'metrics-sample', '--wait=true']);
    kubectl(cluster(), ['delete', 'clusterrolebinding', 'metrics-scraper']);
    kubectl(cluster(), ['delete', 'serviceaccount', '-n', 'default', 'metrics-scraper']);
  });

  test('make undeploy leaves no object of the operator behind', { timeout: 600_000 }, async () => {
    make(['undeploy']);
    await eventually('the namespace and every cluster-scoped object to be gone', () => {
      const namespace = spawnSync('kubectl', ['get', 'namespace', SYSTEM], { env: cluster().env(), encoding: 'utf8' });
      return namespace.status !== 0 && /NotFound/.test(namespace.stderr);
    }, 300_000, 2000);
    const crds = json<{ items: { metadata: { name: string } }[] }>(['get', 'crds']).items.map((crd) => crd.metadata.name);
    assert.deepEqual(crds.filter((name) => name.endsWith('.cache.example.com')), []);
    const roles = json<{ items: { metadata: { name: string } }[] }>(['get', 'clusterroles,clusterrolebindings']).items.map((item) => item.metadata.name);
    assert.deepEqual(roles.filter((name) => name.startsWith('memcached-operator-')), []);
    // Objects the operator created are gone with their owners: no Deployment it made is left in default.
    assert.deepEqual(json<{ items: unknown[] }>(['get', 'deployments', '-n', 'default', '-l', 'app=memcached']).items, []);
  });

  test('make bundle bundle-build bundle-push, run bundle: the operator OLM installs reconciles a sample; cleanup and olm uninstall leave nothing', { timeout: 1_200_000 }, async () => {
    const { registry } = cluster();
    const namespace = 'memcached-olm';
    const bundleImage = `${registry}/memcached-operator-bundle:v0.0.1`;
    // Non-interactive, as in CI: generate kustomize manifests asks nothing.
    make(['bundle', `IMG=${image}`, 'VERSION=0.0.1'], { CI: 'true' });
    make(['bundle-build', 'bundle-push', `BUNDLE_IMG=${bundleImage}`, 'CONTAINER_TOOL=buildah']);

    localOlm = await prepareLocalOlm(cluster());
    await cliOk(['olm', 'install', '--timeout', '5m'], localOlm.env);
    kubectl(cluster(), ['create', 'namespace', namespace]);
    const run = await cliOk(['run', 'bundle', bundleImage, '-n', namespace, '--index-image', localOlm.opmImage, '--timeout', '5m', '--security-context-config', 'restricted'], localOlm.env);
    assert.match(run, /OLM has successfully installed "memcached-operator\.v0\.0\.1"/);
    assert.equal(kubectl(cluster(), ['-n', namespace, 'get', 'csv', 'memcached-operator.v0.0.1', '-o', 'jsonpath={.status.phase}']), 'Succeeded');
    const [managerPod] = await eventually('a Ready manager pod installed by OLM', () => {
      const ready = json<{ items: Pod[] }>(['get', 'pods', '-n', namespace, '-l', MANAGER_SELECTOR]).items.filter(isReady);
      return ready.length === 1 ? ready : undefined;
    }, 300_000, 2000);
    assert.equal(managerPod!.spec.containers.find((container) => container.name === 'manager')?.image, image);

    kubectl(cluster(), ['apply', '-n', namespace, '-f', '-'], JSON.stringify({
      apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: 'memcached-sample', namespace },
      spec: { size: 1, image: `${registry}/busybox:1` },
    }));
    const sampleSelector = 'memcached.example.com/instance=memcached-sample';
    await eventually('the sample\'s pod to run', () => json<{ items: Pod[] }>(['get', 'pods', '-n', namespace, '-l', sampleSelector]).items.some((pod) => pod.status.phase === 'Running'), 300_000, 2000);
    // The sample goes before cleanup: deleting the CRD under a live CR leaves the CR's Deployment behind,
    // because the garbage collector can no longer resolve its owner's kind (seen on this cluster).
    kubectl(cluster(), ['delete', '-n', namespace, 'memcached', 'memcached-sample', '--wait=true']);
    await eventually('the sample\'s pods to be garbage-collected', () => json<{ items: Pod[] }>(['get', 'pods', '-n', namespace, '-l', sampleSelector]).items.length === 0, 300_000, 2000);

    const cleanup = await cliOk(['cleanup', 'memcached-operator', '-n', namespace, '--timeout', '5m']);
    assert.match(cleanup, /Operator "memcached-operator" uninstalled/);
    // By name: OLM's CRDs are too large for a buffered `-o json`.
    assert.deepEqual(kubectl(cluster(), ['get', 'crds', '-o', 'name']).split('\n').filter((name) => name.endsWith('.cache.example.com')), []);
    assert.equal(kubectl(cluster(), ['-n', namespace, 'get', 'csv', '-o', 'name']).trim(), '');
    // The operator's pod is gone with its CSV, the registry pod with its CatalogSource.
    await eventually('no pod left in the namespace', () => json<{ items: Pod[] }>(['get', 'pods', '-n', namespace]).items.length === 0, 300_000, 2000);

    await cliOk(['olm', 'uninstall', '--timeout', '5m'], localOlm.env);
    assert.equal(kubectl(cluster(), ['get', 'crd', '-o', 'name']).split('\n').filter((name) => name.endsWith('.operators.coreos.com')).length, 0);
  });
});

/**
 * The generated project's whole workflow on the one-node test cluster, as a
 * user runs it, with ONE project, ONE image build and ONE OLM install (each
 * costs minutes; issue 15 gives these tests 10 on a warm cache):
 *
 * 1. Scaffold Memcached (a controller that really creates a Deployment) and
 *    `create webhook --defaulting --programmatic-validation` with a rule of
 *    each kind.
 * 2. Images without Docker: `make docker-build docker-push` with buildah from
 *    the unmodified generated Dockerfile into the cluster's registry; the
 *    image's manifest, ENTRYPOINT and non-root user are read back over the
 *    registry API; make's failures are one line each.
 * 3. `make deploy` after the generated README's "Webhooks without
 *    cert-manager" first step: the manager pod runs restricted, with its
 *    memory limit, and becomes Ready; without the CA the API server refuses
 *    to trust the webhook (verified TLS through the Service's DNS name); after
 *    the README's second step a field is defaulted and an invalid object is
 *    refused with the webhook's message.
 * 4. A sample CR gives a Deployment whose pods run; deleting it
 *    garbage-collects them. Two replicas hand over leadership when the
 *    leader's pod is deleted. /metrics answers over HTTPS to a pod whose
 *    ServiceAccount is bound to metrics-reader. `make undeploy` leaves no
 *    object behind.
 * 5. OLM: `make bundle USE_IMAGE_DIGESTS=true` pins the registry's digest;
 *    `bundle-build bundle-push`; `olm install` (the local OLM of
 *    olm-local.ts) and `olm status`; `run bundle` of the generated bundle,
 *    whose operator (webhooks and their certificates now OLM's) reconciles a
 *    sample; `cleanup`; then `run bundle` and `run bundle-upgrade` of a
 *    fixture package with two versions, `cleanup`, and `olm uninstall`.
 *
 * The API server runs in the cluster's network namespace, not in a pod, and
 * that namespace has no route to the Service range. The harness starts it
 * with --enable-aggregator-routing, so it resolves a webhook Service to a
 * ready endpoint (the manager pod's IP and targetPort 9443) and verifies the
 * certificate against the Service's DNS name, `<service>.<namespace>.svc`,
 * as on a real cluster.
 *
 * Run (root): node --test dist/test/cluster/operator-workflow.test.js
 * with TS_OPERATOR_SDK_CLUSTER_ASSETS, TS_OPERATOR_SDK_OLM_ASSETS and KUBEBUILDER_ASSETS set (scripts/test.sh does).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../e2e/eventually.js';
import { FIXTURE_CRD, FIXTURE_PACKAGE, fixtureBundleFiles, pushImage } from '../e2e/olm-fixtures.js';
import {
  SCENARIOS,
  packRepository,
  runCliAsync,
  runCliOk,
  scaffoldScenario,
  type CliExit,
} from '../scaffold/harness.js';
import { NODE_VERSION, NONROOT_UID, buildah, type BuildahEnvironment } from '../support/images.js';
import { useCluster } from './cluster.js';
import { kubectl } from './kubectl.js';
import { prepareLocalOlm, type LocalOlm } from './olm-local.js';
import { kubectlJson, makeInProject, prepareImageBuilds, runMakeInProject, type MakeResult } from './project.js';
import { pushBusyboxImage } from './tiny-images.js';

const cluster = useCluster();

const SYSTEM = 'memcached-operator-system';
const MANAGER = 'memcached-operator-controller-manager';
const MANAGER_SELECTOR = 'control-plane=controller-manager';
const WEBHOOK_SERVICE = 'memcached-operator-webhook-service';
/** The validating webhook's message for a Memcached that is too big. */
const REFUSAL = 'spec.size must be at most 5';
const MANIFEST_TYPES =
  'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';
/** Generous: every OLM step pulls images and waits on OLM's controllers on a shared 2-core machine. */
const OLM_STEP_TIMEOUT = '5m';

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
let dockerBuildPush: string[];
let dockerfileAsGenerated: string;
/** The image's digest in the registry, once pushed. */
let digest = '';
/** The Lease name init derives from the project name and domain (leaderElectionId in src/commands/init/init.ts). */
let leaseName: string;
/** The README's "Webhooks without cert-manager" shell blocks: before and after `make deploy`. */
let readmeSteps: string[];
/** Where the README's steps run (the CA and certificate files stay there between the two). */
let workDir: string | undefined;
let localOlm: LocalOlm | undefined;

const make = (args: string[], extraEnv: NodeJS.ProcessEnv = {}): string =>
  makeInProject(cluster(), store, project, args, extraEnv);
const tryMake = (args: string[]): MakeResult => runMakeInProject(cluster(), store, project, args);
const json = <T>(args: string[]): T => kubectlJson<T>(cluster(), args);

/**
 * The CLI against the cluster, asynchronously: OLM's manifests are served
 * from this process (olm-local.ts), so a synchronous child would starve it.
 */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliExit> {
  return runCliAsync([...args, '--kubeconfig', cluster().kubeconfigPath], { env });
}

async function cliOk(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliExit> {
  const result = await cli(args, env);
  assert.equal(result.code, 0, `ts-operator-sdk ${args.join(' ')} failed:\n${result.stderr}\n${result.stdout}`);
  return result;
}

interface Pod {
  metadata: {
    name: string;
    uid: string;
    deletionTimestamp?: string;
    ownerReferences?: { kind: string; name: string }[];
  };
  spec: {
    securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
    containers: {
      name: string;
      image: string;
      securityContext?: Record<string, unknown>;
      resources?: { limits?: Record<string, string> };
    }[];
  };
  status: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; restartCount: number }[];
  };
}

const isReady = (pod: Pod): boolean =>
  !pod.metadata.deletionTimestamp &&
  (pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);

function readyManagerPods(namespace = SYSTEM): Pod[] {
  return json<{ items: Pod[] }>(['get', 'pods', '-n', namespace, '-l', MANAGER_SELECTOR]).items.filter(isReady);
}

function leaseHolder(): string | undefined {
  const result = spawnSync(
    'kubectl',
    ['get', 'lease', '-n', SYSTEM, leaseName, '-o', 'jsonpath={.spec.holderIdentity}'],
    { env: cluster().env(), encoding: 'utf8' },
  );
  return result.status === 0 ? result.stdout.trim() || undefined : undefined;
}

/** `kubectl create` of a Memcached; returns its status and output instead of throwing. */
function createMemcached(
  name: string,
  spec: Record<string, unknown>,
  namespace = 'default',
): { status: number | null; stdout: string; stderr: string } {
  const object = { apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name, namespace }, spec };
  const result = spawnSync('kubectl', ['create', '-f', '-', '-o', 'json'], {
    env: cluster().env(),
    input: JSON.stringify(object),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/**
 * Creates a Memcached through the webhooks, retrying while the call cannot
 * reach them (a webhook endpoint that is changing while replicas come and go);
 * a refusal by the webhook itself fails at once.
 */
async function createThroughWebhooks(
  name: string,
  spec: Record<string, unknown>,
  namespace = 'default',
): Promise<void> {
  await eventually(
    `the Memcached ${name} to be created`,
    () => {
      const result = createMemcached(name, spec, namespace);
      if (result.status === 0) return true;
      assert.doesNotMatch(result.stderr, /denied the request/, `the webhook refused ${name}`);
      return undefined;
    },
    120_000,
    2000,
  );
}

/** Replaces one exact piece of a project file; fails if the scaffold no longer has it. */
function edit(relative: string, from: string, to: string): void {
  const file = join(project, relative);
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${relative} has no ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

/** The ```sh blocks of the README section that starts with `heading`. */
function readmeShellBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(heading);
  assert.ok(start >= 0, `the generated README has no ${heading}`);
  const section = readme.slice(start, readme.indexOf('\n#', start));
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

/** Runs one README step with bash, as a user pastes it, against the cluster. */
function runReadmeStep(script: string): void {
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: workDir,
    env: { ...cluster().env(), KUBECONFIG: cluster().kubeconfigPath },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(result.status, 0, `the README step failed:\n${script}\n${result.stdout}\n${result.stderr}`);
}

/** Scaffolds the project with the user's edits; a suite hook, so it runs once the cluster's root hook has started it. */
async function setUp(): Promise<void> {
  const tarball = packRepository();
  const images = prepareImageBuilds(cluster());
  store = images.store;
  await pushBusyboxImage(cluster().registryUrl, 'busybox', '1');
  const env = { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` };
  project = scaffoldScenario(SCENARIOS[0]!, { env });
  readmeSteps = readmeShellBlocks(
    readFileSync(join(project, 'README.md'), 'utf8'),
    '**Webhooks without cert-manager:**',
  );
  assert.equal(readmeSteps.length, 2, 'the README gives two steps: before and after make deploy');
  workDir = mkdtempSync(join(tmpdir(), 'workflow-'));
  runCliOk(
    [
      'create',
      'webhook',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--defaulting',
      '--programmatic-validation',
    ],
    project,
    { env },
  );

  // The user's fields, controller and webhook rules, where the scaffold leaves TODOs.
  edit(
    'apis/v1/memcached_types.ts',
    'import { defineKind, type Condition } from',
    'import { defineKind, type Condition, type int32 } from',
  );
  edit(
    'apis/v1/memcached_types.ts',
    '  foo?: string;\n',
    '  foo?: string;\n  /** +optional */\n  size?: int32;\n  /** +optional */\n  image?: string;\n',
  );
  writeFileSync(join(project, 'controllers', 'memcached_controller.ts'), CONTROLLER);
  const webhook = 'webhooks/v1/memcached_webhook.ts';
  edit(
    webhook,
    "import type { AdmissionContext } from 'ts-operator-sdk/webhook';",
    "import { AdmissionDeniedError, type AdmissionContext } from 'ts-operator-sdk/webhook';",
  );
  edit(
    webhook,
    '    // TODO(user): fill in your defaulting logic.\n',
    '    memcached.spec = { ...memcached.spec, size: memcached.spec?.size ?? 3 };\n',
  );
  edit(
    webhook,
    '    // TODO(user): fill in your validation logic upon object creation.\n',
    `    if ((memcached.spec?.size ?? 0) > 5) throw new AdmissionDeniedError('${REFUSAL}');\n`,
  );

  // As the scaffold leaves it, `create webhook`'s COPY of webhooks/ included.
  dockerfileAsGenerated = readFileSync(join(project, 'Dockerfile'), 'utf8');
  leaseName = /leaderElection: .*\{ id: '([^']+)' \}/.exec(readFileSync(join(project, 'main.ts'), 'utf8'))?.[1] ?? '';
  assert.ok(leaseName, 'main.ts names its Lease');
  image = `${cluster().registry}/memcached-operator:v0.0.1`;
  dockerBuildPush = images.dockerBuildPush(image);
}

describe(
  "the generated operator's workflow on the cluster: images, deploy, webhooks, leader election, metrics, OLM",
  { timeout: 3_600_000 },
  () => {
    before(setUp, { timeout: 1_500_000 });
    after(async () => {
      await localOlm?.close();
      store?.remove();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    test('the project depends on its vendored tarball, which the generated Dockerfile copies', () => {
      const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      const vendored = readdirSync(join(project, 'vendor'));
      assert.deepEqual(vendored, [vendored[0]!]);
      assert.equal(pkg.dependencies['ts-operator-sdk'], `file:vendor/${vendored[0]}`);
      assert.match(dockerfileAsGenerated, new RegExp(`^COPY vendor/${vendored[0]!.replace(/\./g, '\\.')} `, 'm'));
      // The defaults stay the public images; the test's images come in only as build arguments.
      assert.match(dockerfileAsGenerated, /^ARG BUILDER_IMAGE=node:24-bookworm-slim$/m);
      assert.match(dockerfileAsGenerated, /^ARG BASE_IMAGE=gcr\.io\/distroless\/nodejs24-debian12:nonroot$/m);
    });

    test(
      'make docker-build docker-push with buildah builds the unmodified Dockerfile and pushes the image, ENTRYPOINT and non-root user to the registry',
      { timeout: 900_000 },
      async () => {
        make(dockerBuildPush);
        assert.equal(
          readFileSync(join(project, 'Dockerfile'), 'utf8'),
          dockerfileAsGenerated,
          'the build used the Dockerfile as generated',
        );
        const { registryUrl } = cluster();
        const response = await fetch(`${registryUrl}/v2/memcached-operator/manifests/v0.0.1`, {
          headers: { Accept: MANIFEST_TYPES },
        });
        assert.equal(response.status, 200);
        digest = response.headers.get('docker-content-digest') ?? '';
        assert.match(digest, /^sha256:[0-9a-f]{64}$/);
        const manifest = (await response.json()) as { config: { digest: string }; layers: unknown[] };
        assert.ok(manifest.layers.length >= 2, 'base layer plus the operator layers');
        const config = (await (
          await fetch(`${registryUrl}/v2/memcached-operator/blobs/${manifest.config.digest}`)
        ).json()) as {
          config: { Entrypoint: string[]; User: string };
        };
        assert.deepEqual(config.config.Entrypoint, ['/nodejs/bin/node', '--max-semi-space-size=1', 'dist/main.js']);
        // That the ENTRYPOINT runs (node, the modules and dist/ are all in the image) as this user, the deploy below shows.
        assert.equal(config.config.User, `${NONROOT_UID}:${NONROOT_UID}`);
      },
    );

    test("make's image failures stop it with one line naming the problem", { timeout: 300_000 }, () => {
      const missingTool = tryMake(['docker-build', `IMG=${image}`, 'CONTAINER_TOOL=no-such-container-tool']);
      assert.notEqual(missingTool.status, 0);
      assert.match(
        missingTool.stderr,
        /^error: CONTAINER_TOOL=no-such-container-tool is not installed \(not found in PATH\): install it, or pass CONTAINER_TOOL=docker\|podman\|buildah$/m,
      );

      const badImage = tryMake(['docker-build', 'IMG=Memcached_Operator:v1', 'CONTAINER_TOOL=buildah']);
      assert.notEqual(badImage.status, 0);
      assert.match(
        badImage.stderr,
        /^Error: tag Memcached_Operator:v1: invalid reference format: repository name must be lowercase$/m,
      );

      // A registry that is not there: the image exists locally under that name, the push cannot connect.
      const nowhere = 'localhost:1/memcached-operator:v0.0.1';
      buildah(['tag', image, nowhere], store.env);
      const noRegistry = tryMake(['docker-push', `IMG=${nowhere}`, 'CONTAINER_TOOL=buildah']);
      assert.notEqual(noRegistry.status, 0);
      assert.match(
        noRegistry.stderr,
        /^Error: pushing image "localhost:1\/memcached-operator:v0\.0\.1".*connection refused$/m,
      );
    });

    test(
      "make deploy (after the README's certificate step): the manager pod runs restricted, with its memory limit, serves the webhooks and becomes Ready",
      { timeout: 600_000 },
      async () => {
        // The README's first step: a CA of one's own, a certificate for the Service's DNS name (the name the
        // API server verifies), in the Secret the manager mounts.
        runReadmeStep(readmeSteps[0]!);
        make(['deploy', `IMG=${image}`]);
        const [pod] = await eventually(
          'a Ready manager pod',
          () => {
            const ready = readyManagerPods();
            return ready.length === 1 ? ready : undefined;
          },
          300_000,
          2000,
        );
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
        const dryRun = spawnSync(
          'kubectl',
          [
            'label',
            '--dry-run=server',
            '--overwrite',
            'namespace',
            SYSTEM,
            'pod-security.kubernetes.io/enforce=restricted',
          ],
          { env: cluster().env(), encoding: 'utf8' },
        );
        assert.equal(dryRun.status, 0, dryRun.stderr);
        assert.doesNotMatch(dryRun.stderr, /violate/);
        const endpoints = kubectl(cluster(), [
          'get',
          'endpointslices',
          '-n',
          SYSTEM,
          '-l',
          `kubernetes.io/service-name=${WEBHOOK_SERVICE}`,
          '-o',
          'jsonpath={.items[*].endpoints[*].addresses[*]}',
        ]).trim();
        assert.match(endpoints, /^\d+\.\d+\.\d+\.\d+$/, 'the webhook Service leads to the manager pod');
        await eventually(
          'the manager to hold the Lease',
          () => leaseHolder()?.startsWith(pod!.metadata.name),
          120_000,
          1000,
        );
      },
    );

    test(
      'without the CA in caBundle the API server refuses to trust the webhook: the call goes over verified TLS',
      { timeout: 300_000 },
      async () => {
        // Before the endpoint is in place the call fails otherwise (connection refused): wait for TLS to be the reason.
        const result = await eventually(
          'the API server to reach the webhook',
          () => {
            const attempt = createMemcached('untrusted', {});
            return attempt.status === 0 || /x509|certificate/.test(attempt.stderr) ? attempt : undefined;
          },
          120_000,
          2000,
        );
        assert.notEqual(
          result.status,
          0,
          'a create succeeded although failurePolicy is Fail and the webhook is not trusted',
        );
        assert.match(
          result.stderr,
          new RegExp(
            `failed calling webhook "mmemcached-v1\\.cache\\.kb\\.io".*${WEBHOOK_SERVICE.replace(/\./g, '\\.')}\\.${SYSTEM}\\.svc`,
            's',
          ),
        );
      },
    );

    test(
      "with the CA in caBundle a defaulted field appears on create, and an invalid object is refused with the webhook's message",
      { timeout: 300_000 },
      async () => {
        runReadmeStep(readmeSteps[1]!);
        for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
          const bundles = kubectl(cluster(), [
            'get',
            kind,
            `memcached-operator-${kind.replace('webhookconfiguration', '')}-webhook-configuration`,
            '-o',
            'jsonpath={.webhooks[*].clientConfig.caBundle}',
          ])
            .trim()
            .split(/\s+/);
          assert.deepEqual(
            bundles.map((bundle) => Buffer.from(bundle, 'base64').toString('utf8').includes('BEGIN CERTIFICATE')),
            [true],
            `the README's step gave the ${kind}'s webhook the CA`,
          );
        }
        const created = await eventually(
          'a create through the trusted webhooks',
          () => {
            const result = createMemcached('defaulted', { image: `${cluster().registry}/busybox:1` });
            return result.status === 0 ? (JSON.parse(result.stdout) as { spec?: { size?: number } }) : undefined;
          },
          120_000,
          2000,
        );
        assert.equal(created.spec?.size, 3, 'the defaulting webhook set spec.size');
        assert.equal(
          json<{ spec?: { size?: number } }>(['get', 'memcached', '-n', 'default', 'defaulted']).spec?.size,
          3,
          'the default is stored',
        );

        const invalid = createMemcached('too-big', { size: 9 });
        assert.notEqual(invalid.status, 0, 'the invalid Memcached was created');
        assert.match(
          invalid.stderr,
          new RegExp(`admission webhook "vmemcached-v1\\.cache\\.kb\\.io" denied the request: ${REFUSAL}`),
        );
        assert.equal(
          spawnSync('kubectl', ['get', 'memcached', '-n', 'default', 'too-big'], { env: cluster().env() }).status,
          1,
          'nothing was stored',
        );
        const logs = kubectl(cluster(), ['logs', '-n', SYSTEM, '-l', MANAGER_SELECTOR, '--tail=-1']);
        assert.match(logs, /defaulting Memcached/, 'the manager pod served the call');
        kubectl(cluster(), ['delete', 'memcached', '-n', 'default', 'defaulted', '--wait=true']);
      },
    );

    test(
      'a sample CR gets a Deployment whose pods run, and deleting it garbage-collects them',
      { timeout: 600_000 },
      async () => {
        await createThroughWebhooks('memcached-sample', { size: 2, image: `${cluster().registry}/busybox:1` });
        await eventually(
          '2 running memcached pods',
          () => {
            const pods = json<{ items: Pod[] }>([
              'get',
              'pods',
              '-n',
              'default',
              '-l',
              'memcached.example.com/instance=memcached-sample',
            ]).items;
            return pods.filter((pod) => pod.status.phase === 'Running').length === 2;
          },
          300_000,
          2000,
        );
        const deployment = json<{
          metadata: { ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
        }>(['get', 'deployment', '-n', 'default', 'memcached-sample']);
        assert.deepEqual(
          deployment.metadata.ownerReferences?.map((ref) => [ref.kind, ref.name, ref.controller]),
          [['Memcached', 'memcached-sample', true]],
        );

        kubectl(cluster(), ['delete', '-n', 'default', 'memcached', 'memcached-sample', '--wait=true']);
        await eventually(
          'the Deployment and its pods to be garbage-collected',
          () => {
            const deployments = json<{ items: unknown[] }>([
              'get',
              'deployments',
              '-n',
              'default',
              '-l',
              'app=memcached',
            ]).items;
            const gone = spawnSync('kubectl', ['get', 'deployment', '-n', 'default', 'memcached-sample'], {
              env: cluster().env(),
              encoding: 'utf8',
            });
            const pods = json<{ items: unknown[] }>([
              'get',
              'pods',
              '-n',
              'default',
              '-l',
              'memcached.example.com/instance=memcached-sample',
            ]).items;
            return deployments.length === 0 && gone.status !== 0 && pods.length === 0;
          },
          300_000,
          2000,
        );
      },
    );

    test(
      "with two replicas one leads; deleting the leader's pod hands the Lease to the other, which reconciles",
      { timeout: 900_000 },
      async () => {
        kubectl(cluster(), ['scale', '-n', SYSTEM, `deployment/${MANAGER}`, '--replicas=2']);
        const pods = await eventually(
          '2 Ready manager pods',
          () => {
            const ready = readyManagerPods();
            return ready.length === 2 ? ready : undefined;
          },
          300_000,
          2000,
        );
        const holder = await eventually('a Lease holder', () => leaseHolder(), 120_000, 1000);
        const leader = pods.find((pod) => holder.startsWith(`${pod.metadata.name}_`));
        const follower = pods.find((pod) => pod !== leader);
        assert.ok(
          leader && follower,
          `the holder ${holder} is one of ${pods.map((pod) => pod.metadata.name).join(', ')}`,
        );

        // The node is cordoned first: otherwise the Deployment's replacement for the deleted pod can win the
        // race for the released Lease, and "the other replica takes over" would be left to chance.
        const node = kubectl(cluster(), ['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
        kubectl(cluster(), ['cordon', node]);
        try {
          kubectl(cluster(), ['delete', 'pod', '-n', SYSTEM, leader.metadata.name, '--wait=false']);
          await eventually(
            'the follower to take the Lease',
            () => leaseHolder()?.startsWith(`${follower.metadata.name}_`),
            180_000,
            1000,
          );
        } finally {
          kubectl(cluster(), ['uncordon', node]);
        }
        // The new leader reconciles: a new CR gets its Deployment.
        await createThroughWebhooks('after-failover', { size: 1, image: `${cluster().registry}/busybox:1` });
        await eventually(
          'the Deployment of after-failover',
          () =>
            spawnSync('kubectl', ['get', 'deployment', '-n', 'default', 'after-failover'], { env: cluster().env() })
              .status === 0,
          180_000,
          2000,
        );
        const logs = kubectl(cluster(), ['logs', '-n', SYSTEM, follower.metadata.name]);
        assert.match(logs, /after-failover/, 'the new leader logged the reconcile');
        kubectl(cluster(), ['delete', '-n', 'default', 'memcached', 'after-failover', '--wait=true']);
      },
    );

    test(
      '/metrics answers over HTTPS to a pod whose ServiceAccount is bound to metrics-reader, and refuses one that is not',
      { timeout: 600_000 },
      async () => {
        // One replica, the leader, that has reconciled: the Service then leads to the pod whose counters the
        // assertions read (with two, kube-proxy may pick the standby, which has reconciled nothing).
        kubectl(cluster(), ['scale', '-n', SYSTEM, `deployment/${MANAGER}`, '--replicas=1']);
        const [manager] = await eventually(
          'one Ready manager pod holding the Lease',
          () => {
            const ready = json<{ items: Pod[] }>(['get', 'pods', '-n', SYSTEM, '-l', MANAGER_SELECTOR]).items.filter(
              (pod) => !pod.metadata.deletionTimestamp,
            );
            return ready.length === 1 && isReady(ready[0]!) && leaseHolder()?.startsWith(`${ready[0]!.metadata.name}_`)
              ? ready
              : undefined;
          },
          300_000,
          2000,
        );
        await createThroughWebhooks('metrics-sample', { size: 1, image: `${cluster().registry}/busybox:1` });
        await eventually(
          'the Deployment of metrics-sample',
          () =>
            spawnSync('kubectl', ['get', 'deployment', '-n', 'default', 'metrics-sample'], { env: cluster().env() })
              .status === 0,
          180_000,
          2000,
        );
        assert.ok(manager);
        // The test cluster runs no DNS: the Service by its ClusterIP (kube-proxy's rules lead it to the manager pod).
        const service = kubectl(cluster(), [
          'get',
          'service',
          '-n',
          SYSTEM,
          `${MANAGER}-metrics-service`,
          '-o',
          'jsonpath={.spec.clusterIP}',
        ]).trim();
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
        kubectl(
          cluster(),
          ['apply', '-f', '-'],
          [
            { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'metrics-scraper', namespace: 'default' } },
            {
              apiVersion: 'rbac.authorization.k8s.io/v1',
              kind: 'ClusterRoleBinding',
              metadata: { name: 'metrics-scraper' },
              roleRef: {
                apiGroup: 'rbac.authorization.k8s.io',
                kind: 'ClusterRole',
                name: 'memcached-operator-metrics-reader',
              },
              subjects: [{ kind: 'ServiceAccount', name: 'metrics-scraper', namespace: 'default' }],
            },
          ]
            .map((object) => JSON.stringify(object))
            .join('\n'),
        );
        const scrape = (name: string, serviceAccount: string): void => {
          kubectl(
            cluster(),
            ['apply', '-f', '-'],
            JSON.stringify({
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name, namespace: 'default' },
              spec: {
                serviceAccountName: serviceAccount,
                restartPolicy: 'Never',
                containers: [
                  {
                    name: 'curl',
                    image: `${cluster().registry}/node-runtime:${NODE_VERSION}`,
                    command: ['/nodejs/bin/node', '-e', script],
                  },
                ],
              },
            }),
          );
        };
        scrape('metrics-scraper', 'metrics-scraper');
        scrape('metrics-stranger', 'default');
        const output = await eventually(
          'the scraper to finish',
          () => {
            const pod = json<Pod>(['get', 'pod', '-n', 'default', 'metrics-scraper']);
            return pod.status.phase === 'Succeeded'
              ? kubectl(cluster(), ['logs', '-n', 'default', 'metrics-scraper'])
              : undefined;
          },
          300_000,
          2000,
        );
        assert.match(output, /^STATUS 200$/m);
        assert.match(output, /^controller_runtime_reconcile_total\{controller="memcached",result="success"\} [1-9]/m);
        const refused = await eventually(
          'the stranger to finish',
          () => {
            const pod = json<Pod>(['get', 'pod', '-n', 'default', 'metrics-stranger']);
            return pod.status.phase === 'Succeeded'
              ? kubectl(cluster(), ['logs', '-n', 'default', 'metrics-stranger'])
              : undefined;
          },
          300_000,
          2000,
        );
        assert.match(refused, /^STATUS 403$/m);
        kubectl(cluster(), ['delete', 'pod', '-n', 'default', 'metrics-scraper', 'metrics-stranger', '--wait=false']);
        kubectl(cluster(), ['delete', '-n', 'default', 'memcached', 'metrics-sample', '--wait=true']);
        kubectl(cluster(), ['delete', 'clusterrolebinding', 'metrics-scraper']);
        kubectl(cluster(), ['delete', 'serviceaccount', '-n', 'default', 'metrics-scraper']);
      },
    );

    test('make undeploy leaves no object of the operator behind', { timeout: 600_000 }, async () => {
      make(['undeploy']);
      await eventually(
        'the namespace (and the webhook Secret in it) to be gone',
        () => {
          const namespace = spawnSync('kubectl', ['get', 'namespace', SYSTEM], {
            env: cluster().env(),
            encoding: 'utf8',
          });
          return namespace.status !== 0 && /NotFound/.test(namespace.stderr);
        },
        300_000,
        2000,
      );
      const names = (kinds: string): string[] =>
        json<{ items: { metadata: { name: string } }[] }>(['get', kinds]).items.map((item) => item.metadata.name);
      assert.deepEqual(
        names('crds').filter((name) => name.endsWith('.cache.example.com')),
        [],
      );
      assert.deepEqual(
        names('clusterroles,clusterrolebindings').filter((name) => name.startsWith('memcached-operator-')),
        [],
      );
      assert.deepEqual(
        names('mutatingwebhookconfigurations,validatingwebhookconfigurations').filter((name) =>
          name.startsWith('memcached-operator-'),
        ),
        [],
      );
      // Objects the operator created are gone with their owners: no Deployment it made is left in default.
      assert.deepEqual(
        json<{ items: unknown[] }>(['get', 'deployments', '-n', 'default', '-l', 'app=memcached']).items,
        [],
      );
    });

    test(
      "make bundle USE_IMAGE_DIGESTS=true pins the CSV to the registry's digest; bundle-build bundle-push",
      { timeout: 600_000 },
      () => {
        assert.ok(digest, 'needs the pushed image');
        // Non-interactive, as in CI: generate kustomize manifests asks nothing.
        make(['bundle', `IMG=${image}`, 'VERSION=0.0.1', 'USE_IMAGE_DIGESTS=true'], { CI: 'true' });
        const csvFile = readdirSync(join(project, 'bundle', 'manifests')).find((file) =>
          file.endsWith('.clusterserviceversion.yaml'),
        );
        assert.ok(csvFile, 'a CSV in bundle/manifests');
        const csv = readFileSync(join(project, 'bundle', 'manifests', csvFile), 'utf8');
        const pinned = `${cluster().registry}/memcached-operator@${digest}`;
        assert.match(
          csv,
          new RegExp(`^ +image: ${pinned.replace(/[.]/g, '\\.')}$`, 'm'),
          'the deployment runs the pinned image',
        );
        assert.match(csv, new RegExp(`^ *- image: ${pinned.replace(/[.]/g, '\\.')}$`, 'm'), 'relatedImages lists it');
        assert.doesNotMatch(csv, /memcached-operator:v0\.0\.1/);
        assert.match(csv, /^ {2}webhookdefinitions:$/m, 'the webhooks go to OLM');
        make([
          'bundle-build',
          'bundle-push',
          `BUNDLE_IMG=${cluster().registry}/memcached-operator-bundle:v0.0.1`,
          'CONTAINER_TOOL=buildah',
        ]);
      },
    );

    test('olm install, then a second install refused, and olm status', { timeout: 900_000 }, async () => {
      localOlm = await prepareLocalOlm(cluster());
      const install = await cliOk(['olm', 'install', '--timeout', OLM_STEP_TIMEOUT], localOlm.env);
      assert.match(install.stderr, /Successfully installed OLM version "0\.28\.0"/);
      assert.match(install.stdout, /^NAME +NAMESPACE +KIND +STATUS$/m);
      assert.match(install.stdout, /^packageserver +olm +ClusterServiceVersion +Succeeded$/m);
      assert.match(install.stdout, /^olm-operator +olm +Deployment +Installed$/m);

      const again = await cli(['olm', 'install'], localOlm.env);
      assert.notEqual(again.code, 0);
      assert.match(
        again.stderr,
        /^Error: OLM is already installed: CustomResourceDefinition .* exists\. Run `ts-operator-sdk olm status`/m,
      );

      const status = await cliOk(['olm', 'status'], localOlm.env);
      assert.match(status.stderr, /Successfully got OLM status for version "0\.28\.0"/);
      assert.match(status.stdout, /^catalog-operator +olm +Deployment +Installed$/m);
    });

    test(
      "run bundle of the generated bundle: the operator OLM installs (its webhooks with OLM's certificates) reconciles a sample; cleanup removes it",
      { timeout: 1_200_000 },
      async () => {
        assert.ok(localOlm, 'needs OLM');
        const namespace = 'memcached-olm';
        kubectl(cluster(), ['create', 'namespace', namespace]);
        const run = await cliOk(
          [
            'run',
            'bundle',
            `${cluster().registry}/memcached-operator-bundle:v0.0.1`,
            '-n',
            namespace,
            '--index-image',
            localOlm.opmImage,
            '--timeout',
            OLM_STEP_TIMEOUT,
            '--security-context-config',
            'restricted',
          ],
          localOlm.env,
        );
        assert.match(run.stderr, /OLM has successfully installed "memcached-operator\.v0\.0\.1"/);
        assert.equal(
          kubectl(cluster(), [
            '-n',
            namespace,
            'get',
            'csv',
            'memcached-operator.v0.0.1',
            '-o',
            'jsonpath={.status.phase}',
          ]),
          'Succeeded',
        );
        const [managerPod] = await eventually(
          'a Ready manager pod installed by OLM',
          () => {
            const ready = readyManagerPods(namespace);
            return ready.length === 1 ? ready : undefined;
          },
          300_000,
          2000,
        );
        assert.equal(
          managerPod!.spec.containers.find((container) => container.name === 'manager')?.image,
          `${cluster().registry}/memcached-operator@${digest}`,
        );

        // No size: OLM's copy of the defaulting webhook, served with the certificate OLM mounted, sets it.
        await createThroughWebhooks('memcached-sample', { image: `${cluster().registry}/busybox:1` }, namespace);
        assert.equal(
          json<{ spec?: { size?: number } }>(['get', 'memcached', '-n', namespace, 'memcached-sample']).spec?.size,
          3,
          "OLM's webhook defaulted spec.size",
        );
        const sampleSelector = 'memcached.example.com/instance=memcached-sample';
        await eventually(
          "the sample's pods to run",
          () =>
            json<{ items: Pod[] }>(['get', 'pods', '-n', namespace, '-l', sampleSelector]).items.filter(
              (pod) => pod.status.phase === 'Running',
            ).length === 3,
          300_000,
          2000,
        );
        // The sample goes before cleanup: deleting the CRD under a live CR leaves the CR's Deployment behind,
        // because the garbage collector can no longer resolve its owner's kind (seen on this cluster).
        kubectl(cluster(), ['delete', '-n', namespace, 'memcached', 'memcached-sample', '--wait=true']);
        await eventually(
          "the sample's pods to be garbage-collected",
          () => json<{ items: Pod[] }>(['get', 'pods', '-n', namespace, '-l', sampleSelector]).items.length === 0,
          300_000,
          2000,
        );

        const cleanup = await cliOk(['cleanup', 'memcached-operator', '-n', namespace, '--timeout', OLM_STEP_TIMEOUT]);
        assert.match(cleanup.stderr, /Operator "memcached-operator" uninstalled/);
        // By name: OLM's CRDs are too large for a buffered `-o json`.
        assert.deepEqual(
          kubectl(cluster(), ['get', 'crds', '-o', 'name'])
            .split('\n')
            .filter((name) => name.endsWith('.cache.example.com')),
          [],
        );
        assert.equal(kubectl(cluster(), ['-n', namespace, 'get', 'csv', '-o', 'name']).trim(), '');
        // The operator's pod is gone with its CSV, the registry pod with its CatalogSource.
        await eventually(
          'no pod left in the namespace',
          () => json<{ items: Pod[] }>(['get', 'pods', '-n', namespace]).items.length === 0,
          300_000,
          2000,
        );
      },
    );

    test(
      'run bundle and run bundle-upgrade of a package with two versions, then cleanup; olm uninstall leaves no OLM behind',
      { timeout: 1_200_000 },
      async () => {
        assert.ok(localOlm, 'needs OLM');
        const namespace = 'olm-e2e';
        const { registry, registryUrl } = cluster();
        await pushBusyboxImage(registryUrl, 'widget-operator', 'v1');
        for (const version of ['0.0.1', '0.0.2']) {
          await pushImage(
            new URL(registryUrl).host,
            'widget-operator-bundle',
            `v${version}`,
            fixtureBundleFiles(version, `${registry}/widget-operator:v1`, ['sleep', '100000']),
          );
        }
        kubectl(cluster(), ['create', 'namespace', namespace]);
        const run = await cliOk(
          [
            'run',
            'bundle',
            `${registry}/widget-operator-bundle:v0.0.1`,
            '-n',
            namespace,
            '--index-image',
            localOlm.opmImage,
            '--timeout',
            OLM_STEP_TIMEOUT,
            '--security-context-config',
            'restricted',
          ],
          localOlm.env,
        );
        assert.match(run.stderr, /OLM has successfully installed "widget-operator\.v0\.0\.1"/);
        assert.equal(
          kubectl(cluster(), [
            '-n',
            namespace,
            'get',
            'csv',
            'widget-operator.v0.0.1',
            '-o',
            'jsonpath={.status.phase}',
          ]),
          'Succeeded',
        );
        assert.match(
          kubectl(cluster(), [
            '-n',
            namespace,
            'get',
            'pods',
            '-l',
            'control-plane=widget-operator',
            '-o',
            'jsonpath={.items[*].status.phase}',
          ]),
          /Running/,
        );
        assert.equal(kubectl(cluster(), ['get', 'crd', FIXTURE_CRD, '-o', 'jsonpath={.metadata.name}']), FIXTURE_CRD);

        const upgrade = await cliOk(
          [
            'run',
            'bundle-upgrade',
            `${registry}/widget-operator-bundle:v0.0.2`,
            '-n',
            namespace,
            '--timeout',
            OLM_STEP_TIMEOUT,
            '--security-context-config',
            'restricted',
          ],
          localOlm.env,
        );
        assert.match(upgrade.stderr, /Successfully upgraded to "widget-operator\.v0\.0\.2"/);
        assert.equal(
          kubectl(cluster(), [
            '-n',
            namespace,
            'get',
            'csv',
            'widget-operator.v0.0.2',
            '-o',
            'jsonpath={.status.phase}',
          ]),
          'Succeeded',
        );
        assert.equal(
          kubectl(cluster(), [
            '-n',
            namespace,
            'get',
            'csv',
            'widget-operator.v0.0.2',
            '-o',
            'jsonpath={.spec.replaces}',
          ]),
          'widget-operator.v0.0.1',
        );

        const cleanup = await cliOk(['cleanup', FIXTURE_PACKAGE, '-n', namespace, '--timeout', OLM_STEP_TIMEOUT]);
        assert.match(cleanup.stderr, /Operator "widget-operator" uninstalled/);
        for (const kind of [
          'subscriptions.operators.coreos.com',
          'clusterserviceversions.operators.coreos.com',
          'catalogsources.operators.coreos.com',
          'operatorgroups.operators.coreos.com',
          'installplans.operators.coreos.com',
        ]) {
          assert.equal(
            kubectl(cluster(), ['-n', namespace, 'get', kind, '-o', 'name']).trim(),
            '',
            `${kind} left after cleanup`,
          );
        }
        assert.equal(
          kubectl(cluster(), [
            '-n',
            namespace,
            'get',
            'configmaps,pods',
            '-l',
            'ts-operator-sdk.io/run-bundle-package',
            '-o',
            'name',
          ]).trim(),
          '',
        );
        assert.equal(kubectl(cluster(), ['get', 'crd', FIXTURE_CRD, '--ignore-not-found', '-o', 'name']).trim(), '');

        const uninstall = await cliOk(['olm', 'uninstall', '--timeout', OLM_STEP_TIMEOUT], localOlm.env);
        assert.match(uninstall.stderr, /Successfully uninstalled OLM version "0\.28\.0"/);
        assert.equal(
          kubectl(cluster(), ['get', 'crd', '-o', 'name'])
            .split('\n')
            .filter((name) => name.endsWith('.operators.coreos.com')).length,
          0,
        );
        const afterStatus = await cli(['olm', 'status'], localOlm.env);
        assert.notEqual(afterStatus.code, 0);
      },
    );
  },
);

/**
 * The scaffold's webhooks served from the operator's pod, called by the API
 * server through the webhook Service, with the certificate mounted as the
 * scaffold's manager_webhook_patch mounts it, and no cert-manager: the test
 * runs the shell steps of the generated README's "Webhooks without
 * cert-manager" (its own CA with openssl, the Secret, the caBundle patch). Scaffold Memcached, `create webhook --defaulting
 * --programmatic-validation`, give it a real rule of each kind, build and push
 * the image with buildah, run the README's first step (CA, certificate,
 * Secret), `make deploy`, its second step (the CA into every webhook's caBundle); then a defaulted field
 * appears on create, an invalid object is refused with the webhook's message,
 * and `make undeploy` leaves nothing.
 *
 * The API server runs in the cluster's network namespace, not in a pod, and
 * that namespace has no route to the Service range (`ip route get` of a
 * ClusterIP: "Network is unreachable", before kube-proxy's OUTPUT rules could
 * apply). The harness starts it with --enable-aggregator-routing, so it
 * resolves the webhook Service to a ready endpoint of it (the manager pod's
 * IP and targetPort 9443) and verifies the certificate against the Service's
 * DNS name, `<service>.<namespace>.svc`, as on a real cluster.
 *
 * Run (root): node --test dist/test/cluster/webhook-service.test.js
 * with TS_OPERATOR_SDK_CLUSTER_ASSETS and KUBEBUILDER_ASSETS set (scripts/test.sh does).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../e2e/eventually.js';
import { SCENARIOS, packRepository, runCliOk, scaffoldScenario } from '../scaffold/harness.js';
import type { BuildahEnvironment } from '../support/images.js';
import { useCluster } from './cluster.js';
import { kubectl } from './kubectl.js';
import { kubectlJson, makeInProject, prepareImageBuilds } from './project.js';

const cluster = useCluster();

const SYSTEM = 'memcached-operator-system';
const SERVICE = 'memcached-operator-webhook-service';
const MANAGER_SELECTOR = 'control-plane=controller-manager';
const REFUSAL = 'spec.size must be at most 5';

let project: string;
let store: BuildahEnvironment;
let image: string;
/** The README's "Webhooks without cert-manager" shell blocks: before and after `make deploy`. */
let readmeSteps: string[];
/** Where the README's steps run (the CA and certificate files stay there between the two). */
let workDir: string;

const make = (args: string[]): string => makeInProject(cluster(), store, project, args);
const json = <T>(args: string[]): T => kubectlJson<T>(cluster(), args);

/** Replaces one exact piece of a project file; fails if the scaffold no longer has it. */
function edit(relative: string, from: string, to: string): void {
  const file = join(project, relative);
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${relative} has no ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

/** `kubectl create` of a Memcached; returns its status and output instead of throwing. */
function createMemcached(name: string, spec: Record<string, unknown>): { status: number | null; stdout: string; stderr: string } {
  const object = { apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name, namespace: 'default' }, spec };
  const result = spawnSync('kubectl', ['create', '-f', '-', '-o', 'json'], { env: cluster().env(), input: JSON.stringify(object), encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
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
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: workDir, env: { ...cluster().env(), KUBECONFIG: cluster().kubeconfigPath }, encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, `the README step failed:\n${script}\n${result.stdout}\n${result.stderr}`);
}

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  status: { conditions?: { type: string; status: string }[]; containerStatuses?: { restartCount: number }[] };
}

async function setUp(): Promise<void> {
  const tarball = packRepository();
  const images = prepareImageBuilds(cluster());
  store = images.store;
  const env = { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` };
  project = scaffoldScenario(SCENARIOS[0]!, { env });
  readmeSteps = readmeShellBlocks(readFileSync(join(project, 'README.md'), 'utf8'), '**Webhooks without cert-manager:**');
  assert.equal(readmeSteps.length, 2, 'the README gives two steps: before and after make deploy');
  workDir = mkdtempSync(join(tmpdir(), 'whsvc-'));
  runCliOk(['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--defaulting', '--programmatic-validation'], project, { env });

  // The user's field and rules, where the scaffold leaves TODOs.
  edit('apis/v1/memcached_types.ts', 'import { defineKind, type Condition } from', 'import { defineKind, type Condition, type int32 } from');
  edit('apis/v1/memcached_types.ts', '  foo?: string;\n', '  foo?: string;\n  /** +optional */\n  size?: int32;\n');
  const webhook = 'webhooks/v1/memcached_webhook.ts';
  edit(webhook, "import type { AdmissionContext } from 'ts-operator-sdk';", "import { AdmissionDeniedError, type AdmissionContext } from 'ts-operator-sdk';");
  edit(webhook, '    // TODO(user): fill in your defaulting logic.\n', '    memcached.spec = { ...memcached.spec, size: memcached.spec?.size ?? 3 };\n');
  edit(webhook, '    // TODO(user): fill in your validation logic upon object creation.\n', `    if ((memcached.spec?.size ?? 0) > 5) throw new AdmissionDeniedError('${REFUSAL}');\n`);

  image = `${cluster().registry}/memcached-operator:v0.0.1`;
  make(images.dockerBuildPush(image));
}

describe('the webhooks serve from the operator pod through their Service, with a certificate from a mounted Secret', { timeout: 3_600_000 }, () => {
  before(setUp, { timeout: 1_500_000 });
  after(() => {
    store?.remove();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test('make deploy with the Secret webhook-server-cert: the manager serves the webhooks and becomes Ready', { timeout: 600_000 }, async () => {
    // The README's first step: a CA of one's own, a certificate for the Service's DNS name (the name the
    // API server verifies), in the Secret the manager mounts.
    runReadmeStep(readmeSteps[0]!);
    make(['deploy', `IMG=${image}`]);
    const pod = await eventually('a Ready manager pod', () => {
      const ready = json<{ items: Pod[] }>(['get', 'pods', '-n', SYSTEM, '-l', MANAGER_SELECTOR]).items
        .filter((candidate) => !candidate.metadata.deletionTimestamp && candidate.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === 1 ? ready[0] : undefined;
    }, 300_000, 2000);
    assert.equal(pod.status.containerStatuses?.[0]?.restartCount, 0, 'the operator did not crash');
    const endpoints = kubectl(cluster(), ['get', 'endpointslices', '-n', SYSTEM, '-l', `kubernetes.io/service-name=${SERVICE}`, '-o', 'jsonpath={.items[*].endpoints[*].addresses[*]}']).trim();
    assert.match(endpoints, /^\d+\.\d+\.\d+\.\d+$/, 'the webhook Service leads to the manager pod');
  });

  test('without the CA in caBundle the API server refuses to trust the webhook: the call goes over verified TLS', { timeout: 300_000 }, async () => {
    // Before the endpoint is in kube-proxy's rules the call fails otherwise (connection refused): wait for TLS to be the reason.
    const result = await eventually('the API server to reach the webhook', () => {
      const attempt = createMemcached('untrusted', {});
      return attempt.status === 0 || /x509|certificate/.test(attempt.stderr) ? attempt : undefined;
    }, 120_000, 2000);
    assert.notEqual(result.status, 0, 'a create succeeded although failurePolicy is Fail and the webhook is not trusted');
    assert.match(result.stderr, new RegExp(`failed calling webhook "mmemcached-v1.kb.io".*${SERVICE.replace(/\./g, '\\.')}\\.${SYSTEM}\\.svc`, 's'));
  });

  test('with the CA in caBundle a defaulted field appears on create, and an invalid object is refused with the webhook\'s message', { timeout: 300_000 }, async () => {
    runReadmeStep(readmeSteps[1]!);
    for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
      const bundles = kubectl(cluster(), ['get', kind, `memcached-operator-${kind.replace('webhookconfiguration', '')}-webhook-configuration`, '-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}']).trim().split(/\s+/);
      assert.deepEqual(bundles.map((bundle) => Buffer.from(bundle, 'base64').toString('utf8').includes('BEGIN CERTIFICATE')), [true], `the README's step gave the ${kind}'s webhook the CA`);
    }
    const created = await eventually('a create through the trusted webhooks', () => {
      const result = createMemcached('defaulted', {});
      return result.status === 0 ? JSON.parse(result.stdout) as { spec?: { size?: number } } : undefined;
    }, 120_000, 2000);
    assert.equal(created.spec?.size, 3, 'the defaulting webhook set spec.size');
    assert.equal(json<{ spec?: { size?: number } }>(['get', 'memcached', '-n', 'default', 'defaulted']).spec?.size, 3, 'the default is stored');

    const invalid = createMemcached('too-big', { size: 9 });
    assert.notEqual(invalid.status, 0, 'the invalid Memcached was created');
    assert.match(invalid.stderr, new RegExp(`admission webhook "vmemcached-v1.kb.io" denied the request: ${REFUSAL}`));
    assert.equal(spawnSync('kubectl', ['get', 'memcached', '-n', 'default', 'too-big'], { env: cluster().env() }).status, 1, 'nothing was stored');
    const logs = kubectl(cluster(), ['logs', '-n', SYSTEM, '-l', MANAGER_SELECTOR, '--tail=-1']);
    assert.match(logs, /defaulting Memcached/, 'the manager pod served the call');
    kubectl(cluster(), ['delete', 'memcached', '-n', 'default', 'defaulted', '--wait=true']);
  });

  test('make undeploy leaves no object of the operator behind', { timeout: 600_000 }, async () => {
    make(['undeploy']);
    await eventually('the namespace (and the Secret in it) to be gone', () => {
      const namespace = spawnSync('kubectl', ['get', 'namespace', SYSTEM], { env: cluster().env(), encoding: 'utf8' });
      return namespace.status !== 0 && /NotFound/.test(namespace.stderr);
    }, 300_000, 2000);
    const names = (kinds: string): string[] => json<{ items: { metadata: { name: string } }[] }>(['get', kinds]).items.map((item) => item.metadata.name);
    assert.deepEqual(names('mutatingwebhookconfigurations,validatingwebhookconfigurations').filter((name) => name.startsWith('memcached-operator-')), []);
    assert.deepEqual(names('crds').filter((name) => name.endsWith('.cache.example.com')), []);
    assert.deepEqual(names('clusterroles,clusterrolebindings').filter((name) => name.startsWith('memcached-operator-')), []);
  });
});

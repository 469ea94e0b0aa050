/**
 * The kustomize tree `create webhook` leaves builds, and the real API server
 * accepts what it builds: with the [WEBHOOK] sections (uncommented by the
 * command) and the [CERTMANAGER] sections (uncommented here, as a user
 * would), `kubectl kustomize config/default` succeeds, every object passes a
 * server-side dry run with strict field validation (cert-manager's CRDs from
 * a minimal fixture), and the names that kustomize rewrites line up: the
 * Certificates' DNS names, the CA-injection annotations, and the Service the
 * webhook configurations and the CRD's conversion call.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { InvalidError } from '../../src/runtime/api/index.js';
import { RestClient, RestMapper } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { copyProject, runCliOk, SCENARIOS, scaffoldScenario } from '../scaffold/harness.js';
import { startControlPlane } from './control-plane.js';

const certManagerCrds = new URL('../../../test/fixtures/cert-manager/crds.yaml', import.meta.url);

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [key: string]: unknown;
};

/** Uncomments `line` (given without its `#`) where it stands alone. */
function uncommentLine(text: string, line: string): string {
  assert.ok(text.includes(`\n#${line}\n`), `#${line} is in the file`);
  return text.replace(`\n#${line}\n`, `\n${line}\n`);
}

/**
 * Uncomments the commented YAML of the [CERTMANAGER] replacements, from
 * `#replacements:` to the end of the file, as a user would: the explanatory
 * comments and scaffold markers (`# ...`) stay comments.
 */
function uncommentReplacements(text: string): string {
  const start = text.indexOf('\n#replacements:\n');
  assert.ok(start !== -1, 'the [CERTMANAGER] replacements are in config/default/kustomization.yaml');
  const tail = text
    .slice(start + 1)
    .split('\n')
    .map((line) => (/^#(- |  |[A-Za-z_][\w.-]*:)/.test(line) ? line.slice(1) : line));
  return text.slice(0, start + 1) + tail.join('\n');
}

/** The REST path of an object's collection. */
async function collectionPath(mapper: RestMapper, obj: Obj): Promise<string> {
  const kind = await mapper.kindFor(obj.apiVersion, obj.kind);
  const base = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
  return `${base}${kind.namespaced ? `/namespaces/${obj.metadata.namespace ?? 'default'}` : ''}/${kind.plural}`;
}

/** A scaffolded project with Memcached v1 (hub) and v1alpha1, `create webhook` run with `flags`, and manifests generated. */
function webhookProject(flags: string[]): string {
  const dir = copyProject(scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] }));
  runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v1alpha1', '--kind', 'Memcached', '--controller=false'],
    dir,
  );
  runCliOk(['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', ...flags], dir);
  runCliOk(['generate', 'manifests'], dir);
  return dir;
}

/** `kubectl kustomize config/default` of `dir`, as objects. */
function buildDefault(dir: string): Obj[] {
  const built = execFileSync('kubectl', ['kustomize', join(dir, 'config/default')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(built).map((doc) => doc.toJS() as Obj);
}

/** Creates the build's Namespace for real (a dry-run create inside a missing one is refused), then dry-runs every other object. */
async function dryRunAll(rest: RestClient, built: Obj[]): Promise<void> {
  const mapper = new RestMapper(rest);
  const namespace = built.find((obj) => obj.kind === 'Namespace');
  assert.ok(namespace, 'the build has its Namespace');
  // Both projects here have the same name, so the second finds the namespace there.
  await rest
    .request('POST', '/api/v1/namespaces', { body: namespace, query: { fieldValidation: 'Strict' } })
    .catch((error: unknown) => {
      if (!/AlreadyExists|already exists/i.test(String(error))) throw error;
    });
  for (const obj of built.filter((item) => item !== namespace)) {
    await rest
      .request('POST', await collectionPath(mapper, obj), {
        body: obj,
        query: { dryRun: 'All', fieldValidation: 'Strict' },
      })
      .catch((error: unknown) => {
        throw new Error(`${obj.kind} ${obj.metadata.name} was refused: ${String(error)}`);
      });
  }
}

describe('config/default with webhooks and cert-manager, on a real kube-apiserver', () => {
  let env: Environment;
  let rest: RestClient;
  let objects: Obj[];

  before(async () => {
    const dir = webhookProject(['--defaulting', '--programmatic-validation', '--conversion', '--spoke', 'v1alpha1']);
    const path = join(dir, 'config/default/kustomization.yaml');
    let kustomization = readFileSync(path, 'utf8');
    kustomization = uncommentLine(kustomization, '- ../certmanager');
    kustomization = uncommentLine(kustomization, '- path: cert_metrics_manager_patch.yaml');
    kustomization = kustomization.replace(
      '\n#  target:\n#    kind: Deployment\n\n# [WEBHOOK]',
      '\n  target:\n    kind: Deployment\n\n# [WEBHOOK]',
    );
    kustomization = uncommentReplacements(kustomization);
    writeFileSync(path, kustomization);
    objects = buildDefault(dir);
    env = await startControlPlane();
    rest = new RestClient(env.kubeConfig);
    await env.installCRDs({
      crds: parseAllDocuments(readFileSync(certManagerCrds, 'utf8')).map((doc) => doc.toJS() as object),
    });
  });
  after(async () => {
    await env?.stop();
  });

  const find = (kind: string, suffix = ''): Obj => {
    const found = objects.find((obj) => obj.kind === kind && obj.metadata.name.endsWith(suffix));
    assert.ok(found, `${kind} ${suffix} is in the build`);
    return found;
  };

  it('builds every piece the webhooks need', () => {
    const kinds = new Set(objects.map((obj) => obj.kind));
    for (const kind of [
      'Namespace',
      'CustomResourceDefinition',
      'Deployment',
      'Service',
      'Issuer',
      'Certificate',
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
    ])
      assert.ok(kinds.has(kind), kind);
  });

  it('every object passes a server-side dry run with strict field validation', async () => {
    await dryRunAll(rest, objects);
  });

  it('the dry run is a real check: a field the schema does not have is refused', async () => {
    const mapper = new RestMapper(rest);
    const certificate = structuredClone(find('Certificate', 'serving-cert'));
    (certificate['spec'] as Record<string, unknown>)['dnsName'] = 'typo';
    await assert.rejects(
      rest.request('POST', await collectionPath(mapper, certificate), {
        body: certificate,
        query: { dryRun: 'All', fieldValidation: 'Strict' },
      }),
      (error: unknown) =>
        error instanceof Error &&
        /dnsName/.test(error.message) &&
        (error instanceof InvalidError || /BadRequest|unknown field/i.test(error.message)),
    );
  });

  it('a conversion-only webhook: config/default builds as create webhook leaves it, and the server accepts every object', async () => {
    // kubebuilder#2231: config/webhook listed manifests.yaml, which only admission webhooks have.
    const conversionOnly = buildDefault(webhookProject(['--conversion', '--spoke', 'v1alpha1']));
    assert.ok(!conversionOnly.some((obj) => obj.kind.endsWith('WebhookConfiguration')));
    await dryRunAll(rest, conversionOnly);
  });

  it('the names kustomize rewrites line up', () => {
    const service = find('Service', 'webhook-service');
    const namespace = service.metadata.namespace!;
    assert.equal(namespace, 'memcached-operator-system');
    const servingCert = find('Certificate', 'serving-cert');
    assert.deepEqual((servingCert['spec'] as { dnsNames: string[] }).dnsNames, [
      `${service.metadata.name}.${namespace}.svc`,
      `${service.metadata.name}.${namespace}.svc.cluster.local`,
    ]);
    const metricsService = find('Service', 'controller-manager-metrics-service');
    assert.deepEqual(
      (find('Certificate', 'metrics-certs')['spec'] as { dnsNames: string[] }).dnsNames[0],
      `${metricsService.metadata.name}.${namespace}.svc`,
    );
    const injectFrom = `${namespace}/${servingCert.metadata.name}`;
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'CustomResourceDefinition']) {
      assert.equal(find(kind).metadata.annotations?.['cert-manager.io/inject-ca-from'], injectFrom, kind);
    }
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      for (const webhook of find(kind)['webhooks'] as {
        clientConfig: { service: { name: string; namespace: string } };
      }[]) {
        assert.deepEqual(
          { name: webhook.clientConfig.service.name, namespace: webhook.clientConfig.service.namespace },
          { name: service.metadata.name, namespace },
        );
      }
    }
    const conversion = (
      find('CustomResourceDefinition')['spec'] as {
        conversion: {
          strategy: string;
          webhook: { clientConfig: { service: { name: string; namespace: string; path: string } } };
        };
      }
    ).conversion;
    assert.equal(conversion.strategy, 'Webhook');
    assert.deepEqual(conversion.webhook.clientConfig.service, {
      name: service.metadata.name,
      namespace,
      path: '/convert',
    });
    const issuer = find('Issuer');
    assert.equal((servingCert['spec'] as { issuerRef: { name: string } }).issuerRef.name, issuer.metadata.name);
    const deployment = find('Deployment');
    const pod = (
      deployment['spec'] as {
        template: {
          spec: {
            containers: { args: string[]; ports: { containerPort: number }[] }[];
            volumes: { name: string; secret: { secretName: string } }[];
          };
        };
      }
    ).template.spec;
    assert.ok(pod.containers[0]!.args.includes('--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs'));
    assert.ok(pod.containers[0]!.ports.some((port) => port.containerPort === 9443));
    assert.deepEqual(
      pod.volumes.map((volume) => volume.secret.secretName).sort(),
      [
        (servingCert['spec'] as { secretName: string }).secretName,
        (find('Certificate', 'metrics-certs')['spec'] as { secretName: string }).secretName,
      ].sort(),
    );
  });
});

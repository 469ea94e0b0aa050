import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatProblem, UsageError } from '../../src/errors.js';
import { generateManifests, type ManifestInputs } from '../../src/generators/manifests.js';
import { ProblemList } from '../../src/generators/problems.js';
import {
  buildWebhookConfigurations,
  readWebhookMarkers,
  WEBHOOK_MANIFEST_PATH,
} from '../../src/generators/webhook/webhook.js';

// Fixture projects live in the source tree; tests run from dist/test/unit.
const CRD_MEMCACHED = fileURLToPath(new URL('../../../test/fixtures/crd/memcached/', import.meta.url));
const WEBHOOK_MEMCACHED = fileURLToPath(new URL('../../../test/fixtures/webhook/memcached/', import.meta.url));
// Set UPDATE_GOLDEN=1 to rewrite the golden after an intended output change (then review the diff).
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

const MEMCACHED_INPUTS: Omit<ManifestInputs, 'projectDir'> = {
  domain: 'example.com',
  multigroup: false,
  resources: [
    { group: 'cache', domain: 'example.com', version: 'v1', kind: 'Memcached', path: 'apis/v1', namespaced: true },
  ],
};

const MUTATING_MARKER =
  '// +kubebuilder:webhook:path=/mutate-cache-example-com-v1-memcached,mutating=true,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1,name=mmemcached-v1.kb.io,admissionReviewVersions=v1';

/** A throwaway copy of the Memcached fixture project (API types and controller), optionally with the webhook fixture. */
function memcachedProject(withWebhooks: boolean): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-manifests-'));
  cpSync(path.join(CRD_MEMCACHED, 'apis'), path.join(dir, 'apis'), { recursive: true });
  cpSync(path.join(CRD_MEMCACHED, 'controllers'), path.join(dir, 'controllers'), { recursive: true });
  if (withWebhooks) cpSync(path.join(WEBHOOK_MEMCACHED, 'internal'), path.join(dir, 'internal'), { recursive: true });
  return dir;
}

function withProject<T>(withWebhooks: boolean, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = memcachedProject(withWebhooks);
  return body(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

async function problemsOf(dir: string): Promise<string[]> {
  try {
    await generateManifests({ projectDir: dir, ...MEMCACHED_INPUTS });
  } catch (err) {
    if (err instanceof UsageError) return err.problems.map(formatProblem);
    throw err;
  }
  assert.fail('generateManifests succeeded, expected problems');
}

/** Builds the configurations from inline source, as one file `internal/webhook/v1/x.ts`. */
function build(source: string): { configurations: ReturnType<typeof buildWebhookConfigurations>; problems: string[] } {
  const problems = new ProblemList();
  const configurations = buildWebhookConfigurations(
    readWebhookMarkers(source, 'internal/webhook/v1/x.ts', problems),
    problems,
  );
  return { configurations, problems: problems.items.map(formatProblem) };
}

test("webhook golden: Memcached defaulting + validation markers give kubebuilder's config/webhook/manifests.yaml, byte-identical on re-run", async () => {
  await withProject(true, async (dir) => {
    const first = await generateManifests({ projectDir: dir, ...MEMCACHED_INPUTS });
    const manifest = first.find((f) => f.path === WEBHOOK_MANIFEST_PATH);
    assert.ok(manifest, `${WEBHOOK_MANIFEST_PATH} is generated`);
    const goldenPath = path.join(WEBHOOK_MEMCACHED, 'golden', WEBHOOK_MANIFEST_PATH);
    if (UPDATE) {
      mkdirSync(path.dirname(goldenPath), { recursive: true });
      writeFileSync(goldenPath, manifest.content);
    }
    assert.equal(manifest.content, readFileSync(goldenPath, 'utf8'));
    const second = await generateManifests({ projectDir: dir, ...MEMCACHED_INPUTS });
    assert.deepEqual(second, first, 'a re-run produces the same files, byte for byte');
  });
});

test('webhook: no markers, no manifest, and an existing one is not touched', async () => {
  await withProject(false, async (dir) => {
    mkdirSync(path.join(dir, 'config/webhook'), { recursive: true });
    writeFileSync(path.join(dir, WEBHOOK_MANIFEST_PATH), '# hand-written\n');
    const files = await generateManifests({ projectDir: dir, ...MEMCACHED_INPUTS });
    assert.ok(!files.some((f) => f.path === WEBHOOK_MANIFEST_PATH), 'nothing to write for webhooks');
    assert.ok(
      files.some((f) => f.path === 'config/rbac/role.yaml'),
      'the other manifests are still generated',
    );
    assert.equal(readFileSync(path.join(dir, WEBHOOK_MANIFEST_PATH), 'utf8'), '# hand-written\n');
  });
});

test('webhook: markers are found in apis/, controllers/, internal/ and webhooks/, and in JSDoc; a marker above an API type does not upset the CRD generator', async () => {
  await withProject(false, async (dir) => {
    const marker = (name: string, mutating: boolean) =>
      `+kubebuilder:webhook:path=/p-${name},mutating=${mutating},sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create,versions=v1,name=${name}.example.com,admissionReviewVersions=v1`;
    const typesFile = path.join(dir, 'apis/v1/memcached_types.ts');
    const types = readFileSync(typesFile, 'utf8').replace(
      'export interface Memcached extends',
      `// ${marker('in-apis', false)}\nexport interface Memcached extends`,
    );
    writeFileSync(typesFile, types);
    writeFileSync(
      path.join(dir, 'controllers/hooks.ts'),
      `/**\n * ${marker('in-controllers', true)}\n */\nexport {};\n`,
    );
    mkdirSync(path.join(dir, 'webhooks'), { recursive: true });
    writeFileSync(path.join(dir, 'webhooks/pods.ts'), `// ${marker('in-webhooks', false)}\n`);
    // Tests and declaration files are not sources of markers.
    writeFileSync(path.join(dir, 'webhooks/pods.test.ts'), `// ${marker('in-a-test', false)}\n`);
    const files = await generateManifests({ projectDir: dir, ...MEMCACHED_INPUTS });
    const manifest = files.find((f) => f.path === WEBHOOK_MANIFEST_PATH)!.content;
    const names = [...manifest.matchAll(/^ {2}name: (\S+\.example\.com)$/gm)].map((m) => m[1]);
    assert.deepEqual(names, ['in-controllers.example.com', 'in-apis.example.com', 'in-webhooks.example.com']);
    assert.ok(!manifest.includes('in-a-test'));
  });
});

test('webhook: every controller-gen argument maps to its v1 field; webhooks sorted by name; core group and verbs normalised', () => {
  const { configurations, problems } = build(
    [
      '// +kubebuilder:webhook:path=/mutate-v1-pod,mutating=true,failurePolicy=ignore,matchPolicy=equivalent,sideEffects=noneOnDryRun,groups=core,resources=pods,verbs=CREATE;Update;delete;connect,versions=v1,name=zpod.example.com,admissionReviewVersions=v1;v1beta1,reinvocationPolicy=ifNeeded,timeoutSeconds=5,webhookVersions=v1',
      '// +kubebuilder:webhook:path=/mutate-any,mutating=true,sideEffects=None,groups="",resources=*,verbs=*,versions=*,name=apod.example.com,admissionReviewVersions=v1,serviceName=hooks,serviceNamespace=ops,servicePort=8443',
      '// +kubebuilder:webhook:url="https://hooks.example.com:9443/validate",mutating=false,matchPolicy=Exact,sideEffects=None,groups=apps,resources=deployments;statefulsets,verbs=update,versions=v1,name=vapps.example.com,admissionReviewVersions=v1',
    ].join('\n'),
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(configurations, [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'mutating-webhook-configuration' },
      webhooks: [
        {
          name: 'apod.example.com',
          admissionReviewVersions: ['v1'],
          clientConfig: { service: { name: 'hooks', namespace: 'ops', path: '/mutate-any', port: 8443 } },
          failurePolicy: 'Fail',
          matchPolicy: undefined,
          reinvocationPolicy: undefined,
          rules: [{ apiGroups: [''], apiVersions: ['*'], operations: ['*'], resources: ['*'] }],
          sideEffects: 'None',
          timeoutSeconds: undefined,
        },
        {
          name: 'zpod.example.com',
          admissionReviewVersions: ['v1', 'v1beta1'],
          clientConfig: {
            service: { name: 'webhook-service', namespace: 'system', path: '/mutate-v1-pod', port: undefined },
          },
          failurePolicy: 'Ignore',
          matchPolicy: 'Equivalent',
          reinvocationPolicy: 'IfNeeded',
          rules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'],
              resources: ['pods'],
            },
          ],
          sideEffects: 'NoneOnDryRun',
          timeoutSeconds: 5,
        },
      ],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'validating-webhook-configuration' },
      webhooks: [
        {
          name: 'vapps.example.com',
          admissionReviewVersions: ['v1'],
          clientConfig: { url: 'https://hooks.example.com:9443/validate' },
          failurePolicy: 'Fail',
          matchPolicy: 'Exact',
          reinvocationPolicy: undefined,
          rules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              operations: ['UPDATE'],
              resources: ['deployments', 'statefulsets'],
            },
          ],
          sideEffects: 'None',
          timeoutSeconds: undefined,
        },
      ],
    },
  ]);
});

test('webhook: only validating markers give only a ValidatingWebhookConfiguration', () => {
  const { configurations } = build(MUTATING_MARKER.replace('mutating=true', 'mutating=false'));
  assert.deepEqual(
    configurations.map((c) => c.kind),
    ['ValidatingWebhookConfiguration'],
  );
});

test('webhook errors: each bad marker is reported at its file:line with the fix', async () => {
  const lines = [
    /* 1 */ '// Bad webhook markers, one problem (or one group of problems) per line.',
    /* 2 */ '// +kubebuilder:webhook:mutating=true,failurePolicy=fail,groups=cache.example.com,resources=memcacheds,verbs=create,versions=v1',
    /* 3 */ MUTATING_MARKER.replace('failurePolicy=fail', 'failurePolicy=sometimes').replace('mmemcached-v1', 'a1'),
    /* 4 */ MUTATING_MARKER.replace('sideEffects=None', 'sideEffects=Some').replace('mmemcached-v1', 'a2'),
    /* 5 */ MUTATING_MARKER.replace('verbs=create;update', 'verbs=create;patch').replace('mmemcached-v1', 'a3'),
    /* 6 */ MUTATING_MARKER,
    /* 7 */ MUTATING_MARKER.replace('path=/mutate', 'pth=/mutate'),
    /* 8 */ MUTATING_MARKER.replace('mmemcached-v1.kb.io', 'memcached'),
    /* 9 */ MUTATING_MARKER.replace(
      'admissionReviewVersions=v1',
      'admissionReviewVersions=v1,webhookVersions=v1beta1,timeoutSeconds=31',
    ).replace('mmemcached-v1', 'a4'),
    /* 10 */ MUTATING_MARKER.replace(
      'mutating=true',
      'mutating=false,reinvocationPolicy=IfNeeded,url="https://x.example.com/v"',
    ).replace('mmemcached-v1', 'a5'),
    /* 11 */ MUTATING_MARKER.replace('failurePolicy=fail', 'matchPolicy=Fuzzy').replace('mmemcached-v1', 'a6'),
  ];
  await withProject(true, async (dir) => {
    // Sorted after memcached_webhook.ts, so the fixture's marker is the first of the duplicate pair.
    writeFileSync(path.join(dir, 'internal/webhook/v1/rejected_webhook.ts'), lines.join('\n') + '\n');
    const file = 'internal/webhook/v1/rejected_webhook.ts';
    const problems = await problemsOf(dir);
    const at = (line: number) => problems.filter((p) => p.startsWith(`${file}:${line}: `));
    assert.match(
      at(2).join('\n'),
      /missing path=, name=, sideEffects=, admissionReviewVersions=: controller-gen needs them, e\.g\. \+kubebuilder:webhook:path=/,
    );
    assert.match(at(3).join('\n'), /failurePolicy=sometimes is not valid: use fail or ignore/);
    assert.match(
      at(4).join('\n'),
      /sideEffects=Some is not valid for admissionregistration\.k8s\.io\/v1: use None, or NoneOnDryRun/,
    );
    assert.match(
      at(5).join('\n'),
      /verbs= has "patch", which is not an admission operation: use create, update, delete, connect or \*/,
    );
    // Line 6 duplicates the fixture's mmemcached-v1.kb.io; the problem names where the first one is.
    assert.match(
      at(6).join('\n'),
      /already has a webhook named mmemcached-v1\.kb\.io \(internal\/webhook\/v1\/memcached_webhook\.ts:7\): give each webhook a unique name=/,
    );
    assert.match(
      at(7).join('\n'),
      /marker \+kubebuilder:webhook has no argument "pth": use one of path, url, mutating/,
    );
    assert.match(
      at(8).join('\n'),
      /name=memcached is not a fully qualified name: use lower-case DNS labels with at least three segments/,
    );
    assert.match(at(9).join('\n'), /webhookVersions=v1beta1 is not supported/);
    assert.match(at(9).join('\n'), /timeoutSeconds=31 is out of range: the API server accepts 1 to 30/);
    assert.match(at(10).join('\n'), /reinvocationPolicy= applies only to mutating webhooks/);
    assert.match(at(10).join('\n'), /url= cannot be combined with path=/);
    assert.match(at(11).join('\n'), /matchPolicy=Fuzzy is not valid: use Exact or Equivalent/);
    assert.deepEqual(
      problems.filter((p) => !p.startsWith(`${file}:`)),
      [],
      'the good fixture markers are not blamed',
    );
    assert.equal(problems.filter((p) => p.startsWith(`${file}:1:`)).length, 0);
    assert.ok(!existsSync(path.join(dir, WEBHOOK_MANIFEST_PATH)));
  });
});

/**
 * A generated project with all three webhook types, end to end: init,
 * Memcached v1 (hub) and v1alpha1 (spoke), `create webhook --defaulting
 * --programmatic-validation --conversion --spoke v1alpha1`, installed against
 * this repository packed with `npm pack`. The rules the templates leave as
 * TODOs are filled in with small edits (size defaults to 1; size at most 10),
 * as a user would (with a `size` field added to the types: the scaffolded
 * example field is `foo`). Then: zero TypeScript errors, `make manifests` writes the
 * webhook configurations, the project's own generated tests pass and really
 * run the webhooks through envtest (none skipped), and `make bundle` gives a
 * bundle that `bundle validate` accepts, whose CSV webhookdefinitions name
 * the Deployment, its port and the paths the runtime serves.
 */
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import YAML from 'yaml';
import { mutatingWebhookPath, validatingWebhookPath } from '../../src/runtime/builder/index.js';
import { CONVERSION_PATH } from '../../src/runtime/webhook/index.js';
import { childEnv } from '../support/child-env.js';
import { installDependencies, packRepository, runCliOk, tempProjectDir } from './harness.js';

/** Runs a command with stdin closed; NODE_TEST_CONTEXT would make the project's own `node --test` report to this runner. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd,
    env: { ...childEnv(), ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 900_000,
  });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(result.status, 0, `${what} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Replaces `from` (which must be there) in a project file. */
function edit(dir: string, path: string, from: string, to: string): void {
  const text = readFileSync(join(dir, path), 'utf8');
  assert.ok(text.includes(from), `${path} no longer contains ${JSON.stringify(from)}: update this test's edit`);
  writeFileSync(join(dir, path), text.replace(from, to));
}

/** A count from the summary `node --test` prints (`ℹ tests 6`, or `# tests 6` with the TAP reporter). */
function summaryCount(output: string, label: string): number {
  return Number(new RegExp(`^[ℹ#] ${label} (\\d+)$`, 'm').exec(output)?.[1] ?? NaN);
}

const MEMCACHED = { group: 'cache.example.com', version: 'v1', kind: 'Memcached' };

describe('a generated project with defaulting, validating and conversion webhooks', { timeout: 1_800_000 }, () => {
  let dir: string;

  before(() => {
    if (!process.env.KUBEBUILDER_ASSETS)
      throw new Error(
        'KUBEBUILDER_ASSETS is not set: run `bash scripts/build-test-assets.sh` and export KUBEBUILDER_ASSETS=<the directory it prints> (npm test does this for you)',
      );
    const tarball = packRepository();
    dir = tempProjectDir();
    const env = { env: { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` } };
    runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir, env);
    runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir, env);
    runCliOk(
      ['create', 'api', '--group', 'cache', '--version', 'v1alpha1', '--kind', 'Memcached', '--controller=false'],
      dir,
      env,
    );
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
        '--conversion',
        '--spoke',
        'v1alpha1',
      ],
      dir,
      env,
    );

    // The user's field: an int32 `size` next to the scaffolded `foo`, which v1alpha1 calls `replicas`.
    const types = (version: string): string => `apis/${version}/memcached_types.ts`;
    for (const [version, field] of [
      ['v1', 'size'],
      ['v1alpha1', 'replicas'],
    ] as const) {
      edit(
        dir,
        types(version),
        "import { defineKind, type Condition } from 'ts-operator-sdk';",
        "import { defineKind, type Condition, type int32 } from 'ts-operator-sdk';",
      );
      edit(dir, types(version), '  foo?: string;\n', `  foo?: string;\n  ${field}?: int32;\n`);
    }

    // The user's rules, where the templates leave TODOs.
    const webhook = 'webhooks/v1/memcached_webhook.ts';
    edit(
      dir,
      webhook,
      "import type { AdmissionContext } from 'ts-operator-sdk/webhook';",
      "import { AdmissionDeniedError, type AdmissionContext } from 'ts-operator-sdk/webhook';",
    );
    edit(
      dir,
      webhook,
      '    // TODO(user): fill in your defaulting logic.\n',
      '    memcached.spec = { ...memcached.spec, size: memcached.spec?.size ?? 1 };\n',
    );
    edit(
      dir,
      webhook,
      '    // TODO(user): fill in your validation logic upon object creation.\n    return [];\n',
      "    if ((memcached.spec?.size ?? 0) > 10) throw new AdmissionDeniedError('spec.size must be at most 10');\n    return (memcached.spec?.size ?? 0) > 5 ? ['spec.size above 5 reserves a lot of memory'] : [];\n",
    );
    edit(
      dir,
      webhook,
      '    // TODO(user): fill in your validation logic upon object update.\n',
      "    if ((newObject.spec?.size ?? 0) < (oldObject.spec?.size ?? 0)) throw new AdmissionDeniedError('spec.size may not shrink');\n",
    );
    edit(
      dir,
      webhook,
      '    // TODO(user): fill in your validation logic upon object deletion.\n',
      "    if (memcached.metadata?.labels?.['example.com/protected'] === 'true') throw new AdmissionDeniedError('this Memcached is protected: remove its example.com/protected label first');\n",
    );
    // Deletes reach the validator only when the marker lists them, as the template's NOTE says.
    edit(
      dir,
      webhook,
      'verbs=create;update,versions=v1,name=vmemcached-v1.cache.kb.io',
      'verbs=create;update;delete,versions=v1,name=vmemcached-v1.cache.kb.io',
    );
    const test = 'webhooks/v1/memcached_webhook.test.ts';
    // Warnings reach the test's client through RestClient's warningHandler.
    edit(dir, test, '  let client: Client;\n', '  let client: Client;\n  const warnings: string[] = [];\n');
    edit(
      dir,
      test,
      '    rest = new RestClient(kubeConfig);\n',
      '    rest = new RestClient(kubeConfig, { warningHandler: (warning) => warnings.push(warning) });\n',
    );
    edit(
      dir,
      test,
      '  // +kubebuilder:scaffold:webhook-tests\n',
      `  it('sends warnings, refuses shrinking and refuses deleting a protected Memcached', { skip }, async () => {
    warnings.length = 0;
    const big = await client.create(newObject('warned', { size: 7 }));
    assert.deepEqual(warnings, ['spec.size above 5 reserves a lot of memory']);
    await assert.rejects(client.update({ ...big, spec: { ...big.spec, size: 6 } }), /spec\\.size may not shrink/);
    const grown = await client.update({ ...big, spec: { ...big.spec, size: 8 } });
    assert.equal(grown.spec?.size, 8);
    const labels = { 'example.com/protected': 'true' };
    const guarded = await client.create({ ...newObject('guarded'), metadata: { namespace: 'default', name: 'guarded', labels } });
    await assert.rejects(client.delete(guarded), /is protected: remove its example\\.com\\/protected label first/);
    const unguarded = await client.update({ ...guarded, metadata: { ...guarded.metadata, labels: {} } });
    await client.delete(unguarded);
  });

  it('runs the webhooks on a server-side dry run and stores nothing', { skip }, async () => {
    const dry = await client.create(newObject('dry-run'), { dryRun: 'All' });
    assert.equal(dry.spec?.size, 1, 'the defaulter ran on the dry run');
    const tooBig = client.create(newObject('dry-too-big', { size: 11 }), { dryRun: 'All' });
    await assert.rejects(tooBig, /spec\\.size must be at most 10/);
    await assert.rejects(client.get(Memcached, { namespace: 'default', name: 'dry-run' }), /not found/);
  });

  // +kubebuilder:scaffold:webhook-tests
`,
    );
    edit(
      dir,
      test,
      "    // TODO(user): assert the defaults your defaulter sets, e.g. assert.equal(created.spec?.foo, 'default');\n",
      '    assert.equal(created.spec?.size, 1);\n',
    );
    edit(
      dir,
      test,
      "    // TODO(user): assert that invalid objects are refused, e.g.\n    // await assert.rejects(client.create(newObject('invalid', { foo: '' })), /foo/);\n",
      "    await assert.rejects(client.create(newObject('too-big', { size: 11 })), /spec\\.size must be at most 10/);\n",
    );

    // v1alpha1 names the field `replicas`: the conversion functions map it, so the round trip proves /convert ran them.
    const conversion = 'apis/v1alpha1/memcached_conversion.ts';
    edit(dir, conversion, 'spec: src.spec,', 'spec: src.spec && { foo: src.spec.foo, size: src.spec.replicas },');
    edit(dir, conversion, 'spec: hub.spec,', 'spec: hub.spec && { foo: hub.spec.foo, replicas: hub.spec.size },');
    edit(dir, test, "spec: { foo: 'converted' },", "spec: { foo: 'converted', replicas: 3 },");
    // Defaulting runs on the hub after conversion: a lost field would come back as size 1.
    edit(
      dir,
      test,
      "  // TODO(user): assert the hub's fields, e.g. assert.equal(asHub.spec?.foo, 'converted');\n",
      '  assert.equal(asHub.spec?.size, 3);\n',
    );

    installDependencies(dir);
    ok(run('git', ['init', '-q'], dir), 'git init');
  });

  it('type-checks with zero errors', () => {
    ok(run('npx', ['--no-install', 'tsc', '-p', '.', '--noEmit'], dir), 'tsc');
  });

  it('make manifests writes the webhook configurations and the two-version CRD, v1 stored', () => {
    ok(run('make', ['manifests'], dir), 'make manifests');
    const configurations = YAML.parseAllDocuments(readFileSync(join(dir, 'config/webhook/manifests.yaml'), 'utf8')).map(
      (doc) => doc.toJS() as { kind: string; webhooks: { clientConfig: { service: { path: string } } }[] },
    );
    assert.deepEqual(
      configurations.map((config) => [
        config.kind,
        config.webhooks.map((webhook) => webhook.clientConfig.service.path),
      ]),
      [
        ['MutatingWebhookConfiguration', [mutatingWebhookPath(MEMCACHED)]],
        ['ValidatingWebhookConfiguration', [validatingWebhookPath(MEMCACHED)]],
      ],
    );
    const crd = YAML.parse(readFileSync(join(dir, 'config/crd/bases/cache.example.com_memcacheds.yaml'), 'utf8')) as {
      spec: { versions: { name: string; storage: boolean }[] };
    };
    assert.deepEqual(
      crd.spec.versions.map((version) => [version.name, version.storage]),
      [
        ['v1', true],
        ['v1alpha1', false],
      ],
    );
  });

  it("the project's own tests pass, running the webhooks through envtest", () => {
    const output = ok(run('npm', ['test'], dir), 'npm test');
    const count = (label: string): number => summaryCount(output, label);
    // The controller's two tests, the smoke test, one test per webhook type, and the two added above.
    assert.equal(count('tests'), 8, output);
    assert.equal(count('pass'), 8, output);
    assert.equal(count('skipped'), 0, output);
    for (const name of [
      'admits a Memcached through the webhook server',
      'runs the defaulting webhook on create',
      'runs the validating webhook on create and update',
      'converts between v1alpha1 and the hub v1',
      'sends warnings, refuses shrinking and refuses deleting a protected Memcached',
      'runs the webhooks on a server-side dry run and stores nothing',
    ]) {
      assert.match(output, new RegExp(`✔ ${name}`), name);
    }
  });

  it('with SKIP_ENVTEST=true every envtest test, the webhook tests included, reports itself skipped', () => {
    const output = ok(run('npm', ['test'], dir, { SKIP_ENVTEST: 'true' }), 'SKIP_ENVTEST=true npm test');
    assert.equal(summaryCount(output, 'tests'), 8, output);
    assert.equal(summaryCount(output, 'skipped'), 8, output);
    assert.equal(summaryCount(output, 'pass'), 0, output);
  });

  it('make bundle: bundle validate passes and webhookdefinitions match the webhook server', () => {
    ok(
      run('npx', ['--no-install', 'ts-operator-sdk', 'generate', 'kustomize', 'manifests', '-q'], dir),
      'generate kustomize manifests',
    );
    const bundle = run('make', ['bundle', 'IMG=example.com/memcached-operator:v0.0.1', 'VERSION=0.0.1'], dir);
    ok(bundle, 'make bundle');
    assert.match(bundle.stderr, /All validation tests have completed successfully/);
    type Definition = {
      type: string;
      deploymentName: string;
      containerPort: number;
      targetPort: number;
      webhookPath: string;
      generateName: string;
      rules?: { apiGroups: string[]; apiVersions: string[]; operations: string[]; resources: string[] }[];
      conversionCRDs?: string[];
    };
    const csv = YAML.parse(
      readFileSync(join(dir, 'bundle/manifests/memcached-operator.clusterserviceversion.yaml'), 'utf8'),
    ) as {
      spec: {
        webhookdefinitions: Definition[];
        install: {
          spec: {
            deployments: {
              name: string;
              spec: {
                template: {
                  spec: {
                    containers: { ports?: { containerPort: number }[]; volumeMounts?: unknown[] }[];
                    volumes?: unknown[];
                  };
                };
              };
            }[];
          };
        };
      };
    };
    const [deployment] = csv.spec.install.spec.deployments;
    assert.ok(deployment);
    const podPorts = deployment.spec.template.spec.containers[0]!.ports?.map((port) => port.containerPort) ?? [];
    assert.deepEqual(
      deployment.spec.template.spec.volumes ?? [],
      [],
      'the cert-manager volume is removed for OLM, which mounts its own certificate',
    );
    const rules = [
      {
        apiGroups: ['cache.example.com'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['memcacheds'],
      },
    ];
    const validatingRules = [
      {
        apiGroups: ['cache.example.com'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: ['memcacheds'],
      },
    ];
    assert.deepEqual(
      csv.spec.webhookdefinitions.map(({ type, webhookPath, generateName, rules: defined, conversionCRDs }) => ({
        type,
        webhookPath,
        generateName,
        rules: defined,
        conversionCRDs,
      })),
      [
        {
          type: 'ConversionWebhook',
          webhookPath: CONVERSION_PATH,
          generateName: 'cmemcacheds.kb.io',
          rules: undefined,
          conversionCRDs: ['memcacheds.cache.example.com'],
        },
        {
          type: 'MutatingAdmissionWebhook',
          webhookPath: mutatingWebhookPath(MEMCACHED),
          generateName: 'mmemcached-v1.cache.kb.io',
          rules,
          conversionCRDs: undefined,
        },
        {
          type: 'ValidatingAdmissionWebhook',
          webhookPath: validatingWebhookPath(MEMCACHED),
          generateName: 'vmemcached-v1.cache.kb.io',
          rules: validatingRules,
          conversionCRDs: undefined,
        },
      ],
    );
    for (const definition of csv.spec.webhookdefinitions) {
      assert.equal(definition.deploymentName, deployment.name);
      // As operator-sdk writes it: the Service's port (443) and the pod port behind it, which the manager serves on.
      assert.equal(definition.containerPort, 443);
      assert.equal(definition.targetPort, 9443);
      assert.ok(podPorts.includes(definition.targetPort), `the Deployment exposes ${definition.targetPort}`);
    }
  });
});

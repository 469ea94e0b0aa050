/**
 * `make bundle` in a generated Memcached project, end to end: installed
 * against this repository packed with `npm pack`, run by make with stdin
 * closed (no TTY, no Go, no kustomize binary: `kubectl kustomize` and the
 * Makefile's sed image setter). The bundle directory matches the golden
 * under test/fixtures/csv/memcached-bundle; a second `make bundle` changes
 * nothing (git status is clean, createdAt kept without SOURCE_DATE_EPOCH);
 * and the real kube-apiserver accepts the CSV's Deployment and permissions,
 * the CRD, the alm-examples sample and every other bundle manifest in a
 * server-side dry run.
 *
 * Run: node --test dist/test/e2e/bundle.test.js, with KUBEBUILDER_ASSETS set.
 * UPDATE_GOLDEN=1 rewrites the golden after a deliberate format change.
 */
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { installDependencies, packRepository } from '../scaffold/harness.js';
import { startControlPlane } from './control-plane.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(REPO_ROOT, 'bin', 'ts-operator-sdk.js');
const GOLDEN = join(REPO_ROOT, 'test', 'fixtures', 'csv', 'memcached-bundle');
const IMG = 'example.com/memcached-operator:v0.0.1';
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Runs a command with stdin closed, as CI does; NODE_TEST_CONTEXT would hijack nested node --test runs. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const { NODE_TEST_CONTEXT: _runner, SOURCE_DATE_EPOCH: _epoch, ...inherited } = process.env;
  return spawnSync(command, args, {
    cwd,
    env: { ...inherited, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000,
  });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(result.status, 0, `${what} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Every file under `dir`, relative path → content. */
function readTree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files.set(
        join(entry.parentPath, entry.name).slice(dir.length + 1),
        readFileSync(join(entry.parentPath, entry.name), 'utf8'),
      );
  }
  return files;
}

/** The package version appears in the builder labels; the golden holds a placeholder so releases do not churn it. */
const normalise = (text: string): string =>
  text.replaceAll(`ts-operator-sdk-v${VERSION}`, 'ts-operator-sdk-v<VERSION>');

describe('make bundle in a generated project', () => {
  let project: string;
  let env: Environment | undefined;
  let firstRun: SpawnSyncReturns<string>;

  before(() => {
    const work = mkdtempSync(join(tmpdir(), 'bundle-e2e-'));
    const tarball = packRepository();
    project = join(work, 'memcached-operator');
    mkdirSync(project);
    const sdkEnv = { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` };
    ok(run(process.execPath, [CLI, 'init', '--domain', 'example.com', '--skip-install'], project, sdkEnv), 'init');
    ok(
      run(
        process.execPath,
        [
          CLI,
          'create',
          'api',
          '--group',
          'cache',
          '--version',
          'v1',
          '--kind',
          'Memcached',
          '--resource',
          '--controller',
        ],
        project,
        sdkEnv,
      ),
      'create api',
    );
    // What a user adds for the OLM console: descriptors and the resources the kind creates.
    const typesPath = join(project, 'apis', 'v1', 'memcached_types.ts');
    const types = readFileSync(typesPath, 'utf8')
      .replace(
        '   * foo is an example field of Memcached. Edit memcached_types.ts to remove/update.\n',
        '   * foo is an example field of Memcached. Edit memcached_types.ts to remove/update.\n   * +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}\n',
      )
      .replace(
        '   * conditions represent the current state of the Memcached resource.\n',
        '   * conditions represent the current state of the Memcached resource.\n   * +operator-sdk:csv:customresourcedefinitions:type=status\n',
      )
      .replace(
        ' * Memcached is the Schema for the memcacheds API.\n',
        ' * Memcached is the Schema for the memcacheds API.\n * +operator-sdk:csv:customresourcedefinitions:resources={{Deployment,v1,memcached-deployment}}\n',
      );
    assert.equal(
      (types.match(/\+operator-sdk:csv/g) ?? []).length,
      3,
      'the scaffolded types changed: update the marker insertion above',
    );
    writeFileSync(typesPath, types);
    installDependencies(project);
    // A related image written by hand into the base: operator-sdk drops it (#6590), we keep it.
    ok(
      run('npx', ['--no-install', 'ts-operator-sdk', 'generate', 'kustomize', 'manifests', '-q'], project),
      'generate kustomize manifests',
    );
    const basePath = join(project, 'config/manifests/bases/memcached-operator.clusterserviceversion.yaml');
    writeFileSync(
      basePath,
      `${readFileSync(basePath, 'utf8')}  relatedImages:\n  - image: docker.io/library/memcached:1.6.26-alpine\n    name: memcached\n`,
    );
    ok(run('git', ['init', '-q'], project), 'git init');
    firstRun = run('make', ['bundle', `IMG=${IMG}`, 'VERSION=0.0.1'], project, { SOURCE_DATE_EPOCH: '1767225600' });
  });

  after(async () => {
    await env?.stop();
    if (project) rmSync(join(project, '..'), { recursive: true, force: true });
  });

  it('succeeds with stdin closed, through generate kustomize manifests, generate bundle and bundle validate', () => {
    ok(firstRun, 'make bundle');
    assert.match(firstRun.stdout, /generate kustomize manifests -q/);
    assert.match(
      firstRun.stdout,
      /kustomize config\/manifests\)"; \\\n\s+printf '%s\\n' "\$manifests" \| .*generate bundle -q --overwrite --version 0\.0\.1/,
    );
    assert.match(firstRun.stdout, /bundle validate \.\/bundle/);
    assert.match(firstRun.stderr, /All validation tests have completed successfully/);
  });

  it('bundle validate on the generated bundle: only the minKubeVersion warning; the operatorframework suite adds what operator-sdk reports', () => {
    const cli = join(project, 'node_modules', '.bin', 'ts-operator-sdk');
    const csv = 'memcached-operator.v0.0.1';
    const minKube = `Warning: Value : (${csv}) csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. Otherwise, it would mean that your operator project can be distributed and installed in any cluster version available, which is not necessarily the case for all projects.`;
    const plain = JSON.parse(
      ok(run(cli, ['bundle', 'validate', './bundle', '-o', 'json-alpha1'], project), 'bundle validate'),
    ) as { passed: boolean; outputs: Array<{ type: string; message: string }> };
    assert.deepEqual(plain, { passed: true, outputs: [{ type: 'warning', message: minKube }] });
    // The scaffolded base CSV's icon entry has empty data and mediatype, as operator-sdk's does, so operatorhubv2 errors (exit 1).
    const suite = run(
      cli,
      ['bundle', 'validate', './bundle', '--select-optional', 'suite=operatorframework', '-o', 'json-alpha1'],
      project,
    );
    assert.equal(suite.status, 1, suite.stderr);
    assert.deepEqual(JSON.parse(suite.stdout), {
      passed: false,
      outputs: [
        { type: 'warning', message: minKube },
        { type: 'warning', message: minKube },
        {
          type: 'error',
          message: `Error: Value : (${csv}) csv.Spec.Icon elements should contain both data and mediatype`,
        },
        // No channel-naming warning: operator-sdk loads only manifests/, so the api's check never sees the channels.
      ],
    });
  });

  it('writes the bundle in the golden (test/fixtures/csv/memcached-bundle)', () => {
    const actual = new Map(
      [...readTree(join(project, 'bundle'))].map(([path, text]) => [`bundle/${path}`, normalise(text)]),
    );
    actual.set('bundle.Dockerfile', normalise(readFileSync(join(project, 'bundle.Dockerfile'), 'utf8')));
    if (process.env['UPDATE_GOLDEN'] === '1') {
      rmSync(GOLDEN, { recursive: true, force: true });
      for (const [path, text] of actual) {
        mkdirSync(join(GOLDEN, path, '..'), { recursive: true });
        writeFileSync(join(GOLDEN, path), text);
      }
    }
    const golden = readTree(GOLDEN);
    assert.deepEqual([...actual.keys()].sort(), [...golden.keys()].sort());
    for (const [path, text] of actual) assert.equal(text, golden.get(path), `${path} differs from the golden`);
    const csv = YAML.parse(actual.get('bundle/manifests/memcached-operator.clusterserviceversion.yaml')!) as {
      metadata: { annotations: Record<string, string> };
      spec: {
        relatedImages: unknown;
        install: {
          spec: { deployments: Array<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }> };
        };
      };
    };
    assert.equal(csv.metadata.annotations['createdAt'], '2026-01-01T00:00:00Z');
    assert.deepEqual(csv.spec.relatedImages, [
      { image: 'docker.io/library/memcached:1.6.26-alpine', name: 'memcached' },
    ]);
    assert.equal(csv.spec.install.spec.deployments[0]!.spec.template.spec.containers[0]!.image, IMG);
  });

  it('re-running make bundle changes nothing: git status is clean and createdAt is kept', () => {
    ok(run('git', ['add', '-A'], project), 'git add');
    ok(
      run(
        'git',
        ['-c', 'user.name=test', '-c', 'user.email=test@example.com', 'commit', '-qm', 'first bundle'],
        project,
      ),
      'git commit',
    );
    // No SOURCE_DATE_EPOCH now: the unchanged CSV must keep its createdAt on its own.
    ok(run('make', ['bundle', `IMG=${IMG}`, 'VERSION=0.0.1'], project), 'second make bundle');
    assert.equal(ok(run('git', ['status', '--porcelain'], project), 'git status'), '');
  });

  it('is accepted by the real kube-apiserver in a server-side dry run', async () => {
    env = await startControlPlane();
    const client = new RestClient(env.kubeConfig);
    const namespace = 'bundle-dry-run';
    await client.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    });
    const manifestsDir = join(project, 'bundle', 'manifests');
    const files = readdirSync(manifestsDir).sort();
    const csv = YAML.parse(
      readFileSync(join(manifestsDir, 'memcached-operator.clusterserviceversion.yaml'), 'utf8'),
    ) as {
      metadata: { annotations: Record<string, string> };
      spec: {
        install: {
          spec: {
            deployments: Array<{ name: string; label?: Record<string, string>; spec: unknown }>;
            permissions?: Array<{ rules: unknown[] }>;
            clusterPermissions?: Array<{ rules: unknown[] }>;
          };
        };
      };
    };
    const dryRun = async (
      object: { apiVersion: string; kind: string; metadata: { name: string } },
      what: string,
    ): Promise<void> => {
      const path = await collectionPath(client, object.apiVersion, object.kind, namespace);
      try {
        await client.request('POST', path, { query: { dryRun: 'All', fieldValidation: 'Strict' }, body: object });
      } catch (err) {
        assert.fail(`the API server rejected ${what}: ${(err as Error).message}`);
      }
    };
    for (const deployment of csv.spec.install.spec.deployments) {
      await dryRun(
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: deployment.name, labels: deployment.label } as { name: string },
          spec: deployment.spec,
        } as never,
        `the CSV's Deployment ${deployment.name}`,
      );
    }
    for (const [index, permission] of (csv.spec.install.spec.permissions ?? []).entries()) {
      await dryRun(
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: `csv-permission-${index}` },
          rules: permission.rules,
        } as never,
        'the CSV permissions as a Role',
      );
    }
    for (const [index, permission] of (csv.spec.install.spec.clusterPermissions ?? []).entries()) {
      await dryRun(
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: `csv-cluster-permission-${index}` },
          rules: permission.rules,
        } as never,
        'the CSV clusterPermissions as a ClusterRole',
      );
    }
    const others = files.filter((f) => f !== 'memcached-operator.clusterserviceversion.yaml');
    assert.ok(others.includes('cache.example.com_memcacheds.yaml'));
    assert.ok(others.length >= 5, `expected the CRD, Service and helper ClusterRoles, got ${others.join(', ')}`);
    for (const file of others) {
      const object = YAML.parse(readFileSync(join(manifestsDir, file), 'utf8')) as {
        apiVersion: string;
        kind: string;
        metadata: { name: string };
      };
      await dryRun(object, file);
    }
    // The CRD for real, so the alm-examples sample can be checked against its schema.
    const crd = YAML.parse(readFileSync(join(manifestsDir, 'cache.example.com_memcacheds.yaml'), 'utf8')) as {
      metadata: { name: string };
    };
    await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    const samples = JSON.parse(csv.metadata.annotations['alm-examples']!) as Array<{
      apiVersion: string;
      kind: string;
      metadata: { name: string };
    }>;
    assert.equal(samples.length, 1);
    for (let attempt = 0; ; attempt++) {
      try {
        await client.request('POST', `/apis/cache.example.com/v1/namespaces/${namespace}/memcacheds`, {
          query: { dryRun: 'All', fieldValidation: 'Strict' },
          body: samples[0],
        });
        break;
      } catch (err) {
        // The CRD takes a moment to be served after creation.
        if (attempt >= 50 || !/404|not found/i.test((err as Error).message))
          assert.fail(`the API server rejected the alm-examples sample: ${(err as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
});

/** The collection URL of a kind, from the API server's discovery (so no plural table can drift). */
async function collectionPath(
  client: RestClient,
  apiVersion: string,
  kind: string,
  namespace: string,
): Promise<string> {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const discovery = await client.request<{ resources: Array<{ name: string; kind: string; namespaced: boolean }> }>(
    'GET',
    base,
  );
  const resource = discovery.resources.find((r) => r.kind === kind && !r.name.includes('/'));
  assert.ok(resource, `the API server does not serve ${kind} in ${apiVersion}`);
  return resource.namespaced ? `${base}/namespaces/${namespace}/${resource.name}` : `${base}/${resource.name}`;
}

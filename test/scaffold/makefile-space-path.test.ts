/**
 * The generated Makefile in a project whose path has spaces and shell
 * punctuation (`my projects (v2) & co`): `make setup-envtest` downloads into
 * the project's own bin/, `make test` runs the project's tests on a real API
 * server started from there, `make envtest-start` serves a kubeconfig in
 * bin/, and `make opm` finds the opm in bin/ instead of splitting the path
 * and creating directories outside the project. Kubebuilder's Makefile
 * breaks on all of these (an unquoted $(LOCALBIN)).
 *
 * The project links this repository's packages instead of installing them
 * (no registry), and setup-envtest downloads from a local release index of
 * the official shape made from our built control plane.
 *
 * Needs KUBEBUILDER_ASSETS (scripts/test.sh sets it). Cost: two control plane
 * starts and one project build, 40-90 s. Run:
 *   bash scripts/with-test-assets.sh node --test dist/test/scaffold/makefile-space-path.test.js
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { goPlatform } from '../../src/runtime/envtest/setup-envtest.js';
import { childEnv, ENVTEST_SETTINGS } from '../support/child-env.js';
import { hashTree, linkDependencies, REPO_ROOT, runCliOk, startMakeEnvtest } from './harness.js';
import { serveLocalReleaseIndex, type LocalReleaseIndex } from './release-index.js';

/** The version the generated Makefile's ENVTEST_K8S_VERSION names; the local index publishes it. */
const ENVTEST_VERSION = '1.36.3';

interface MakeResult {
  status: number | null;
  stdout: string;
  output: string;
}

/**
 * The environment of a user's shell: none of this machine's envtest settings,
 * no NODE_TEST_CONTEXT (the project's own `node --test` would report to this
 * runner), and a PATH whose `curl` refuses to run, so nothing can reach the
 * network (`make opm` would download with it).
 */
function userEnv(fakeBin: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const inherited = childEnv(ENVTEST_SETTINGS);
  return {
    ...inherited,
    PATH: `${fakeBin}:${process.env.PATH}`,
    KUBEBUILDER_CONTROLPLANE_START_TIMEOUT: '180s',
    ...extra,
  };
}

/** Runs make asynchronously, so this process keeps serving the release index. */
function make(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<MakeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('make', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, output });
    });
  });
}

describe('the generated Makefile in a path with spaces', { timeout: 1_200_000 }, () => {
  let index: LocalReleaseIndex;
  /** The directory holding the project, to check nothing is created beside it. */
  let parent: string;
  let project: string;
  /** curl (and opm) stand-ins first on PATH. */
  let fakeBin: string;

  before(async () => {
    const assets = process.env.KUBEBUILDER_ASSETS;
    if (!assets)
      throw new Error(
        'KUBEBUILDER_ASSETS is not set: run this test through scripts/with-test-assets.sh (npm test does)',
      );
    index = await serveLocalReleaseIndex(assets, ENVTEST_VERSION);
    parent = join(mkdtempSync(join(tmpdir(), 'makefile-space-')), 'my projects (v2) & co');
    project = join(parent, 'memcached-operator');
    mkdirSync(project, { recursive: true });
    runCliOk(['init', '--domain', 'example.com', '--skip-install'], project);
    runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], project);
    // What `npm install` would put in node_modules, linked from this repository.
    linkDependencies(project);
    symlinkSync(join(REPO_ROOT, 'node_modules', 'typescript'), join(project, 'node_modules', 'typescript'), 'dir');
    mkdirSync(join(project, 'node_modules', '.bin'));
    symlinkSync(join(REPO_ROOT, 'bin', 'ts-operator-sdk.js'), join(project, 'node_modules', '.bin', 'ts-operator-sdk'));
    symlinkSync(
      join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      join(project, 'node_modules', '.bin', 'tsc'),
    );
    fakeBin = mkdtempSync(join(tmpdir(), 'makefile-space-bin-'));
    writeFileSync(join(fakeBin, 'curl'), '#!/bin/sh\necho "curl must not run in this test: $*" >&2\nexit 99\n');
    chmodSync(join(fakeBin, 'curl'), 0o755);
  });

  after(async () => {
    await index?.close();
  });

  test('make setup-envtest downloads into the project bin/ and prints that directory', async () => {
    const result = await make(
      ['-s', 'setup-envtest'],
      project,
      userEnv(fakeBin, { TS_OPERATOR_SDK_ENVTEST_INDEX_URL: index.indexUrl }),
    );
    assert.equal(result.status, 0, result.output);
    const { os, arch } = goPlatform();
    const assets = join(project, 'bin', 'k8s', `${ENVTEST_VERSION}-${os}-${arch}`);
    assert.equal(result.stdout.trim().split('\n').at(-1), assets, result.output);
    assert.ok(existsSync(join(assets, 'kube-apiserver')));
    assert.deepEqual(readdirSync(parent), ['memcached-operator'], 'something was created beside the project');
  });

  test('make test runs the tests on an API server started from the project bin/', async () => {
    const result = await make(
      ['test'],
      project,
      userEnv(fakeBin, { TS_OPERATOR_SDK_ENVTEST_INDEX_URL: index.indexUrl }),
    );
    assert.equal(result.status, 0, result.output);
    const count = (label: string): number =>
      Number(new RegExp(`^[ℹ#] ${label} (\\d+)$`, 'm').exec(result.output)?.[1] ?? NaN);
    // The generated controller test: an existing object and a deleted one, both on the real API server.
    assert.deepEqual(
      { tests: count('tests'), pass: count('pass'), skipped: count('skipped') },
      { tests: 2, pass: 2, skipped: 0 },
      result.output,
    );
    assert.match(result.output, /^envtest: API server https:\/\/127\.0\.0\.1:\d+ started for this test run$/m);
  });

  test('make envtest-start serves a kubeconfig in the project bin/ until Ctrl-C', async (t) => {
    const started = await startMakeEnvtest(
      project,
      userEnv(fakeBin, { TS_OPERATOR_SDK_ENVTEST_INDEX_URL: index.indexUrl }),
    );
    t.after(started.kill);
    // The line is for `eval`: the path with spaces and `&` comes back whole from a shell.
    assert.equal(started.kubeconfig, join(project, 'bin', 'envtest.kubeconfig'), started.exportLine);
    assert.ok(existsSync(started.kubeconfig));
    await started.interrupt();
    assert.equal(existsSync(started.kubeconfig), false, 'the kubeconfig is removed on stop');
  });

  test('make opm uses the opm in the project bin/: no download, nothing created outside the project', async () => {
    mkdirSync(join(project, 'bin'), { recursive: true });
    writeFileSync(join(project, 'bin', 'opm'), '#!/bin/sh\necho opm-stand-in\n', { mode: 0o755 });
    const before = hashTree(parent);
    // PATH without a real opm: the fake bin directory and the system's, whatever they hold, minus any opm.
    const result = await make(['opm'], project, userEnv(fakeBin, { PATH: `${fakeBin}:/usr/bin:/bin` }));
    assert.equal(result.status, 0, result.output);
    assert.doesNotMatch(result.output, /curl must not run/);
    assert.equal(hashTree(parent), before, 'make opm changed files');
  });
});

/**
 * The generated project's CI, run for real: a project scaffolded with this
 * repository packed by `npm pack` (a namespaced and a cluster-scoped kind)
 * runs the `run:` steps of every workflow in .github/workflows, in order, the
 * way a GitHub runner would (`uses:` steps are GitHub actions, done here by the
 * test itself: the checkout is the directory, Node is this one).
 * `make setup-envtest` downloads from a local release index of the official
 * shape, made from our built control plane, and `make test` must really run
 * tests: read from the node test runner's summary, at least one, none
 * skipped or failed. Then the same project's failure paths: no assets (one
 * line), and the explicit SKIP_ENVTEST=true opt-out (visible as skips).
 *
 * Needs KUBEBUILDER_ASSETS (scripts/test.sh sets it). Run:
 *   KUBEBUILDER_ASSETS=... node --test dist/test/scaffold/generated-ci.test.js
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { goPlatform } from '../../src/runtime/envtest/setup-envtest.js';
import { childEnv, ENVTEST_SETTINGS } from '../support/child-env.js';
import { packRepository, runCliOk, startMakeEnvtest, tempProjectDir } from './harness.js';
import { serveLocalReleaseIndex, type LocalReleaseIndex } from './release-index.js';

/** The version the generated Makefile's ENVTEST_K8S_VERSION names; the local index publishes it. */
const ENVTEST_VERSION = '1.36.3';

/** What one shell command printed (stdout and stderr interleaved as written, and apart). */
interface StepResult {
  status: number | null;
  output: string;
  stderr: string;
}

/**
 * The environment of a fresh CI runner: none of this machine's envtest
 * settings, and no NODE_TEST_CONTEXT (it would make the project's own
 * `node --test` report to this runner instead of printing its summary).
 */
function runnerEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const inherited = childEnv(ENVTEST_SETTINGS);
  // A generous start bound for this shared machine; the generated suite's own default is 60 s.
  return { ...inherited, CI: 'true', KUBEBUILDER_CONTROLPLANE_START_TIMEOUT: '180s', ...extra };
}

/** Runs a shell script asynchronously, so this process keeps serving the release index while it runs. */
function shell(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<StepResult> {
  return new Promise((resolve, reject) => {
    // GitHub's `run:` default on Linux: bash, exit on the first failing command.
    const child = spawn('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', script], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 900_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output, stderr });
    });
  });
}

/** The counts of node's test-runner summary (`ℹ tests 4`, or `# tests 4` from the TAP reporter). */
function summary(output: string): Record<'tests' | 'pass' | 'fail' | 'skipped' | 'cancelled' | 'todo', number> {
  const count = (label: string): number => Number(new RegExp(`^[ℹ#] ${label} (\\d+)$`, 'm').exec(output)?.[1] ?? NaN);
  return {
    tests: count('tests'),
    pass: count('pass'),
    fail: count('fail'),
    skipped: count('skipped'),
    cancelled: count('cancelled'),
    todo: count('todo'),
  };
}

interface WorkflowStep {
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  'working-directory'?: string;
}

/** Processes running a binary from under `dir` (the project's setup-envtest download), zombies excluded. */
function planePids(dir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] ?? '';
        return command.startsWith(dir) && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))
          ? [Number(entry)]
          : [];
      } catch {
        return [];
      }
    });
}

/** A port nothing listens on: bound, read, released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the generated project's CI workflows pass, and its test loop fails loudly", { timeout: 2_400_000 }, () => {
  let index: LocalReleaseIndex;
  let project: string;

  before(async () => {
    const assets = process.env.KUBEBUILDER_ASSETS;
    if (!assets)
      throw new Error(
        'KUBEBUILDER_ASSETS is not set: run this test through scripts/with-test-assets.sh (npm test does)',
      );
    index = await serveLocalReleaseIndex(assets, ENVTEST_VERSION);

    const tarball = packRepository();
    project = tempProjectDir('garden-operator');
    const env = { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` };
    runCliOk(['init', '--domain', 'example.com', '--skip-install'], project, { env });
    runCliOk(['create', 'api', '--group', 'botany', '--version', 'v1', '--kind', 'Fern'], project, { env });
    runCliOk(
      [
        'create',
        'api',
        '--group',
        'botany',
        '--version',
        'v1alpha1',
        '--kind',
        'Cactus',
        '--plural',
        'cacti',
        '--namespaced=false',
      ],
      project,
      { env },
    );
    // The package-lock.json a user commits, which the workflow's `npm ci` needs (with the packed package
    // in it); only the lock file: the workflow's `npm ci` installs, and installing here too cost about
    // 15 s of CPU for a node_modules that `npm ci` deletes first.
    const install = await shell('npm install --package-lock-only --no-audit --no-fund', project, runnerEnv({}));
    assert.equal(install.status, 0, install.output);
  });

  after(async () => {
    await index?.close();
  });

  test('every run: step of .github/workflows/*.yml succeeds, in order, and make test runs tests with none skipped', async () => {
    const workflowDir = join(project, '.github', 'workflows');
    const files = readdirSync(workflowDir)
      .filter((file) => /\.ya?ml$/.test(file))
      .sort();
    // lint-format.test.ts counts on this test to run lint.yml's steps (npm ci, make lint).
    assert.ok(files.includes('test.yml') && files.includes('lint.yml'), `workflows: ${files.join(', ')}`);
    let testRun: StepResult | undefined;
    const ran: string[] = [];
    // GitHub runs each workflow on a fresh runner; here they share one checkout, so a step that already
    // ran with the same command, directory and environment (both workflows' `npm ci`) is not run again:
    // it would do the same work on the same files (about 18 s of CPU) and check nothing new.
    const done = new Set<string>();
    for (const file of files) {
      const workflow = parseYaml(readFileSync(join(workflowDir, file), 'utf8')) as {
        env?: Record<string, string>;
        jobs: Record<string, { env?: Record<string, string>; steps: WorkflowStep[] }>;
      };
      for (const [jobName, job] of Object.entries(workflow.jobs)) {
        for (const step of job.steps) {
          if (step.run === undefined) {
            assert.ok(step.uses, `${file} ${jobName}: a step with neither run nor uses`);
            continue;
          }
          const label = `${file} ${jobName}: ${step.run.trim()}`;
          const identity = JSON.stringify([
            step.run.trim(),
            step['working-directory'],
            workflow.env,
            job.env,
            step.env,
          ]);
          if (done.has(identity)) {
            ran.push(`${label} (ran before)`);
            continue;
          }
          done.add(identity);
          const env = runnerEnv({
            ...workflow.env,
            ...job.env,
            ...step.env,
            TS_OPERATOR_SDK_ENVTEST_INDEX_URL: index.indexUrl,
          });
          const result = await shell(step.run, join(project, step['working-directory'] ?? '.'), env);
          assert.equal(result.status, 0, `${label} failed:\n${result.output}`);
          ran.push(label);
          if (/\bmake test\b/.test(step.run)) testRun = result;
        }
      }
    }
    assert.ok(
      ran.some((label) => label.endsWith(': npm ci')) && ran.some((label) => /^lint\.yml .*: make lint$/.test(label)),
      `steps run: ${ran.join('; ')}`,
    );
    assert.ok(testRun, `no step runs \`make test\`; steps run: ${ran.join('; ')}`);

    // `make setup-envtest` fetched from the local index into the project's bin/, as kubebuilder's --bin-dir does.
    const { os, arch } = goPlatform();
    assert.ok(
      index.requests.includes(`/download/envtest-v${ENVTEST_VERSION}-${os}-${arch}.tar.gz`),
      `requests: ${index.requests.join(', ')}`,
    );
    assert.ok(existsSync(join(project, 'bin', 'k8s', `${ENVTEST_VERSION}-${os}-${arch}`, 'kube-apiserver')));

    const counts = summary(testRun.output);
    // Two kinds, two tests each: every one ran and passed.
    assert.ok(counts.tests >= 1, testRun.output);
    assert.deepEqual(counts, { tests: 4, pass: 4, fail: 0, skipped: 0, cancelled: 0, todo: 0 }, testRun.output);
    // One control plane served both test files.
    assert.equal(
      testRun.output.match(/^envtest: API server https:\/\/127\.0\.0\.1:\d+ started for this test run$/gm)?.length,
      1,
      testRun.output,
    );
  });

  test('make envtest-start serves a kubeconfig with the CRDs installed, and Ctrl-C (SIGINT to the group) leaves nothing behind', async (t) => {
    const started = await startMakeEnvtest(project, runnerEnv({ TS_OPERATOR_SDK_ENVTEST_INDEX_URL: index.indexUrl }));
    t.after(started.kill);
    const { kubeconfig } = started;
    assert.equal(kubeconfig, join(project, 'bin', 'envtest.kubeconfig'));
    const crds = await shell(`kubectl --kubeconfig "${kubeconfig}" get crd -o name`, project, runnerEnv({}));
    assert.equal(crds.status, 0, crds.output);
    assert.deepEqual(crds.output.trim().split('\n').sort(), [
      'customresourcedefinition.apiextensions.k8s.io/cacti.botany.example.com',
      'customresourcedefinition.apiextensions.k8s.io/ferns.botany.example.com',
    ]);
    const plane = planePids(join(project, 'bin', 'k8s'));
    assert.equal(plane.length, 2, `etcd and kube-apiserver from bin/k8s: ${plane.join(', ')}`);

    await started.interrupt();
    assert.match(started.output(), /SIGINT received, stopping/);
    assert.deepEqual(planePids(join(project, 'bin', 'k8s')), [], 'etcd or kube-apiserver still running');
    assert.equal(existsSync(kubeconfig), false, 'the kubeconfig is removed on stop');
  });

  test('make test without envtest binaries fails with one line naming the fix', async () => {
    // A fresh bin/ and an index nobody serves: setup-envtest has nothing cached and nothing to download.
    const emptyBin = mkdtempSync(join(tmpdir(), 'empty-localbin-'));
    const env = runnerEnv({
      TS_OPERATOR_SDK_ENVTEST_INDEX_URL: `http://127.0.0.1:${await closedPort()}/envtest-releases.yaml`,
    });
    const result = await shell(`make test LOCALBIN=${emptyBin}`, project, env);
    assert.notEqual(result.status, 0, result.output);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('Error:'));
    assert.equal(errors.length, 1, result.stderr);
    assert.match(
      errors[0]!,
      /^Error: cannot fetch the envtest index http:\/\/127\.0\.0\.1:\d+\/envtest-releases\.yaml: .*set KUBEBUILDER_ASSETS/,
    );
    assert.doesNotMatch(result.output, /^\s+at /m, 'no stack trace');
    assert.doesNotMatch(result.output, /ℹ tests/, 'the tests must not run without a control plane');
  });

  test('the test run itself, without KUBEBUILDER_ASSETS, fails in one line before any test', async () => {
    // What `npm test` runs after its build, outside make: nothing set KUBEBUILDER_ASSETS.
    const script = (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { scripts: { test: string } })
      .scripts.test;
    const testCommand = script.slice(script.indexOf('node --test'));
    const result = await shell(testCommand, project, runnerEnv({}));
    assert.notEqual(result.status, 0, result.output);
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0]!,
      /^envtest: cannot start the test API server: .*etcd not found .*KUBEBUILDER_ASSETS.*setup-envtest.*SKIP_ENVTEST=true/,
    );
    assert.doesNotMatch(result.output, /ℹ tests/);
  });

  test('SKIP_ENVTEST=true is the explicit opt-out: make test passes and reports every envtest test as skipped', async () => {
    const result = await shell('make test', project, runnerEnv({ SKIP_ENVTEST: 'true' }));
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(
      summary(result.output),
      { tests: 4, pass: 0, fail: 0, skipped: 4, cancelled: 0, todo: 0 },
      result.output,
    );
    assert.match(result.output, /SKIP_ENVTEST=true, so no API server is started/);
    assert.match(result.output, /# SKIP_ENVTEST=true: no API server in this run/);
  });
});

/**
 * End to end for the scaffolder: each scenario's generated project installs
 * against this repository packed with `npm pack`, builds with zero
 * TypeScript errors, and passes its own tests. With KUBEBUILDER_ASSETS set,
 * the generated controller tests run against a real kube-apiserver + etcd;
 * without it the run uses the SKIP_ENVTEST=true opt-out, and the tests must
 * report themselves skipped.
 *
 * Run: node --test dist/test/scaffold/scenarios.test.js (after `npx tsc -p .`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { childEnv } from '../support/child-env.js';
import {
  SCENARIOS,
  installDependencies,
  packRepository,
  scaffoldScenario,
  shareInstalledDependencies,
  type Scenario,
} from './harness.js';

let tarball: string;
/**
 * Each scenario's project once it passed its own tests, installed and built:
 * the Dockerfile test below starts from the first one instead of scaffolding,
 * installing and building the same project again (about a minute of CPU).
 */
const passed = new Map<string, string>();

before(() => {
  tarball = packRepository();
});

/**
 * A scenario's project, installed against the packed tarball. `byInit`: init
 * runs `npm install` itself (no --skip-install), as a user's first run does;
 * otherwise the project is scaffolded with --skip-install and then gets the
 * same `npm install`, which starts from the first project's tree (the
 * dependencies are the same): installing them again would check nothing new.
 */
function scaffold(scenario: Scenario, byInit: boolean): string {
  const env = { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` };
  if (byInit) {
    const dir = scaffoldScenario(scenario, { env });
    shareInstalledDependencies(dir);
    return dir;
  }
  const dir = scaffoldScenario(scenario, { env, extraInitArgs: ['--skip-install'] });
  installDependencies(dir);
  return dir;
}

function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  // NODE_TEST_CONTEXT would make the project's own `node --test` report to
  // this runner instead of printing its results.
  const result = spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...childEnv(), ...env }, timeout: 600_000 });
  assert.equal(result.status, 0, `npm ${args.join(' ')} failed in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

describe('generated projects install, build and pass their own tests', () => {
  for (const [index, scenario] of SCENARIOS.entries()) {
    test(scenario.name, { timeout: 900_000 }, () => {
      const dir = scaffold(scenario, index === 0);
      // The generated Makefile's manifests target: the installed package's own generator writes the CRDs and role.
      const make = spawnSync('make', ['manifests'], { cwd: dir, encoding: 'utf8' });
      assert.equal(make.status, 0, `make manifests failed:\n${make.stdout}\n${make.stderr}`);
      for (const crd of scenario.crds)
        assert.ok(existsSync(join(dir, 'config/crd/bases', `${crd.group}_${crd.plural}.yaml`)), `${crd.plural} CRD`);
      // No separate `npm run build`: `npm test` builds first (the generated script is `npm run build && node --test ...`).
      npm(['run', 'lint'], dir);
      // Without assets, only the explicit opt-out lets the run pass (generated-ci.test.ts checks the failure).
      const output = npm(['test'], dir, process.env.KUBEBUILDER_ASSETS ? {} : { SKIP_ENVTEST: 'true' });
      const count = (label: string): number =>
        Number(new RegExp(`^[ℹ#] ${label} (\\d+)$`, 'm').exec(output)?.[1] ?? NaN);
      // Each generated controller test file has two tests (an existing object, a deleted one).
      const tests = 2 * scenario.crds.length;
      assert.equal(count('tests'), tests, output);
      assert.equal(count('fail'), 0, output);
      if (process.env.KUBEBUILDER_ASSETS) {
        assert.equal(count('pass'), tests, output);
      } else {
        assert.equal(count('skipped'), tests, output);
        assert.match(output, /SKIP_ENVTEST=true: no API server in this run/);
      }
      passed.set(scenario.name, dir);
    });
  }
});

/** A scenario's project installed from the packed tarball, built. */
function scaffoldAndBuild(scenario: Scenario): string {
  const dir = scaffold(scenario, true);
  npm(['run', 'build'], dir);
  return dir;
}

/** Bytes under a directory, as `du` would count the files. */
function sizeOf(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((total, entry) => total + sizeOf(join(path, entry)), 0);
}

describe('the Dockerfile runtime stage', () => {
  test(
    'a production install carries none of the CLI tooling, and the operator still starts',
    { timeout: 900_000 },
    (t) => {
      // The first scenario's project as its test left it (installed from the tarball, built); scaffolded
      // here when that test failed or did not run (--test-name-pattern).
      const dir = passed.get(SCENARIOS[0]!.name) ?? scaffoldAndBuild(SCENARIOS[0]!);
      // Run the generated Dockerfile's own builder-stage steps that follow the build (no Docker here).
      const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
      const builder = dockerfile.slice(0, dockerfile.indexOf('\nFROM ', dockerfile.indexOf('FROM ') + 1));
      const steps =
        builder.slice(builder.indexOf('RUN npm run build') + 'RUN npm run build'.length).match(/^RUN .+$/gm) ?? [];
      assert.ok(
        steps.some((step) => step.includes('--omit=optional')),
        'the builder prunes optional dependencies',
      );
      for (const step of steps) {
        const result = spawnSync('bash', ['-ec', step.slice(4)], { cwd: dir, encoding: 'utf8', timeout: 600_000 });
        assert.equal(result.status, 0, `${step} failed:\n${result.stdout}\n${result.stderr}`);
      }
      for (const tool of ['typescript', 'handlebars', 'commander', 'execa', 'fs-extra', 'yaml', 'ajv', 'semver']) {
        assert.ok(!existsSync(join(dir, 'node_modules', tool)), `${tool} must not be in the runtime payload`);
      }
      // The secure metrics server's self-signed certificate (the scaffold's default deployment) needs these at run time.
      for (const runtime of ['@peculiar/x509', 'reflect-metadata']) {
        assert.ok(existsSync(join(dir, 'node_modules', runtime)), `${runtime} must be in the runtime payload`);
      }
      // With no cluster config the operator stops with the runtime's own error, not a missing module.
      const home = mkdtempSync(join(tmpdir(), 'empty-home-'));
      const started = spawnSync(process.execPath, ['dist/main.js'], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: home },
        timeout: 60_000,
      });
      assert.notEqual(started.status, 0);
      assert.match(started.stderr, /no Kubernetes config found/);
      assert.doesNotMatch(started.stderr, /ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
      const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
      t.diagnostic(
        `runtime payload: node_modules ${mib(sizeOf(join(dir, 'node_modules')))} MiB, dist ${mib(sizeOf(join(dir, 'dist')))} MiB`,
      );
    },
  );
});

/**
 * End to end for the scaffolder: each scenario's generated project installs
 * against this repository packed with `npm pack`, builds with zero
 * TypeScript errors, and passes its own tests. With KUBEBUILDER_ASSETS set,
 * the generated controller tests run against a real kube-apiserver + etcd;
 * without it they report themselves skipped, and this test checks that too.
 *
 * Run: node --test dist/test/scaffold/scenarios.test.js (after `npx tsc -p .`).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { REPO_ROOT, SCENARIOS, scaffoldScenario } from './harness.js';

let tarball: string;

before(() => {
  const packDir = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-pack-'));
  // --ignore-scripts: dist/ is already compiled (this test runs from it), and
  // prepack's rebuild would race other builds of the shared tree.
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  tarball = join(packDir, readdirSync(packDir).find((file) => file.endsWith('.tgz'))!);
});

function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  // NODE_TEST_CONTEXT would make the project's own `node --test` report to
  // this runner instead of printing its results.
  const { NODE_TEST_CONTEXT: _parentRunner, ...inherited } = process.env;
  const result = spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...inherited, ...env }, timeout: 600_000 });
  assert.equal(result.status, 0, `npm ${args.join(' ')} failed in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

describe('generated projects install, build and pass their own tests', () => {
  for (const scenario of SCENARIOS) {
    test(scenario.name, { timeout: 900_000 }, () => {
      // init runs `npm install` itself here (no --skip-install), against the packed tarball.
      const dir = scaffoldScenario(scenario, { env: { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` } });
      // The generated Makefile's manifests target: the installed package's own generator writes the CRDs and role.
      const make = spawnSync('make', ['manifests'], { cwd: dir, encoding: 'utf8' });
      assert.equal(make.status, 0, `make manifests failed:\n${make.stdout}\n${make.stderr}`);
      for (const crd of scenario.crds) assert.ok(existsSync(join(dir, 'config/crd/bases', `${crd.group}_${crd.plural}.yaml`)), `${crd.plural} CRD`);
      npm(['run', 'build'], dir);
      npm(['run', 'lint'], dir);
      const output = npm(['test'], dir);
      const count = (label: string): number => Number(new RegExp(`^[ℹ#] ${label} (\\d+)$`, 'm').exec(output)?.[1] ?? NaN);
      const controllers = scenario.crds.length;
      assert.equal(count('tests'), controllers, output);
      assert.equal(count('fail'), 0, output);
      if (process.env.KUBEBUILDER_ASSETS) {
        assert.equal(count('pass'), controllers, output);
      } else {
        assert.equal(count('skipped'), controllers, output);
        assert.match(output, /KUBEBUILDER_ASSETS is not set: run `make setup-envtest`/);
      }
    });
  }
});

/**
 * What the commands print on success: one summary line for `generate
 * manifests` and `edit`, "Next:" hints that run in a project (`npx
 * ts-operator-sdk`, which is not on PATH), and, after `init --skip-install`,
 * what to run before the Makefile can find the CLI.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliOk, tempProjectDir } from '../scaffold/harness.js';

test('init --skip-install says to run npm install, and the hints use npx', () => {
  const dir = tempProjectDir();
  const { stdout } = runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  assert.equal(
    stdout,
    'Next: install the dependencies (ts-operator-sdk among them) with:\n$ npm install\nthen define a resource with:\n$ npx ts-operator-sdk create api --group <group> --version <version> --kind <Kind>\n',
  );
});

test('the generated project depends on ts-operator-sdk at run time (dependencies, not devDependencies)', () => {
  const dir = tempProjectDir();
  // init vendors a file: tarball, so it has to exist; its bytes do not matter here.
  const tarball = join(tempProjectDir(), 'ts-operator-sdk-0.1.0.tgz');
  writeFileSync(tarball, 'not really gzip');
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir, {
    env: { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` },
  });
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  assert.equal(pkg.dependencies['ts-operator-sdk'], 'file:vendor/ts-operator-sdk-0.1.0.tgz');
  assert.equal(pkg.devDependencies['ts-operator-sdk'], undefined);
});

test('before npm install, a Makefile target that needs the CLI stops with one line naming npm install', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  const make = spawnSync('make', ['manifests'], { cwd: dir, encoding: 'utf8' });
  assert.equal(make.status, 2);
  assert.equal(make.stdout, '');
  assert.match(
    make.stderr,
    /^Makefile:\d+: \*\*\* ts-operator-sdk is not installed in this project \(node_modules\/\.bin\/ts-operator-sdk is missing\): run `npm install` first\. {2}Stop\.\n$/,
  );
  // Targets that do not need the CLI still work.
  assert.equal(spawnSync('make', ['help'], { cwd: dir, encoding: 'utf8' }).status, 0);
});

test('generate manifests and edit print one summary line', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir);
  assert.equal(runCliOk(['generate', 'manifests'], dir).stdout, 'wrote 1 CRD, config/rbac/role.yaml\n');
  assert.equal(
    runCliOk(['generate', 'manifests'], dir).stdout,
    'manifests up to date (1 CRD, config/rbac/role.yaml, config/crd/kustomization.yaml)\n',
  );
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Redis'], dir);
  assert.equal(runCliOk(['generate', 'manifests'], dir).stdout, 'wrote 1 CRD, config/rbac/role.yaml\n');

  assert.equal(
    runCliOk(['edit', '--multigroup'], dir).stdout,
    'switched to the multigroup layout: moved 13 files, updated PROJECT\n',
  );
  assert.equal(
    runCliOk(['edit', '--multigroup'], dir).stdout,
    'the project already has the multigroup layout: nothing changed\n',
  );
  // --dry-run lists the changes instead of the summary.
  assert.match(runCliOk(['edit', '--multigroup=false', '--dry-run'], dir).stdout, /^(UPDATE|CREATE|DELETE) /);
});

/**
 * `init` without --skip-install runs `npm install`. When that fails, the
 * scaffold stays written and the error says what failed and how to retry.
 * Both failures below are real: no npm on PATH, and npm itself failing on a
 * dependency that cannot be resolved.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempProjectDir } from '../scaffold/harness.js';

const errorLines = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('Error:'));

test('init reports a missing npm in one line and keeps the scaffold', () => {
  const dir = tempProjectDir();
  const emptyPath = mkdtempSync(join(tmpdir(), 'no-npm-'));
  const result = runCli(['init', '--domain', 'example.com'], dir, { env: { PATH: emptyPath } });
  assert.equal(result.status, 1);
  assert.deepEqual(errorLines(result.stderr), [
    `Error: the project was scaffolded, but \`npm install\` failed (ENOENT). Fix the problem npm reported and run \`npm install\` in ${dir}.`,
  ]);
  assert.ok(existsSync(join(dir, 'PROJECT')) && existsSync(join(dir, 'package.json')));
});

test('init reports npm install failing with its exit code', () => {
  const dir = tempProjectDir();
  const notATarball = join(mkdtempSync(join(tmpdir(), 'not-a-tarball-')), 'ts-operator-sdk.tgz');
  writeFileSync(notATarball, 'not a gzip stream\n');
  const result = runCli(['init', '--domain', 'example.com'], dir, {
    // A readable file that is no tarball: init vendors it, and npm install is what fails.
    env: { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${notATarball}`, npm_config_offline: 'true' },
  });
  assert.equal(result.status, 1);
  const [line, ...rest] = errorLines(result.stderr);
  assert.equal(rest.length, 0);
  assert.match(
    line!,
    /^Error: the project was scaffolded, but `npm install` failed \(exit code \d+\)\. Fix the problem npm reported and run `npm install` in /,
  );
  assert.ok(existsSync(join(dir, 'PROJECT')));
});

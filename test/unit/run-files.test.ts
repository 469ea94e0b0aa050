/**
 * test/run-files.ts, which scripts/test.sh runs its lanes with: files start in
 * the order given (longest first), not sorted by path as `node --test` sorts
 * them; a failing test fails the run; every file gets its times line.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { childEnv, testDir } from '../support/child-env.js';

const RUN_FILES = fileURLToPath(new URL('../run-files.js', import.meta.url));

/** A test file that appends its name to `log` when its test runs, and fails if `fail`. */
function writeFile(dir: string, name: string, log: string, fail = false): string {
  const path = join(dir, `${name}.test.mjs`);
  writeFileSync(
    path,
    `import { appendFileSync } from 'node:fs';\nimport { test } from 'node:test';\n` +
      `test('${name}', () => { appendFileSync(${JSON.stringify(log)}, '${name}\\n');${fail ? " throw new Error('no');" : ''} });\n`,
  );
  return path;
}

function runFiles(dir: string, files: string[]): { status: number | null; stdout: string; times: string } {
  const times = join(dir, 'files.jsonl');
  const run = spawnSync(process.execPath, [RUN_FILES, '--concurrency', '1', '--times', times, '--', ...files], {
    cwd: dir,
    encoding: 'utf8',
    env: childEnv(),
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, times: readFileSync(times, 'utf8') };
}

test('files start in the order given, not sorted by path, and each gets its times line', (t) => {
  const dir = testDir(t, 'run-files');
  const log = join(dir, 'order.log');
  // Given reverse-alphabetically: node --test would start a first.
  const files = ['c', 'b', 'a'].map((name) => writeFile(dir, name, log));
  const run = runFiles(dir, files);
  assert.equal(run.status, 0, run.stdout);
  assert.equal(readFileSync(log, 'utf8'), 'c\nb\na\n');
  const lines = run.times
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { file: string; tests: number; wallMs: number });
  assert.deepEqual(
    lines.map(({ file, tests }) => ({ file, tests })).sort((x, y) => x.file.localeCompare(y.file)),
    [
      { file: files[2], tests: 1 },
      { file: files[1], tests: 1 },
      { file: files[0], tests: 1 },
    ],
  );
  assert.ok(lines.every((line) => line.wallMs > 0));
});

test('a failing test fails the run, after every file ran, and the spec report names it', (t) => {
  const dir = testDir(t, 'run-files');
  const log = join(dir, 'order.log');
  const run = runFiles(dir, [writeFile(dir, 'bad', log, true), writeFile(dir, 'good', log)]);
  assert.equal(run.status, 1, run.stdout);
  assert.equal(readFileSync(log, 'utf8'), 'bad\ngood\n');
  assert.match(run.stdout, /✖ bad/);
  assert.match(run.stdout, /ℹ fail 1/);
});

/**
 * The preload that keeps test results from being lost (test/child-report-guard.ts):
 * a test file that exits with code 0 halfway fails the run instead of
 * silently dropping its remaining tests.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../support/child-env.js';

const guard = fileURLToPath(new URL('../child-report-guard.js', import.meta.url));

test('a test file that exits with code 0 before its tests finished fails the run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'report-guard-'));
  try {
    const file = join(dir, 'exits-early.test.mjs');
    writeFileSync(
      file,
      "import { test } from 'node:test';\nfor (let i = 0; i < 4; i++) test(`t${i}`, () => { if (i === 1) process.exit(0); });\n",
    );
    // A runner of its own: with NODE_TEST_CONTEXT set (even empty), node --test believes it is a child and runs nothing.
    const env = childEnv();
    const run = (extra: string[]) =>
      spawnSync(process.execPath, ['--test', '--test-force-exit', ...extra, file], { encoding: 'utf8', env });
    const unguarded = run([]);
    assert.equal(
      unguarded.status,
      0,
      'without the guard the runner passes the file (the loss this preload exists for)',
    );
    const guarded = run(['--import', guard]);
    assert.notEqual(guarded.status, 0, guarded.stdout);
    assert.match(guarded.stdout + guarded.stderr, /exited with code 0 before its tests finished/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * The test-time log scripts/ci-time.sh reads: test/times-reporter.ts writes
 * one line per test file with its wall time (module loading included) and its
 * counts, and ci-time.sh sorts those lines, longest first. scripts/test.sh's
 * argument check is here too: a path it cannot run fails at once, naming the fix.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { childEnv, testDir } from '../support/child-env.js';

const REPORTER = fileURLToPath(new URL('../times-reporter.js', import.meta.url));
const CI_TIME = fileURLToPath(new URL('../../../scripts/ci-time.sh', import.meta.url));
const TEST_SH = fileURLToPath(new URL('../../../scripts/test.sh', import.meta.url));

test('one line per file with its wall time, load time included, and its counts; ci-time.sh sorts them', (t) => {
  const dir = testDir(t, 'times-reporter');
  // slow.test.mjs spends 600 ms loading, outside any test: only the wall time sees it.
  writeFileSync(
    join(dir, 'slow.test.mjs'),
    "import { test } from 'node:test';\nawait new Promise((r) => setTimeout(r, 600));\ntest('a', () => {});\ntest('b', () => {});\n",
  );
  writeFileSync(join(dir, 'quick.test.mjs'), "import { test } from 'node:test';\ntest('c', () => {});\n");
  const times = join(dir, 'times');
  mkdirSync(times);
  const run = spawnSync(
    process.execPath,
    [
      '--test',
      // Side by side, as npm test runs unit files: a file's summary may then come after its end.
      '--test-concurrency=2',
      `--test-reporter=${REPORTER}`,
      `--test-reporter-destination=${join(times, 'files.jsonl')}`,
      'quick.test.mjs',
      'slow.test.mjs',
    ],
    { cwd: dir, encoding: 'utf8', env: childEnv(), timeout: 30_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  const lines = readFileSync(join(times, 'files.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { file: string; wallMs: number; tests: number; failed: number })
    .sort((a, b) => a.file.localeCompare(b.file));
  assert.deepEqual(
    lines.map(({ file, tests, failed }) => ({ file, tests, failed })),
    [
      { file: join(dir, 'quick.test.mjs'), tests: 1, failed: 0 },
      { file: join(dir, 'slow.test.mjs'), tests: 2, failed: 0 },
    ],
  );
  assert.ok(lines[1]!.wallMs >= 600, `slow.test.mjs's wall time ${lines[1]!.wallMs} ms misses its loading`);

  writeFileSync(join(times, 'steps.tsv'), 'build\t20000\ntests\t3000\n');
  const report = spawnSync('bash', [CI_TIME, times], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(report.status, 0, report.stderr);
  // Longest first by the wall times measured above: on a loaded machine quick.test.mjs's own start can
  // outlast slow.test.mjs's 600 ms (1.5 s against 1.4 s once, at load 14), so the order is not fixed.
  const byWall = [...lines].sort((a, b) => b.wallMs - a.wallMs).map((line) => line.file.slice(dir.length + 1));
  const order = ['build', 'tests', ...byWall, 'total: 2 files, 3 tests'].map((text) => report.stdout.indexOf(text));
  assert.ok(
    order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)),
    `not sorted as expected:\n${report.stdout}`,
  );
});

test('ci-time.sh without a run to read says what to run, and fails', (t) => {
  const report = spawnSync('bash', [CI_TIME, testDir(t, 'times-reporter')], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(report.status, 1);
  assert.match(report.stderr, /^ci-time: no times in .*: run npm test \(or \.ci\/run\) first/);
});

test('scripts/test.sh refuses a path that is no test file nor test directory before building anything', () => {
  const run = spawnSync('bash', [TEST_SH, 'src/main.ts'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 2);
  assert.equal(
    run.stderr,
    'test.sh: src/main.ts is not a test file or one of test/unit, test/e2e, test/scaffold, test/cluster; give e.g. test/unit/plurals.test.ts\n',
  );
});

/**
 * scripts/with-run-tmpdir.sh, which `npm test` runs under: the command gets a
 * TMPDIR of its own, with /tmp's mode, that is gone when the command ends
 * (pass, fail or interrupted), and the command's exit status comes through.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../e2e/eventually.js';

const SCRIPT = fileURLToPath(new URL('../../../scripts/with-run-tmpdir.sh', import.meta.url));
/** Prints the TMPDIR it was given and its mode, and leaves a file and a directory in it. */
const WRITES_FILES = 'echo "$TMPDIR"; stat -c %a "$TMPDIR"; echo data > "$TMPDIR/file"; mkdir "$TMPDIR/project"';

/** A directory to be the wrapper's TMPDIR parent, removed after the test. */
function parentDir(t: TestContext): string {
  const parent = mkdtempSync(join(tmpdir(), 'run-tmpdir-'));
  t.after(() => rmSync(parent, { recursive: true, force: true }));
  return parent;
}

function run(
  parent: string,
  command: string,
  env: Record<string, string> = {},
): { status: number | null; dir: string; mode: string; stderr: string } {
  const result = spawnSync('bash', [SCRIPT, 'bash', '-c', command], {
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: parent, ...env },
    timeout: 30_000,
  });
  const [dir = '', mode = ''] = result.stdout.trim().split('\n');
  return { status: result.status, dir, mode, stderr: result.stderr };
}

describe('scripts/with-run-tmpdir.sh', () => {
  test("a passing command gets its own TMPDIR with /tmp's mode, removed afterwards", (t) => {
    const parent = parentDir(t);
    const { status, dir, mode } = run(parent, WRITES_FILES);
    assert.equal(status, 0);
    assert.ok(dir.startsWith(join(parent, 'ts-operator-sdk-test-')), `TMPDIR was ${dir}`);
    assert.equal(mode, '1777', 'a process run as nobody must be able to use it, as it can use /tmp');
    assert.equal(existsSync(dir), false, 'the directory is removed');
    assert.deepEqual(readdirSync(parent), []);
  });

  test("a failing command's exit status comes through, and its TMPDIR is removed too", (t) => {
    const parent = parentDir(t);
    const { status, dir } = run(parent, `${WRITES_FILES}; exit 3`);
    assert.equal(status, 3);
    assert.equal(existsSync(dir), false);
    assert.deepEqual(readdirSync(parent), []);
  });

  test('KEEP_TEST_TMPDIR=1 keeps the directory and says where it is', (t) => {
    const parent = parentDir(t);
    const { status, dir, stderr } = run(parent, WRITES_FILES, { KEEP_TEST_TMPDIR: '1' });
    assert.equal(status, 0);
    assert.equal(existsSync(join(dir, 'project')), true);
    assert.equal(stderr.trim(), `test run's temporary files kept in ${dir}`);
  });

  test('an interrupted run (SIGTERM) removes its TMPDIR and exits 143', async (t) => {
    const parent = parentDir(t);
    // The command writes its files, then waits; `wait` lets bash take the signal at once.
    const child = spawn('bash', [SCRIPT, 'bash', '-c', `${WRITES_FILES}; sleep 30 & wait`], {
      env: { ...process.env, TMPDIR: parent },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const dir = await eventually('the command starts and writes its files', () => {
      const printed = stdout.split('\n')[0];
      return printed && existsSync(join(printed, 'project')) ? printed : undefined;
    });
    // As a terminal's Ctrl-C or a CI runner's cancel does: the signal reaches the whole process group.
    process.kill(-child.pid!, 'SIGTERM');
    const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    assert.equal(status, 143);
    assert.equal(existsSync(dir), false, "the interrupted run's directory is removed");
  });
});

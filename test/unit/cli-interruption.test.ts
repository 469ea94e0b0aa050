/**
 * Signals around an uninterruptible section, in a child process (a signal
 * here would stop the test runner): deferred inside, re-raised outside, and a
 * third one inside gives up waiting.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../src/scaffold/interruption.js', import.meta.url));

/** Runs `body` as an ES module with `begin` and `exitFor` in scope; prints what it did on stdout. */
function runScript(body: string): {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
} {
  const script = `import { beginUninterruptible as begin, exitForInterruption as exitFor } from ${JSON.stringify(MODULE)};\n${body}`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

test('a signal inside a section is held until the section ends, then the process exits 128 + its number', () => {
  const result = runScript(`
    const section = begin();
    process.kill(process.pid, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    console.log('still running, signal ' + section.signal);
    const signal = section.end();
    if (signal) exitFor(signal, 'test outcome');
    console.log('not reached');
  `);
  assert.equal(result.stdout, 'still running, signal SIGTERM\n');
  assert.equal(result.stderr, 'Interrupted by SIGTERM: test outcome.\n');
  assert.equal(result.status, 143);
});

test('after a section has ended, a signal kills the process as if no listener had been installed', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const result = runScript(`
      begin().end();
      process.kill(process.pid, '${signal}');
      await new Promise((resolve) => setTimeout(resolve, 2000));
      console.log('survived');
    `);
    assert.equal(result.signal, signal, `died by ${signal}: ${result.stdout}${result.stderr}`);
    assert.equal(result.stdout, '');
  }
});

test('a third signal inside a section stops the process at once, non-zero', () => {
  const result = runScript(`
    const section = begin();
    for (let i = 0; i < 3; i++) {
      process.kill(process.pid, 'SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log('not reached');
  `);
  assert.equal(result.status, 130);
  assert.equal(result.stdout, '');
  assert.match(
    result.stderr,
    /^Interrupted by SIGINT: stopped in the middle of writing the project files; the next ts-operator-sdk command run in this directory will complete or undo the write\.\n$/,
  );
});

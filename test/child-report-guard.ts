/**
 * Preloaded into every test file's process (`node --test --import`), so that
 * no test result is lost on the way to the runner:
 *
 * - The runner's child writes its results to stdout, a pipe. Node writes to
 *   a full pipe asynchronously, and `--test-force-exit` ends the child as soon
 *   as its tests are done, dropping results still queued: a file whose tests
 *   block the event loop (spawnSync) lost its last 2 to 50 results in about
 *   half the runs, reported as fewer tests with `fail 0` (nodejs/node#64833).
 *   A blocking stdout writes every result before the next line of the test runs.
 * - A test file that ends with exit code 0 before its tests finished (a stray
 *   process.exit(0)) would likewise drop the rest silently; it fails instead.
 */
import { after } from 'node:test';

if (process.env.NODE_TEST_CONTEXT) {
  (process.stdout as unknown as { _handle?: { setBlocking?(blocking: boolean): void } })._handle?.setBlocking?.(true);
  let finished = false;
  after(() => {
    finished = true;
  });
  process.on('exit', (code) => {
    if (code !== 0 || finished) return;
    process.stderr.write(
      'this test file exited with code 0 before its tests finished: the tests after the last one reported never ran\n',
    );
    process.exitCode = 1;
  });
}

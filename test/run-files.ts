/**
 * Runs test files as `node --test --test-force-exit` does (each file in its
 * own process, `concurrency` at a time, the spec report on stdout, exit code 1
 * if a test failed), but starts them in the order given: `node --test` sorts
 * its file arguments by path, and scripts/test.sh passes the longest files
 * first so that none of them starts last and runs alone while the other
 * slots idle. Its times-reporter line per file goes to `--times`.
 *
 *   node dist/test/run-files.js --concurrency 2 --times FILE -- FILE...
 */
import { createWriteStream } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import timesReporter from './times-reporter.js';

const { values, positionals } = parseArgs({
  options: { concurrency: { type: 'string', default: '2' }, times: { type: 'string' } },
  allowPositionals: true,
});
const concurrency = Number(values.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1 || !values.times || positionals.length === 0) {
  process.stderr.write('usage: node dist/test/run-files.js --concurrency N --times FILE -- FILE...\n');
  process.exit(2);
}

const stream = run({
  files: positionals,
  concurrency,
  // --test-force-exit: a file whose tests have all finished ends even if a handle keeps its event loop alive.
  forceExit: true,
  // What `node --test --import` gives every file's process: see child-report-guard.ts.
  execArgv: ['--import', fileURLToPath(new URL('./child-report-guard.js', import.meta.url))],
});
// The summary of the whole run (and of each file) says whether everything passed, as the CLI reads it.
stream.on('test:summary', (data: { success: boolean }) => {
  if (!data.success) process.exitCode = 1;
});
// One stream of events, two reporters: the spec report for humans and the times for scripts/ci-time.sh.
const forTimes = new PassThrough({ objectMode: true });
stream.pipe(forTimes);
await Promise.all([
  pipeline(stream, new spec(), process.stdout),
  pipeline(Readable.from(timesReporter(forTimes)), createWriteStream(values.times)),
]);

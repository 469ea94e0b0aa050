/**
 * The runtime's JSON logger: pino's calling convention and line format, an
 * `err` field that keeps the stack and cause chain, and no log call that can
 * throw at the code that made it. (Delivery to stderr: log-flush.test.ts.)
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/runtime/index.js';
import { type LogLevel } from '../../src/runtime/log/index.js';

function capture(level?: LogLevel) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      callback();
    },
  });
  return { log: createLogger({ level, destination }), lines };
}

test("lines carry level, time, bound fields, the call's fields and msg", () => {
  const { log, lines } = capture();
  log.child({ controller: 'memcached' }).child({ name: 'm0' }).info({ replicas: 3 }, 'scaled to %d', 3);
  log.info('plain');
  log.warn({ only: 'fields' });
  assert.deepEqual(Object.keys(lines[0]!), ['level', 'time', 'controller', 'name', 'replicas', 'msg']);
  assert.equal(lines[0]!.msg, 'scaled to 3');
  assert.equal(lines[0]!.level, 'info');
  assert.ok(!Number.isNaN(Date.parse(lines[0]!.time as string)));
  assert.equal(lines[1]!.msg, 'plain');
  assert.equal('msg' in lines[2]!, false);
});

test('levels filter, and can be changed at run time', () => {
  const { log, lines } = capture('warn');
  log.info('dropped');
  log.error('kept');
  assert.equal(log.isLevelEnabled('info'), false);
  log.level = 'debug';
  log.debug('now kept');
  assert.deepEqual(
    lines.map((line) => line.msg),
    ['kept', 'now kept'],
  );
  assert.throws(() => (log.level = 'verbose' as LogLevel), /unknown log level "verbose": use one of trace/);
  const silent = capture('silent');
  silent.log.fatal('nothing');
  assert.equal(silent.lines.length, 0);
});

test('an error keeps its type, stack, cause chain and own fields; an Error alone is its own message', () => {
  const { log, lines } = capture();
  const inner = Object.assign(new Error('the server is unhappy'), { code: 503 });
  log.error({ err: new TypeError('update Deployment', { cause: inner }) }, 'Reconciler error');
  log.error(new AggregateError([new Error('a'), new Error('b')], 'two failed'));
  const err = lines[0]!.err as Record<string, unknown>;
  assert.equal(err.type, 'TypeError');
  assert.equal(err.message, 'update Deployment: the server is unhappy');
  assert.match(err.stack as string, /^TypeError: update Deployment\n\s+at /);
  assert.match(err.stack as string, /\ncaused by: Error: the server is unhappy\n/);
  assert.equal(lines[1]!.msg, 'two failed');
  assert.deepEqual(
    ((lines[1]!.err as Record<string, unknown>).aggregateErrors as Array<{ message: string }>).map((e) => e.message),
    ['a', 'b'],
  );
  const looped = new Error('loop');
  (looped as { cause?: unknown }).cause = new Error('back', { cause: looped });
  log.error({ err: looped }, 'a cause loop ends');
  assert.equal((lines[2]!.err as Record<string, unknown>).message, 'loop: back');
});

test('a circular or BigInt field is written, not thrown at the caller', () => {
  const { log, lines } = capture();
  const circular: Record<string, unknown> = { name: 'x' };
  circular.self = circular;
  log.info({ circular, big: 10n }, 'odd fields');
  assert.deepEqual(lines[0]!.circular, { name: 'x', self: '[Circular]' });
  assert.equal(lines[0]!.big, '10');
});

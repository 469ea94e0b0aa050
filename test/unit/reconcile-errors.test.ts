/**
 * How the controller treats what a reconciler throws: terminal errors (also
 * wrapped), bugs counted as panics, and error logs that carry the stack.
 * The controller runs with no watch sources and keys added by hand: this is
 * the controller's own logic, no API server is involved.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, type Reconciler } from '../../src/runtime/controller/controller.js';
import { ApiConnectionError, TerminalError, isReconcilePanic, isTerminalError } from '../../src/runtime/api/errors.js';
import { createLogger } from '../../src/runtime/log/log.js';
import { ManagerMetrics } from '../../src/runtime/metrics/metrics.js';
import { capturingLogger } from '../e2e/log-capture.js';

/** Waits (generously: the machine may be busy) until `check` holds. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function counter(
  metrics: ManagerMetrics,
  name: 'reconcilePanics' | 'terminalReconcileErrors' | 'reconcileErrors',
  controller: string,
): Promise<number> {
  const { values } = await metrics[name].get();
  return values.find((value) => value.labels.controller === controller)?.value ?? 0;
}

/** Runs `reconciler` for one key until `settled` says so, then stops the controller. */
async function runOnce(name: string, reconcile: Reconciler['reconcile'], settled: (calls: number) => boolean) {
  const metrics = new ManagerMetrics();
  const { logger, lines } = capturingLogger();
  let calls = 0;
  const controller = new Controller(
    name,
    {
      reconcile: async (ctx, req) => {
        calls++;
        return reconcile(ctx, req);
      },
    },
    undefined,
    logger,
    metrics,
  );
  const abort = new AbortController();
  await controller.start(abort.signal, 1000);
  controller.queue.add('default/widget');
  await until(() => settled(calls), `${name} to settle`);
  // Time for a retry that must not happen (the first backoff is 5 ms).
  await sleep(300);
  await controller.stop(1000);
  return { metrics, lines, calls };
}

describe('isTerminalError (errors.Is for TerminalError)', () => {
  test('finds a TerminalError itself, in a cause chain of any depth, and inside an AggregateError', () => {
    const terminal = new TerminalError('bad spec');
    assert.equal(isTerminalError(terminal), true);
    assert.equal(
      isTerminalError(new Error('a', { cause: new Error('b', { cause: new Error('c', { cause: terminal }) }) })),
      true,
    );
    assert.equal(
      isTerminalError(new AggregateError([new Error('x'), new Error('y', { cause: terminal })], 'joined')),
      true,
    );
  });

  test('is false for plain errors, non-errors and cycles without a TerminalError', () => {
    const looped = new Error('loop');
    (looped as { cause?: unknown }).cause = new Error('back', { cause: looped });
    assert.equal(isTerminalError(looped), false);
    assert.equal(isTerminalError(new Error('plain', { cause: 'a string' })), false);
    assert.equal(isTerminalError('TerminalError'), false);
    assert.equal(isTerminalError(undefined), false);
  });
});

describe('isReconcilePanic', () => {
  test('bugs are panics: TypeError, ReferenceError, RangeError and non-Error throws', () => {
    let typeError: unknown;
    try {
      // eslint-disable-next-line @typescript-eslint/no-unused-expressions -- the read is the bug: it throws a TypeError
      (undefined as unknown as { spec: { size: number } }).spec.size;
    } catch (err) {
      typeError = err;
    }
    assert.equal(isReconcilePanic(typeError), true);
    assert.equal(isReconcilePanic(new ReferenceError('x is not defined')), true);
    assert.equal(isReconcilePanic(new RangeError('Maximum call stack size exceeded')), true);
    assert.equal(isReconcilePanic('oops'), true);
  });

  test('failures are not: plain errors, parse errors, a wrapped bug, a connection error', () => {
    assert.equal(isReconcilePanic(new Error('conflict')), false);
    assert.equal(isReconcilePanic(new SyntaxError('Unexpected token')), false);
    assert.equal(isReconcilePanic(new Error('handled', { cause: new TypeError('x') })), false);
    assert.equal(isReconcilePanic(new ApiConnectionError('GET', '/api', new TypeError('fetch failed'))), false);
  });
});

describe('the controller and what a reconciler throws', () => {
  test('a TerminalError wrapped as a cause is not retried and is counted as terminal', async () => {
    const { metrics, lines, calls } = await runOnce(
      'wrapped-terminal',
      async () => {
        throw new Error('reconcile widget', {
          cause: new Error('validate spec', { cause: new TerminalError('spec.size must be positive') }),
        });
      },
      (n) => n >= 1,
    );
    assert.equal(calls, 1, 'a wrapped TerminalError must not be requeued');
    assert.equal(await counter(metrics, 'terminalReconcileErrors', 'wrapped-terminal'), 1);
    assert.equal(await counter(metrics, 'reconcilePanics', 'wrapped-terminal'), 0);
    const line = lines.find((l) => l.msg === 'Reconciler error (terminal, not retried)');
    assert.ok(line, 'the terminal error is logged');
  });

  test('a plain error is retried and is not a panic', async () => {
    const { metrics, calls } = await runOnce(
      'plain-error',
      async () => {
        throw new Error('conflict, try again');
      },
      (n) => n >= 3,
    );
    assert.ok(calls >= 3);
    assert.equal(await counter(metrics, 'terminalReconcileErrors', 'plain-error'), 0);
    assert.equal(await counter(metrics, 'reconcilePanics', 'plain-error'), 0);
  });

  test('a TypeError from a reconciler bug counts as a panic, is retried, and its log line carries the stack', async () => {
    async function reconcileWidgetWithBug(): Promise<void> {
      const widget = undefined as unknown as { spec: { size: number } };
      void widget.spec.size;
    }
    const { metrics, lines } = await runOnce('type-error', reconcileWidgetWithBug, (n) => n >= 2);
    assert.ok(
      (await counter(metrics, 'reconcilePanics', 'type-error')) >= 2,
      'each TypeError counts in controller_runtime_reconcile_panics_total',
    );
    const line = lines.find((l) => l.msg === 'Observed a panic in reconciler');
    assert.ok(line, `a panic line is logged; got ${JSON.stringify(lines.map((l) => l.msg))}`);
    const err = line.err as { type?: string; message?: string; stack?: string };
    assert.equal(err.type, 'TypeError');
    assert.match(err.stack ?? '', /reconcileWidgetWithBug/, 'the stack names the reconciler function');
    assert.match(err.stack ?? '', /reconcile-errors\.test\.js/, 'the stack names the reconciler file');
    assert.equal(line.panic, true);
    assert.equal(line.name, 'widget');
  });

  test('an ordinary reconcile error is logged with its stack and cause', async () => {
    async function reconcileWidgetFailing(): Promise<void> {
      throw new Error('update Deployment', { cause: new Error('the server is unhappy') });
    }
    const { lines } = await runOnce('stack-error', reconcileWidgetFailing, (n) => n >= 1);
    const line = lines.find((l) => l.msg === 'Reconciler error');
    assert.ok(line);
    const err = line.err as { message?: string; stack?: string };
    assert.match(err.message ?? '', /update Deployment: the server is unhappy/);
    assert.match(err.stack ?? '', /reconcileWidgetFailing/);
    assert.match(err.stack ?? '', /caused by: Error: the server is unhappy/);
  });
});

test("development logs print an error's message on the line and its stack below it", () => {
  let out = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      out += chunk.toString('utf8');
      callback();
    },
  });
  function failingStep(): Error {
    return new Error('update Deployment');
  }
  createLogger({ development: true, destination }).error({ err: failingStep(), name: 'widget' }, 'Reconciler error');
  const [line, ...stack] = out.trimEnd().split('\n');
  assert.match(line!, /\tERROR\tReconciler error\terr=update Deployment name=widget$/);
  assert.equal(stack[0], 'Error: update Deployment');
  assert.match(stack[1]!, /at failingStep .*reconcile-errors\.test\.js/);
});

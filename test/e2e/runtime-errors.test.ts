/**
 * What a reconciler's errors do in a running manager on the real API server:
 * a wrapped TerminalError is not retried, a TypeError is counted as a panic,
 * log lines carry the stack; and a throttled write (429 + Retry-After from
 * the fault proxy) is retried by the transport, so the reconcile succeeds
 * and the retry shows in rest_client_request_retries_total.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { Client, Manager, newControllerManagedBy, type Reconciler } from '../../src/runtime/index.js';
import { ConfigMap, TerminalError } from '../../src/runtime/api/index.js';
import { labelSelectorPredicate } from '../../src/runtime/predicate/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { capturingLogger } from './log-capture.js';

describe('reconcile errors and transport retries in a running manager', () => {
  let env: Environment;
  let proxy: FaultProxy;
  let api: Client;
  let mgr: Manager;
  let running: Promise<void>;
  let lines: Array<Record<string, unknown>>;
  const calls = new Map<string, number>();

  /** Each object's name picks what the reconciler does with it. */
  async function reconcileByName(client: Client, name: string): Promise<void> {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    if (name === 'terminal') {
      throw new Error('reconcile terminal', {
        cause: new Error('validate', { cause: new TerminalError('spec is invalid') }),
      });
    }
    if (name === 'buggy') {
      const missing = undefined as unknown as V1ConfigMap;
      void missing.data!.key;
    }
    if (name === 'throttled') {
      await client.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'throttled-child', namespace: 'default' },
        data: { from: 'reconcile' },
      });
    }
  }

  before(async () => {
    env = await startControlPlane();
    proxy = await startFaultProxy(env);
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    const capture = capturingLogger();
    lines = capture.lines;
    mgr = new Manager({
      kubeConfig: proxy.kubeConfig,
      metrics: { bindAddress: '127.0.0.1:0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: capture.logger,
    });
    const client = mgr.getClient();
    const reconciler: Reconciler = { reconcile: async (_ctx, req) => reconcileByName(client, req.name) };
    newControllerManagedBy(mgr)
      .for(ConfigMap)
      .withEventFilter(labelSelectorPredicate('test=errors'))
      .named('errors')
      .complete(reconciler);
    running = mgr.start();
    await mgr.elected();
  });

  after(async () => {
    mgr?.stop();
    await running?.catch(() => undefined);
    await proxy?.stop();
    await env?.stop();
  });

  const create = (name: string) =>
    api.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default', labels: { test: 'errors' } },
    });
  const metrics = async () => (await fetch(`http://${mgr.getMetricsAddress()}/metrics`)).text();

  it('does not retry a TerminalError wrapped two causes deep', async () => {
    await create('terminal');
    await eventually('the terminal reconcile', () => (calls.get('terminal') ?? 0) >= 1);
    await sleep(1000);
    assert.equal(calls.get('terminal'), 1, 'reconciled once, never requeued');
    assert.match(await metrics(), /controller_runtime_terminal_reconcile_errors_total\{controller="errors"\} 1/);
    const line = lines.find((l) => l.msg === 'Reconciler error (terminal, not retried)' && l.name === 'terminal');
    assert.ok(line);
    assert.match((line.err as { message: string }).message, /reconcile terminal: validate: spec is invalid/);
  });

  it("counts a TypeError as a panic and logs it with the reconciler's stack", async () => {
    await create('buggy');
    await eventually('two buggy reconciles', () => (calls.get('buggy') ?? 0) >= 2);
    const text = await metrics();
    const panics = Number(/controller_runtime_reconcile_panics_total\{controller="errors"\} (\d+)/.exec(text)?.[1]);
    assert.ok(panics >= 2, `panics counted: ${panics}`);
    const line = lines.find((l) => l.msg === 'Observed a panic in reconciler' && l.name === 'buggy');
    assert.ok(line, 'the panic is logged');
    const err = line.err as { type: string; stack: string };
    assert.equal(err.type, 'TypeError');
    assert.match(err.stack, /reconcileByName/, 'the stack names the reconciler function');
    assert.match(err.stack, /runtime-errors\.test\.js/, 'the stack names the reconciler file');
  });

  it('retries a write throttled with 429 + Retry-After inside a reconcile, so the reconcile succeeds', async () => {
    const match = { method: 'POST', path: /\/namespaces\/default\/configmaps$/ };
    const remove = proxy.addRule({
      match,
      action: { type: 'status', status: 429, headers: { 'Retry-After': '1' } },
      times: 1,
    });
    try {
      await create('throttled');
      const child = await eventually('the child ConfigMap', () =>
        api.get(ConfigMap, { namespace: 'default', name: 'throttled-child' }).catch(() => undefined),
      );
      assert.equal(child.data?.from, 'reconcile');
    } finally {
      remove();
    }
    assert.equal(calls.get('throttled'), 1, 'the throttling never reached the reconciler as an error');
    assert.equal(proxy.count(match), 2);
    assert.match(
      await metrics(),
      /rest_client_request_retries_total\{code="201",verb="POST",host="127\.0\.0\.1:\d+"\} 1/,
    );
  });
});

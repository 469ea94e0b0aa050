/**
 * The runtime's own Prometheus registry renders the text exposition format
 * as prom-client does (the names and lines dashboards scrape), and still
 * renders a metric a user made with prom-client itself.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as promClient from 'prom-client';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from '../../src/runtime/metrics/prometheus.js';

test('counters, gauges and histograms render in the text format, labels in the order given, buckets cumulative', async () => {
  const registry = new Registry();
  const total = new Counter({
    name: 'demo_total',
    help: 'Demo counter.\nSecond line',
    labelNames: ['controller', 'result'] as const,
    registers: [registry],
  });
  const depth = new Gauge({
    name: 'demo_depth',
    help: 'Demo gauge.',
    labelNames: ['name'] as const,
    registers: [registry],
  });
  new Gauge({ name: 'demo_plain', help: 'Unlabelled.', registers: [registry] });
  const time = new Histogram({
    name: 'demo_seconds',
    help: 'Demo histogram.',
    labelNames: ['controller'] as const,
    buckets: [0.1, 1],
    registers: [registry],
  });
  total.inc({ controller: 'a"b', result: 'success' });
  total.inc({ controller: 'a"b', result: 'success' }, 2);
  total.inc({ controller: 'x', result: 'error' }, 0);
  depth.set({ name: 'q' }, 5);
  depth.dec({ name: 'q' });
  time.observe({ controller: 'c' }, 0.05);
  time.observe({ controller: 'c' }, 0.5);
  time.observe({ controller: 'c' }, 5);
  assert.equal(
    await registry.metrics(),
    [
      '# HELP demo_total Demo counter.\\nSecond line',
      '# TYPE demo_total counter',
      'demo_total{controller="a\\"b",result="success"} 3',
      'demo_total{controller="x",result="error"} 0',
      '# HELP demo_depth Demo gauge.',
      '# TYPE demo_depth gauge',
      'demo_depth{name="q"} 4',
      '# HELP demo_plain Unlabelled.',
      '# TYPE demo_plain gauge',
      'demo_plain 0',
      '# HELP demo_seconds Demo histogram.',
      '# TYPE demo_seconds histogram',
      'demo_seconds_bucket{controller="c",le="0.1"} 1',
      'demo_seconds_bucket{controller="c",le="1"} 2',
      'demo_seconds_bucket{controller="c",le="+Inf"} 3',
      'demo_seconds_sum{controller="c"} 5.55',
      'demo_seconds_count{controller="c"} 3',
      '',
    ].join('\n'),
  );
  assert.throws(() => total.inc({ controller: 'a', result: 'b' }, -1), /not possible to decrease a counter/);
  assert.throws(
    () => new Counter({ name: 'demo_total', help: 'again', registers: [registry] }),
    /already been registered/,
  );
});

test('the default process and Node.js series are there, and a prom-client metric registers and renders too', async () => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const custom = new promClient.Counter({
    name: 'my_operator_things_total',
    help: 'Things.',
    labelNames: ['kind'],
    registers: [registry as unknown as promClient.Registry],
  });
  custom.inc({ kind: 'widget' }, 7);
  const text = await registry.metrics();
  for (const series of [
    'process_cpu_seconds_total ',
    'process_resident_memory_bytes ',
    'process_start_time_seconds ',
    'nodejs_heap_size_used_bytes ',
    'my_operator_things_total{kind="widget"} 7',
  ]) {
    assert.ok(text.includes(series), `missing ${series}`);
  }
});

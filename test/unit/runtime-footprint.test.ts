/**
 * What an operator process loads just by importing the runtime. An ES import
 * of a Node built-in reads every export, lazy getters included: `node:http`'s
 * WebSocket getters load Node's bundled undici (+9 MiB RSS), and `node:util`'s
 * load worker_threads, the stream stack and more (+0.7 MiB). The runtime
 * reaches those two modules through process.getBuiltinModule instead; this
 * test catches an ES import that slips back in.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The root entry point and every subpath an operator may import (envtest is for tests, not the operator process). */
const runtimeEntryPoints = [
  'index.js',
  ...[
    'api',
    'builder',
    'cache',
    'client',
    'controller',
    'controllerutil',
    'handler',
    'healthz',
    'leaderelection',
    'log',
    'manager',
    'metrics',
    'pod',
    'predicate',
    'recorder',
    'source',
    'transport',
    'webhook',
    'workqueue',
  ].map((name) => `${name}/index.js`),
].map((path) => fileURLToPath(new URL(`../../src/runtime/${path}`, import.meta.url)));

/** Node's internal modules that only a lazy getter of node:http or node:util would load. */
const GETTER_ONLY_MODULES = [
  'NativeModule internal/deps/undici/undici',
  'NativeModule worker_threads',
  'NativeModule internal/util/parse_args/parse_args',
];

/**
 * Imports every runtime entry point in a child and reports Node's internal
 * modules loaded and every package module resolved (a resolve hook sees
 * static and dynamic imports alike).
 */
function importRuntime(): { builtins: Set<string>; resolved: string[] } {
  const imports = runtimeEntryPoints.map((path) => `await import(${JSON.stringify(path)});`).join(' ');
  const script = [
    `const resolved = [];`,
    `(await import('node:module')).registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); resolved.push(r.url); return r; } });`,
    imports,
    `process.stdout.write(JSON.stringify({ builtins: process.moduleLoadList, resolved }));`,
  ].join(' ');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { builtins: string[]; resolved: string[] };
  return { builtins: new Set(report.builtins), resolved: report.resolved };
}

test('importing the runtime loads neither undici nor worker_threads', () => {
  const { builtins } = importRuntime();
  assert.ok(builtins.has('NativeModule https'), 'the probe should see the runtime load node:https');
  assert.deepEqual(
    GETTER_ONLY_MODULES.filter((name) => builtins.has(name)),
    [],
  );
});

// client-node is an optional dependency that an operator image leaves out
// (test/unit/client-node-absent.test.ts runs a request without it); its
// types are used throughout, so a value import would slip in as easily as
// `import type` is dropped.
test('importing the runtime loads no @kubernetes/client-node', () => {
  const { resolved } = importRuntime();
  assert.ok(
    resolved.some((url) => url.endsWith('/runtime/transport/credentials.js')),
    'the probe should see the runtime resolve its modules',
  );
  assert.deepEqual(
    resolved.filter((url) => url.includes('/node_modules/@kubernetes/client-node/')),
    [],
  );
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HealthProbes, ping } from '../../src/runtime/healthz/healthz.js';
import { parseBindAddress, serveHttp } from '../../src/runtime/httpserver/server.js';

test('bind addresses parse like Go listen addresses; 0 disables', () => {
  assert.equal(parseBindAddress('0'), undefined);
  assert.equal(parseBindAddress(''), undefined);
  assert.deepEqual(parseBindAddress(':8081'), { host: undefined, port: 8081 });
  assert.deepEqual(parseBindAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseBindAddress('[::1]:9000'), { host: '::1', port: 9000 });
  assert.throws(() => parseBindAddress('8081'), /invalid bind address "8081"/);
});

test('readyz is 503 while a check fails and 200 once it passes', async () => {
  let synced = false;
  const probes = new HealthProbes();
  probes.addHealthzCheck('ping', ping);
  probes.addReadyzCheck('cache-sync', () => {
    if (!synced) throw new Error('caches have not synced yet');
  });
  const server = await serveHttp({ host: '127.0.0.1', port: 0 }, (req, res) => probes.handle(req, res));
  try {
    const ready = await fetch(`http://${server.address}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(await ready.text(), /\[-\]cache-sync failed: caches have not synced yet/);
    assert.equal((await fetch(`http://${server.address}/healthz`)).status, 200);
    synced = true;
    const after = await fetch(`http://${server.address}/readyz`);
    assert.equal(after.status, 200);
    assert.equal(await after.text(), 'ok');
    assert.equal((await fetch(`http://${server.address}/nope`)).status, 404);
  } finally {
    await server.close();
  }
});

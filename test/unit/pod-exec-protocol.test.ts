/**
 * The exec client against an API server that speaks only `v4.channel.k8s.io`
 * (those before 1.30, which cannot close a channel). A real 1.36 server always
 * picks v5, so this one case uses a stand-in: a WebSocket server on loopback
 * that plays the v4 side of the protocol. Everything else about exec runs on
 * the real API server and kubelet (test/e2e/pod-exec-errors.test.ts,
 * test/cluster/exec-logs.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { Client, loadKubeConfig } from '../../src/runtime/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';

const V4 = 'v4.channel.k8s.io';
let server: WebSocketServer;
let client: Client;
let dir: string;
/** What the stand-in server received: the upgrade's URL, the protocols offered, each frame. */
const seen: { url?: string; offered?: string[]; authorization?: string; frames: Buffer[] } = { frames: [] };

before(async () => {
  server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (protocols) => (protocols.has(V4) ? V4 : false),
  });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  server.on('connection', (socket: WebSocket, request) => {
    seen.url = request.url;
    seen.authorization = request.headers.authorization;
    seen.offered = String(request.headers['sec-websocket-protocol']).split(/,\s*/);
    // The server opens each channel with an empty frame, then answers once stdin has arrived.
    for (const channel of [1, 2, 3]) socket.send(Buffer.from([channel]));
    socket.on('message', (data: Buffer) => {
      seen.frames.push(data);
      if (data[0] !== 0) return;
      socket.send(Buffer.concat([Buffer.from([1]), data.subarray(1)]));
      socket.send(Buffer.concat([Buffer.from([2]), Buffer.from('warning\n')]));
      const status = {
        metadata: {},
        status: 'Failure',
        reason: 'NonZeroExitCode',
        message: 'command terminated with non-zero exit code',
        details: { causes: [{ reason: 'ExitCode', message: '7' }] },
      };
      socket.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))]));
      socket.close(1000);
    });
  });
  const port = (server.address() as { port: number }).port;
  dir = mkdtempSync(join(tmpdir(), 'pod-exec-protocol-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'stand-in', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'u', user: { token: 'secret-token' } }],
      contexts: [{ name: 'c', context: { cluster: 'stand-in', user: 'u' } }],
      'current-context': 'c',
    }),
  );
  client = new Client({ rest: new RestClient(loadKubeConfig(kubeconfig)) });
});

after(() => {
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('exec falls back to v4: the command, container and stdin go out; stdout, stderr and the exit code come back; no close frame', async () => {
  const result = await client.exec({ namespace: 'ns', name: 'db-0' }, 'postgres', ['psql', '-c', 'select 1'], {
    stdin: 'input',
  });
  assert.deepEqual(result, { stdout: 'input', stderr: 'warning\n', exitCode: 7 });
  assert.deepEqual(seen.offered, ['v5.channel.k8s.io', V4]);
  assert.equal(seen.authorization, 'Bearer secret-token', "the kubeconfig's credentials, as on every other call");
  const url = new URL(seen.url!, 'http://x');
  assert.equal(url.pathname, '/api/v1/namespaces/ns/pods/db-0/exec');
  assert.deepEqual(url.searchParams.getAll('command'), ['psql', '-c', 'select 1']);
  assert.equal(url.searchParams.get('container'), 'postgres');
  assert.equal(url.searchParams.get('stdin'), 'true');
  // v4 has no channel close: only the stdin frame was sent.
  assert.deepEqual(
    seen.frames.map((frame) => frame[0]),
    [0],
  );
});

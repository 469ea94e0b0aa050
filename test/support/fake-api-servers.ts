/**
 * Fakes, not mocks: servers that stand where a kubeconfig's API server should
 * be, for the failures a real kube-apiserver cannot produce (one that accepts
 * connections and never answers, one that resets them, one that is not a
 * Kubernetes API server at all). They run in a child process of their own
 * ({@link startFakeServers}): the bad-input tables run the CLI with spawnSync,
 * which blocks the test process's event loop, so servers living there could
 * not answer. Everything listens on 127.0.0.1 only.
 *
 * Run directly (`node fake-api-servers.js`), it prints one JSON line with the
 * ports, then serves until stdin closes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The kinds of fake server, by what they do. */
export const FAKE_SERVER_KINDS = {
  /** Accepts TCP connections and never sends a byte (a hung server, or a firewall that swallows packets after the handshake). */
  silent: 'accepts connections and never answers',
  /** Accepts and resets every connection at once. */
  reset: 'resets every connection',
  /** Nothing listens on its port. */
  refused: 'refuses connections',
  /** A web server: 404 with an HTML page for every path. */
  html404: 'answers 404 with an HTML page',
  /** A JSON API that is not Kubernetes: 200 `{"status":"ok"}` for every path. */
  jsonNoVersion: 'answers JSON without a Kubernetes version',
  /** Answers /version like Kubernetes but has no /api (404 JSON): a server that imitates only part of it. */
  versionNoApi: 'has /version but no /api',
  /** 200 with plain text for every path. */
  text: 'answers plain text',
  /** 401 with a Basic auth challenge and HTML, as a web server's login does. */
  basicAuth: 'asks for HTTP basic auth',
} as const;

export type FakeServerKind = keyof typeof FAKE_SERVER_KINDS;

/** The ports of the running fakes. */
export type FakePorts = Record<FakeServerKind, number>;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function httpFake(handler: (req: IncomingMessage, res: ServerResponse) => void): Server {
  return createHttpServer((req, res) => {
    req.resume();
    handler(req, res);
  });
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Starts every fake in this process and returns their ports. */
export async function serveFakes(): Promise<{ ports: FakePorts; close: () => void }> {
  const held: Socket[] = [];
  const silent = createNetServer((socket) => {
    held.push(socket);
    socket.on('error', () => undefined);
  });
  const reset = createNetServer((socket) => {
    socket.on('error', () => undefined);
    socket.resetAndDestroy();
  });
  // A port that was free a moment ago: nothing listens on it.
  const probe = createNetServer();
  const refused = await listen(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const servers: Record<Exclude<FakeServerKind, 'refused'>, Server> = {
    silent,
    reset,
    html404: httpFake((_req, res) => send(res, 404, 'text/html', '<html><body><h1>404 Not Found</h1></body></html>\n')),
    jsonNoVersion: httpFake((_req, res) => send(res, 200, 'application/json', '{"status":"ok"}\n')),
    versionNoApi: httpFake((req, res) => {
      if (req.url === '/version')
        send(res, 200, 'application/json', '{"major":"1","minor":"30","gitVersion":"v1.30.0"}\n');
      else send(res, 404, 'application/json', '{"error":"not found"}\n');
    }),
    text: httpFake((_req, res) => send(res, 200, 'text/plain', 'hello\n')),
    basicAuth: httpFake((_req, res) =>
      send(res, 401, 'text/html', '<html><body>401 Authorization Required</body></html>\n', {
        'www-authenticate': 'Basic realm="login"',
      }),
    ),
  };
  const ports = { refused } as FakePorts;
  for (const [kind, server] of Object.entries(servers)) ports[kind as FakeServerKind] = await listen(server);
  return {
    ports,
    close: () => {
      for (const socket of held) socket.destroy();
      for (const server of Object.values(servers)) server.close();
    },
  };
}

/** The fakes, running in a child process; `stop()` ends it. */
export interface FakeServers {
  ports: FakePorts;
  /** The server URL for a fake: https:// for the silent one (a TLS client hangs in the handshake), http:// otherwise. */
  url(kind: FakeServerKind, scheme?: 'http' | 'https'): string;
  /** A kubeconfig file (in a fresh temp dir) whose only cluster is `server`. */
  kubeconfig(server: string): string;
  stop(): void;
}

/** Starts the fakes in a child process and waits for their ports. */
export async function startFakeServers(): Promise<FakeServers> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolve(text.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`the fake servers exited (${code}) before listening`)));
  });
  const ports = JSON.parse(line) as FakePorts;
  const dir = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-fake-kubeconfig-'));
  let files = 0;
  return {
    ports,
    url: (kind, scheme = kind === 'silent' ? 'https' : 'http') => `${scheme}://127.0.0.1:${ports[kind]}`,
    kubeconfig: (server) => {
      const file = join(dir, `kubeconfig-${++files}`);
      writeFileSync(file, fakeKubeconfig(server));
      return file;
    },
    stop: () => {
      child.stdin.end();
      child.kill();
    },
  };
}

/** A kubeconfig with one context for `server`, a token user and no TLS verification (the fakes have no certificate). */
export function fakeKubeconfig(server: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: fake',
    '  cluster:',
    `    server: ${server}`,
    ...(server.startsWith('https:') ? ['    insecure-skip-tls-verify: true'] : []),
    'users:',
    '- name: fake',
    '  user:',
    '    token: not-a-real-token',
    'contexts:',
    '- name: fake',
    '  context:',
    '    cluster: fake',
    '    user: fake',
    'current-context: fake',
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ports, close } = await serveFakes();
  process.stdout.write(`${JSON.stringify(ports)}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    close();
    process.exit(0);
  });
}

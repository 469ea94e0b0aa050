import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import { createHttpServer } from '../node-builtins.js';

/**
 * Parses a Go-style bind address (`:8081`, `127.0.0.1:8080`, `[::1]:0`).
 * `"0"` and `""` mean disabled, as in controller-runtime.
 */
export function parseBindAddress(address: string | undefined): { host?: string; port: number } | undefined {
  if (address === undefined || address === '' || address === '0') return undefined;
  const match = address.match(/^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/);
  if (!match) throw new Error(`invalid bind address "${address}": use host:port, :port, or 0 to disable`);
  const host = match[1] ?? (match[2] || undefined);
  return { host, port: Number(match[3]) };
}

/** A started HTTP endpoint and how to stop it. */
export interface RunningServer {
  /** The bound address, e.g. `127.0.0.1:41234` (useful when the port was 0). */
  address: string;
  close(): Promise<void>;
}

/** A request handler of the servers below; a throw or rejection becomes a 500, never a crash. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Starts a small HTTP server; resolves once it listens. */
export async function serveHttp(
  address: { host?: string; port: number },
  handler: HttpHandler,
): Promise<RunningServer> {
  const server: Server = createHttpServer(guarded(handler));
  await listen(server, address);
  return {
    address: boundAddress(server),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A started HTTPS endpoint whose certificate can be replaced while it runs. */
export interface RunningHttpsServer extends RunningServer {
  /** New TLS handshakes present this pair; established connections keep theirs. */
  setCertificate(pair: { cert: Buffer | string; key: Buffer | string }): void;
}

/** How often a draining server closes connections that went idle after their last response. */
const DRAIN_POLL_MS = 50;
/** How long `close()` lets requests in flight finish before it cuts every connection (API servers time webhook calls out at 10–30 s). */
export const DRAIN_LIMIT_MS = 10_000;

/**
 * Starts an HTTPS server (TLS 1.2 or later, HTTP/1.1 only, like
 * controller-runtime's servers with HTTP/2 off); resolves once it listens.
 * A plain-HTTP client gets no answer: its bytes fail the TLS handshake and
 * the socket is closed. `close()` stops accepting, lets requests in flight
 * finish, and closes each keep-alive connection as it goes idle.
 */
export async function serveHttps(
  address: { host?: string; port: number },
  pair: { cert: Buffer | string; key: Buffer | string },
  handler: HttpHandler,
): Promise<RunningHttpsServer> {
  const server: HttpsServer = createHttpsServer(
    { cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' },
    guarded(handler),
  );
  // A client that is not speaking TLS is its own problem, not the server's: nothing to log.
  server.on('tlsClientError', () => undefined);
  // Raw sockets, including ones still in the TLS handshake, which the HTTP layer does not track yet.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await listen(server, address);
  return {
    address: boundAddress(server),
    setCertificate: (next) => server.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' }),
    close: () =>
      new Promise<void>((resolve) => {
        const drain = setInterval(() => server.closeIdleConnections(), DRAIN_POLL_MS);
        // A connection that never becomes an idle HTTP connection (a TLS handshake left half done, a request
        // that never ends) would hold close() forever and with it the manager's stop, as Go's Shutdown would
        // without a context deadline: after DRAIN_LIMIT_MS every socket still open is cut.
        const limit = setTimeout(() => {
          server.closeAllConnections();
          for (const socket of sockets) socket.destroy();
        }, DRAIN_LIMIT_MS);
        server.close(() => {
          clearInterval(drain);
          clearTimeout(limit);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/** The handler as a Node request listener: it returns nothing, and its failures end in a 500. */
function guarded(handler: HttpHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((err: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.statusCode = 500;
        res.end(String(err));
      });
  };
}

async function listen(server: Server | HttpsServer, address: { host?: string; port: number }): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
}

function boundAddress(server: Server | HttpsServer): string {
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return `${host}:${bound.port}`;
}

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Not an ES import: that would read node:http's WebSocket getters, which load Node's bundled undici (+9 MiB RSS). */
const { createServer } = process.getBuiltinModule('node:http');

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

/** Starts a small HTTP server; resolves once it listens. */
export async function serveHttp(address: { host?: string; port: number }, handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<RunningServer> {
  const server: Server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    address: `${host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

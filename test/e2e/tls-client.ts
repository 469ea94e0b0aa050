import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';

/** One HTTPS GET: status and body. `ca` verifies the server; without it the certificate is not checked. */
export function httpsGet(
  address: string,
  path: string,
  options: { token?: string; ca?: string; servername?: string } = {},
): Promise<{ status: number; body: string }> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host,
        port,
        path,
        method: 'GET',
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
        ...(options.ca
          ? { ca: options.ca, servername: options.servername ?? 'localhost' }
          : { rejectUnauthorized: false }),
        agent: false,
        timeout: 30_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.once('timeout', () => req.destroy(new Error('HTTPS request timed out')));
    req.once('error', reject);
    req.end();
  });
}

/** One plain-HTTP GET; rejects when the server does not answer HTTP. */
export function plainHttpGet(address: string, path: string): Promise<{ status: number; body: string }> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, path, method: 'GET', agent: false, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('timeout', () => req.destroy(new Error('plain HTTP request timed out')));
    req.once('error', reject);
    req.end();
  });
}

/** The certificate a new TLS connection to `address` is shown (no verification). */
export function presentedCertificate(address: string): Promise<PeerCertificate> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false, servername: 'localhost' }, () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      resolve(certificate);
    });
    socket.once('error', reject);
  });
}

/** `127.0.0.1:8443` or `[::1]:8443` into host and port. */
export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  return { host: address.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(address.slice(colon + 1)) };
}

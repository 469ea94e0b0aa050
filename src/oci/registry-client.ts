/**
 * A small client for the OCI distribution (Docker registry v2) API: enough
 * to pull an operator bundle image's files. It reads the manifest (picking
 * this platform's entry, or the first, from an index), downloads the layer
 * blobs, checks their digests, and unpacks the gzip tars in order. Auth is
 * anonymous, with the bearer-token handshake registries such as quay.io and
 * Docker Hub ask for even on public images.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { formatReference, isLoopbackRegistry, type ImageReference } from './reference.js';
import { readTar } from '../runtime/envtest/tar.js';

const { request: httpRequest } = process.getBuiltinModule('node:http');
const { request: httpsRequest } = process.getBuiltinModule('node:https');

const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];
/** A bundle is a few kB; anything this big is not one, and is not read into memory. */
const MAX_BLOB_BYTES = 256 * 1024 * 1024;
const MAX_REDIRECTS = 5;

/** How to reach the registry. */
export interface RegistryOptions {
  /** Plain HTTP (operator-sdk's --use-http). Loopback registries get it anyway. Default: false. */
  useHttp?: boolean;
  /** Accept any TLS certificate (--skip-tls-verify). Default: false. */
  skipTlsVerify?: boolean;
  /** Bound on each HTTP request, in ms. Default: 60 s. */
  timeoutMs?: number;
  /** Aborts the pull (every request of it), e.g. when the command's --timeout runs out. Default: none. */
  signal?: AbortSignal;
}

/** The registry answered, but not with the image (not found, denied, not an image). `status` is the HTTP status, 0 when there was no answer. */
export class RegistryError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  size?: number;
  platform?: { os?: string; architecture?: string };
}

/** The files of an image, its layers applied in order (later layers win, whiteouts delete). */
export async function pullImageFiles(ref: ImageReference, options: RegistryOptions = {}): Promise<Map<string, Buffer>> {
  const session = new RegistrySession(ref, options);
  let manifest = await session.manifest(ref.digest ?? ref.tag ?? 'latest');
  if (manifest.manifests) {
    const wanted = GO_ARCH[process.arch] ?? process.arch;
    const entry =
      manifest.manifests.find((m) => m.platform?.os === 'linux' && m.platform.architecture === wanted) ??
      manifest.manifests[0];
    if (!entry) throw new RegistryError(`${formatReference(ref)} is an empty image index`, 200);
    manifest = await session.manifest(entry.digest);
  }
  if (!manifest.layers)
    throw new RegistryError(
      `${formatReference(ref)} has a manifest without layers (media type ${manifest.mediaType ?? 'unknown'})`,
      200,
    );
  const files = new Map<string, Buffer>();
  for (const layer of manifest.layers) {
    const blob = await session.blob(layer);
    const tar = blob[0] === 0x1f && blob[1] === 0x8b ? gunzipSync(blob) : blob;
    for (const file of readTar(tar)) {
      const base = file.path.split('/').pop()!;
      if (base.startsWith('.wh.')) {
        const dir = file.path.slice(0, file.path.length - base.length);
        if (base === '.wh..wh..opq') {
          for (const key of [...files.keys()]) if (key.startsWith(dir)) files.delete(key);
        } else {
          const target = dir + base.slice(4);
          for (const key of [...files.keys()]) if (key === target || key.startsWith(`${target}/`)) files.delete(key);
        }
        continue;
      }
      files.set(file.path, file.data);
    }
  }
  return files;
}

/** Node's process.arch → the GOARCH names image indexes use. */
const GO_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };

class RegistrySession {
  private readonly base: string;
  private token?: string;

  constructor(
    private readonly ref: ImageReference,
    private readonly options: RegistryOptions,
  ) {
    const plain = options.useHttp === true || isLoopbackRegistry(ref.registry);
    // Docker Hub's API lives on another host than its references name.
    const host = ref.registry === 'docker.io' ? 'registry-1.docker.io' : ref.registry;
    this.base = `${plain ? 'http' : 'https'}://${host}/v2/${ref.repository}`;
  }

  async manifest(reference: string): Promise<{ mediaType?: string; manifests?: Descriptor[]; layers?: Descriptor[] }> {
    const response = await this.get(`${this.base}/manifests/${reference}`, { accept: MANIFEST_TYPES.join(', ') });
    try {
      return JSON.parse(response.body.toString('utf8')) as { manifests?: Descriptor[]; layers?: Descriptor[] };
    } catch {
      throw new RegistryError(`the registry's manifest for ${formatReference(this.ref)} is not JSON`, response.status);
    }
  }

  async blob(descriptor: Descriptor): Promise<Buffer> {
    if ((descriptor.size ?? 0) > MAX_BLOB_BYTES)
      throw new RegistryError(
        `a layer of ${formatReference(this.ref)} is ${descriptor.size} bytes, too big for a bundle image`,
        200,
      );
    const response = await this.get(`${this.base}/blobs/${descriptor.digest}`, {});
    const [algorithm, expected] = descriptor.digest.split(':');
    if (algorithm === 'sha256' && createHash('sha256').update(response.body).digest('hex') !== expected) {
      throw new RegistryError(
        `layer ${descriptor.digest} of ${formatReference(this.ref)} does not match its digest`,
        response.status,
      );
    }
    return response.body;
  }

  /** GET with the session's token; a 401 with a Bearer challenge fetches an anonymous token and retries once. */
  private async get(url: string, headers: Record<string, string>): Promise<Response> {
    let response = await this.send(url, this.withAuth(headers));
    if (response.status === 401) {
      const challenge = response.headers['www-authenticate'];
      if (typeof challenge === 'string' && /^bearer\s/i.test(challenge)) {
        this.token = await this.anonymousToken(challenge);
        response = await this.send(url, this.withAuth(headers));
      }
    }
    if (response.status === 200) return response;
    const what = url.includes('/manifests/')
      ? `image ${formatReference(this.ref)}`
      : `a layer of ${formatReference(this.ref)}`;
    const detail = registryErrorText(response.body);
    if (response.status === 404)
      throw new RegistryError(`${what} was not found in registry ${this.ref.registry}${detail}`, 404);
    if (response.status === 401 || response.status === 403)
      throw new RegistryError(
        `registry ${this.ref.registry} refused anonymous access to ${what} (HTTP ${response.status})${detail}`,
        response.status,
      );
    throw new RegistryError(
      `registry ${this.ref.registry} answered HTTP ${response.status} for ${what}${detail}`,
      response.status,
    );
  }

  private withAuth(headers: Record<string, string>): Record<string, string> {
    return this.token ? { ...headers, authorization: `Bearer ${this.token}` } : headers;
  }

  private async anonymousToken(challenge: string): Promise<string> {
    const params = new Map<string, string>();
    for (const match of challenge.replace(/^bearer\s+/i, '').matchAll(/([a-zA-Z]+)="([^"]*)"/g))
      params.set(match[1]!.toLowerCase(), match[2]!);
    const realm = params.get('realm');
    if (!realm)
      throw new RegistryError(`registry ${this.ref.registry} asked for a token without saying where to get one`, 401);
    const url = new URL(realm);
    if (params.has('service')) url.searchParams.set('service', params.get('service')!);
    url.searchParams.set('scope', params.get('scope') ?? `repository:${this.ref.repository}:pull`);
    const response = await this.send(url.toString(), {});
    if (response.status !== 200)
      throw new RegistryError(
        `registry ${this.ref.registry}'s token service refused an anonymous token (HTTP ${response.status})`,
        response.status,
      );
    const body = JSON.parse(response.body.toString('utf8')) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token)
      throw new RegistryError(`registry ${this.ref.registry}'s token service returned no token`, response.status);
    return token;
  }

  /** One GET, following redirects (blob downloads are often redirected to storage). */
  private async send(url: string, headers: Record<string, string>, redirects = 0): Promise<Response> {
    const response = await rawGet(url, headers, this.options);
    const location = response.headers.location;
    if (response.status >= 300 && response.status < 400 && location) {
      if (redirects >= MAX_REDIRECTS)
        throw new RegistryError(
          `registry ${this.ref.registry} redirected more than ${MAX_REDIRECTS} times`,
          response.status,
        );
      const next = new URL(location, url).toString();
      // Credentials are for the registry, not for the storage it redirects to.
      const { authorization: _dropped, ...rest } = headers;
      return this.send(next, new URL(next).host === new URL(url).host ? headers : rest, redirects + 1);
    }
    return response;
  }
}

function rawGet(url: string, headers: Record<string, string>, options: RegistryOptions): Promise<Response> {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'https:';
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(
      parsed,
      {
        method: 'GET',
        headers: { 'user-agent': 'ts-operator-sdk', ...headers },
        signal: options.signal,
        ...(secure && options.skipTlsVerify ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BLOB_BYTES) {
            req.destroy(new RegistryError(`${url} sent more than ${MAX_BLOB_BYTES} bytes`, res.statusCode ?? 0));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(new RegistryError(`no answer from ${parsed.host} within ${Math.round(timeoutMs / 1000)}s`, 0)),
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof RegistryError) return reject(err);
      const hint =
        err.code === 'EPROTO' || /wrong version number|packet length too long/.test(err.message)
          ? ' (it may serve plain HTTP: pass --use-http)'
          : '';
      reject(new RegistryError(`cannot reach registry ${parsed.host}: ${err.code ?? err.message}${hint}`, 0));
    });
    req.end();
  });
}

/** The first message of a registry's JSON error body (`{"errors":[{"code","message"}]}`), as ` (CODE: message)`. */
function registryErrorText(body: Buffer): string {
  try {
    const first = (JSON.parse(body.toString('utf8')) as { errors?: { code?: string; message?: string }[] }).errors?.[0];
    return first ? ` (${[first.code, first.message].filter(Boolean).join(': ')})` : '';
  } catch {
    return '';
  }
}

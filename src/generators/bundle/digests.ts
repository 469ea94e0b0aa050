import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../errors.js';
import {
  InvalidReferenceError,
  isLoopbackRegistry,
  parseImageReference,
  type ImageReference,
} from '../../oci/reference.js';

const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/** The image reference parsed by the same grammar `run bundle` uses; a malformed one is a one-line UsageError. */
function parseReference(image: string): ImageReference {
  try {
    return parseImageReference(image);
  } catch (err) {
    if (err instanceof InvalidReferenceError)
      throw new UsageError(`--use-image-digests cannot resolve ${err.message}`, 'write it as registry/repository:tag', {
        cause: err,
      });
    throw err;
  }
}

/**
 * Resolves an image's tag to its manifest digest through the registry HTTP
 * API v2 (HEAD /v2/<repo>/manifests/<tag>, anonymous bearer token when the
 * registry asks for one) and returns `registry/repo@sha256:...`. Images
 * already pinned are returned unchanged. An unreachable registry or a
 * missing tag is a one-line UsageError.
 */
export async function resolveImageDigest(image: string, fetchImpl: typeof fetch = fetch): Promise<string> {
  const ref = parseReference(image);
  if (ref.digest) return image;
  const host = ref.registry === 'docker.io' ? 'registry-1.docker.io' : ref.registry;
  const scheme = isInsecureRegistry(host) ? 'http' : 'https';
  const url = `${scheme}://${host}/v2/${ref.repository}/manifests/${ref.tag}`;
  const unreachable = (cause: unknown): UsageError => {
    const code =
      (cause as { cause?: { code?: string } }).cause?.code ?? (cause instanceof Error ? cause.message : String(cause));
    return new UsageError(
      `--use-image-digests cannot resolve ${image}: registry ${ref.registry} is unreachable (${code})`,
      'check the network and the image name, or run without --use-image-digests (USE_IMAGE_DIGESTS=false)',
      { cause },
    );
  };
  const head = async (authorization?: string): Promise<Response> => {
    try {
      return await fetchImpl(url, {
        method: 'HEAD',
        headers: { Accept: MANIFEST_TYPES, ...(authorization ? { Authorization: authorization } : {}) },
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw unreachable(err);
    }
  };
  let response = await head();
  if (response.status === 401) {
    const token = await anonymousToken(response.headers.get('www-authenticate') ?? '', fetchImpl).catch(
      (err: unknown) => {
        throw unreachable(err);
      },
    );
    if (token) response = await head(`Bearer ${token}`);
  }
  const digest = response.headers.get('docker-content-digest');
  if (!response.ok || !digest) {
    throw new UsageError(
      `--use-image-digests cannot resolve ${image}: the registry answered HTTP ${response.status}${response.ok ? ' without a Docker-Content-Digest header' : ''}`,
      'check that the image is pushed and public, or run without --use-image-digests',
    );
  }
  return `${ref.registry === 'docker.io' ? 'docker.io' : ref.registry}/${ref.repository}@${digest}`;
}

/**
 * The registries.conf files buildah, podman and skopeo read, user's first.
 * `CONTAINERS_REGISTRIES_CONF` replaces both, as it does for those tools.
 */
export function registriesConfFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env['CONTAINERS_REGISTRIES_CONF']) return [env['CONTAINERS_REGISTRIES_CONF']];
  return [
    join(env['HOME'] ?? homedir(), '.config', 'containers', 'registries.conf'),
    '/etc/containers/registries.conf',
  ];
}

/**
 * Registries spoken to over plain HTTP: a loopback host (`localhost`,
 * `127.x`, `[::1]`, docker's built-in rule), or one a registries.conf marks
 * `insecure = true` in a `[[registry]]` table, so one setting serves
 * `buildah push` and `--use-image-digests` alike.
 */
export function isInsecureRegistry(host: string, files: string[] = registriesConfFiles()): boolean {
  if (isLoopbackRegistry(host)) return true;
  return files.some((file) => insecureLocations(file).includes(host));
}

/** The `location` of each `[[registry]]` table with `insecure = true` (a missing or unreadable file has none). */
function insecureLocations(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const locations: string[] = [];
  // Tables start at `[` lines; only [[registry]] tables (not their [[registry.mirror]] children) matter.
  for (const table of text.replace(/#.*$/gm, '').split(/^\s*(?=\[)/m)) {
    if (!/^\[\[registry\]\]/.test(table)) continue;
    const location = /^\s*location\s*=\s*"([^"]*)"/m.exec(table)?.[1];
    if (location && /^\s*insecure\s*=\s*true\b/m.test(table)) locations.push(location);
  }
  return locations;
}

/** Fetches an anonymous pull token from the realm a 401 names (`Bearer realm=...,service=...,scope=...`). */
async function anonymousToken(challenge: string, fetchImpl: typeof fetch): Promise<string | undefined> {
  if (!/^bearer\s/i.test(challenge)) return undefined;
  const params = Object.fromEntries(
    [...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]),
  );
  if (!params['realm']) return undefined;
  const url = new URL(params['realm']);
  if (params['service']) url.searchParams.set('service', params['service']);
  if (params['scope']) url.searchParams.set('scope', params['scope']);
  const response = await fetchImpl(url, { signal: AbortSignal.timeout(15_000) });
  if (!response.ok) return undefined;
  const body = (await response.json()) as { token?: string; access_token?: string };
  return body.token ?? body.access_token;
}

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, mkdirSync, copyFileSync, chmodSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The two tiny images the cluster's own tests need, pushed straight to the
 * cluster's registry over the OCI distribution API: a one-layer image made
 * with `tar`. No builder, no storage: the `images` helper's code builds the
 * real (Node based) images; this only needs the sandbox image and busybox.
 */

/** Entrypoint and environment of a one-layer image. */
export interface TinyImageConfig {
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
}

const sha256 = (data: Buffer | string): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/**
 * Packs `rootfs` (a directory) as one gzipped layer and pushes it with its
 * config and an OCI manifest as `<registry>/<repository>:<tag>`, where
 * `registryUrl` is how this process reaches the registry (http://127.0.0.1:port).
 * Returns the manifest digest.
 */
export async function pushOneLayerImage(
  registryUrl: string,
  repository: string,
  tag: string,
  rootfs: string,
  config: TinyImageConfig,
): Promise<string> {
  const tar = spawnSync(
    'tar',
    ['-C', rootfs, '--numeric-owner', '--owner=0', '--group=0', '--sort=name', '--mtime=@0', '-cf', '-', '.'],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  if (tar.status !== 0) throw new Error(`tar of ${rootfs} failed: ${tar.stderr.toString().trim()}`);
  const layer = gzipSync(tar.stdout);
  const imageConfig = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Entrypoint: config.entrypoint, Cmd: config.cmd, Env: config.env ?? ['PATH=/bin:/usr/bin'] },
      rootfs: { type: 'layers', diff_ids: [sha256(tar.stdout)] },
    }),
  );
  await pushBlob(registryUrl, repository, layer);
  await pushBlob(registryUrl, repository, imageConfig);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: sha256(imageConfig),
        size: imageConfig.length,
      },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: sha256(layer), size: layer.length }],
    }),
  );
  const response = await fetch(`${registryUrl}/v2/${repository}/manifests/${tag}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    body: manifest,
  });
  if (response.status !== 201)
    throw new Error(
      `registry refused the manifest of ${repository}:${tag}: HTTP ${response.status} ${await response.text()}`,
    );
  return sha256(manifest);
}

async function pushBlob(registryUrl: string, repository: string, blob: Buffer): Promise<void> {
  const digest = sha256(blob);
  const head = await fetch(`${registryUrl}/v2/${repository}/blobs/${digest}`, { method: 'HEAD' });
  if (head.status === 200) return;
  const start = await fetch(`${registryUrl}/v2/${repository}/blobs/uploads/`, { method: 'POST' });
  await start.body?.cancel();
  const location = start.headers.get('location');
  if (start.status !== 202 || !location)
    throw new Error(`registry refused a blob upload to ${repository}: HTTP ${start.status}`);
  const url = new URL(location, registryUrl);
  url.searchParams.set('digest', digest);
  const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: blob });
  if (put.status !== 201)
    throw new Error(`registry refused blob ${digest} of ${repository}: HTTP ${put.status} ${await put.text()}`);
}

/** Pushes the sandbox image: only the static `pause` program, which exits on SIGTERM. */
export async function pushPauseImage(
  registryUrl: string,
  pauseBinary: string,
  repository: string,
  tag: string,
): Promise<void> {
  await withRootfs(async (rootfs) => {
    copyFileSync(pauseBinary, join(rootfs, 'pause'));
    chmodSync(join(rootfs, 'pause'), 0o755);
    await pushOneLayerImage(registryUrl, repository, tag, rootfs, { entrypoint: ['/pause'] });
  });
}

/**
 * Pushes an image holding Debian's static busybox as /bin/busybox with its
 * applets (sh, sleep, wget, nc, ...) linked beside it. Default command: a shell.
 */
export async function pushBusyboxImage(registryUrl: string, repository: string, tag: string): Promise<string> {
  return withRootfs(async (rootfs) => {
    const bin = join(rootfs, 'bin');
    mkdirSync(bin);
    copyFileSync('/bin/busybox', join(bin, 'busybox'));
    chmodSync(join(bin, 'busybox'), 0o755);
    const applets = spawnSync('/bin/busybox', ['--list'], { encoding: 'utf8' });
    if (applets.status !== 0) throw new Error(`busybox --list failed: ${applets.stderr.trim()}`);
    // Relative links: `busybox --install` would point them at this host's path.
    for (const applet of applets.stdout.split('\n').filter((name) => name && name !== 'busybox'))
      symlinkSync('busybox', join(bin, applet));
    mkdirSync(join(rootfs, 'tmp'), { mode: 0o1777 });
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    return pushOneLayerImage(registryUrl, repository, tag, rootfs, { cmd: ['/bin/sh'] });
  });
}

async function withRootfs<T>(fn: (rootfs: string) => Promise<T>): Promise<T> {
  const rootfs = mkdtempSync(join(tmpdir(), 'tsc-rootfs-'));
  try {
    return await fn(rootfs);
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

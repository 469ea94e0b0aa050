/**
 * What the OLM tests share: a real `distribution` registry on loopback, a
 * pusher that uploads an image through the registry's own v2 API (blob
 * uploads and a manifest PUT, as buildah and docker push do), a fixture
 * operator bundle, and OLM's own crds.yaml/olm.yaml from scripts/build-olm-assets.sh.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { REPO_ROOT } from '../scaffold/harness.js';

/** The directory scripts/build-olm-assets.sh prints (it builds only what is missing). */
export function olmAssets(): string {
  const fromEnv = process.env.TS_OPERATOR_SDK_OLM_ASSETS;
  if (fromEnv) return fromEnv;
  return execFileSync('bash', [join(REPO_ROOT, 'scripts', 'build-olm-assets.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The registry binary: $TS_OPERATOR_SDK_REGISTRY, the cluster assets' copy, or the prebuilt one. */
function registryBinary(): string {
  const candidates = [
    process.env.TS_OPERATOR_SDK_REGISTRY,
    process.env.TS_OPERATOR_SDK_CLUSTER_ASSETS && join(process.env.TS_OPERATOR_SDK_CLUSTER_ASSETS, 'registry'),
    join(homedir(), '.cache', 'ts-operator-sdk', 'prebuild', 'registry'),
  ];
  const found = candidates.find((path): path is string => Boolean(path) && existsSync(path!));
  if (!found)
    throw new Error(
      'no distribution `registry` binary: run scripts/build-cluster-assets.sh, or set TS_OPERATOR_SDK_REGISTRY',
    );
  return found;
}

/** A running `distribution` registry on 127.0.0.1. */
export interface LocalRegistry {
  /** host:port, e.g. `localhost:5123`. */
  host: string;
  stop(): Promise<void>;
}

export async function startRegistry(): Promise<LocalRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'olm-registry-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'config.yml'),
    stringify({
      version: 0.1,
      log: { level: 'warn' },
      storage: { filesystem: { rootdirectory: join(dir, 'data') }, delete: { enabled: true } },
      http: { addr: `127.0.0.1:${port}` },
    }),
  );
  const child: ChildProcess = spawn(registryBinary(), ['serve', join(dir, 'config.yml')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const host = `localhost:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/v2/`);
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`registry did not start: ${log.slice(-500)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    host,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A ustar archive of regular files (what an image layer is, before gzip). */
export function tarFiles(files: Record<string, string | Buffer>): Buffer {
  const blocks: Buffer[] = [];
  for (const [path, content] of Object.entries(files)) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const header = Buffer.alloc(512);
    header.write(path, 0, 100, 'utf8');
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.fill(' ', 148, 156);
    header.write('0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

const sha256 = (data: Buffer): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** The image config fields the OLM tests set. */
export interface ImageConfig {
  Labels?: Record<string, string>;
  Entrypoint?: string[];
  /** Numeric, so `runAsNonRoot` pods can verify it. */
  User?: string;
}

/** Pushes a one-layer OCI image of `files` to `host/repository:tag` through the registry v2 API; returns the manifest digest. */
export async function pushImage(
  host: string,
  repository: string,
  tag: string,
  files: Record<string, string | Buffer>,
  config: ImageConfig = {},
): Promise<string> {
  return pushLayer(host, repository, tag, tarFiles(files), config);
}

/**
 * Pushes an image whose one layer is the directory `rootfs` (modes kept,
 * owned by root), e.g. static binaries in /bin and a world-writable /tmp.
 */
export async function pushRootfsImage(
  host: string,
  repository: string,
  tag: string,
  rootfs: string,
  config: ImageConfig,
): Promise<string> {
  const tar = execFileSync(
    'tar',
    ['-C', rootfs, '--numeric-owner', '--owner=0', '--group=0', '--sort=name', '--mtime=@0', '-cf', '-', '.'],
    { maxBuffer: 1024 * 1024 * 1024 },
  );
  return pushLayer(host, repository, tag, tar, config);
}

async function pushLayer(
  host: string,
  repository: string,
  tag: string,
  tar: Buffer,
  imageConfig: ImageConfig,
): Promise<string> {
  const layer = gzipSync(tar);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Env: ['PATH=/bin'], ...imageConfig },
      rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
    }),
  );
  const base = `http://${host}/v2/${repository}`;
  for (const blob of [layer, config]) {
    const start = await fetch(`${base}/blobs/uploads/`, { method: 'POST' });
    if (start.status !== 202) throw new Error(`blob upload start: HTTP ${start.status}`);
    const location = new URL(start.headers.get('location')!, base);
    location.searchParams.set('digest', sha256(blob));
    const put = await fetch(location, {
      method: 'PUT',
      body: blob,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (put.status !== 201) throw new Error(`blob upload: HTTP ${put.status} ${await put.text()}`);
  }
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: sha256(layer), size: layer.length }],
    }),
  );
  const put = await fetch(`${base}/manifests/${tag}`, {
    method: 'PUT',
    body: manifest,
    headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
  });
  if (put.status !== 201) throw new Error(`manifest upload: HTTP ${put.status} ${await put.text()}`);
  return sha256(manifest);
}

/** The fixture operator's package, CRD and kind. */
export const FIXTURE_PACKAGE = 'widget-operator';
export const FIXTURE_CRD = 'widgets.olmtest.example.com';

/**
 * The files of a registry+v1 bundle for a trivial operator: one Deployment
 * running `image` with `command`, owning one CRD.
 */
export function fixtureBundleFiles(version: string, image: string, command: string[]): Record<string, string> {
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: `${FIXTURE_PACKAGE}.v${version}`,
      annotations: { 'alm-examples': '[]', capabilities: 'Basic Install' },
    },
    spec: {
      displayName: 'Widget Operator',
      description: 'A fixture operator for the OLM tests.',
      version,
      minKubeVersion: '1.20.0',
      maturity: 'alpha',
      provider: { name: 'ts-operator-sdk tests' },
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: {
        owned: [{ name: FIXTURE_CRD, version: 'v1', kind: 'Widget', displayName: 'Widget', description: 'A widget' }],
      },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            {
              name: 'widget-operator-controller-manager',
              spec: {
                replicas: 1,
                selector: { matchLabels: { 'control-plane': 'widget-operator' } },
                template: {
                  metadata: { labels: { 'control-plane': 'widget-operator' } },
                  spec: {
                    securityContext: {
                      runAsNonRoot: true,
                      runAsUser: 65532,
                      seccompProfile: { type: 'RuntimeDefault' },
                    },
                    containers: [
                      {
                        name: 'manager',
                        image,
                        command,
                        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
                        resources: { limits: { memory: '64Mi' } },
                      },
                    ],
                  },
                },
              },
            },
          ],
          permissions: [],
        },
      },
    },
  };
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: FIXTURE_CRD },
    spec: {
      group: 'olmtest.example.com',
      names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
  const annotations = {
    annotations: {
      'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
      'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
      'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
      'operators.operatorframework.io.bundle.package.v1': FIXTURE_PACKAGE,
      'operators.operatorframework.io.bundle.channels.v1': 'alpha',
    },
  };
  return {
    'manifests/widget-operator.clusterserviceversion.yaml': stringify(csv),
    [`manifests/olmtest.example.com_widgets.yaml`]: stringify(crd),
    'metadata/annotations.yaml': stringify(annotations),
  };
}

/** Serves files from memory on 127.0.0.1 (OLM's release manifests for `olm install`); a path not given is a 404. */
export async function serveFiles(files: Record<string, string>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createHttpServer((req, res) => {
    const body = files[req.url ?? ''];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/yaml' });
    res.end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** OLM's crds.yaml and olm.yaml, as the olm-assets cache holds them. */
export function olmManifestFiles(): { crds: string; olm: string } {
  const dir = olmAssets();
  return { crds: readFileSync(join(dir, 'crds.yaml'), 'utf8'), olm: readFileSync(join(dir, 'olm.yaml'), 'utf8') };
}

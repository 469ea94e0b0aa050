/**
 * OLM v0 on the one-node test cluster without the internet: the binaries
 * scripts/build-olm-assets.sh builds from the module proxy, pushed as local
 * images to the cluster's registry, and OLM's own manifests served from
 * loopback with their images rewritten to those and without the
 * operatorhub.io CatalogSource (it would pull from the internet).
 * operator-workflow.test.ts runs `olm install` against it.
 *
 * The images are the static binaries in a one-layer image (USER 65532, a
 * world-writable /tmp), pushed over the distribution API.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { olmAssets, olmManifestFiles, pushRootfsImage, serveFiles } from '../e2e/olm-fixtures.js';
import type { TestClusterDetails } from './cluster.js';

/** What a test needs to run `olm install` and `run bundle` against the local OLM. */
export interface LocalOlm {
  /** Environment for the CLI: TS_OPERATOR_SDK_OLM_BASE_URL at the loopback manifest server. */
  env: NodeJS.ProcessEnv;
  /** The local opm image, usable as `run bundle --index-image`. */
  opmImage: string;
  /** Stops the manifest server. */
  close(): Promise<void>;
}

/**
 * One image with the given binaries in /bin, as upstream's images are laid
 * out. The olm image also needs `cp` (the bundle unpack Job copies cpb with
 * it): Debian's static busybox, which acts as the applet its name says.
 */
async function pushBinaries(registryHost: string, repository: string, binaries: Record<string, string>): Promise<void> {
  const rootfs = mkdtempSync(join(tmpdir(), 'olm-rootfs-'));
  try {
    mkdirSync(join(rootfs, 'bin'));
    for (const [name, source] of Object.entries(binaries)) {
      copyFileSync(source, join(rootfs, 'bin', name));
      chmodSync(join(rootfs, 'bin', name), 0o755);
    }
    mkdirSync(join(rootfs, 'tmp'));
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    await pushRootfsImage(registryHost, repository, 'local', rootfs, {
      User: '65532',
      Entrypoint: [`/bin/${Object.keys(binaries)[0]}`],
    });
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

/** Pushes the olm and opm images to the cluster's registry and serves OLM's rewritten manifests from loopback. */
export async function prepareLocalOlm(cluster: TestClusterDetails): Promise<LocalOlm> {
  const assets = olmAssets();
  const { registry, registryUrl } = cluster;
  const pushHost = new URL(registryUrl).host;
  await pushBinaries(pushHost, 'olm', {
    olm: join(assets, 'olm'),
    catalog: join(assets, 'catalog'),
    'package-server': join(assets, 'package-server'),
    cpb: join(assets, 'cpb'),
    cp: '/bin/busybox',
  });
  await pushBinaries(pushHost, 'opm', { opm: join(assets, 'opm') });
  const { crds, olm } = olmManifestFiles();
  const olmImage = `${registry}/olm:local`;
  const opmImage = `${registry}/opm:local`;
  const rewritten = parseAllDocuments(olm)
    .map((doc) => doc.toJS() as { kind?: string; metadata?: { name?: string } } | null)
    .filter((obj) => obj && !(obj.kind === 'CatalogSource' && obj.metadata?.name === 'operatorhubio-catalog'))
    .map((obj) => {
      if (obj!.kind === 'Deployment' && obj!.metadata?.name === 'catalog-operator') {
        // The module's quickstart passes Go-style single-dash flags (`-namespace`), which
        // catalog's cobra flags refuse ("unknown shorthand flag: 'n'"); OLM's release
        // manifests spell them with two dashes. Also point its opm at the local image.
        const container = (obj as unknown as { spec: { template: { spec: { containers: { args: string[] }[] } } } })
          .spec.template.spec.containers[0]!;
        container.args = [
          ...container.args.map((arg) => arg.replace(/^-([a-zA-Z])/, '--$1').trim()),
          `--opmImage=${opmImage}`,
        ];
      }
      // The quickstart's packageserver CSV still says 0.18.3; a release's olm.yaml carries the release version (the chart's).
      return stringify(obj)
        .replace(/\b0\.18\.3\b/g, '0.28.0')
        .replace(/quay\.io\/operator-framework\/olm@sha256:[0-9a-f]{64}/g, olmImage)
        .replace(/quay\.io\/operator-framework\/configmap-operator-registry:latest/g, opmImage);
    })
    .join('---\n');
  const server = await serveFiles({ '/v0.28.0/crds.yaml': crds, '/v0.28.0/olm.yaml': rewritten });
  return { env: { TS_OPERATOR_SDK_OLM_BASE_URL: server.url }, opmImage, close: () => server.close() };
}

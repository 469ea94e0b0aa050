/**
 * A local stand-in for controller-tools' envtest release index: an
 * envtest-releases.yaml and one `envtest-v<version>-<os>-<arch>.tar.gz` of the
 * official shape (binaries under controller-tools/envtest/), served on
 * loopback, made from the control plane this repository's tests already
 * built. `setup-envtest` reads it exactly as it reads the published one.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goPlatform } from '../../src/runtime/envtest/setup-envtest.js';

/** The binaries an official envtest archive carries that our built assets also have (kubectl is not needed by envtest). */
const ARCHIVE_BINARIES = ['etcd', 'kube-apiserver'];

/** A running local release server. */
export interface LocalReleaseIndex {
  /** The envtest-releases.yaml URL, for --index-url or TS_OPERATOR_SDK_ENVTEST_INDEX_URL. */
  indexUrl: string;
  /** Request paths served so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Packs `assetsDir`'s etcd and kube-apiserver into an archive for this
 * machine's platform, publishes it as `version` in an index, and serves both.
 */
export async function serveLocalReleaseIndex(assetsDir: string, version: string): Promise<LocalReleaseIndex> {
  const { os, arch } = goPlatform();
  const name = `envtest-v${version}-${os}-${arch}.tar.gz`;
  const work = mkdtempSync(join(tmpdir(), 'envtest-release-'));
  const staging = join(work, 'controller-tools', 'envtest');
  mkdirSync(staging, { recursive: true });
  for (const binary of ARCHIVE_BINARIES) symlinkSync(join(assetsDir, binary), join(staging, binary));
  const archivePath = join(work, name);
  // -h stores the files the links point at; gzip -1 because the bytes only cross loopback.
  const packed = spawnSync('bash', ['-ec', `tar -C "${work}" -chf - controller-tools | gzip -1 > "${archivePath}"`], {
    encoding: 'utf8',
  });
  if (packed.status !== 0) throw new Error(`packing ${name} failed: ${packed.stderr}`);
  const hash = createHash('sha512').update(readFileSync(archivePath)).digest('hex');

  const requests: string[] = [];
  let indexUrl = '';
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === '/envtest-releases.yaml') {
      const base = new URL('.', indexUrl);
      response.end(
        `releases:\n  v${version}:\n    ${name}:\n      hash: ${hash}\n      selfLink: ${new URL(`download/${name}`, base).toString()}\n`,
      );
    } else if (request.url === `/download/${name}`) {
      createReadStream(archivePath).pipe(response);
    } else {
      response.statusCode = 404;
      response.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  indexUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/envtest-releases.yaml`;
  return {
    indexUrl,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(work, { recursive: true, force: true });
    },
  };
}

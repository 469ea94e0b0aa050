import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import {
  defaultEnvtestCacheDir,
  goPlatform,
  locateBinary,
  setupEnvtestAssets,
} from '../../src/runtime/envtest/index.js';
import { extractTar, readTar } from '../../src/runtime/envtest/tar.js';

const run = promisify(execFile);

// ---- a minimal ustar writer, so the tests control the archive's exact shape ----

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function tarHeader(name: string, size: number, typeflag = '0', mode = 0o755): Buffer {
  const header = Buffer.alloc(512);
  header.write(name.slice(0, 100), 0, 'utf8');
  header.write(octal(mode, 8), 100, 'latin1');
  header.write(octal(0, 8), 108, 'latin1');
  header.write(octal(0, 8), 116, 'latin1');
  header.write(octal(size, 12), 124, 'latin1');
  header.write(octal(0, 12), 136, 'latin1');
  header.fill(0x20, 148, 156);
  header.write(typeflag, 156, 'latin1');
  header.write('ustar\0', 257, 'latin1');
  header.write('00', 263, 'latin1');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(octal(sum, 7) + ' ', 148, 'latin1');
  return header;
}

function padded(body: Buffer): Buffer {
  return Buffer.concat([body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

/** Entries with paths over 100 bytes get a pax `path` record, as Go's archive/tar writes them. */
function tarArchive(entries: Array<{ path: string; body?: string; typeflag?: string }>): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '');
    if (Buffer.byteLength(entry.path) > 100) {
      const record = (length: number): string => `${length} path=${entry.path}\n`;
      let length = record(0).length;
      while (record(length).length !== length) length = record(length).length;
      const pax = Buffer.from(record(length));
      blocks.push(tarHeader('PaxHeaders/long', pax.length, 'x', 0o644), padded(pax));
    }
    blocks.push(tarHeader(entry.path, body.length, entry.typeflag ?? '0'), padded(body));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

function fakeBinary(name: string): string {
  return `#!/bin/sh\necho "fake ${name} $*"\n`;
}

function envtestArchive(version: string, binaries = ['etcd', 'kube-apiserver', 'kubectl']): Buffer {
  return gzipSync(
    tarArchive([
      { path: 'controller-tools/', typeflag: '5' },
      { path: 'controller-tools/envtest/', typeflag: '5' },
      ...binaries.map((name) => ({ path: `controller-tools/envtest/${name}`, body: fakeBinary(`${name} ${version}`) })),
      // Outside the binary directory and a traversal attempt: both must be ignored.
      { path: 'README.md', body: 'not a binary' },
      { path: 'controller-tools/envtest/../../escaped', body: 'evil' },
    ]),
  );
}

const sha512 = (data: Buffer): string => createHash('sha512').update(data).digest('hex');

// ---- a local release server shaped like controller-tools' index + GitHub release assets ----

interface ReleaseServer {
  url: string;
  requests: string[];
  setIndex(index: unknown): void;
  setArchive(name: string, data: Buffer): void;
  close(): Promise<void>;
}

async function startReleaseServer(): Promise<ReleaseServer> {
  const archives = new Map<string, Buffer>();
  let indexText = '';
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === '/envtest-releases.yaml') {
      response.writeHead(200, { 'content-type': 'text/yaml' }).end(indexText);
      return;
    }
    const archive = archives.get((request.url ?? '').replace(/^\/download\//, ''));
    if (!archive) {
      response.writeHead(404).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/gzip' });
    // Small chunks exercise the streaming hash and tar reader across chunk boundaries.
    Readable.from(
      (function* () {
        for (let offset = 0; offset < archive.length; offset += 700) yield archive.subarray(offset, offset + 700);
      })(),
    ).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    requests,
    setIndex: (index) => {
      indexText = stringify(index);
    },
    setArchive: (name, data) => archives.set(name, data),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('setupEnvtestAssets against a local release index', () => {
  let server: ReleaseServer;
  let cacheDir: string;
  const published = new Map<string, Buffer>();

  function indexEntry(
    version: string,
    os: string,
    arch: string,
    hash?: string,
  ): Record<string, { hash: string; selfLink: string }> {
    const name = `envtest-v${version}-${os}-${arch}.tar.gz`;
    const archive = published.get(name) ?? envtestArchive(version);
    published.set(name, archive);
    server.setArchive(name, archive);
    return { [name]: { hash: hash ?? sha512(archive), selfLink: `${server.url}/download/${name}` } };
  }

  function publish(overrides: { hash?: string } = {}): void {
    server.setIndex({
      releases: {
        'v1.35.0': indexEntry('1.35.0', 'linux', 'amd64'),
        'v1.36.1': { ...indexEntry('1.36.1', 'linux', 'amd64'), ...indexEntry('1.36.1', 'darwin', 'arm64') },
        'v1.36.3': {
          ...indexEntry('1.36.3', 'linux', 'amd64', overrides.hash),
          'envtest-v1.36.3-linux-amd64.zip': { hash: 'x', selfLink: 'ignored' },
        },
        // Newer, but not for linux/amd64: "latest" on linux must not pick it.
        'v1.37.0': indexEntry('1.37.0', 'darwin', 'arm64'),
      },
    });
  }

  const options = (version?: string): Parameters<typeof setupEnvtestAssets>[0] => ({
    version,
    indexUrl: `${server.url}/envtest-releases.yaml`,
    cacheDir,
    platform: 'linux',
    arch: 'amd64',
  });

  before(async () => {
    server = await startReleaseServer();
  });

  after(async () => {
    await server.close();
  });

  beforeEach(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'envtest-cache-'));
    server.requests.length = 0;
    publish();
  });

  test('the setup-envtest command prints the binaries directory, and fails with one line for an unknown version', async () => {
    // Asynchronous child processes: this process serves the index they read.
    const cli = fileURLToPath(new URL('../../../bin/ts-operator-sdk.js', import.meta.url));
    const args = [
      '--index-url',
      `${server.url}/envtest-releases.yaml`,
      '--bin-dir',
      cacheDir,
      '--os',
      'linux',
      '--arch',
      'amd64',
    ];
    const found = await run(process.execPath, [cli, 'setup-envtest', '1.36.x', ...args]);
    assert.equal(found.stdout, `${join(cacheDir, 'k8s', '1.36.3-linux-amd64')}\n`);
    assert.ok(existsSync(join(found.stdout.trim(), 'kube-apiserver')));
    const missing = await run(process.execPath, [cli, 'setup-envtest', '1.99.x', ...args]).then(
      () => assert.fail('an unknown version must fail'),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    const errorLines = missing.stderr.split('\n').filter((line) => line.startsWith('Error:'));
    assert.equal(errorLines.length, 1);
    assert.match(errorLines[0]!, /^Error: no release matches version "1\.99\.x" for linux\/amd64/);
  });

  test('setup-envtest reads the index from TS_OPERATOR_SDK_ENVTEST_INDEX_URL, and -p env prints an export line', async () => {
    const cli = fileURLToPath(new URL('../../../bin/ts-operator-sdk.js', import.meta.url));
    const env = { ...process.env, TS_OPERATOR_SDK_ENVTEST_INDEX_URL: `${server.url}/envtest-releases.yaml` };
    // Kubebuilder's Makefile spelling: `use <version> --bin-dir <dir> -p path`.
    const path = await run(
      process.execPath,
      [cli, 'setup-envtest', 'use', '1.36.3', '--bin-dir', cacheDir, '--os', 'linux', '--arch', 'amd64', '-p', 'path'],
      { env },
    );
    assert.equal(path.stdout, `${join(cacheDir, 'k8s', '1.36.3-linux-amd64')}\n`);
    assert.deepEqual(server.requests, ['/envtest-releases.yaml', '/download/envtest-v1.36.3-linux-amd64.tar.gz']);
    const exported = await run(
      process.execPath,
      [
        cli,
        'setup-envtest',
        'use',
        '1.36.3',
        '--bin-dir',
        cacheDir,
        '--os',
        'linux',
        '--arch',
        'amd64',
        '--print',
        'env',
      ],
      { env },
    );
    assert.equal(exported.stdout, `export KUBEBUILDER_ASSETS=${join(cacheDir, 'k8s', '1.36.3-linux-amd64')}\n`);
    const bad = await run(
      process.execPath,
      [cli, 'setup-envtest', 'use', '1.36.3', '--bin-dir', cacheDir, '-p', 'overview'],
      { env },
    ).then(
      () => assert.fail('an unknown print mode must fail'),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^Error: -p overview is not a print mode\. Use path or env\.?\n$/);
  });

  test('latest downloads, verifies and unpacks the newest release for the platform', async () => {
    const lines: string[] = [];
    const dir = await setupEnvtestAssets({ ...options(), log: (line) => lines.push(line) });
    assert.equal(dir, join(cacheDir, 'k8s', '1.36.3-linux-amd64'));
    assert.deepEqual((await readdir(dir)).sort(), ['etcd', 'kube-apiserver', 'kubectl']);
    for (const binary of ['etcd', 'kube-apiserver', 'kubectl']) {
      assert.equal(statSync(join(dir, binary)).mode & 0o111, 0o111, `${binary} is not executable`);
    }
    const { stdout } = await run(join(dir, 'kube-apiserver'), ['--version']);
    assert.equal(stdout.trim(), 'fake kube-apiserver 1.36.3 --version');
    assert.equal(existsSync(join(cacheDir, 'escaped')), false);
    assert.equal(existsSync(join(cacheDir, 'k8s', 'escaped')), false);
    assert.deepEqual(await readdir(join(cacheDir, 'k8s')), ['1.36.3-linux-amd64'], 'staging directory left behind');
    assert.ok(lines.some((line) => line.includes('installed in') && line.includes(dir)));
    assert.deepEqual(server.requests, ['/envtest-releases.yaml', '/download/envtest-v1.36.3-linux-amd64.tar.gz']);
  });

  test('version selectors resolve like setup-envtest', async () => {
    const cases: Array<[string, string]> = [
      ['1.36.x', '1.36.3'],
      ['1.36', '1.36.3'],
      ['v1.36.1', '1.36.1'],
      ['~1.35.0', '1.35.0'],
      ['<1.36.3', '1.36.1'],
      ['<=1.36.3', '1.36.3'],
    ];
    for (const [selector, expected] of cases) {
      const fresh = await mkdtemp(join(tmpdir(), 'envtest-cache-'));
      try {
        const dir = await setupEnvtestAssets({ ...options(selector), cacheDir: fresh });
        assert.equal(dir, join(fresh, 'k8s', `${expected}-linux-amd64`), `selector ${selector}`);
      } finally {
        await rm(fresh, { recursive: true, force: true });
      }
    }
  });

  test('a cached match is reused without touching the network; "!" re-checks the index but does not re-download', async () => {
    const first = await setupEnvtestAssets(options('1.36.3'));
    server.requests.length = 0;
    assert.equal(await setupEnvtestAssets(options('1.36.3')), first);
    assert.equal(await setupEnvtestAssets(options('latest')), first);
    assert.deepEqual(server.requests, []);
    assert.equal(await setupEnvtestAssets(options('1.36.x!')), first);
    assert.deepEqual(server.requests, ['/envtest-releases.yaml']);
  });

  test('a checksum mismatch fails with a clear error and leaves no directory', async () => {
    publish({ hash: 'ab'.repeat(64) });
    await assert.rejects(setupEnvtestAssets(options('1.36.3')), (err: Error) => {
      assert.match(
        err.message,
        /^envtest: checksum mismatch for envtest-v1\.36\.3-linux-amd64\.tar\.gz: the index says sha512 abababab/,
      );
      assert.equal(err.message.includes('\n'), false);
      return true;
    });
    assert.deepEqual(await readdir(join(cacheDir, 'k8s')), []);
  });

  test('an unknown version names what is available and creates nothing', async () => {
    await assert.rejects(setupEnvtestAssets(options('1.99.x')), (err: Error) => {
      assert.match(
        err.message,
        /^envtest: no release matches version "1\.99\.x" for linux\/amd64 in .* \(newest available: 1\.36\.3, 1\.36\.1, 1\.35\.0\): pick one of those$/,
      );
      return true;
    });
    assert.equal(existsSync(join(cacheDir, 'k8s')), false);
  });

  test('an unreachable index gives a one-line error with the fix', async () => {
    const closed = await startReleaseServer();
    await closed.close();
    await assert.rejects(
      setupEnvtestAssets({ ...options('1.36.3'), indexUrl: `${closed.url}/envtest-releases.yaml` }),
      (err: Error) => {
        assert.match(
          err.message,
          /^envtest: cannot fetch the envtest index http:\/\/127\.0\.0\.1:\d+\/envtest-releases\.yaml: .*pass --index-url/,
        );
        assert.equal(err.message.includes('\n'), false);
        return true;
      },
    );
  });

  test('an index that is not an envtest index is rejected', async () => {
    server.setIndex({ something: 'else' });
    await assert.rejects(setupEnvtestAssets(options('1.36.3')), /has no "releases" map/);
  });

  test('an archive without kube-apiserver is rejected and removed', async () => {
    const name = 'envtest-v1.36.3-linux-amd64.tar.gz';
    published.set(name, envtestArchive('1.36.3', ['etcd', 'kubectl']));
    try {
      publish();
      await assert.rejects(
        setupEnvtestAssets(options('1.36.3')),
        /lacks kube-apiserver under controller-tools\/envtest\//,
      );
      assert.deepEqual(await readdir(join(cacheDir, 'k8s')), []);
    } finally {
      published.delete(name);
    }
  });

  test('a corrupt archive whose hash matches the index fails to unpack and leaves nothing', async () => {
    const name = 'envtest-v1.36.3-linux-amd64.tar.gz';
    published.set(name, gzipSync(Buffer.alloc(2048, 7)));
    try {
      publish();
      await assert.rejects(
        setupEnvtestAssets(options('1.36.3')),
        /cannot unpack envtest-v1\.36\.3-linux-amd64\.tar\.gz: not a tar archive/,
      );
      assert.deepEqual(await readdir(join(cacheDir, 'k8s')), []);
    } finally {
      published.delete(name);
    }
  });

  test('a malformed version selector is rejected before any request', async () => {
    await assert.rejects(setupEnvtestAssets(options('banana')), /cannot read version "banana": use latest, X\.Y\.Z/);
    assert.deepEqual(server.requests, []);
  });
});

describe('tar reader', () => {
  test('reads pax long paths and GNU tar output, and skips what it is not asked for', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'envtest-tar-'));
    try {
      const longPath = `controller-tools/envtest/${'d'.repeat(90)}/kube-apiserver`;
      const seen: string[] = [];
      await extractTar(
        Readable.from([
          tarArchive([
            { path: longPath, body: 'long' },
            { path: 'short', body: 'skip me' },
          ]),
        ]),
        (entry) => {
          seen.push(entry.path);
          return entry.path === longPath ? join(dir, 'from-pax') : undefined;
        },
      );
      assert.deepEqual(seen, [longPath, 'short']);
      assert.equal(readFileSync(join(dir, 'from-pax'), 'utf8'), 'long');

      // An archive written by GNU tar, not by our own writer.
      const source = join(dir, 'src', 'controller-tools', 'envtest');
      await mkdir(source, { recursive: true });
      writeFileSync(join(source, 'etcd'), fakeBinary('etcd'));
      chmodSync(join(source, 'etcd'), 0o755);
      await run('tar', ['-czf', join(dir, 'gnu.tar.gz'), '-C', join(dir, 'src'), 'controller-tools']);
      const { createReadStream } = await import('node:fs');
      const { createGunzip } = await import('node:zlib');
      await extractTar(createReadStream(join(dir, 'gnu.tar.gz')).pipe(createGunzip()), (entry) =>
        entry.type === 'file' ? join(dir, 'gnu-etcd') : undefined,
      );
      assert.equal(readFileSync(join(dir, 'gnu-etcd'), 'utf8'), fakeBinary('etcd'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('streamed to disk or read into memory, an archive of ./-prefixed paths (tar -C dir .) reads as the same files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'envtest-tar-'));
    try {
      const source = join(dir, 'src', 'controller-tools', 'envtest');
      await mkdir(source, { recursive: true });
      writeFileSync(join(source, 'etcd'), fakeBinary('etcd'));
      // GNU tar writes `./controller-tools/envtest/etcd`, as image layers often are.
      await run('tar', ['-cf', join(dir, 'dot.tar'), '-C', join(dir, 'src'), '.']);
      const archive = readFileSync(join(dir, 'dot.tar'));
      assert.ok(archive.includes('./controller-tools/envtest/etcd'), 'tar wrote ./-prefixed names');
      const streamed: string[] = [];
      await extractTar(Readable.from([archive]), (entry) => {
        streamed.push(entry.path);
        return entry.path === 'controller-tools/envtest/etcd' ? join(dir, 'etcd') : undefined;
      });
      assert.deepEqual(streamed, ['controller-tools/envtest/etcd']);
      assert.equal(readFileSync(join(dir, 'etcd'), 'utf8'), fakeBinary('etcd'));
      assert.deepEqual(
        readTar(archive).map((file) => [file.path, file.data.toString('utf8')]),
        [['controller-tools/envtest/etcd', fakeBinary('etcd')]],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a truncated archive is an error', async () => {
    const whole = tarArchive([{ path: 'controller-tools/envtest/etcd', body: 'x'.repeat(2000) }]);
    await assert.rejects(
      extractTar(Readable.from([whole.subarray(0, 1024)]), () => undefined),
      /truncated tar archive \(inside controller-tools\/envtest\/etcd\)/,
    );
  });
});

describe('locating control-plane binaries', () => {
  let dir: string;
  const touched = ['KUBEBUILDER_ASSETS', 'TEST_ASSET_ETCD', 'TEST_ASSET_KUBE_APISERVER', 'XDG_DATA_HOME'];
  const saved = Object.fromEntries(touched.map((key) => [key, process.env[key]]));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'envtest-bin-'));
    await writeFile(join(dir, 'etcd'), fakeBinary('etcd'), { mode: 0o755 });
    await writeFile(join(dir, 'kube-apiserver'), 'not executable', { mode: 0o644 });
  });

  after(async () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    for (const key of touched) delete process.env[key];
  });

  test('the option wins over KUBEBUILDER_ASSETS, and TEST_ASSET_* wins over both', () => {
    process.env.KUBEBUILDER_ASSETS = '/nonexistent';
    assert.equal(locateBinary('etcd', dir), join(dir, 'etcd'));
    process.env.TEST_ASSET_ETCD = join(dir, 'etcd');
    assert.equal(locateBinary('etcd', '/also/nonexistent'), join(dir, 'etcd'));
  });

  test('KUBEBUILDER_ASSETS is used when no directory is given', () => {
    process.env.KUBEBUILDER_ASSETS = dir;
    assert.equal(locateBinary('etcd'), join(dir, 'etcd'));
  });

  test('a missing binary names the path and both fixes on one line', () => {
    process.env.KUBEBUILDER_ASSETS = join(dir, 'missing');
    assert.throws(
      () => locateBinary('etcd'),
      (err: Error) => {
        assert.equal(
          err.message,
          `envtest: ${join(dir, 'missing', 'etcd')} not found (from KUBEBUILDER_ASSETS (${join(dir, 'missing')})): set KUBEBUILDER_ASSETS to a directory holding etcd and kube-apiserver, or run \`npx ts-operator-sdk setup-envtest\``,
        );
        return true;
      },
    );
  });

  test('a binary without the execute bit says how to fix it', () => {
    assert.throws(() => locateBinary('kube-apiserver', dir), /is not executable: run `chmod \+x .*kube-apiserver`/);
  });

  test('the default cache dir follows XDG_DATA_HOME, and Node platform names map to Go names', () => {
    process.env.XDG_DATA_HOME = '/data/home';
    assert.equal(defaultEnvtestCacheDir(), '/data/home/ts-operator-sdk/envtest');
    delete process.env.XDG_DATA_HOME;
    assert.match(defaultEnvtestCacheDir(), /\/\.local\/share\/ts-operator-sdk\/envtest$/);
    assert.deepEqual(goPlatform('linux', 'x64'), { os: 'linux', arch: 'amd64' });
    assert.deepEqual(goPlatform('win32', 'arm64'), { os: 'windows', arch: 'arm64' });
    assert.deepEqual(goPlatform('linux', 'ppc64'), { os: 'linux', arch: 'ppc64le' });
  });
});

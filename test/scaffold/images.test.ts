/**
 * The generated project's image workflow without Docker: base images built
 * here from the Node binary in the npm registry (test/support/images.ts) are
 * pushed to a real `distribution` registry on loopback, then the generated
 * Makefile builds and pushes the operator image with buildah from the
 * unmodified generated Dockerfile. The image is proven real: its manifest is
 * in the registry, and pulled back into an empty store its ENTRYPOINT runs
 * the operator. `make bundle USE_IMAGE_DIGESTS=true` pins the CSV to the
 * registry's digest.
 *
 * Run: node --test dist/test/scaffold/images.test.js (needs root for buildah's chroot isolation).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SCENARIOS, packRepository, scaffoldScenario } from './harness.js';
import {
  NODE_VERSION,
  NONROOT_UID,
  buildah,
  buildahEnvironment,
  nodeBaseImages,
  pushArchive,
  startOciRegistry,
  type BuildahEnvironment,
  type OciRegistry,
} from '../support/images.js';

const MANIFEST_TYPES = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';

let registry: OciRegistry | undefined;
let store: BuildahEnvironment | undefined;
let project: string;
let dockerfileAsGenerated: string;
let image: string;
let buildArgs: string;

/** Runs make in the project with the buildah environment; returns status and output. */
function make(args: string[], env: NodeJS.ProcessEnv = store!.env): { status: number | null; stdout: string; stderr: string } {
  // NODE_TEST_CONTEXT would make a nested `node --test` report to this runner.
  const { NODE_TEST_CONTEXT: _runner, ...inherited } = env;
  const result = spawnSync('make', args, { cwd: project, encoding: 'utf8', env: inherited, timeout: 900_000, maxBuffer: 64 * 2 ** 20 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

before(async () => {
  const tarball = packRepository();
  const bases = nodeBaseImages();
  registry = await startOciRegistry();
  store = buildahEnvironment([registry.host]);
  const builderImage = `${registry.host}/node-builder:${NODE_VERSION}`;
  const baseImage = `${registry.host}/node-runtime:${NODE_VERSION}`;
  pushArchive(bases.builder, builderImage, store.env);
  pushArchive(bases.runtime, baseImage, store.env);
  buildArgs = `--build-arg BUILDER_IMAGE=${builderImage} --build-arg BASE_IMAGE=${baseImage}`;
  image = `${registry.host}/memcached-operator:v0.0.1`;
  // Installed from the packed tarball, as from a checkout: init vendors it so the image build can install it too.
  project = scaffoldScenario(SCENARIOS[0]!, { env: { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` } });
  dockerfileAsGenerated = readFileSync(join(project, 'Dockerfile'), 'utf8');
});

after(async () => {
  await registry?.stop();
  store?.remove();
});

describe('make docker-build docker-push with buildah (no Docker)', () => {
  let digest: string;

  test('the project depends on its vendored tarball, which the generated Dockerfile copies', () => {
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const vendored = readdirSync(join(project, 'vendor'));
    assert.deepEqual(vendored, [vendored[0]!]);
    assert.equal(pkg.dependencies['ts-operator-sdk'], `file:vendor/${vendored[0]}`);
    assert.match(dockerfileAsGenerated, new RegExp(`^COPY vendor/${vendored[0]!.replace(/\./g, '\\.')} `, 'm'));
    // The defaults stay the public images; the test's images come in only as build arguments.
    assert.match(dockerfileAsGenerated, /^ARG BUILDER_IMAGE=node:24-bookworm-slim$/m);
    assert.match(dockerfileAsGenerated, /^ARG BASE_IMAGE=gcr\.io\/distroless\/nodejs24-debian12:nonroot$/m);
  });

  test('builds from the unmodified Dockerfile and pushes to the loopback registry', { timeout: 900_000 }, async () => {
    const built = make(['docker-build', 'docker-push', `IMG=${image}`, 'CONTAINER_TOOL=buildah', `DOCKER_BUILD_ARGS=${buildArgs}`]);
    assert.equal(built.status, 0, `make docker-build docker-push failed:\n${built.stdout.slice(-4000)}\n${built.stderr.slice(-4000)}`);
    assert.equal(readFileSync(join(project, 'Dockerfile'), 'utf8'), dockerfileAsGenerated, 'the build used the Dockerfile as generated');

    // The manifest is in the registry, under the tag, with the Dockerfile's ENTRYPOINT and user in its config.
    const manifestUrl = `${registry!.url}/v2/memcached-operator/manifests/v0.0.1`;
    const response = await fetch(manifestUrl, { headers: { Accept: MANIFEST_TYPES } });
    assert.equal(response.status, 200);
    digest = response.headers.get('docker-content-digest') ?? '';
    assert.match(digest, /^sha256:[0-9a-f]{64}$/);
    const manifest = (await response.json()) as { config: { digest: string }; layers: unknown[] };
    assert.ok(manifest.layers.length >= 2, 'base layer plus the operator layers');
    const config = (await (await fetch(`${registry!.url}/v2/memcached-operator/blobs/${manifest.config.digest}`)).json()) as {
      config: { Entrypoint: string[]; User: string; WorkingDir?: string };
    };
    assert.deepEqual(config.config.Entrypoint, ['/nodejs/bin/node', '--max-semi-space-size=4', 'dist/main.js']);
    assert.equal(config.config.User, `${NONROOT_UID}:${NONROOT_UID}`);

    // Pulled back into an empty store, its ENTRYPOINT runs as 65532 and the operator starts: with no cluster
    // config it stops with the runtime's own error, so node, the modules and dist/ are all in the image.
    const fresh = buildahEnvironment([registry!.host]);
    try {
      const container = buildah(['from', '--quiet', '--pull-always', `docker://${image}`], fresh.env);
      const run = spawnSync('buildah', ['run', '--user', config.config.User, container, '--', ...config.config.Entrypoint], {
        env: fresh.env, encoding: 'utf8', timeout: 120_000,
      });
      assert.notEqual(run.status, 0);
      assert.match(run.stderr, /no Kubernetes config found/);
      assert.doesNotMatch(run.stderr, /ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
      const whoami = buildah(['run', '--user', config.config.User, container, '--', '/nodejs/bin/node', '-e', 'console.log(process.getuid())'], fresh.env);
      assert.equal(whoami, String(NONROOT_UID));
    } finally {
      fresh.remove();
    }
  });

  test('make bundle USE_IMAGE_DIGESTS=true pins the CSV to the registry\'s digest', { timeout: 600_000 }, () => {
    assert.ok(digest, 'needs the pushed image');
    const bundle = make(['bundle', `IMG=${image}`, 'USE_IMAGE_DIGESTS=true']);
    assert.equal(bundle.status, 0, `make bundle failed:\n${bundle.stdout.slice(-4000)}\n${bundle.stderr.slice(-4000)}`);
    const csvFile = readdirSync(join(project, 'bundle', 'manifests')).find((file) => file.endsWith('.clusterserviceversion.yaml'));
    assert.ok(csvFile, 'a CSV in bundle/manifests');
    const csv = readFileSync(join(project, 'bundle', 'manifests', csvFile), 'utf8');
    const pinned = `${registry!.host}/memcached-operator@${digest}`;
    assert.match(csv, new RegExp(`^ +image: ${pinned.replace(/[.]/g, '\\.')}$`, 'm'), 'the deployment runs the pinned image');
    assert.match(csv, new RegExp(`^ *- image: ${pinned.replace(/[.]/g, '\\.')}$`, 'm'), 'relatedImages lists it');
    assert.doesNotMatch(csv, /memcached-operator:v0\.0\.1/);
  });

  test('failures stop make with one line naming the problem', { timeout: 300_000 }, () => {
    const missingTool = make(['docker-build', `IMG=${image}`, 'CONTAINER_TOOL=no-such-container-tool']);
    assert.notEqual(missingTool.status, 0);
    assert.match(missingTool.stderr, /^error: CONTAINER_TOOL=no-such-container-tool is not installed \(not found in PATH\): install it, or pass CONTAINER_TOOL=docker\|podman\|buildah$/m);

    const badImage = make(['docker-build', 'IMG=Memcached_Operator:v1', 'CONTAINER_TOOL=buildah']);
    assert.notEqual(badImage.status, 0);
    assert.match(badImage.stderr, /^Error: tag Memcached_Operator:v1: invalid reference format: repository name must be lowercase$/m);

    // A registry that is not there: the image exists locally under that name, the push cannot connect.
    const nowhere = 'localhost:1/memcached-operator:v0.0.1';
    buildah(['tag', image, nowhere], store!.env);
    const noRegistry = make(['docker-push', `IMG=${nowhere}`, 'CONTAINER_TOOL=buildah']);
    assert.notEqual(noRegistry.status, 0);
    assert.match(noRegistry.stderr, /^Error: pushing image "localhost:1\/memcached-operator:v0\.0\.1".*connection refused$/m);
  });
});

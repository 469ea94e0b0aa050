/**
 * Helpers for cluster tests that drive a scaffolded project as a user does:
 * `make` targets run against the test cluster with buildah's store, and
 * kubectl reads parsed as JSON.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  NODE_VERSION,
  buildahEnvironment,
  nodeBaseImages,
  pushArchive,
  type BuildahEnvironment,
} from '../support/images.js';
import type { TestClusterDetails } from './cluster.js';
import { kubectl } from './kubectl.js';

/** What a make run gave. */
export interface MakeResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs make in `project` against the cluster (its KUBECONFIG, the store's buildah variables); returns how it ended. */
export function runMakeInProject(
  cluster: TestClusterDetails,
  store: BuildahEnvironment,
  project: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): MakeResult {
  // The node:test runner's marker would make a nested `node --test` in the project report to this runner.
  const { NODE_TEST_CONTEXT: _runner, ...env } = cluster.env(store.env);
  const result = spawnSync('make', args, {
    cwd: project,
    encoding: 'utf8',
    env: { ...env, ...extraEnv, KUBECONFIG: cluster.kubeconfigPath },
    timeout: 900_000,
    maxBuffer: 64 * 2 ** 20,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** runMakeInProject that asserts make succeeded and returns its output. */
export function makeInProject(
  cluster: TestClusterDetails,
  store: BuildahEnvironment,
  project: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): string {
  const result = runMakeInProject(cluster, store, project, args, extraEnv);
  assert.equal(
    result.status,
    0,
    `make ${args.join(' ')} failed:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`,
  );
  return result.stdout;
}

/** `kubectl <args> -o json`, parsed. */
export function kubectlJson<T>(cluster: TestClusterDetails, args: string[]): T {
  return JSON.parse(kubectl(cluster, [...args, '-o', 'json'])) as T;
}

/** A buildah store that can build a scaffolded project's image from the Node base images in the cluster's registry. */
export interface ProjectImageBuilder {
  readonly store: BuildahEnvironment;
  /** make's arguments for `docker-build docker-push` of `image` with buildah, from the unmodified Dockerfile. */
  dockerBuildPush(image: string): string[];
}

/**
 * Pushes the Node base images (built once, cached: test/support/images.ts) into
 * the cluster's registry under the names the Dockerfile's BUILDER_IMAGE and
 * BASE_IMAGE arguments then take, in a fresh buildah store.
 */
export function prepareImageBuilds(cluster: TestClusterDetails): ProjectImageBuilder {
  const bases = nodeBaseImages();
  const store = buildahEnvironment([cluster.registry]);
  const builderImage = `${cluster.registry}/node-builder:${NODE_VERSION}`;
  const baseImage = `${cluster.registry}/node-runtime:${NODE_VERSION}`;
  pushArchive(bases.builder, builderImage, store.env);
  pushArchive(bases.runtime, baseImage, store.env);
  return {
    store,
    dockerBuildPush: (image) => [
      'docker-build',
      'docker-push',
      `IMG=${image}`,
      'CONTAINER_TOOL=buildah',
      `DOCKER_BUILD_ARGS=--build-arg BUILDER_IMAGE=${builderImage} --build-arg BASE_IMAGE=${baseImage}`,
    ],
  };
}

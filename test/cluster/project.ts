/**
 * Helpers for cluster tests that drive a scaffolded project as a user does:
 * `make` targets run against the test cluster with buildah's store, and
 * kubectl reads parsed as JSON.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { BuildahEnvironment } from '../support/images.js';
import type { TestClusterDetails } from './cluster.js';
import { kubectl } from './kubectl.js';

/** Runs make in `project` against the cluster (its KUBECONFIG, the store's buildah variables); asserts it succeeded and returns its output. */
export function makeInProject(cluster: TestClusterDetails, store: BuildahEnvironment, project: string, args: string[]): string {
  // The node:test runner's marker would make a nested `node --test` in the project report to this runner.
  const { NODE_TEST_CONTEXT: _runner, ...env } = cluster.env(store.env);
  const result = spawnSync('make', args, { cwd: project, encoding: 'utf8', env: { ...env, KUBECONFIG: cluster.kubeconfigPath }, timeout: 900_000, maxBuffer: 64 * 2 ** 20 });
  assert.equal(result.status, 0, `make ${args.join(' ')} failed:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`);
  return result.stdout;
}

/** `kubectl <args> -o json`, parsed. */
export function kubectlJson<T>(cluster: TestClusterDetails, args: string[]): T {
  return JSON.parse(kubectl(cluster, [...args, '-o', 'json'])) as T;
}

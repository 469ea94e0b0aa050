/**
 * The environment of a process a test starts, and a scratch directory that
 * lives as long as the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/** This machine's envtest settings: a project tested as a user or a fresh CI runner would must not see them. */
export const ENVTEST_SETTINGS = ['KUBEBUILDER_ASSETS', 'SKIP_ENVTEST', 'TS_OPERATOR_SDK_ENVTEST_KUBECONFIG'] as const;

/**
 * This process's environment without NODE_TEST_CONTEXT (and without
 * `without`): set, even empty, it tells a `node --test` inside the child that
 * it is a child of our runner, so it reports to ours instead of printing its
 * results, or runs nothing at all.
 */
export function childEnv(without: readonly string[] = []): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['NODE_TEST_CONTEXT', ...without]) delete env[name];
  return env;
}

/** A temporary directory named `<prefix>-XXXXXX`, removed when test `t` ends. */
export function testDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

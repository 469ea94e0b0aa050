/**
 * The envtest suite helpers a generated project's tests use, on the paths
 * that need no control plane: the one-line failure without binaries, the
 * visible SKIP_ENVTEST opt-out, a test file run without the global setup,
 * and reconcileContext(). generated-ci.test.ts runs them on a real one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import {
  SHARED_KUBECONFIG_VARIABLE,
  envtestSuite,
  reconcileContext,
  sharedKubeConfig,
  skipEnvtest,
} from '../../src/runtime/envtest/index.js';

class Failed extends Error {}

describe('envtestSuite and friends', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    delete process.env.SKIP_ENVTEST;
    delete process.env[SHARED_KUBECONFIG_VARIABLE];
    delete process.env.TEST_ASSET_ETCD;
    delete process.env.TEST_ASSET_KUBE_APISERVER;
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  test('without binaries, globalSetup fails with one line naming KUBEBUILDER_ASSETS, setup-envtest and the opt-out', async () => {
    process.env.KUBEBUILDER_ASSETS = join(mkdtempSync(join(tmpdir(), 'no-assets-')), 'missing');
    const lines: string[] = [];
    const hooks = envtestSuite(
      {},
      {
        log: (line) => lines.push(line),
        fail: (line) => {
          lines.push(line);
          throw new Failed(line);
        },
      },
    );
    await assert.rejects(hooks.globalSetup(), Failed);
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0]!, /\n/);
    assert.match(
      lines[0]!,
      /^envtest: cannot start the test API server: .*missing\/etcd not found .*KUBEBUILDER_ASSETS.*setup-envtest.*\(or set SKIP_ENVTEST=true to skip the envtest tests\)$/,
    );
    assert.equal(process.env[SHARED_KUBECONFIG_VARIABLE], undefined);
    await hooks.globalTeardown();
  });

  test('SKIP_ENVTEST=true starts nothing, says so, and gives every envtest test a skip reason', async () => {
    process.env.SKIP_ENVTEST = 'true';
    process.env.KUBEBUILDER_ASSETS = '/nonexistent';
    const lines: string[] = [];
    const hooks = envtestSuite({}, { log: (line) => lines.push(line), fail: (line) => assert.fail(line) });
    await hooks.globalSetup();
    assert.deepEqual(lines, [
      'envtest: SKIP_ENVTEST=true, so no API server is started and the envtest tests are skipped',
    ]);
    assert.equal(skipEnvtest(), 'SKIP_ENVTEST=true: no API server in this run');
    delete process.env.SKIP_ENVTEST;
    assert.equal(skipEnvtest(), false);
    await hooks.globalTeardown();
  });

  test('sharedKubeConfig() outside a run with the global setup throws, naming npm test', () => {
    assert.throws(
      () => sharedKubeConfig(),
      /^Error: envtest: this test run has no shared API server \(TS_OPERATOR_SDK_ENVTEST_KUBECONFIG is unset\): run the tests with `npm test`/,
    );
  });

  test('reconcileContext() gives a live signal, a fresh reconcileID and takes overrides', () => {
    const first = reconcileContext();
    const second = reconcileContext({ controller: 'memcached' });
    assert.equal(first.signal.aborted, false);
    assert.notEqual(first.reconcileID, second.reconcileID);
    assert.equal(first.controller, 'test');
    assert.equal(second.controller, 'memcached');
    assert.equal(typeof first.log.info, 'function');
  });
});

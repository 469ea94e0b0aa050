import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ForbiddenError } from '../../src/runtime/api/errors.js';
import { RestClient } from '../../src/runtime/transport/rest.js';
import { Environment, readCRDs } from '../../src/runtime/envtest/index.js';

const assets = process.env.KUBEBUILDER_ASSETS;

const WIDGET_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.ts-operator-sdk.io
spec:
  group: test.ts-operator-sdk.io
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer }
---
# A non-CRD document in the same file must be ignored.
apiVersion: v1
kind: ConfigMap
metadata: { name: not-a-crd }
`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids whose command line mentions `text` (Linux /proc). */
function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // the process exited while we looked
    }
  }
  return pids;
}

async function eventually<T>(what: string, attempt: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what} did not succeed within ${timeoutMs} ms`, { cause: err });
      await sleep(200);
    }
  }
}

if (!assets) {
  test('KUBEBUILDER_ASSETS is set', () => {
    assert.fail(
      'KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$HOME/.cache/ts-operator-sdk/test-assets/k8s-v1.36.3-etcd-v3.6.8 (or run `npx ts-operator-sdk setup-envtest`) before running the e2e tests',
    );
  });
} else {
  describe('envtest Environment on a real control plane', () => {
    const gadgetCrd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.test.ts-operator-sdk.io' },
      spec: {
        group: 'test.ts-operator-sdk.io',
        scope: 'Cluster',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
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
    const env = new Environment({ binaryAssetsDirectory: assets, crds: [gadgetCrd] });
    let admin: RestClient;
    let crdDir: string;

    before(async () => {
      admin = new RestClient(await env.start());
      crdDir = await mkdtemp(join(tmpdir(), 'envtest-crds-'));
      await writeFile(join(crdDir, 'widgets.yaml'), WIDGET_CRD);
    });

    after(async () => {
      await env.stop();
      await rm(crdDir, { recursive: true, force: true });
    });

    test('start returns an admin KubeConfig that can create and read a ConfigMap', async () => {
      assert.equal(env.kubeConfig.getCurrentUser()?.name, 'default');
      await admin.request('POST', '/api/v1/namespaces/default/configmaps', {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first' }, data: { answer: '42' } },
      });
      const read = await admin.request<{ data: Record<string, string> }>(
        'GET',
        '/api/v1/namespaces/default/configmaps/first',
      );
      assert.deepEqual(read.data, { answer: '42' });
    });

    test('CRDs given to the constructor are served when start returns', async () => {
      const created = await admin.request<{ metadata: { name: string } }>(
        'POST',
        '/apis/test.ts-operator-sdk.io/v1/gadgets',
        {
          body: { apiVersion: 'test.ts-operator-sdk.io/v1', kind: 'Gadget', metadata: { name: 'g1' } },
        },
      );
      assert.equal(created.metadata.name, 'g1');
    });

    test('kubeConfigPath writes a kubeconfig that kubectl accepts', async () => {
      const path = env.kubeConfigPath();
      assert.ok(path.startsWith(env.rootDir));
      const { stdout } = await promisify(execFile)('kubectl', [
        '--kubeconfig',
        path,
        'get',
        'configmap',
        'first',
        '-n',
        'default',
        '-o',
        'jsonpath={.data.answer}',
      ]);
      assert.equal(stdout, '42');
    });

    test('installCRDs makes the CRD served at once, ignoring non-CRD documents', async () => {
      const installed = await env.installCRDs({ paths: [crdDir] });
      assert.equal(installed.length, 1);
      const created = await admin.request<{ spec: { size: number } }>(
        'POST',
        '/apis/test.ts-operator-sdk.io/v1/namespaces/default/widgets',
        {
          body: {
            apiVersion: 'test.ts-operator-sdk.io/v1',
            kind: 'Widget',
            metadata: { name: 'w1' },
            spec: { size: 3 },
          },
        },
      );
      assert.equal(created.spec.size, 3);
      // Installing again updates instead of failing with AlreadyExists.
      assert.equal((await env.installCRDs({ paths: [join(crdDir, 'widgets.yaml')] })).length, 1);
    });

    test('a missing CRD path is ignored by default', async () => {
      assert.deepEqual(await env.installCRDs({ paths: [join(crdDir, 'missing')] }), []);
    });

    test('addUser gets 403 without RBAC and succeeds once a RoleBinding grants access', async () => {
      const alice = new RestClient(await env.addUser({ name: 'alice', groups: ['testers'] }));
      await assert.rejects(alice.request('GET', '/api/v1/namespaces/default/configmaps'), (err: unknown) => {
        assert.ok(err instanceof ForbiddenError, `expected ForbiddenError, got ${String(err)}`);
        assert.match(err.message, /User "alice" cannot list resource "configmaps"/);
        return true;
      });
      await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
        body: {
          metadata: { name: 'configmap-reader' },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
        },
      });
      await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
        body: {
          metadata: { name: 'testers-read' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-reader' },
          subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'testers' }],
        },
      });
      // The RBAC authorizer reads bindings from an informer, so it lags the write slightly.
      const list = await eventually('list as alice', () =>
        alice.request<{ items: unknown[] }>('GET', '/api/v1/namespaces/default/configmaps'),
      );
      assert.ok(list.items.length >= 1);
      await assert.rejects(alice.request('DELETE', '/api/v1/namespaces/default/configmaps/first'), ForbiddenError);
    });

    test('stopAPIServer/startAPIServer keeps data, port and credentials', async () => {
      const before = env.pids.apiServer;
      await env.stopAPIServer();
      assert.equal(env.pids.apiServer, undefined);
      assert.ok(before !== undefined && !isAlive(before));
      await assert.rejects(admin.request('GET', '/api/v1/namespaces/default/configmaps/first'));
      await env.startAPIServer();
      const read = await admin.request<{ data: Record<string, string> }>(
        'GET',
        '/api/v1/namespaces/default/configmaps/first',
      );
      assert.deepEqual(read.data, { answer: '42' });
    });

    test('stopEtcd/startEtcd keeps the data directory', async () => {
      await env.stopEtcd();
      await env.startEtcd();
      const read = await eventually('read after etcd restart', () =>
        admin.request<{ data: Record<string, string> }>('GET', '/api/v1/namespaces/default/configmaps/first'),
      );
      assert.deepEqual(read.data, { answer: '42' });
    });

    test('stop kills both processes and removes the temp dir, and is idempotent', async () => {
      const { etcd, apiServer } = env.pids;
      const rootDir = env.rootDir;
      assert.ok(etcd && apiServer && isAlive(etcd) && isAlive(apiServer));
      await env.stop();
      assert.equal(isAlive(etcd), false, 'etcd still running');
      assert.equal(isAlive(apiServer), false, 'kube-apiserver still running');
      assert.equal(existsSync(rootDir), false, `${rootDir} left behind`);
      await env.stop();
      assert.throws(() => env.kubeConfig, /not started/);
    });
  });

  describe('envtest start failures', () => {
    test('a kube-apiserver that exits names the binary, shows its output, and leaves nothing behind', async () => {
      // os.tmpdir() reads TMPDIR on each call, so this run's files land in a directory only this test watches.
      const scratch = await mkdtemp(join(tmpdir(), 'envtest-failure-'));
      const savedTmpdir = process.env.TMPDIR;
      process.env.TMPDIR = scratch;
      try {
        const env = new Environment({ binaryAssetsDirectory: assets, apiServerExtraArgs: { 'no-such-flag': 'x' } });
        await assert.rejects(env.start(), (err: Error) => {
          assert.match(
            err.message,
            /^kube-apiserver \(.*kube-apiserver\) exited with code \d+ before becoming healthy/,
          );
          assert.match(err.message, /unknown flag: --no-such-flag/);
          return true;
        });
        assert.deepEqual(await readdir(scratch), [], 'temp dir left behind');
        assert.deepEqual(processesMentioning(scratch), [], 'control-plane process left running');
      } finally {
        if (savedTmpdir === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = savedTmpdir;
        await rm(scratch, { recursive: true, force: true });
      }
    });

    /**
     * Writes a stand-in kube-apiserver (a Node script) that records its pid
     * and ignores SIGTERM. `serving` makes it answer every HTTPS request with
     * 200 using the cert-dir's serving certificate, so start() succeeds.
     */
    async function fakeApiServer(dir: string, serving: boolean): Promise<{ path: string; pid: () => number }> {
      const path = join(dir, 'kube-apiserver');
      const pidFile = join(dir, 'pid');
      const serve = serving
        ? `const flags = Object.fromEntries(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
           const read = (name) => fs.readFileSync(flags['cert-dir'] + '/' + name);
           require('node:https').createServer({ cert: read('apiserver.crt'), key: read('apiserver.key') }, (req, res) => res.end('ok'))
             .listen(Number(flags['secure-port']), flags['bind-address']);`
        : 'setInterval(() => {}, 1000);';
      await writeFile(
        path,
        `#!${process.execPath}
const fs = require('node:fs');
fs.writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
process.on('SIGTERM', () => console.log('fake apiserver ignoring SIGTERM'));
console.log('fake apiserver started');
${serve}
`,
        { mode: 0o755 },
      );
      return { path, pid: () => Number(readFileSync(pidFile, 'utf8')) };
    }

    /** Runs `body` with env vars set and os.tmpdir() pointing at a fresh dir, restoring both after. */
    async function withScratchEnv(
      vars: Record<string, string>,
      body: (scratch: string) => Promise<void>,
    ): Promise<void> {
      const scratch = await mkdtemp(join(tmpdir(), 'envtest-scratch-'));
      const all = { ...vars, TMPDIR: scratch };
      const saved = Object.fromEntries(Object.keys(all).map((key) => [key, process.env[key]]));
      Object.assign(process.env, all);
      try {
        await body(scratch);
      } finally {
        // Mutate in place: replacing process.env would leave the real environment (which os.tmpdir() reads) changed.
        for (const [key, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[key];
          else process.env[key] = value;
        }
        await rm(scratch, { recursive: true, force: true });
      }
    }

    test('a kube-apiserver that never gets healthy times out per KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, is killed, and leaves nothing behind', async () => {
      const fakeDir = await mkdtemp(join(tmpdir(), 'envtest-fake-'));
      try {
        const fake = await fakeApiServer(fakeDir, false);
        await withScratchEnv(
          { TEST_ASSET_KUBE_APISERVER: fake.path, KUBEBUILDER_CONTROLPLANE_START_TIMEOUT: '1500ms' },
          async (scratch) => {
            const env = new Environment({ binaryAssetsDirectory: assets });
            const started = Date.now();
            await assert.rejects(env.start(), (err: Error) => {
              assert.match(
                err.message,
                /^kube-apiserver \(.*envtest-fake-.*\) did not become healthy within 1500 ms \(raise startTimeoutMs or KUBEBUILDER_CONTROLPLANE_START_TIMEOUT\)/,
              );
              assert.match(err.message, /fake apiserver started/);
              return true;
            });
            assert.ok(Date.now() - started >= 1500, 'gave up before the timeout');
            assert.equal(isAlive(fake.pid()), false, 'the fake is still running');
            assert.deepEqual(await readdir(scratch), [], 'temp dir left behind');
          },
        );
      } finally {
        await rm(fakeDir, { recursive: true, force: true });
      }
    });

    test('stop escalates to SIGKILL after stopTimeoutMs when kube-apiserver ignores SIGTERM', async () => {
      const fakeDir = await mkdtemp(join(tmpdir(), 'envtest-fake-'));
      try {
        const fake = await fakeApiServer(fakeDir, true);
        await withScratchEnv({ TEST_ASSET_KUBE_APISERVER: fake.path }, async (scratch) => {
          const env = new Environment({ binaryAssetsDirectory: assets, stopTimeoutMs: 700 });
          await env.start();
          assert.equal(env.pids.apiServer, fake.pid());
          const stopping = Date.now();
          await env.stop();
          const took = Date.now() - stopping;
          assert.ok(took >= 700, `stop returned after ${took} ms, before the SIGTERM grace period ended`);
          assert.equal(isAlive(fake.pid()), false, 'the SIGTERM-ignoring fake is still running');
          assert.deepEqual(await readdir(scratch), [], 'temp dir left behind');
        });
      } finally {
        await rm(fakeDir, { recursive: true, force: true });
      }
    });

    test('a missing binary directory gives a one-line error with the fix', async () => {
      const env = new Environment({ binaryAssetsDirectory: '/nonexistent/envtest-bin' });
      await assert.rejects(env.start(), (err: Error) => {
        assert.equal(err.message.includes('\n'), false);
        assert.match(
          err.message,
          /\/nonexistent\/envtest-bin\/etcd not found.*set KUBEBUILDER_ASSETS.*npx ts-operator-sdk setup-envtest/,
        );
        return true;
      });
    });
  });

  describe('a test process that ends without stop()', () => {
    const childScript = `
      import { Environment } from ${JSON.stringify(new URL('../../src/runtime/envtest/index.js', import.meta.url).href)};
      const env = new Environment({ binaryAssetsDirectory: process.env.KUBEBUILDER_ASSETS });
      await env.start();
      console.log(JSON.stringify({ ...env.pids, rootDir: env.rootDir }));
      if (process.argv[1] === 'exit') process.exit(0);
      setInterval(() => {}, 1000);
    `;

    /** Starts an Environment in a child Node process and returns what it reports once started. */
    async function startInChild(
      mode: 'exit' | 'wait',
    ): Promise<{ child: ReturnType<typeof spawn>; etcd: number; apiServer: number; rootDir: string }> {
      const child = spawn(process.execPath, ['--input-type=module', '-e', childScript, mode], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('\n')) resolve(output.split('\n')[0] ?? '');
        });
        child.once('exit', (code) => reject(new Error(`child exited with ${code} before reporting: ${output}`)));
      });
      const reported = JSON.parse(line) as { etcd: number; apiServer: number; rootDir: string };
      return { child, ...reported };
    }

    async function waitForExit(child: ReturnType<typeof spawn>): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise((resolve) => child.once('exit', resolve));
    }

    test('process.exit kills both binaries and removes the temp dir', async () => {
      const { child, etcd, apiServer, rootDir } = await startInChild('exit');
      await waitForExit(child);
      await eventually('binaries gone', async () => assert.ok(!isAlive(etcd) && !isAlive(apiServer)), 5000);
      assert.equal(existsSync(rootDir), false, `${rootDir} left behind`);
    });

    test('SIGTERM kills both binaries, removes the temp dir, and still terminates the process', async () => {
      const { child, etcd, apiServer, rootDir } = await startInChild('wait');
      child.kill('SIGTERM');
      await waitForExit(child);
      assert.equal(child.signalCode, 'SIGTERM');
      await eventually('binaries gone', async () => assert.ok(!isAlive(etcd) && !isAlive(apiServer)), 5000);
      assert.equal(existsSync(rootDir), false, `${rootDir} left behind`);
    });

    test('SIGKILL of the test process still takes both binaries down (parent-death signal)', async () => {
      const { child, etcd, apiServer, rootDir } = await startInChild('wait');
      try {
        child.kill('SIGKILL');
        await waitForExit(child);
        await eventually('binaries gone', async () => assert.ok(!isAlive(etcd) && !isAlive(apiServer)), 5000);
      } finally {
        // Nothing runs in a SIGKILLed process, so its temp dir is the one thing left to clean.
        await rm(rootDir, { recursive: true, force: true });
      }
    });
  });

  describe('reading CRD files', () => {
    test('errorIfCRDPathMissing turns a missing path into an error naming the fix', async () => {
      await assert.rejects(
        readCRDs(['/nonexistent/crds'], true),
        /CRD path \/nonexistent\/crds does not exist: fix crdDirectoryPaths/,
      );
      assert.deepEqual(await readCRDs(['/nonexistent/crds'], false), []);
    });
  });
}

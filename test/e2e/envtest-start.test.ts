/**
 * `ts-operator-sdk envtest start`, run as a user runs it: a child process in a
 * project directory, on the real etcd and kube-apiserver. It must serve the
 * kubeconfig it prints (kubectl sees the project's CRD), stop cleanly on
 * SIGINT (exit 0, no process, temp dir or file left), exit non-zero when the
 * plane dies under it, and refuse bad input in one line without touching
 * the project.
 *
 * Run: KUBEBUILDER_ASSETS=... node --test dist/test/e2e/envtest-start.test.js
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { CLI, hashTree, tempProjectDir, writeStandInCrd } from '../scaffold/harness.js';

const execFileAsync = promisify(execFile);
const CRD = { group: 'cache.example.com', version: 'v1', kind: 'Memcached', plural: 'memcacheds', namespaced: true };
/** Generous: the machine is shared and starting kube-apiserver can take long on it. */
const START_TIMEOUT_MS = 120_000;

function assets(): string {
  const dir = process.env.KUBEBUILDER_ASSETS;
  if (!dir)
    throw new Error('KUBEBUILDER_ASSETS is not set: run this test through scripts/with-test-assets.sh (npm test does)');
  return dir;
}

/** A project directory with a CRD where `make manifests` writes them. */
function projectWithCrd(): string {
  const dir = tempProjectDir();
  writeStandInCrd(dir, CRD);
  return dir;
}

interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Started {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs: number, started?: Started): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (started && started.child.exitCode !== null)
      throw new Error(`the CLI exited (${started.child.exitCode}) while waiting for ${what}:\n${started.stderr()}`);
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${started ? `:\n${started.stderr()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The pids whose parent is `pid`, read from /proc. */
function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        // Field 4 of /proc/<pid>/stat is the ppid; the command name before it may hold spaces, so split after its ')'.
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === pid ? [Number(entry)] : [];
      } catch {
        return [];
      }
    });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie has exited; only its parent has not reaped it yet.
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The control plane's temp dir, read from etcd's --data-dir=<root>/etcd. */
function rootDirOf(pids: number[]): string {
  for (const pid of pids) {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const dataDir = args.find((arg) => arg.startsWith('--data-dir='));
    if (dataDir) return dataDir.slice('--data-dir='.length).replace(/\/etcd$/, '');
  }
  throw new Error(`no etcd among ${pids.join(', ')}`);
}

/** Starts `envtest start` in `project` and waits for its export line; returns the kubeconfig path and the plane's pids. */
async function startPlane(
  t: TestContext,
  project: string,
  extraArgs: string[] = [],
): Promise<{ started: Started; kubeconfig: string; pids: number[]; rootDir: string }> {
  // A generous start bound: the machine is shared.
  const started = startCli(['envtest', 'start', '--bin-dir', assets(), ...extraArgs], project, {
    ...process.env,
    KUBEBUILDER_CONTROLPLANE_START_TIMEOUT: '180s',
  });
  // A failed assertion must not leave the CLI (and this test file) running.
  t.after(() => {
    if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
  });
  const kubeconfig = await waitFor(
    'the export line',
    () => /^export KUBECONFIG=(.+)$/m.exec(started.stdout())?.[1],
    START_TIMEOUT_MS,
    started,
  );
  const pids = childPids(started.child.pid!);
  assert.equal(pids.length, 2, `etcd and kube-apiserver, got pids ${pids.join(', ')}`);
  return { started, kubeconfig, pids, rootDir: rootDirOf(pids) };
}

describe('envtest start', { timeout: 600_000 }, () => {
  test('serves the kubeconfig it prints, with the CRDs installed, and SIGINT stops everything with exit 0', async (t) => {
    const project = projectWithCrd();
    const before = hashTree(project);
    const { started, kubeconfig, pids, rootDir } = await startPlane(t, project);
    assert.equal(kubeconfig, join(project, 'bin', 'envtest.kubeconfig'));
    assert.equal(started.stdout(), `export KUBECONFIG=${kubeconfig}\n`, 'stdout is only the line to eval');
    const crd = await execFileAsync(
      'kubectl',
      ['--kubeconfig', kubeconfig, 'get', 'crd', `${CRD.plural}.${CRD.group}`, '-o', 'name'],
      { timeout: 60_000 },
    );
    assert.equal(crd.stdout.trim(), `customresourcedefinition.apiextensions.k8s.io/${CRD.plural}.${CRD.group}`);
    await execFileAsync('kubectl', ['--kubeconfig', kubeconfig, 'get', CRD.plural, '-n', 'default'], {
      timeout: 60_000,
    });
    assert.ok(existsSync(rootDir));

    started.child.kill('SIGINT');
    const exit = await started.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, started.stderr());
    for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} is still running`);
    assert.equal(existsSync(rootDir), false, `${rootDir} left behind`);
    // The kubeconfig and the bin/ it created are gone: the project is as it was.
    assert.equal(hashTree(project), before);
    assert.match(started.stderr(), /SIGINT received, stopping/);
  });

  test('SIGTERM stops it too, and a fixed --port is the one in the kubeconfig', async (t) => {
    const project = projectWithCrd();
    const port = await freePort();
    const { started, kubeconfig, pids, rootDir } = await startPlane(t, project, [
      '--port',
      String(port),
      '--kubeconfig',
      'kube/config',
    ]);
    assert.equal(kubeconfig, join(project, 'kube', 'config'));
    assert.equal(
      (parse(readFileSync(kubeconfig, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> }).clusters[0]!
        .cluster.server,
      `https://127.0.0.1:${port}`,
    );
    started.child.kill('SIGTERM');
    assert.deepEqual(await started.exited, { code: 0, signal: null }, started.stderr());
    for (const pid of pids) assert.equal(isAlive(pid), false);
    assert.equal(existsSync(rootDir), false);
    assert.equal(existsSync(join(project, 'kube')), false);
  });

  test('exits non-zero in one line when kube-apiserver dies under it, and leaves nothing running', async (t) => {
    const project = projectWithCrd();
    const { started, kubeconfig, pids, rootDir } = await startPlane(t, project);
    const apiServer = pids.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kube-apiserver'))!;
    process.kill(apiServer, 'SIGKILL');
    const exit = await started.exited;
    assert.equal(exit.code, 1, started.stderr());
    const errors = started
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('Error:'));
    assert.deepEqual(errors.length, 1, started.stderr());
    assert.match(errors[0]!, /^Error: kube-apiserver exited unexpectedly; the control plane is stopped\./);
    for (const pid of pids) assert.equal(isAlive(pid), false);
    assert.equal(existsSync(rootDir), false);
    assert.equal(existsSync(kubeconfig), false);
  });

  test("merges its context into the user's kubeconfig (through a symlink), and puts the file back byte for byte on SIGINT", async (t) => {
    const project = projectWithCrd();
    const home = mkdtempSync(join(tmpdir(), 'envtest-home-'));
    const userConfig = join(home, 'config');
    const text =
      '# my clusters\napiVersion: v1\nclusters:\n- cluster:\n    server: https://prod.example.com:6443\n  name: prod\ncontexts:\n- context:\n    cluster: prod\n    user: admin\n  name: prod\ncurrent-context: prod\nkind: Config\npreferences: {}\nusers:\n- name: admin\n  user:\n    token: secret\n';
    writeFileSync(userConfig, text, { mode: 0o640 });
    symlinkSync(userConfig, join(project, 'kubeconfig'));
    const before = hashTree(project);
    const { started, kubeconfig } = await startPlane(t, project, ['--kubeconfig', 'kubeconfig']);
    assert.equal(kubeconfig, join(project, 'kubeconfig'));
    assert.match(started.stderr(), /added the context ts-operator-sdk-envtest-\d+ to kubeconfig and made it current/);
    // kubectl reads the merged file: our context is current, the user's are still there.
    const contexts = await execFileAsync(
      'kubectl',
      ['--kubeconfig', kubeconfig, 'config', 'get-contexts', '-o', 'name'],
      { timeout: 60_000 },
    );
    assert.deepEqual(contexts.stdout.trim().split('\n').sort(), [
      'prod',
      `ts-operator-sdk-envtest-${new URL((parse(readFileSync(userConfig, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> }).clusters[1]!.cluster.server).port}`,
    ]);
    const crd = await execFileAsync(
      'kubectl',
      ['--kubeconfig', kubeconfig, 'get', 'crd', `${CRD.plural}.${CRD.group}`, '-o', 'name'],
      { timeout: 60_000 },
    );
    assert.equal(crd.stdout.trim(), `customresourcedefinition.apiextensions.k8s.io/${CRD.plural}.${CRD.group}`);
    assert.ok(lstatSync(join(project, 'kubeconfig')).isSymbolicLink());

    started.child.kill('SIGINT');
    assert.deepEqual(await started.exited, { code: 0, signal: null }, started.stderr());
    assert.equal(readFileSync(userConfig, 'utf8'), text);
    assert.equal(statSync(userConfig).mode & 0o777, 0o640);
    assert.deepEqual(readdirSync(home), ['config']);
    assert.equal(hashTree(project), before);
  });

  test('takes over the kubeconfig an earlier run left behind (killed with -9), and removes it on SIGTERM', async (t) => {
    const project = projectWithCrd();
    mkdirSync(join(project, 'bin'));
    writeFileSync(
      join(project, 'bin', 'envtest.kubeconfig'),
      '# Written by ts-operator-sdk envtest start (pid 999999999); removed when it stops.\napiVersion: v1\nkind: Config\nclusters: []\n',
      { mode: 0o600 },
    );
    const { started, kubeconfig } = await startPlane(t, project);
    assert.match(
      readFileSync(kubeconfig, 'utf8'),
      new RegExp(`^# Written by ts-operator-sdk envtest start \\(pid ${started.child.pid}\\)`),
    );
    started.child.kill('SIGTERM');
    assert.deepEqual(await started.exited, { code: 0, signal: null }, started.stderr());
    assert.equal(existsSync(kubeconfig), false);
  });

  describe('bad input: one line, exit 1, the project untouched', () => {
    const cases: Array<{
      name: string;
      args: (project: string) => Promise<string[]> | string[];
      env?: () => NodeJS.ProcessEnv;
      error: RegExp;
    }> = [
      {
        name: 'no binaries anywhere',
        args: () => ['envtest', 'start'],
        // No KUBEBUILDER_ASSETS and an empty user cache.
        env: () => {
          const { KUBEBUILDER_ASSETS: _assets, ...rest } = process.env;
          return { ...rest, XDG_DATA_HOME: mkdtempSync(join(tmpdir(), 'empty-data-home-')) };
        },
        error:
          /^Error: no envtest binaries: --bin-dir and KUBEBUILDER_ASSETS are unset and setup-envtest has downloaded none\. Run `make envtest-start`/,
      },
      {
        name: 'a --bin-dir without etcd',
        args: (project) => ['envtest', 'start', '--bin-dir', project],
        error: /^Error: --bin-dir \. has no etcd\. Pass --bin-dir with etcd and kube-apiserver/,
      },
      {
        name: 'the port is in use',
        args: async () => ['envtest', 'start', '--bin-dir', assets(), '--port', String(await busyPort())],
        error:
          /^Error: the control plane did not start: port \d+ on 127\.0\.0\.1 is already in use\. Pass another --port/,
      },
      {
        name: 'a kubeconfig path under a file',
        args: () => ['envtest', 'start', '--bin-dir', assets(), '--kubeconfig', 'PROJECT/envtest.kubeconfig'],
        error:
          /^Error: cannot write the kubeconfig PROJECT\/envtest\.kubeconfig: PROJECT is not a directory\. Pass a writable path with --kubeconfig\.$/,
      },
      {
        name: 'a --crd-dir that does not exist',
        args: () => ['envtest', 'start', '--bin-dir', assets(), '--crd-dir', 'config/nowhere'],
        error: /^Error: --crd-dir config\/nowhere does not exist\./,
      },
    ];
    for (const testCase of cases) {
      test(testCase.name, async () => {
        const project = projectWithCrd();
        writeFileSync(join(project, 'PROJECT'), 'version: "3"\n');
        const before = hashTree(project);
        const started = startCli(await testCase.args(project), project, testCase.env?.() ?? process.env);
        const exit = await started.exited;
        assert.equal(exit.code, 1, started.stderr());
        const lines = started
          .stderr()
          .split('\n')
          .filter((line) => line !== '' && !line.startsWith('starting etcd'));
        assert.equal(lines.length, 1, started.stderr());
        assert.match(lines[0]!, testCase.error);
        assert.equal(started.stdout(), '');
        assert.equal(hashTree(project), before);
      });
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A port held by a listener for the rest of this process. */
let holder: ReturnType<typeof createServer> | undefined;
async function busyPort(): Promise<number> {
  holder ??= createServer();
  if (!holder.listening) await new Promise<void>((resolve) => holder!.listen(0, '127.0.0.1', resolve));
  holder.unref();
  return (holder.address() as { port: number }).port;
}

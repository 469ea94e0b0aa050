/**
 * client.exec and client.logs against real pods on the one-node test
 * cluster: the command really runs in a container (containerd, runc) and its
 * output, exit code and log come back through the API server and kubelet.
 * The image is busybox-static copied into an empty OCI image with buildah
 * (vfs storage, no daemon) and pushed to the cluster's registry.
 * The failures the API server answers without a kubelet are tested on
 * envtest in test/e2e/pod-exec-errors.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Client, Manager, loadKubeConfig, newControllerManagedBy, type Reconciler } from '../../src/runtime/index.js';
import { BadRequestError, ConfigMap, Pod } from '../../src/runtime/api/index.js';
import { mergePatch } from '../../src/runtime/client/index.js';
import { silentLogger } from '../../src/runtime/log/index.js';
import {
  CommandNotFoundError,
  ContainerNotFoundError,
  ExecOutputTooLargeError,
  ExecTimeoutError,
} from '../../src/runtime/pod/index.js';
import { labelSelectorPredicate } from '../../src/runtime/predicate/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { eventually } from '../e2e/eventually.js';
import { useCluster } from './cluster.js';

const namespace = 'default';
/** The busybox applets the pods and commands below use, linked to the one static binary. */
const APPLETS = ['sh', 'echo', 'cat', 'head', 'tr', 'sleep', 'wc', 'seq', 'sed'];
const LOG_LINES = 50;

const cluster = useCluster();

/** Builds the busybox image with buildah into private vfs storage and pushes it; returns its reference. */
function buildBusyboxImage(registry: string, workDir: string): string {
  const rootfs = join(workDir, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(rootfs, 'bin', 'busybox'));
  chmodSync(join(rootfs, 'bin', 'busybox'), 0o755);
  for (const applet of APPLETS) symlinkSync('busybox', join(rootfs, 'bin', applet));
  mkdirSync(join(rootfs, 'tmp'));
  const buildah = (...args: string[]): string =>
    execFileSync(
      'buildah',
      ['--root', join(workDir, 'storage'), '--runroot', join(workDir, 'run'), '--storage-driver', 'vfs', ...args],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    ).trim();
  const image = `${registry}/execlogs-busybox:v1`;
  const container = buildah('from', 'scratch');
  buildah('copy', container, `${rootfs}/`, '/');
  buildah('config', '--env', 'PATH=/bin', '--cmd', '/bin/sh', container);
  buildah('commit', container, image);
  buildah('push', '--tls-verify=false', image, `docker://${image}`);
  return image;
}

describe('client.exec and client.logs on real pods', () => {
  let client: Client;
  let rest: RestClient;
  let workDir: string;
  const shell = { namespace, name: 'exec-shell' };
  const printer = { namespace, name: 'log-printer' };
  const restarter = { namespace, name: 'log-restarter' };

  before(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'execlogs-image-'));
    const image = buildBusyboxImage(cluster().registry, workDir);
    rest = new RestClient(loadKubeConfig(cluster().kubeconfigPath));
    client = new Client({ rest });
    const podOf = (name: string, command: string[], containers: Array<Record<string, unknown>> = []) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
      spec: {
        terminationGracePeriodSeconds: 0,
        automountServiceAccountToken: false,
        containers: [{ name: 'main', image, imagePullPolicy: 'IfNotPresent', command }, ...containers],
      },
    });
    await client.create(
      podOf(
        shell.name,
        ['sleep', '3600'],
        [{ name: 'sidecar', image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
      ),
    );
    await client.create(
      podOf(printer.name, [
        'sh',
        '-c',
        `i=1; while [ $i -le ${LOG_LINES} ]; do echo "line $i"; i=$((i+1)); done; sleep 3600`,
      ]),
    );
    // Each run logs its start time and exits, so the container restarts and has a previous instance.
    await client.create(podOf(restarter.name, ['sh', '-c', 'echo "run started"; sleep 1; exit 1']));
    for (const key of [shell, printer]) {
      await eventually(
        `pod ${key.name} Running`,
        async () => (await client.get(Pod, key)).status?.phase === 'Running',
        180_000,
        500,
      );
    }
  });

  after(async () => {
    await rest?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('exec echo: stdout, empty stderr, exit code 0', async () => {
    assert.deepEqual(await client.exec(shell, 'main', ['echo', 'hello', 'from the pod']), {
      stdout: 'hello from the pod\n',
      stderr: '',
      exitCode: 0,
    });
  });

  it('a failing command: stdout and stderr apart, exit code 3 as a result, not an error', async () => {
    assert.deepEqual(await client.exec(shell, 'main', ['sh', '-c', 'echo out; echo err >&2; exit 3']), {
      stdout: 'out\n',
      stderr: 'err\n',
      exitCode: 3,
    });
  });

  it('a binary the image does not have is a CommandNotFoundError naming it', async () => {
    // runc refuses it: the error channel carries an InternalError Status, not an exit code.
    await assert.rejects(client.exec(shell, 'main', ['no-such-binary', '--flag']), (err: unknown) => {
      assert.ok(err instanceof CommandNotFoundError, `expected CommandNotFoundError, got ${String(err)}`);
      assert.match(
        err.message,
        /could not start the command: exec: "no-such-binary": executable file not found in \$PATH$/,
      );
      assert.equal(err.exitCode, undefined);
      assert.equal(err.status?.reason, 'InternalError');
      return true;
    });
    await assert.rejects(
      client.exec(shell, 'main', ['/tmp']),
      (err: unknown) => err instanceof CommandNotFoundError && /exec: "\/tmp": permission denied/.test(err.message),
    );
    // The same through a shell: exit code 127, the shell's "not found".
    await assert.rejects(
      client.exec(shell, 'main', ['sh', '-c', 'no-such-binary']),
      (err: unknown) => err instanceof CommandNotFoundError && err.exitCode === 127 && /not found/.test(err.stderr),
    );
  });

  it('stdin reaches the command and is closed, so cat ends', async () => {
    const input = 'first line\nsecond line\n';
    assert.deepEqual(await client.exec(shell, 'main', ['cat'], { stdin: input }), {
      stdout: input,
      stderr: '',
      exitCode: 0,
    });
    const bytes = Buffer.alloc(300_000, 'y');
    assert.equal(
      (await client.exec(shell, 'main', ['wc', '-c'], { stdin: bytes })).stdout.trim(),
      String(bytes.length),
    );
  });

  it('1 MiB of output arrives whole, buffered and streamed', async () => {
    const mib = 1024 * 1024;
    const command = ['sh', '-c', `head -c ${mib} /dev/zero | tr '\\0' x; echo done >&2`];
    const result = await client.exec(shell, 'main', command);
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout.length, mib);
    assert.ok(/^x+$/.test(result.stdout), 'every byte is an x');
    assert.equal(result.stderr, 'done\n');

    let streamed = 0;
    let onlyX = true;
    let mostBuffered = 0;
    const sink = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, done) {
        streamed += chunk.length;
        mostBuffered = Math.max(mostBuffered, this.writableLength);
        onlyX &&= chunk.every((byte) => byte === 0x78);
        // A slow consumer: the exec must wait for it rather than drop or buffer without bound.
        setTimeout(done, 1);
      },
    });
    assert.deepEqual(await client.execStream(shell, 'main', command, { stdout: sink }), { exitCode: 0 });
    assert.equal(streamed, mib);
    assert.ok(onlyX);
    // With backpressure, the sink holds about one WebSocket frame beyond its high-water mark, never the whole output.
    assert.ok(mostBuffered < mib / 4, `the sink buffered ${mostBuffered} bytes at once: the exec did not wait for it`);
  });

  it('exec stops a command whose output passes maxOutputBytes, keeping what fitted', async () => {
    await assert.rejects(
      client.exec(shell, 'main', ['sh', '-c', `head -c ${1024 * 1024} /dev/zero | tr '\\0' x`], {
        maxOutputBytes: 64 * 1024,
      }),
      (err: unknown) => {
        assert.ok(err instanceof ExecOutputTooLargeError, `expected ExecOutputTooLargeError, got ${String(err)}`);
        assert.match(err.message, /passed maxOutputBytes \(65536 bytes\).*use execStream/);
        assert.ok(err.stdout.length <= 64 * 1024 && /^x*$/.test(err.stdout));
        return true;
      },
    );
  });

  it('execStream resolves only once a slow sink has taken every byte, stdout and stderr', async () => {
    const taken: Record<string, string> = { out: '', err: '' };
    const slowSink = (name: string) =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          setTimeout(() => {
            taken[name] += chunk.toString('utf8');
            done();
          }, 300);
        },
      });
    const { exitCode } = await client.execStream(shell, 'main', ['sh', '-c', 'echo to-out; echo to-err >&2; exit 4'], {
      stdout: slowSink('out'),
      stderr: slowSink('err'),
    });
    assert.deepEqual({ exitCode, ...taken }, { exitCode: 4, out: 'to-out\n', err: 'to-err\n' });
  });

  it('the container is chosen by name in a two-container pod, and a wrong name is a ContainerNotFoundError', async () => {
    assert.equal((await client.exec(shell, 'sidecar', ['echo', 'sidecar'])).stdout, 'sidecar\n');
    await assert.rejects(client.exec(shell, 'nope', ['echo']), ContainerNotFoundError);
  });

  it('a command that outlives timeoutMs is stopped with ExecTimeoutError', async () => {
    await assert.rejects(client.exec(shell, 'main', ['sleep', '30'], { timeoutMs: 2000 }), ExecTimeoutError);
  });

  it('logs: the whole log, tailLines, limitBytes, timestamps', async () => {
    const lines = (n: number, from = 1): string => Array.from({ length: n }, (_, i) => `line ${from + i}\n`).join('');
    await eventually('the whole log', async () => (await client.logs(printer)) === lines(LOG_LINES), 60_000, 500);
    assert.equal(await client.logs(printer, { tailLines: 5 }), lines(5, LOG_LINES - 4));
    assert.equal(await client.logs(printer, { container: 'main', tailLines: 0 }), '');
    assert.equal(await client.logs(printer, { limitBytes: 10 }), 'line 1\nlin');
    const stamped = (await client.logs(printer, { tailLines: 2, timestamps: true })).split('\n').filter(Boolean);
    assert.equal(stamped.length, 2);
    for (const [i, line] of stamped.entries())
      assert.match(
        line,
        new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z line ${LOG_LINES - 1 + i}$`),
      );
  });

  it('logs previous: the log of the container instance before the restart; none before the first restart', async () => {
    await assert.rejects(client.logs(printer, { previous: true }), (err: unknown) => {
      assert.ok(err instanceof BadRequestError, `expected BadRequestError, got ${String(err)}`);
      assert.match(err.message, /previous terminated container "main" in pod "log-printer" not found/);
      return true;
    });
    await eventually(
      'a restart of log-restarter',
      async () => ((await client.get(Pod, restarter)).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
      120_000,
      500,
    );
    // Just after a restart the kubelet answers, with a 200, "unable to retrieve container logs for containerd://…"
    // as if it were the log (measured here): so the test waits for the real one.
    await eventually(
      "the previous instance's log",
      async () => (await client.logs(restarter, { previous: true })) === 'run started\n',
      60_000,
      500,
    );
  });

  it(
    "a reconciler execs into the pods it manages (seed 001's wish): the manager's client runs the command",
    { timeout: 120_000 },
    async () => {
      const mgr = new Manager({
        kubeConfig: loadKubeConfig(cluster().kubeconfigPath),
        metrics: { bindAddress: '0' },
        healthProbeBindAddress: '0',
        handleSignals: false,
        logger: silentLogger,
      });
      const managerClient = mgr.getClient();
      const reconciler: Reconciler = {
        async reconcile(_ctx, req) {
          const pod = await managerClient.get(Pod, req);
          if (pod.status?.phase !== 'Running') return { requeueAfterMs: 500 };
          const { stdout, exitCode } = await managerClient.exec(pod, 'main', ['sh', '-c', 'echo "$((6 * 7))"']);
          await managerClient.apply(
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `exec-result-${req.name}`, namespace: req.namespace },
              data: { stdout, exitCode: String(exitCode) },
            },
            { fieldManager: 'exec-reconciler', force: true },
          );
          return {};
        },
      };
      newControllerManagedBy(mgr)
        .for(Pod)
        .withEventFilter(labelSelectorPredicate('exec-target=yes'))
        .named('exec')
        .complete(reconciler);
      const running = mgr.start();
      try {
        await client.patch(
          { apiVersion: 'v1', kind: 'Pod', metadata: shell },
          mergePatch({ metadata: { labels: { 'exec-target': 'yes' } } }),
        );
        const result = await eventually(
          "the reconciler's ConfigMap",
          () => client.get(ConfigMap, { namespace, name: `exec-result-${shell.name}` }).catch(() => undefined),
          60_000,
          500,
        );
        assert.deepEqual(result.data, { stdout: '42\n', exitCode: '0' });
      } finally {
        mgr.stop();
        await running.catch(() => undefined);
      }
    },
  );

  it('followLogs yields the tail line by line, then waits until aborted', async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const line of client.followLogs(printer, { tailLines: 3, signal: controller.signal })) {
          seen.push(line);
          // The container sleeps after its last line: the stream stays open until the caller aborts.
          if (seen.length === 3) setTimeout(() => controller.abort(new Error('enough')), 300);
        }
      })(),
      /enough/,
    );
    assert.deepEqual(seen, [`line ${LOG_LINES - 2}`, `line ${LOG_LINES - 1}`, `line ${LOG_LINES}`]);
  });
});

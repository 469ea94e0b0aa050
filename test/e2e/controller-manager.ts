/**
 * A real kube-controller-manager for our own end-to-end tests, so that what
 * owner references and finalizers promise is carried out by Kubernetes'
 * garbage collector instead of being assumed. Users' envtest keeps the two
 * official binaries; this one is built only by scripts/build-test-assets.sh.
 */
import { statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { TinyCA } from '../../src/runtime/certs/ca.js';
import { freeLoopbackPorts } from '../../src/runtime/envtest/controlplane.js';
import { ManagedProcess, releaseTempDirOnExit, removeTempDirOnExit } from '../../src/runtime/envtest/process.js';

const BINARY = 'kube-controller-manager';
/** Per-binary override, named as envtest names its own (TEST_ASSET_KUBE_APISERVER). */
const BINARY_OVERRIDE_VARIABLE = 'TEST_ASSET_KUBE_CONTROLLER_MANAGER';
const LOOPBACK = '127.0.0.1';

/**
 * The controllers our tests rely on, by their 1.36 names
 * (cmd/kube-controller-manager/names). Everything else stays off: no
 * service-account tokens, no node lifecycle, no pod GC that would delete our
 * stand-in Pods, nothing that needs a cloud or a kubelet.
 */
export const TEST_CONTROLLERS = [
  'garbage-collector-controller',
  'deployment-controller',
  'replicaset-controller',
  'namespace-controller',
] as const;

/** Generous: the first start on a busy 2-core machine loads a 100 MB binary and builds every informer. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

/**
 * Finds kube-controller-manager: `TEST_ASSET_KUBE_CONTROLLER_MANAGER`, then
 * the KUBEBUILDER_ASSETS directory. Throws one line naming the fix, because
 * a cache built before this binary joined the test control plane lacks it.
 */
export function locateControllerManager(assetsDirectory = process.env.KUBEBUILDER_ASSETS): string {
  const override = process.env[BINARY_OVERRIDE_VARIABLE];
  const path = override || (assetsDirectory ? join(assetsDirectory, BINARY) : undefined);
  let found = false;
  try {
    found = path !== undefined && statSync(path).isFile();
  } catch {
    // reported below with the fix
  }
  if (!path || !found) {
    const where = override
      ? `${BINARY_OVERRIDE_VARIABLE}=${override}`
      : assetsDirectory
        ? `KUBEBUILDER_ASSETS (${assetsDirectory})`
        : 'nowhere: KUBEBUILDER_ASSETS is not set';
    throw new Error(
      `${BINARY} not found (looked in ${where}): run \`bash scripts/build-test-assets.sh\`, which builds only the missing binary, and set KUBEBUILDER_ASSETS to the directory it prints`,
    );
  }
  return path;
}

/**
 * kube-controller-manager running against an envtest API server as the
 * admin user, with only {@link TEST_CONTROLLERS}, no leader election, and its
 * HTTPS port on a free loopback port (never the default 10257, which another
 * test run may hold). Its serving certificate comes from a throwaway CA, so
 * the health probe verifies TLS instead of skipping verification.
 */
export class ControllerManager {
  private constructor(
    private readonly binary: ManagedProcess,
    private readonly dir: string,
    private readonly probeAgent: Agent,
  ) {}

  /** Starts the binary and waits until its /healthz (which includes each started controller's check) answers 200. */
  static async start(env: Environment, options: { attachOutput?: boolean } = {}): Promise<ControllerManager> {
    const binaryPath = locateControllerManager();
    const dir = await mkdtemp(join(tmpdir(), 'ts-operator-sdk-kcm-'));
    removeTempDirOnExit(dir);
    try {
      const [port] = (await freeLoopbackPorts(1)) as [number];
      const ca = await TinyCA.create('kube-controller-manager-test-ca');
      const serving = await ca.issue({
        usage: 'server',
        commonName: LOOPBACK,
        ipAddresses: [LOOPBACK],
        dnsNames: ['localhost'],
      });
      await writeFile(join(dir, 'serving.crt'), serving.certPem, { mode: 0o600 });
      await writeFile(join(dir, 'serving.key'), serving.keyPem, { mode: 0o600 });
      const probeAgent = new Agent({ connect: { ca: ca.certPem } });
      const healthz = `https://${LOOPBACK}:${port}/healthz`;
      const managed = new ManagedProcess({
        name: BINARY,
        binaryPath,
        args: [
          `--kubeconfig=${env.kubeConfigPath()}`,
          `--controllers=${TEST_CONTROLLERS.join(',')}`,
          '--leader-elect=false',
          `--bind-address=${LOOPBACK}`,
          `--secure-port=${port}`,
          `--tls-cert-file=${join(dir, 'serving.crt')}`,
          `--tls-private-key-file=${join(dir, 'serving.key')}`,
        ],
        // /healthz is on the always-allowed paths, so an anonymous probe is enough.
        healthProbe: async () => {
          const response = await fetch(healthz, { dispatcher: probeAgent, signal: AbortSignal.timeout(2000) });
          await response.body?.cancel();
          return response.status === 200;
        },
        attachOutput: options.attachOutput ?? process.env.KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT === 'true',
      });
      const controllerManager = new ControllerManager(managed, dir, probeAgent);
      try {
        await managed.start(START_TIMEOUT_MS);
      } catch (err) {
        await controllerManager.stop();
        throw err;
      }
      return controllerManager;
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      releaseTempDirOnExit(dir);
      throw err;
    }
  }

  /** The binary's pid while it runs, for tests that check for leftovers. */
  get pid(): number | undefined {
    return this.binary.running ? this.binary.pid : undefined;
  }

  /** The last few KB of its output, for failure messages. */
  get output(): string {
    return this.binary.output;
  }

  /** SIGTERM (it stops its controllers and exits), SIGKILL after 20 s; removes its temp dir. Idempotent. */
  async stop(): Promise<void> {
    try {
      await this.binary.stop(STOP_TIMEOUT_MS);
    } finally {
      await this.probeAgent.close().catch(() => undefined);
      await rm(this.dir, { recursive: true, force: true });
      releaseTempDirOnExit(this.dir);
    }
  }
}

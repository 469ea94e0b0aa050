import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RestConfig } from '../transport/kubeconfig.js';
import { RestClient } from '../transport/rest.js';
import { locateBinary } from './assets.js';
import { ControlPlane, type EnvtestUser } from './controlplane.js';
import { installCRDs, readCRDs } from './crds.js';
import type { WebhookServerOptions } from '../webhook/server.js';
import { WebhookInstall, type WebhookInstallOptions } from './webhook-install.js';

/** controller-runtime's default for both starting and stopping the control plane. */
export const DEFAULT_CONTROL_PLANE_TIMEOUT_MS = 20_000;
/** The admin identity envtest creates: `system:masters` bypasses RBAC. */
export const ADMIN_USER: EnvtestUser = { name: 'default', groups: ['system:masters'] };

/** How an {@link Environment} finds its binaries, what it installs and how long it waits. */
export interface EnvironmentOptions {
  /**
   * Directory with etcd and kube-apiserver; TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD
   * still override single binaries. Default: KUBEBUILDER_ASSETS, then /usr/local/kubebuilder/bin.
   */
  binaryAssetsDirectory?: string;
  /** Files or directories of CRD YAML (multi-document allowed), installed by `start()`. Default: none. */
  crdDirectoryPaths?: string[];
  /** CRD objects installed by `start()`, for CRDs built in code. Default: none. */
  crds?: object[];
  /** Fail `start()` when a CRD path does not exist, to catch a wrong path. Default: false, as in controller-runtime. */
  errorIfCRDPathMissing?: boolean;
  /** Per-component start timeout. Default: KUBEBUILDER_CONTROLPLANE_START_TIMEOUT (a Go duration like `60s`, or milliseconds) if set, else 20 s. */
  startTimeoutMs?: number;
  /** Per-component stop timeout before SIGKILL. Default: KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT if set, else 20 s. */
  stopTimeoutMs?: number;
  /** Pipe etcd and kube-apiserver output to this process, for debugging. Default: true only if KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT is `true`. */
  attachControlPlaneOutput?: boolean;
  /** Extra or overriding kube-apiserver flags, keyed by flag name (leading dashes are dropped). Default: none. */
  apiServerExtraArgs?: Record<string, string>;
  /**
   * Run admission and conversion webhooks against the test API server: make
   * certificates, pick a loopback port, install `config/webhook`'s
   * configurations pointed at it, and patch the listed CRDs for conversion.
   * Pass `env.webhookServerOptions()` to the Manager. Default: none.
   */
  webhookInstallOptions?: WebhookInstallOptions;
  /** kube-apiserver's port on 127.0.0.1. Default: a free port. */
  apiServerPort?: number;
}

/**
 * A real etcd and kube-apiserver for tests, like controller-runtime's
 * envtest.Environment. There is no controller-manager, scheduler or kubelet:
 * objects are stored and validated, but nothing acts on them.
 *
 * ```ts
 * const env = new Environment({ crdDirectoryPaths: ['config/crd/bases'] });
 * const kubeConfig = await env.start();
 * // ... run the manager against kubeConfig ...
 * await env.stop();
 * ```
 */
export class Environment {
  private plane: ControlPlane | undefined;
  private admin: RestConfig | undefined;
  private adminKubeConfigPath: string | undefined;
  private starting: Promise<RestConfig> | undefined;
  private webhooks: WebhookInstall | undefined;

  constructor(private readonly options: EnvironmentOptions = {}) {}

  /** The admin REST config (user `default`, group `system:masters`): pass it to `new Manager({ kubeConfig })` or `new RestClient()`; for client-node's own clients, `toClientNodeKubeConfig(env.kubeConfig)` from ts-operator-sdk/client-node. Valid after `start()`. */
  get kubeConfig(): RestConfig {
    if (!this.admin) throw new Error('envtest: the Environment is not started: await env.start() first');
    return this.admin;
  }

  /** The temporary directory holding certs, etcd data and kubeconfig files; valid after `start()`. */
  get rootDir(): string {
    return this.startedPlane().rootDir;
  }

  /** The pids of etcd and kube-apiserver while they run, for tests that check for leftovers. */
  get pids(): { etcd?: number; apiServer?: number } {
    return {
      etcd: this.plane?.etcd.running ? this.plane.etcd.pid : undefined,
      apiServer: this.plane?.apiServer.running ? this.plane.apiServer.pid : undefined,
    };
  }

  /**
   * Starts etcd and kube-apiserver, waits until both are healthy, installs
   * the configured CRDs and returns the admin KubeConfig. On failure
   * everything started so far is stopped and removed.
   */
  start(): Promise<RestConfig> {
    if (this.admin) return Promise.resolve(this.admin);
    this.starting ??= this.startOnce().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startOnce(): Promise<RestConfig> {
    const plane = await ControlPlane.prepare(
      {
        etcdPath: locateBinary('etcd', this.options.binaryAssetsDirectory),
        apiServerPath: locateBinary('kube-apiserver', this.options.binaryAssetsDirectory),
        startTimeoutMs:
          this.options.startTimeoutMs ??
          durationFromEnv('KUBEBUILDER_CONTROLPLANE_START_TIMEOUT') ??
          DEFAULT_CONTROL_PLANE_TIMEOUT_MS,
        stopTimeoutMs:
          this.options.stopTimeoutMs ??
          durationFromEnv('KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT') ??
          DEFAULT_CONTROL_PLANE_TIMEOUT_MS,
        attachOutput:
          this.options.attachControlPlaneOutput ?? process.env.KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT === 'true',
        apiServerExtraArgs: this.options.apiServerExtraArgs ?? {},
        apiServerPort: this.options.apiServerPort,
      },
      ADMIN_USER,
    );
    this.plane = plane;
    try {
      await plane.startEtcd();
      await plane.startAPIServer();
      this.admin = plane.adminKubeConfig();
      if (this.options.webhookInstallOptions)
        this.webhooks = await WebhookInstall.prepare(this.options.webhookInstallOptions, plane.rootDir);
      await this.installCRDs({ paths: this.options.crdDirectoryPaths, crds: this.options.crds });
      await this.webhooks?.install(new RestClient(this.admin, 'ts-operator-sdk-envtest'));
      return this.admin;
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /**
   * Where the manager's webhook server must listen and find its certificate
   * for the installed webhooks to reach it: `new Manager({ kubeConfig,
   * webhookServer: env.webhookServerOptions() })`. Needs `webhookInstallOptions`.
   */
  webhookServerOptions(): WebhookServerOptions {
    this.startedPlane();
    if (!this.webhooks)
      throw new Error(
        "envtest: no webhooks were installed: pass webhookInstallOptions (e.g. { paths: ['config/webhook'] }) to new Environment()",
      );
    return { ...this.webhooks.serverOptions };
  }

  /** Path of a kubeconfig file for the admin user, for kubectl and child processes. Removed by `stop()`. */
  kubeConfigPath(): string {
    const plane = this.startedPlane();
    if (!this.adminKubeConfigPath) {
      const path = join(plane.rootDir, 'admin.kubeconfig');
      writeFileSync(path, this.kubeConfig.exportConfig(), { mode: 0o600 });
      this.adminKubeConfigPath = path;
    }
    return this.adminKubeConfigPath;
  }

  /** A KubeConfig for a client-certificate user (CN = name, O = groups); RBAC decides what it may do. */
  async addUser(user: EnvtestUser): Promise<RestConfig> {
    return this.startedPlane().kubeConfigFor(user);
  }

  /**
   * Creates (or updates) CRDs from paths and objects, then waits until each
   * is Established and served by discovery. Returns the CRDs as stored.
   */
  async installCRDs(input: { paths?: string[]; crds?: object[] }): Promise<object[]> {
    const fromFiles = await readCRDs(input.paths ?? [], this.options.errorIfCRDPathMissing ?? false);
    const read = [...fromFiles, ...(input.crds ?? [])];
    const all = this.webhooks ? this.webhooks.withConversionWebhooks(read) : read;
    if (all.length === 0) return [];
    return installCRDs(new RestClient(this.kubeConfig, 'ts-operator-sdk-envtest'), all);
  }

  /** Stops both processes (SIGTERM, then SIGKILL after the stop timeout) and removes the temp dir. Idempotent. */
  async stop(): Promise<void> {
    const plane = this.plane;
    this.plane = undefined;
    this.admin = undefined;
    this.adminKubeConfigPath = undefined;
    this.webhooks = undefined;
    if (plane) await plane.destroy();
  }

  /** Stops only kube-apiserver; its port, certs and etcd data stay, so `startAPIServer()` resumes. */
  async stopAPIServer(): Promise<void> {
    await this.startedPlane().stopAPIServer();
  }

  /** Restarts kube-apiserver on the same port with the same certs; existing KubeConfigs keep working. */
  async startAPIServer(): Promise<void> {
    await this.startedPlane().startAPIServer();
  }

  /** Stops only etcd; the API server keeps running and reports storage errors until `startEtcd()`. */
  async stopEtcd(): Promise<void> {
    await this.startedPlane().stopEtcd();
  }

  /** Restarts etcd on the same ports with the same data directory. */
  async startEtcd(): Promise<void> {
    await this.startedPlane().startEtcd();
  }

  private startedPlane(): ControlPlane {
    if (!this.plane || !this.admin) throw new Error('envtest: the Environment is not started: await env.start() first');
    return this.plane;
  }
}

/** Reads a timeout as controller-runtime does (a Go duration such as `1m30s`), also accepting plain milliseconds. */
function durationFromEnv(variable: string): number | undefined {
  const raw = process.env[variable]?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = raw;
  while (rest) {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!match) throw new Error(`envtest: ${variable}=${raw} is not a duration: use a Go duration like 60s or 2m`);
    total += Number(match[1]) * (units[match[2] ?? 's'] ?? 1000);
    rest = rest.slice(match[0].length);
  }
  return total;
}

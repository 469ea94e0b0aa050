import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { TinyCA, type KeyPairPem } from '../certs/ca.js';
import { RestConfig } from '../transport/kubeconfig.js';
import { ManagedProcess, releaseTempDirOnExit, removeTempDirOnExit } from './process.js';

const LOOPBACK = '127.0.0.1';
/** File names inside the API server's cert dir, as envtest names them. */
const CLIENT_CA_FILE = 'client-cert-auth-ca.crt';
const SERVING_CERT_FILE = 'apiserver.crt';
const SERVING_KEY_FILE = 'apiserver.key';
const SERVICE_ACCOUNT_CERT_FILE = 'sa-signer.crt';
const SERVICE_ACCOUNT_KEY_FILE = 'sa-signer.key';
/** Cluster and context name in generated kubeconfigs, as envtest's KubeConfigFromREST uses. */
const KUBECONFIG_CLUSTER = 'envtest';

/** A client-certificate user of the test API server. */
export interface EnvtestUser {
  /** Becomes the certificate's CN, which the API server takes as the user name. */
  name: string;
  /** Become the certificate's O entries, which the API server takes as groups. */
  groups?: string[];
}

/** Everything the control plane needs that the Environment decides. */
export interface ControlPlaneSettings {
  etcdPath: string;
  apiServerPath: string;
  startTimeoutMs: number;
  stopTimeoutMs: number;
  attachOutput: boolean;
  apiServerExtraArgs: Record<string, string>;
  /** A fixed loopback port for kube-apiserver instead of a free one, e.g. for a long-running local plane. */
  apiServerPort?: number;
}

/**
 * etcd plus kube-apiserver on free loopback ports, with certificates made
 * in-process and every file under one temporary directory. Ports, certs and
 * the etcd data directory survive stopping and restarting one component.
 */
export class ControlPlane {
  readonly etcd: ManagedProcess;
  readonly apiServer: ManagedProcess;
  /** `https://127.0.0.1:<port>`, the API server's address. */
  readonly apiServerUrl: string;
  readonly etcdUrl: string;
  private readonly healthAgent: Agent;

  private constructor(
    private readonly settings: ControlPlaneSettings,
    /** The temporary directory holding certs, etcd data and kubeconfigs. */
    readonly rootDir: string,
    private readonly clientCA: TinyCA,
    private readonly servingCAPem: string,
    /** The admin's client certificate: used for health probes and the admin KubeConfig alike. */
    private readonly adminCredentials: KeyPairPem,
    private readonly admin: EnvtestUser,
    ports: { apiServer: number; etcdClient: number; etcdPeer: number },
  ) {
    this.apiServerUrl = `https://${LOOPBACK}:${ports.apiServer}`;
    this.etcdUrl = `http://${LOOPBACK}:${ports.etcdClient}`;
    const certDir = join(rootDir, 'pki');
    this.healthAgent = new Agent({
      connect: { ca: servingCAPem, cert: adminCredentials.certPem, key: adminCredentials.keyPem },
    });
    this.etcd = new ManagedProcess({
      name: 'etcd',
      binaryPath: settings.etcdPath,
      args: [
        `--data-dir=${join(rootDir, 'etcd')}`,
        `--listen-client-urls=${this.etcdUrl}`,
        `--advertise-client-urls=${this.etcdUrl}`,
        `--listen-peer-urls=http://${LOOPBACK}:${ports.etcdPeer}`,
        '--unsafe-no-fsync=true',
      ],
      healthProbe: () => this.etcdHealthy(),
      attachOutput: settings.attachOutput,
    });
    const apiServerArgs: Record<string, string> = {
      'etcd-servers': this.etcdUrl,
      'cert-dir': certDir,
      'secure-port': String(ports.apiServer),
      'bind-address': LOOPBACK,
      'service-cluster-ip-range': '10.0.0.0/24',
      'allow-privileged': 'true',
      // No controller-manager runs, so no default ServiceAccount would ever
      // exist and every Pod create would fail admission.
      'disable-admission-plugins': 'ServiceAccount',
      'authorization-mode': 'RBAC',
      'client-ca-file': join(certDir, CLIENT_CA_FILE),
      'service-account-issuer': `${this.apiServerUrl}/`,
      'service-account-key-file': join(certDir, SERVICE_ACCOUNT_CERT_FILE),
      'service-account-signing-key-file': join(certDir, SERVICE_ACCOUNT_KEY_FILE),
    };
    for (const [flag, value] of Object.entries(settings.apiServerExtraArgs))
      apiServerArgs[flag.replace(/^-+/, '')] = value;
    this.apiServer = new ManagedProcess({
      name: 'kube-apiserver',
      binaryPath: settings.apiServerPath,
      args: Object.entries(apiServerArgs).map(([flag, value]) => `--${flag}=${value}`),
      healthProbe: () => this.apiServerHealthy(),
      attachOutput: settings.attachOutput,
    });
  }

  /** Allocates ports, makes the temp dir and writes all certificates for `admin`; starts nothing. */
  static async prepare(settings: ControlPlaneSettings, admin: EnvtestUser): Promise<ControlPlane> {
    const rootDir = await mkdtemp(join(tmpdir(), 'ts-operator-sdk-envtest-'));
    removeTempDirOnExit(rootDir);
    try {
      const certDir = join(rootDir, 'pki');
      await mkdir(certDir, { recursive: true, mode: 0o700 });
      await mkdir(join(rootDir, 'etcd'), { recursive: true, mode: 0o700 });
      // One call, so that the ports are distinct: each is held until all are found.
      const ports = await freeLoopbackPorts(settings.apiServerPort === undefined ? 3 : 2);
      const [etcdClient, etcdPeer] = ports as [number, number];
      const apiServer = settings.apiServerPort ?? ports[2]!;
      if (settings.apiServerPort !== undefined) await assertPortFree(settings.apiServerPort);
      const clientCA = await TinyCA.create('envtest-environment');
      const servingCA = await TinyCA.create('envtest-environment');
      const serving = await servingCA.issue({
        usage: 'server',
        commonName: 'localhost',
        dnsNames: ['localhost'],
        ipAddresses: [LOOPBACK],
      });
      const serviceAccountSigner = await (await TinyCA.create('envtest-environment')).ownKeyPair();
      const adminCredentials = await clientCA.issue({
        usage: 'client',
        commonName: admin.name,
        organizations: admin.groups,
      });
      await Promise.all([
        writeFile(join(certDir, CLIENT_CA_FILE), clientCA.certPem, { mode: 0o600 }),
        // The chain lets clients that trust only the serving CA verify it.
        writeFile(join(certDir, SERVING_CERT_FILE), serving.certPem + servingCA.certPem, { mode: 0o600 }),
        writeFile(join(certDir, SERVING_KEY_FILE), serving.keyPem, { mode: 0o600 }),
        writeFile(join(certDir, SERVICE_ACCOUNT_CERT_FILE), serviceAccountSigner.certPem, { mode: 0o600 }),
        writeFile(join(certDir, SERVICE_ACCOUNT_KEY_FILE), serviceAccountSigner.keyPem, { mode: 0o600 }),
      ]);
      return new ControlPlane(settings, rootDir, clientCA, servingCA.certPem, adminCredentials, admin, {
        apiServer,
        etcdClient,
        etcdPeer,
      });
    } catch (err) {
      await rm(rootDir, { recursive: true, force: true });
      releaseTempDirOnExit(rootDir);
      throw err;
    }
  }

  /** Starts etcd (again) and waits for its /health. */
  async startEtcd(): Promise<void> {
    await this.etcd.start(this.settings.startTimeoutMs);
  }

  /** Stops etcd, keeping its data directory and ports. */
  async stopEtcd(): Promise<void> {
    await this.etcd.stop(this.settings.stopTimeoutMs);
  }

  /** Starts kube-apiserver (again) and waits for /healthz and /readyz. */
  async startAPIServer(): Promise<void> {
    await this.apiServer.start(this.settings.startTimeoutMs);
  }

  /** Stops kube-apiserver, keeping its port and certificates. */
  async stopAPIServer(): Promise<void> {
    await this.apiServer.stop(this.settings.stopTimeoutMs);
  }

  /** Stops the API server before etcd (so it does not log storage errors), then deletes the temp dir. */
  async destroy(): Promise<void> {
    try {
      await this.stopAPIServer();
      await this.stopEtcd();
    } finally {
      await this.healthAgent.close().catch(() => undefined);
      await rm(this.rootDir, { recursive: true, force: true });
      releaseTempDirOnExit(this.rootDir);
    }
  }

  /** A KubeConfig for the admin user whose certificate the health probes use. */
  adminKubeConfig(): RestConfig {
    return this.kubeConfigWith(this.admin.name, this.adminCredentials);
  }

  /** Issues a client certificate for `user` and wraps it in a KubeConfig for this API server. */
  async kubeConfigFor(user: EnvtestUser): Promise<RestConfig> {
    if (!user.name) throw new Error('envtest: a user needs a non-empty name (it becomes the certificate CN)');
    return this.kubeConfigWith(
      user.name,
      await this.clientCA.issue({ usage: 'client', commonName: user.name, organizations: user.groups }),
    );
  }

  private kubeConfigWith(userName: string, credentials: KeyPairPem): RestConfig {
    const base64 = (pem: string): string => Buffer.from(pem).toString('base64');
    return new RestConfig(
      [{ name: KUBECONFIG_CLUSTER, server: this.apiServerUrl, caData: base64(this.servingCAPem) }],
      [{ name: userName, certData: base64(credentials.certPem), keyData: base64(credentials.keyPem) }],
      [{ name: KUBECONFIG_CLUSTER, cluster: KUBECONFIG_CLUSTER, user: userName }],
      KUBECONFIG_CLUSTER,
    );
  }

  private async etcdHealthy(): Promise<boolean> {
    const response = await fetch(`${this.etcdUrl}/health`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json()) as { health?: string };
    return response.status === 200 && body.health === 'true';
  }

  /** Live (`/healthz`) first, then ready (`/readyz`): RBAC bootstrap finishes only after the port opens. */
  private async apiServerHealthy(): Promise<boolean> {
    for (const path of ['/healthz', '/readyz']) {
      const response = await fetch(`${this.apiServerUrl}${path}`, {
        dispatcher: this.healthAgent,
        signal: AbortSignal.timeout(2000),
      });
      await response.body?.cancel();
      if (response.status !== 200) return false;
    }
    return true;
  }
}

/** Fails, naming the port, when something already listens on it: kube-apiserver would only say so deep in its log. */
async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `envtest: port ${port} on ${LOOPBACK} is already in use`
            : `envtest: cannot listen on ${LOOPBACK}:${port}: ${err.message}`,
        ),
      );
    });
    server.listen(port, LOOPBACK, () => server.close(() => resolve()));
  });
}

/** Holds every listener open until all are bound, so the ports are distinct. */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, LOOPBACK, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === 'string')
      throw new Error('envtest: could not read a free loopback port');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

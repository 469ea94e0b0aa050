import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { TinyCA, type KeyPairPem } from '../../src/runtime/certs/ca.js';
import { freeLoopbackPorts } from '../../src/runtime/envtest/controlplane.js';
import {
  cgroupHierarchies,
  cleanupClusterSync,
  cleanupLeftovers,
  processStartTime,
  registerCluster,
  updateClusterState,
  type ClusterState,
} from './host-state.js';
import { pushPauseImage } from './tiny-images.js';

/**
 * The one-node test cluster for our own end-to-end tests (issue 15): etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler, containerd,
 * kubelet, kube-proxy and a distribution registry, all inside one network
 * namespace made for the run, holding only `lo` and the pod bridge, with no
 * route out of the machine. The host reaches the API server and the registry
 * on its loopback through socat forwarders over Unix sockets (filesystem
 * sockets cross network namespaces, so no veth pair or route is needed).
 *
 * Users never see this: their envtest is unchanged.
 */

/** A running test cluster. */
export interface TestCluster {
  /** cluster-admin kubeconfig usable from the HOST (the test process, kubectl, make deploy). */
  readonly kubeconfigPath: string;
  /** Registry host:port, the same string on the host and for the node's containerd. Plain HTTP. */
  readonly registry: string;
  /** Name of the network namespace everything runs in. */
  readonly netns: string;
  /** argv prefix that runs a command inside the cluster's network namespace. */
  readonly inNetns: readonly string[];
  /** Environment for running a command against the cluster from the host (KUBECONFIG set). */
  env(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** Stops everything and restores every host setting; idempotent; safe after a failed start. */
  stop(): Promise<void>;
}

/** Extra, harness-specific facts some tests need (isolation, lifecycle). */
export interface TestClusterDetails extends TestCluster {
  readonly workDir: string;
  /** Cgroup path (in every v1 hierarchy) of kubelet's pods. */
  readonly cgroupRoot: string;
  /** Node name as registered. */
  readonly nodeName: string;
  /** How this process reaches the registry over HTTP (`http://127.0.0.1:<port>`). */
  readonly registryUrl: string;
  /** The state record this cluster's cleanup works from. */
  readonly state: ClusterState;
}

/** Addresses inside the namespace. Every cluster has its own namespace, so they never collide. */
export const NODE_IP = '10.88.0.1';
export const POD_SUBNET = '10.88.0.0/16';
export const SERVICE_CIDR = '10.96.0.0/24';
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
const BRIDGE = 'cni0';
const API_PORT = 6443;
const NODE_NAME = 'tsosdk-node';
const PAUSE_IMAGE = 'tsosdk/pause:1';
const START_TIMEOUT_MS = Number(process.env.TS_OPERATOR_SDK_CLUSTER_START_TIMEOUT_MS ?? 180_000);

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs a build script that prints an asset directory, unless its variable is set. */
function assetDir(variable: string, script: string): string {
  const fromEnv = process.env[variable];
  if (fromEnv) return fromEnv;
  const result = spawnSync('bash', [join(repoRoot, script)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0)
    throw new Error(
      `test cluster: ${script} failed; run it by hand to see why, then export ${variable}=<the directory it prints>`,
    );
  const dir = result.stdout.trim().split('\n').pop() ?? '';
  process.env[variable] = dir;
  return dir;
}

/** Paths of every binary the cluster runs. */
type Binaries = {
  etcd: string;
  apiServer: string;
  controllerManager: string;
  kubelet: string;
  scheduler: string;
  proxy: string;
  containerd: string;
  shim: string;
  registry: string;
  pause: string;
};

function locateBinaries(): Binaries {
  const control = assetDir('KUBEBUILDER_ASSETS', 'scripts/build-test-assets.sh');
  const node = assetDir('TS_OPERATOR_SDK_CLUSTER_ASSETS', 'scripts/build-cluster-assets.sh');
  const binaries: Binaries = {
    etcd: join(control, 'etcd'),
    apiServer: join(control, 'kube-apiserver'),
    controllerManager: join(control, 'kube-controller-manager'),
    kubelet: join(node, 'kubelet'),
    scheduler: join(node, 'kube-scheduler'),
    proxy: join(node, 'kube-proxy'),
    containerd: join(node, 'containerd'),
    shim: join(node, 'containerd-shim-runc-v2'),
    registry: join(node, 'registry'),
    pause: join(node, 'pause'),
  };
  const missing = Object.values(binaries).filter((path) => !existsSync(path));
  if (missing.length > 0)
    throw new Error(
      `test cluster: missing ${missing.join(', ')}: run bash scripts/build-cluster-assets.sh and bash scripts/build-test-assets.sh`,
    );
  return binaries;
}

/** Runs a short command, throwing with its stderr when it fails. */
function run(argv: readonly string[]): string {
  const [command, ...args] = argv;
  const result = spawnSync(command as string, args, { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`test cluster: ${argv.join(' ')} failed: ${(result.stderr || result.error?.message || '').trim()}`);
  return result.stdout;
}

/** One long-running process of the cluster, with its log file. */
interface Component {
  name: string;
  child: ChildProcess;
  logPath: string;
  exited?: string;
}

function tail(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

class ClusterRun {
  readonly components: Component[] = [];
  private stopped = false;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.stopSync();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  private readonly onExit = (): void => {
    this.stopSync();
  };

  constructor(
    readonly state: ClusterState,
    private readonly logDir: string,
  ) {
    process.once('exit', this.onExit);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, this.onSignal);
  }

  get inNetns(): string[] {
    return ['nsenter', `--net=/run/netns/${this.state.netns}`];
  }

  /** Starts a process in its own process group, inside the namespace unless `onHost`. */
  spawn(name: string, argv: string[], options: { onHost?: boolean; env?: NodeJS.ProcessEnv } = {}): Component {
    const logPath = join(this.logDir, `${name}.log`);
    const log = openSync(logPath, 'a');
    const full = options.onHost ? argv : [...this.inNetns, ...argv];
    const child = spawn(full[0] as string, full.slice(1), {
      detached: true,
      stdio: ['ignore', log, log],
      env: options.env ?? process.env,
    });
    closeSync(log);
    const component: Component = { name, child, logPath };
    child.on('exit', (code, signal) => {
      component.exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
    });
    child.on('error', (err) => {
      component.exited = `could not start: ${err.message}`;
    });
    child.unref();
    if (child.pid !== undefined) {
      this.state.pids.push(child.pid);
      updateClusterState(this.state);
    }
    this.components.push(component);
    return component;
  }

  /** Fails fast, with the log tail, when a component has died. */
  assertAlive(): void {
    const dead = this.components.find((component) => component.exited !== undefined);
    if (dead)
      throw new Error(
        `test cluster: ${dead.name} ${dead.exited}; the end of its log (${dead.logPath}):\n${tail(dead.logPath)}`,
      );
  }

  async waitFor(what: string, check: () => Promise<boolean>, timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastError = '';
    for (;;) {
      this.assertAlive();
      try {
        if (await check()) return;
      } catch (err) {
        lastError = (err as Error).message;
      }
      if (Date.now() > deadline) {
        const logs = this.components
          .map((component) => `--- ${component.name}:\n${tail(component.logPath, 8)}`)
          .join('\n');
        throw new Error(
          `test cluster: timed out after ${timeoutMs / 1000}s waiting for ${what}${lastError ? ` (last error: ${lastError})` : ''}\n${logs}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  stopSync(): string[] {
    if (this.stopped) return [];
    this.stopped = true;
    process.removeListener('exit', this.onExit);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(signal, this.onSignal);
    // The work dir goes away with the cluster; this keeps the components' logs for a post-mortem.
    const keepLogs = process.env.TS_OPERATOR_SDK_CLUSTER_KEEP_LOGS;
    if (keepLogs) cpSync(this.logDir, join(keepLogs, this.state.id), { recursive: true });
    return cleanupClusterSync(this.state);
  }
}

function kubeconfig(server: string, caPem: string, credentials: KeyPairPem): string {
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: tsosdk',
    'clusters:',
    '- name: tsosdk',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caPem)}`,
    'users:',
    '- name: tsosdk',
    '  user:',
    `    client-certificate-data: ${b64(credentials.certPem)}`,
    `    client-key-data: ${b64(credentials.keyPem)}`,
    'contexts:',
    '- name: tsosdk',
    '  context:',
    '    cluster: tsosdk',
    '    user: tsosdk',
    '',
  ].join('\n');
}

/**
 * Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
 * containerd, kubelet, kube-proxy and the registry inside a fresh network
 * namespace; resolves when the node is Ready and the `default` ServiceAccount
 * exists. Throws (after cleaning up) with the failing component's log tail.
 * Must run as root (network namespaces, mounts, cgroups). `workDir` (default:
 * a fresh /tmp/tsc-XXXXXX, short because Unix socket paths below it are
 * limited to 108 bytes) holds every file of the cluster and is deleted by `stop()`.
 */
export async function startCluster(options: { workDir?: string } = {}): Promise<TestClusterDetails> {
  if (process.getuid?.() !== 0)
    throw new Error('test cluster: must run as root (it creates a network namespace, cgroups and mounts)');
  const binaries = locateBinaries();
  const leftovers = cleanupLeftovers();
  if (leftovers.length > 0)
    process.stderr.write(`test cluster: cleaning a previous run's leftovers: ${leftovers.join('; ')}\n`);

  const id = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
  // Short: containerd's shim sockets live below it and Unix socket paths are limited to 108 bytes.
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'tsc-')));
  const state: ClusterState = {
    id,
    ownerPid: process.pid,
    ownerStartTime: processStartTime(process.pid) ?? '',
    netns: `tsosdk-${id}`,
    workDir,
    cgroupRoot: `/tsosdk-${id}`,
    cniNetwork: `tsosdk-${id}`,
    pids: [],
  };
  registerCluster(state);
  const logDir = join(workDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const cluster = new ClusterRun(state, logDir);
  const agents: Agent[] = [];
  try {
    const started = Date.now();
    const details = await bringUp(cluster, binaries, agents);
    if (process.env.TS_OPERATOR_SDK_CLUSTER_TIMING)
      process.stderr.write(`test cluster: started in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
    return details;
  } catch (err) {
    const problems = cluster.stopSync();
    if (problems.length > 0) (err as Error).message += `\n(cleanup problems: ${problems.join('; ')})`;
    throw err;
  } finally {
    await Promise.all(agents.map((agent) => agent.close().catch(() => undefined)));
  }
}

async function bringUp(cluster: ClusterRun, binaries: Binaries, agents: Agent[]): Promise<TestClusterDetails> {
  const { state } = cluster;
  const { workDir, netns } = state;
  const dir = (...parts: string[]): string => {
    const path = join(workDir, ...parts);
    mkdirSync(path, { recursive: true });
    return path;
  };
  const inNetns = cluster.inNetns;

  // The namespace: loopback and a bridge holding the node address; no default route.
  run(['ip', 'netns', 'add', netns]);
  run(['ip', '-n', netns, 'link', 'set', 'lo', 'up']);
  run(['ip', '-n', netns, 'link', 'add', BRIDGE, 'type', 'bridge']);
  run(['ip', '-n', netns, 'addr', 'add', `${NODE_IP}/16`, 'dev', BRIDGE]);
  run(['ip', '-n', netns, 'link', 'set', BRIDGE, 'up']);
  // Forwarding inside the namespace only (the sysctl is per namespace): Services that lead to another pod.
  run([...inNetns, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);

  // The kubelet's pods get their own cgroup tree (not /kubepods), so clusters of parallel test files never share one.
  for (const hierarchy of cgroupHierarchies()) {
    const path = join(hierarchy, state.cgroupRoot);
    mkdirSync(path, { recursive: true });
    // A v1 cpuset child starts empty and accepts no task until given CPUs and memory nodes.
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      if (existsSync(join(hierarchy, file)))
        writeFileSync(join(path, file), readFileSync(join(hierarchy, file), 'utf8').trim() || '0');
    }
  }

  // Certificates: one CA for serving and clients (every component is cluster-admin), one service-account signer.
  const pki = dir('pki');
  const ca = await TinyCA.create('tsosdk-cluster-ca');
  const serving = await ca.issue({
    usage: 'server',
    commonName: 'kube-apiserver',
    dnsNames: [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
    ipAddresses: ['127.0.0.1', NODE_IP, KUBERNETES_SERVICE_IP],
  });
  const signer = await (await TinyCA.create('tsosdk-service-accounts')).ownKeyPair();
  const files: Record<string, string> = {
    'ca.crt': ca.certPem,
    'apiserver.crt': serving.certPem,
    'apiserver.key': serving.keyPem,
    'sa.crt': signer.certPem,
    'sa.key': signer.keyPem,
  };
  const issueClient = async (name: string, commonName: string): Promise<KeyPairPem> => {
    const pair = await ca.issue({ usage: 'client', commonName, organizations: ['system:masters'] });
    files[`${name}.crt`] = pair.certPem;
    files[`${name}.key`] = pair.keyPem;
    return pair;
  };
  const admin = await issueClient('admin', 'tsosdk-admin');
  // kube-apiserver's client certificate towards kubelet (logs, exec, port-forward).
  await issueClient('apiserver-kubelet-client', 'kube-apiserver-kubelet-client');
  // The aggregation layer (OLM's packageserver is an aggregated API): the API server's client for proxying.
  const frontProxy = await ca.issue({ usage: 'client', commonName: 'front-proxy-client' });
  files['front-proxy-client.crt'] = frontProxy.certPem;
  files['front-proxy-client.key'] = frontProxy.keyPem;
  for (const [name, pem] of Object.entries(files)) writeFileSync(join(pki, name), pem, { mode: 0o600 });
  const inside = `https://127.0.0.1:${API_PORT}`;
  const kubeconfigs: Record<string, string> = {};
  for (const [component, user] of [
    ['controller-manager', 'system:kube-controller-manager'],
    ['scheduler', 'system:kube-scheduler'],
    ['kubelet', `system:node:${NODE_NAME}`],
    ['proxy', 'system:kube-proxy'],
  ] as const) {
    kubeconfigs[component] = join(pki, `${component}.kubeconfig`);
    writeFileSync(kubeconfigs[component], kubeconfig(inside, ca.certPem, await issueClient(component, user)), {
      mode: 0o600,
    });
  }

  // Host ports for the forwarders; the same registry port inside, so `localhost:<port>` names it on both sides.
  const [apiHostPort, registryPort] = (await freeLoopbackPorts(2)) as [number, number];
  const kubeconfigPath = join(workDir, 'admin.kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig(`https://127.0.0.1:${apiHostPort}`, ca.certPem, admin), { mode: 0o600 });
  const registry = `localhost:${registryPort}`;
  const registryUrl = `http://127.0.0.1:${registryPort}`;

  cluster.spawn('etcd', [
    binaries.etcd,
    `--data-dir=${dir('etcd')}`,
    '--listen-client-urls=http://127.0.0.1:2379',
    '--advertise-client-urls=http://127.0.0.1:2379',
    '--listen-peer-urls=http://127.0.0.1:2380',
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ]);
  cluster.spawn('kube-apiserver', [
    binaries.apiServer,
    '--etcd-servers=http://127.0.0.1:2379',
    `--secure-port=${API_PORT}`,
    '--bind-address=0.0.0.0',
    `--advertise-address=${NODE_IP}`,
    `--cert-dir=${pki}`,
    `--tls-cert-file=${join(pki, 'apiserver.crt')}`,
    `--tls-private-key-file=${join(pki, 'apiserver.key')}`,
    `--client-ca-file=${join(pki, 'ca.crt')}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--authorization-mode=Node,RBAC',
    '--allow-privileged=true',
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${join(pki, 'sa.crt')}`,
    `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
    '--kubelet-preferred-address-types=InternalIP',
    `--kubelet-client-certificate=${join(pki, 'apiserver-kubelet-client.crt')}`,
    `--kubelet-client-key=${join(pki, 'apiserver-kubelet-client.key')}`,
    // Aggregated APIs: front-proxy identity, and dialing the endpoints' pod IPs (the namespace has no route to the Service range).
    `--requestheader-client-ca-file=${join(pki, 'ca.crt')}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${join(pki, 'front-proxy-client.crt')}`,
    `--proxy-client-key-file=${join(pki, 'front-proxy-client.key')}`,
    '--enable-aggregator-routing=true',
  ]);

  // Forwarders: host TCP → Unix socket → TCP inside the namespace.
  const forward = (name: string, hostPort: number, insidePort: number): void => {
    const socket = join(dir('sockets'), `${name}.sock`);
    cluster.spawn(`${name}-forward-inside`, [
      'socat',
      `UNIX-LISTEN:${socket},fork,unlink-early`,
      `TCP:127.0.0.1:${insidePort}`,
    ]);
    cluster.spawn(
      `${name}-forward-host`,
      ['socat', `TCP-LISTEN:${hostPort},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${socket}`],
      { onHost: true },
    );
  };
  forward('apiserver', apiHostPort, API_PORT);

  const registryConfig = join(workDir, 'registry.yml');
  writeFileSync(
    registryConfig,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${dir('registry')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: 127.0.0.1:${registryPort}`,
      '',
    ].join('\n'),
  );
  cluster.spawn('registry', [binaries.registry, 'serve', registryConfig]);
  forward('registry', registryPort, registryPort);

  const adminAgent = new Agent({ connect: { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem } });
  agents.push(adminAgent);
  const api = async (path: string): Promise<{ status: number; body: string }> => {
    const response = await undiciFetch(`https://127.0.0.1:${apiHostPort}${path}`, {
      dispatcher: adminAgent,
      signal: AbortSignal.timeout(5000),
    });
    return { status: response.status, body: await response.text() };
  };
  await cluster.waitFor('kube-apiserver /readyz', async () => (await api('/readyz')).status === 200);

  cluster.spawn('kube-controller-manager', [
    binaries.controllerManager,
    `--kubeconfig=${kubeconfigs['controller-manager']}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--cert-dir=${dir('controller-manager')}`,
    `--service-account-private-key-file=${join(pki, 'sa.key')}`,
    `--root-ca-file=${join(pki, 'ca.crt')}`,
    '--use-service-account-credentials=false',
    '--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller',
  ]);
  cluster.spawn('kube-scheduler', [
    binaries.scheduler,
    `--kubeconfig=${kubeconfigs.scheduler}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
  ]);

  await cluster.waitFor(
    'the registry',
    async () => (await fetch(`${registryUrl}/v2/`, { signal: AbortSignal.timeout(5000) })).status === 200,
  );
  await pushPauseImage(
    registryUrl,
    binaries.pause,
    PAUSE_IMAGE.split(':')[0] as string,
    PAUSE_IMAGE.split(':')[1] as string,
  );

  // containerd: everything under the work dir; registry over plain HTTP; no negative oom scores.
  const containerdDir = dir('containerd');
  const socket = join(containerdDir, 'containerd.sock');
  const hostsDir = dir('containerd', 'certs.d', registry);
  writeFileSync(
    join(hostsDir, 'hosts.toml'),
    `server = "http://${registry}"\n\n[host."http://${registry}"]\n  capabilities = ["pull", "resolve", "push"]\n`,
  );
  const cniConfDir = dir('cni', 'net.d');
  writeFileSync(
    join(cniConfDir, '10-tsosdk.conflist'),
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: state.cniNetwork,
        plugins: [
          {
            type: 'bridge',
            bridge: BRIDGE,
            isGateway: true,
            isDefaultGateway: false,
            ipMasq: false,
            hairpinMode: true,
            // Only the Service range goes to the bridge's address (where kube-proxy's DNAT catches it): no default route in a pod.
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet: POD_SUBNET, gateway: NODE_IP, rangeStart: '10.88.0.10' }]],
              routes: [{ dst: SERVICE_CIDR }],
              dataDir: dir('cni', 'ipam'),
            },
          },
        ],
      },
      null,
      2,
    ),
  );
  const containerdConfig = join(containerdDir, 'config.toml');
  writeFileSync(
    containerdConfig,
    containerdToml({
      root: dir('containerd', 'root'),
      state: dir('containerd', 'state'),
      socket,
      opt: dir('containerd', 'opt'),
      certsDir: join(containerdDir, 'certs.d'),
      cniConfDir,
      runcRoot: dir('containerd', 'runc'),
      sandboxImage: `${registry}/${PAUSE_IMAGE}`,
    }),
  );
  const containerd = cluster.spawn('containerd', [binaries.containerd, '--config', containerdConfig], {
    // containerd finds its shim (containerd-shim-runc-v2) on PATH.
    env: { ...process.env, PATH: `${dirname(binaries.shim)}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` },
  });
  // The socket opens before the CRI plugin is ready, and kubelet exits at once on an unready CRI.
  await cluster.waitFor(
    'containerd to boot',
    async () => readFileSync(containerd.logPath, 'utf8').includes('containerd successfully booted'),
    60_000,
  );

  const kubeletDir = dir('kubelet');
  const resolvConf = join(workDir, 'resolv.conf');
  // No DNS in the cluster: pods never resolve outside names, and this file leaves them no server to try.
  writeFileSync(resolvConf, '# test cluster: no DNS\n');
  const kubeletConfig = join(workDir, 'kubelet.yaml');
  writeFileSync(
    kubeletConfig,
    JSON.stringify(
      {
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: NODE_IP,
        port: 10250,
        readOnlyPort: 0,
        healthzBindAddress: '127.0.0.1',
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true },
          x509: { clientCAFile: join(pki, 'ca.crt') },
        },
        authorization: { mode: 'Webhook' },
        cgroupDriver: 'cgroupfs',
        cgroupRoot: state.cgroupRoot,
        failCgroupV1: false,
        failSwapOn: false,
        containerRuntimeEndpoint: `unix://${socket}`,
        resolvConf,
        podLogsDir: dir('pod-logs'),
        // A busy shared disk must not evict the tests' pods.
        evictionHard: {
          'memory.available': '1Mi',
          'nodefs.available': '1%',
          'nodefs.inodesFree': '1%',
          'imagefs.available': '1%',
        },
        imageGCHighThresholdPercent: 99,
        imageGCLowThresholdPercent: 98,
        serializeImagePulls: false,
        protectKernelDefaults: false,
        registerNode: true,
        staticPodPath: '',
        enforceNodeAllocatable: ['pods'],
        localStorageCapacityIsolation: true,
      },
      null,
      2,
    ),
  );
  cluster.spawn('kubelet', [
    binaries.kubelet,
    `--config=${kubeletConfig}`,
    `--kubeconfig=${kubeconfigs.kubelet}`,
    `--root-dir=${kubeletDir}`,
    `--cert-dir=${dir('kubelet-pki')}`,
    `--hostname-override=${NODE_NAME}`,
    `--node-ip=${NODE_IP}`,
    '--v=1',
  ]);

  const proxyConfig = join(workDir, 'kube-proxy.yaml');
  writeFileSync(
    proxyConfig,
    JSON.stringify(
      {
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig: kubeconfigs.proxy },
        mode: 'iptables',
        hostnameOverride: NODE_NAME,
        clusterCIDR: POD_SUBNET,
        // Zero leaves the (global) conntrack table size and timeouts alone.
        conntrack: {
          maxPerCore: 0,
          min: 0,
          tcpEstablishedTimeout: '0s',
          tcpCloseWaitTimeout: '0s',
          udpTimeout: '0s',
          udpStreamTimeout: '0s',
        },
        // Localhost NodePorts would need route_localnet; no test uses them.
        iptables: { localhostNodePorts: false },
        healthzBindAddress: '127.0.0.1:10256',
        metricsBindAddress: '127.0.0.1:10249',
      },
      null,
      2,
    ),
  );
  cluster.spawn('kube-proxy', [binaries.proxy, `--config=${proxyConfig}`]);

  await cluster.waitFor(`node ${NODE_NAME} Ready`, async () => {
    const { status, body } = await api(`/api/v1/nodes/${NODE_NAME}`);
    if (status !== 200) return false;
    const node = JSON.parse(body) as { status?: { conditions?: { type: string; status: string }[] } };
    return (
      node.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false
    );
  });
  await cluster.waitFor(
    'the default ServiceAccount',
    async () => (await api('/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
  );

  let stopped: Promise<void> | undefined;
  return {
    kubeconfigPath,
    registry,
    registryUrl,
    netns,
    inNetns,
    workDir,
    cgroupRoot: state.cgroupRoot,
    nodeName: NODE_NAME,
    state,
    env: (extra = {}) => ({ ...process.env, KUBECONFIG: kubeconfigPath, ...extra }),
    stop: () => {
      stopped ??= Promise.resolve().then(() => {
        const problems = cluster.stopSync();
        if (problems.length > 0) throw new Error(`test cluster: stop left problems: ${problems.join('; ')}`);
      });
      return stopped;
    },
  };
}

interface ContainerdPaths {
  root: string;
  state: string;
  socket: string;
  opt: string;
  certsDir: string;
  cniConfDir: string;
  runcRoot: string;
  sandboxImage: string;
}

/** containerd 2.x configuration (version 3) keeping every path under the work dir. */
function containerdToml(paths: ContainerdPaths): string {
  return `version = 3
root = "${paths.root}"
state = "${paths.state}"
# The host refuses negative oom scores; containerd itself keeps the default.
oom_score = 0
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${paths.socket}"

[ttrpc]
  address = "${paths.socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "${paths.opt}"

[plugins."io.containerd.image-verifier.v1.bindir"]
  bin_dir = "${paths.opt}/image-verifier/bin"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${paths.sandboxImage}"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "${paths.certsDir}"

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  enable_cdi = false
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "${paths.cniConfDir}"
    max_conf_num = 1
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "${paths.runcRoot}"
        SystemdCgroup = false
`;
}

/**
 * One cluster per test file: starts it in `before`, stops it in `after`
 * (also when a test failed). The returned getter throws if called before
 * `before` ran.
 */
export function useCluster(): () => TestClusterDetails {
  let cluster: TestClusterDetails | undefined;
  before(
    async () => {
      cluster = await startCluster();
    },
    { timeout: START_TIMEOUT_MS + 60_000 },
  );
  after(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster)
      throw new Error(
        'test cluster: not started (useCluster() must be called at the top level of the test file, and its before hook must have succeeded)',
      );
    return cluster;
  };
}

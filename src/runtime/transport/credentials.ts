import { readFileSync, statSync } from 'node:fs';
import { clientNodeKubeConfig, importClientNode } from './client-node.js';
import type { KubeConfigCluster, KubeConfigSource, KubeConfigUser } from './kubeconfig.js';

/**
 * How the transport authenticates one request: headers to send, and the
 * client certificate for TLS (which, from an exec plugin, may change).
 * Credentials are worked out once per change, not per request: the TLS
 * material is decoded once and tokens are cached until they expire.
 */
export interface RequestCredentials {
  headers: Record<string, string>;
  /** PEM client certificate and key; undefined when the user has none. */
  cert?: string;
  key?: string;
}

/** Produces the credentials of each request for one kubeconfig user. */
export interface CredentialSource {
  credentials(): RequestCredentials | Promise<RequestCredentials>;
}

/** The TLS settings of the current cluster, decoded once. */
export interface ClusterTls {
  ca?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

/** How often a token file is checked for a new token: a rotated projected token is picked up within this. */
const TOKEN_FILE_CHECK_MS = 1000;
/** An exec credential is refreshed this long before it expires, so a request never carries one that expires in flight. */
const EXEC_EXPIRY_MARGIN_MS = 10_000;

/** The current cluster's CA and verification settings. */
export function clusterTls(cluster: KubeConfigCluster): ClusterTls {
  const ca = cluster.caData
    ? Buffer.from(cluster.caData, 'base64').toString('utf8')
    : cluster.caFile
      ? readText(cluster.caFile, `the CA file of cluster "${cluster.name}"`)
      : undefined;
  return { ca, rejectUnauthorized: cluster.skipTLSVerify !== true, servername: cluster.tlsServerName || undefined };
}

/**
 * The credential source for the current user of `kubeConfig`: tokens, token
 * files, client certificates (data or files), basic auth and exec plugins are
 * handled here; anything else (a legacy `auth-provider` such as oidc) is
 * handed to client-node, imported only then.
 */
export function credentialSource(kubeConfig: KubeConfigSource): CredentialSource {
  const user = kubeConfig.getCurrentUser();
  if (!user) return { credentials: () => ({ headers: {} }) };
  const cert = user.certData
    ? Buffer.from(user.certData, 'base64').toString('utf8')
    : user.certFile
      ? readText(user.certFile, `the client certificate of user "${user.name}"`)
      : undefined;
  const key = user.keyData
    ? Buffer.from(user.keyData, 'base64').toString('utf8')
    : user.keyFile
      ? readText(user.keyFile, `the client key of user "${user.name}"`)
      : undefined;
  const fixed: Record<string, string> = {};
  if (user.impersonateUser) fixed['impersonate-user'] = user.impersonateUser;
  if (user.username)
    fixed.authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;

  const provider = user.authProvider as { name?: string; config?: Record<string, string> } | undefined;
  // client-node's own in-cluster config names its token file through an auth provider.
  const tokenFile = user.tokenFile ?? (provider?.name === 'tokenFile' ? provider.config?.tokenFile : undefined);
  if (provider && provider.name !== 'tokenFile') return new ClientNodeCredentials(kubeConfig, fixed);
  if (user.exec) return new ExecCredentials(user, kubeConfig.getCurrentCluster(), fixed, cert, key);
  if (user.token) {
    const credentials = { headers: { ...fixed, authorization: `Bearer ${user.token}` }, cert, key };
    return { credentials: () => credentials };
  }
  if (tokenFile) return new TokenFileCredentials(tokenFile, fixed, cert, key);
  const credentials = { headers: fixed, cert, key };
  return { credentials: () => credentials };
}

/** A token file, re-read when it changes (checked at most every TOKEN_FILE_CHECK_MS). */
class TokenFileCredentials implements CredentialSource {
  private current?: RequestCredentials;
  private checkedAt = -Infinity;
  private mtimeMs = -1;

  constructor(
    private readonly path: string,
    private readonly fixed: Record<string, string>,
    private readonly cert: string | undefined,
    private readonly key: string | undefined,
  ) {}

  credentials(): RequestCredentials {
    const now = performance.now();
    if (this.current && now - this.checkedAt < TOKEN_FILE_CHECK_MS) return this.current;
    this.checkedAt = now;
    try {
      const { mtimeMs, size } = statSync(this.path);
      // A rewrite within the same millisecond keeps mtime; the size tells most of those apart.
      const stamp = mtimeMs * 1e6 + size;
      if (this.current && stamp === this.mtimeMs) return this.current;
      const token = readFileSync(this.path, 'utf8').trim();
      this.mtimeMs = stamp;
      this.current = { headers: { ...this.fixed, authorization: `Bearer ${token}` }, cert: this.cert, key: this.key };
    } catch (err) {
      // A kubelet swapping the projected token can leave the file briefly missing: keep the last token.
      if (!this.current)
        throw new Error(`cannot read the token file ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    return this.current;
  }
}

/** What an exec plugin prints: an ExecCredential whose status carries a token or a client certificate. */
interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

interface ExecConfig {
  apiVersion?: string;
  command?: string;
  args?: string[];
  env?: Array<{ name: string; value: string }> | null;
  provideClusterInfo?: boolean;
}

const EXEC_API_VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);

/**
 * An exec credential plugin: run once, its answer cached until it expires
 * (or forever when it names no expiry), one run at a time however many
 * requests wait for it.
 */
class ExecCredentials implements CredentialSource {
  private readonly exec: ExecConfig;
  private current?: RequestCredentials;
  private expiresAt = Infinity;
  private running?: Promise<RequestCredentials>;

  constructor(
    private readonly user: KubeConfigUser,
    private readonly cluster: KubeConfigCluster | null,
    private readonly fixed: Record<string, string>,
    private readonly cert: string | undefined,
    private readonly key: string | undefined,
  ) {
    this.exec = user.exec as ExecConfig;
    if (!this.exec.command) throw new Error(`the exec plugin of kubeconfig user "${user.name}" has no command`);
    if (!EXEC_API_VERSIONS.has(this.exec.apiVersion ?? '')) {
      throw new Error(
        `the exec plugin of kubeconfig user "${user.name}" has apiVersion "${this.exec.apiVersion ?? ''}": use client.authentication.k8s.io/v1 or v1beta1`,
      );
    }
  }

  credentials(): RequestCredentials | Promise<RequestCredentials> {
    if (this.current && Date.now() < this.expiresAt - EXEC_EXPIRY_MARGIN_MS) return this.current;
    return (this.running ??= this.run().finally(() => (this.running = undefined)));
  }

  private async run(): Promise<RequestCredentials> {
    const exec = this.exec;
    const info = {
      apiVersion: exec.apiVersion,
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        ...(exec.provideClusterInfo && this.cluster
          ? {
              cluster: {
                server: this.cluster.server,
                'certificate-authority-data': this.cluster.caData,
                'insecure-skip-tls-verify': this.cluster.skipTLSVerify,
                'tls-server-name': this.cluster.tlsServerName,
              },
            }
          : {}),
      },
    };
    const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
    for (const { name, value } of exec.env ?? []) env[name] = value;
    const stdout = await new Promise<string>((resolve, reject) => {
      // child_process is taken only when an exec plugin runs: most operators never load it.
      process
        .getBuiltinModule('node:child_process')
        .execFile(exec.command!, exec.args ?? [], { env, timeout: 60_000, maxBuffer: 1 << 20 }, (err, out, stderr) => {
          if (err) {
            const how =
              typeof err.code === 'number'
                ? `exited with ${err.code}`
                : err.killed
                  ? 'was killed (it ran over 60 s?)'
                  : `could not run (${err.message})`;
            const said = String(stderr).trim().split('\n').join(' ');
            reject(
              new Error(
                `the exec plugin ${exec.command} of kubeconfig user "${this.user.name}" failed: it ${how}${said ? `: ${said}` : ''}`,
                { cause: err },
              ),
            );
          } else resolve(String(out));
        });
    });
    let status: ExecCredentialStatus | undefined;
    try {
      status = (JSON.parse(stdout) as { status?: ExecCredentialStatus }).status;
    } catch (err) {
      throw new Error(
        `the exec plugin ${exec.command} of kubeconfig user "${this.user.name}" printed no ExecCredential JSON: ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (!status?.token && !(status?.clientCertificateData && status.clientKeyData)) {
      throw new Error(
        `the exec plugin ${exec.command} of kubeconfig user "${this.user.name}" returned neither status.token nor status.clientCertificateData and clientKeyData`,
      );
    }
    const expiry = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : NaN;
    this.expiresAt = Number.isNaN(expiry) ? Infinity : expiry;
    const headers = { ...this.fixed };
    if (status.token) headers.authorization = `Bearer ${status.token}`;
    this.current = { headers, cert: status.clientCertificateData ?? this.cert, key: status.clientKeyData ?? this.key };
    return this.current;
  }
}

/**
 * Anything this module does not handle (legacy auth providers: oidc, gcp,
 * azure): client-node computes the headers. It is imported only here, so a
 * kubeconfig that works with client-node keeps working, and only its users
 * pay for the import.
 */
class ClientNodeCredentials implements CredentialSource {
  private applier?: Promise<{ applySecurityAuthentication(context: unknown): Promise<void> }>;
  private readonly cert?: string;
  private readonly key?: string;

  constructor(
    private readonly kubeConfig: KubeConfigSource,
    private readonly fixed: Record<string, string>,
  ) {
    const user = kubeConfig.getCurrentUser()!;
    this.cert = user.certData
      ? Buffer.from(user.certData, 'base64').toString('utf8')
      : user.certFile
        ? readText(user.certFile, 'the client certificate')
        : undefined;
    this.key = user.keyData
      ? Buffer.from(user.keyData, 'base64').toString('utf8')
      : user.keyFile
        ? readText(user.keyFile, 'the client key')
        : undefined;
  }

  async credentials(): Promise<RequestCredentials> {
    const clientNode = await importClientNode(this.why());
    const kc = await (this.applier ??= this.clientNodeKubeConfig());
    const context = new clientNode.RequestContext('https://unused.invalid/', clientNode.HttpMethod.GET);
    await kc.applySecurityAuthentication(context);
    // Header names are case-insensitive: lower-case them so one Authorization wins.
    const headers = { ...this.fixed };
    for (const [name, value] of Object.entries(context.getHeaders())) headers[name.toLowerCase()] = value;
    return { headers, cert: this.cert, key: this.key };
  }

  private async clientNodeKubeConfig(): Promise<{ applySecurityAuthentication(context: unknown): Promise<void> }> {
    const source = this.kubeConfig as Partial<{ applySecurityAuthentication(context: unknown): Promise<void> }>;
    if (typeof source.applySecurityAuthentication === 'function')
      return source as { applySecurityAuthentication(context: unknown): Promise<void> };
    return clientNodeKubeConfig(this.kubeConfig, this.why());
  }

  private why(): string {
    const user = this.kubeConfig.getCurrentUser();
    const provider = (user?.authProvider as { name?: string } | undefined)?.name;
    return `the kubeconfig user "${user?.name}" uses the auth-provider "${provider}"`;
  }
}

/**
 * The agent for a cluster reached through its kubeconfig `proxy-url` (http,
 * https or socks): client-node builds it (its proxy agents, with the
 * cluster's CA and the user's client certificate), imported only for such a
 * kubeconfig, so one that works with client-node keeps working. The request
 * headers still come from {@link credentialSource}.
 */
export async function proxyAgent(source: KubeConfigSource): Promise<import('node:http').Agent> {
  const withOptions = source as Partial<{
    applyToHTTPSOptions(options: import('node:https').RequestOptions): Promise<void>;
  }>;
  const kc =
    typeof withOptions.applyToHTTPSOptions === 'function'
      ? (withOptions as { applyToHTTPSOptions(options: import('node:https').RequestOptions): Promise<void> })
      : await clientNodeKubeConfig(
          source,
          `the kubeconfig cluster "${source.getCurrentCluster()?.name}" is reached through its proxy-url`,
        );
  const options: import('node:https').RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  if (typeof options.agent !== 'object')
    throw new Error(`client-node built no agent for the proxy-url ${source.getCurrentCluster()?.proxyUrl}`);
  return options.agent;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${what} (${path}): ${(err as Error).message}`, { cause: err });
  }
}

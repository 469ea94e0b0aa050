import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { isIPv6 } from 'node:net';
import { createRequire } from 'node:module';

/**
 * The kubeconfig loader the operator process uses. It reads kubeconfig files
 * and the in-cluster service account itself rather than through
 * `@kubernetes/client-node`, whose import alone costs about 80 MiB of RSS and
 * most of a second of start-up (measured: a bare Node process 43 → 124 MiB).
 * The shapes below are client-node's (`Cluster`, `User`, `Context`), so a
 * client-node `KubeConfig` (envtest's, a user's) is accepted wherever a
 * {@link KubeConfigSource} is.
 */

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** One cluster of a kubeconfig, as client-node's `Cluster`. */
export interface KubeConfigCluster {
  /** The cluster's name in the kubeconfig. */
  readonly name: string;
  /** The API server's base URL. */
  readonly server: string;
  /** Base64 PEM of the CA that signed the server's certificate (`certificate-authority-data`). */
  readonly caData?: string;
  /** Path of that CA's PEM file (`certificate-authority`). */
  readonly caFile?: string;
  /** Do not verify the server's certificate (`insecure-skip-tls-verify`). */
  readonly skipTLSVerify?: boolean;
  /** The name to verify the server's certificate against, instead of the URL's host. */
  readonly tlsServerName?: string;
  /** A proxy (http, https or socks) in front of the server; its agent comes from client-node, imported only then. */
  readonly proxyUrl?: string;
}

/** One user (credentials) of a kubeconfig, as client-node's `User` plus `tokenFile`. */
export interface KubeConfigUser {
  /** The user's name in the kubeconfig. */
  readonly name: string;
  /** A bearer token. */
  readonly token?: string;
  /** A file holding a bearer token, re-read when it changes (projected service account tokens rotate). */
  readonly tokenFile?: string;
  /** Base64 PEM client certificate (`client-certificate-data`). */
  readonly certData?: string;
  /** Path of a PEM client certificate (`client-certificate`). */
  readonly certFile?: string;
  /** Base64 PEM client key (`client-key-data`). */
  readonly keyData?: string;
  /** Path of a PEM client key (`client-key`). */
  readonly keyFile?: string;
  /** An exec credential plugin (`client.authentication.k8s.io/v1` or `v1beta1`), as written in the kubeconfig. */
  readonly exec?: unknown;
  /** A legacy auth provider (`oidc`, `gcp`, `azure`...): handled by client-node, loaded only for it. */
  readonly authProvider?: unknown;
  /** Basic authentication. */
  readonly username?: string;
  /** Basic authentication. */
  readonly password?: string;
  /** Sent as `Impersonate-User` (`as`). */
  readonly impersonateUser?: string;
}

/** One context of a kubeconfig: a cluster, a user and a default namespace. */
export interface KubeConfigContext {
  /** The context's name. */
  readonly name: string;
  /** The name of its cluster. */
  readonly cluster: string;
  /** The name of its user. */
  readonly user: string;
  /** Its default namespace. */
  readonly namespace?: string;
}

/**
 * What the runtime reads from a kubeconfig: the current cluster and user.
 * A client-node `KubeConfig` has this shape, and so does {@link RestConfig}.
 */
export interface KubeConfigSource {
  /** The cluster of the current context, or null when there is none. */
  getCurrentCluster(): KubeConfigCluster | null;
  /** The user of the current context, or null when there is none. */
  getCurrentUser(): KubeConfigUser | null;
}

/**
 * A loaded kubeconfig: clusters, users and contexts with the same names and
 * fields as client-node's `KubeConfig`, without its API clients. Pass it to
 * `new Manager({ kubeConfig })` or `new RestClient(config)`; for client-node's
 * own clients, build one with `toClientNodeKubeConfig(config)` (ts-operator-sdk/client-node).
 */
export class RestConfig implements KubeConfigSource {
  constructor(
    /** Every cluster. */
    readonly clusters: KubeConfigCluster[],
    /** Every user. */
    readonly users: KubeConfigUser[],
    /** Every context. */
    readonly contexts: KubeConfigContext[],
    /** The name of the context in use. */
    readonly currentContext: string,
  ) {}

  /** The name of the context in use (client-node's method of the same name). */
  getCurrentContext(): string {
    return this.currentContext;
  }

  /** The context called `name`, or null. */
  getContextObject(name: string): KubeConfigContext | null {
    return this.contexts.find((context) => context.name === name) ?? null;
  }

  getCurrentCluster(): KubeConfigCluster | null {
    const context = this.getContextObject(this.currentContext);
    return context ? (this.clusters.find((cluster) => cluster.name === context.cluster) ?? null) : null;
  }

  getCurrentUser(): KubeConfigUser | null {
    const context = this.getContextObject(this.currentContext);
    return context ? (this.users.find((user) => user.name === context.user) ?? null) : null;
  }

  /**
   * The kubeconfig file's text (JSON, which kubectl and client-go read as
   * YAML), with the file format's field names: what {@link loadKubeConfig}
   * reads back, and what client-node's method of the same name writes.
   */
  exportConfig(): string {
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: this.clusters.map(({ name, ...cluster }) => ({ name, cluster: fileFields(cluster, CLUSTER_FIELDS) })),
      users: this.users.map(({ name, ...user }) => ({ name, user: fileFields(user, USER_FIELDS) })),
      contexts: this.contexts.map(({ name, ...context }) => ({ name, context: fileFields(context, {}) })),
      'current-context': this.currentContext,
    });
  }
}

/** The kubeconfig file's name for each field whose name differs from the in-memory one: one table for reading (`clusterFrom`) and writing (`exportConfig`). */
const CLUSTER_FIELDS = {
  caData: 'certificate-authority-data',
  caFile: 'certificate-authority',
  skipTLSVerify: 'insecure-skip-tls-verify',
  tlsServerName: 'tls-server-name',
  proxyUrl: 'proxy-url',
} as const;
/** As {@link CLUSTER_FIELDS}, for users (`userFrom`). */
const USER_FIELDS = {
  certData: 'client-certificate-data',
  certFile: 'client-certificate',
  keyData: 'client-key-data',
  keyFile: 'client-key',
  authProvider: 'auth-provider',
  impersonateUser: 'as',
} as const;

/** `entry` with its set fields renamed to the file's names; unset and false fields are left out, as kubectl writes. */
function fileFields(entry: object, names: Readonly<Record<string, string>>): YamlMap {
  const out: YamlMap = {};
  for (const [key, value] of Object.entries(entry))
    if (value !== undefined && value !== false && value !== '') out[names[key] ?? key] = value;
  return out;
}

/**
 * Loads the REST config in controller-runtime's order: an explicit path
 * (the `--kubeconfig` flag), `KUBECONFIG`, in-cluster service account, then
 * `~/.kube/config`. In-cluster comes before the home directory so that a pod
 * never picks up a stray file baked into its image.
 *
 * A colon-separated `KUBECONFIG` is merged as kubectl merges it: the first
 * file that names a cluster, user or context (or the current context) wins.
 */
export function loadKubeConfig(explicitPath?: string): RestConfig {
  if (explicitPath) return kubeConfigFromFiles([explicitPath]);
  if (process.env.KUBECONFIG) return kubeConfigFromFiles(process.env.KUBECONFIG.split(delimiter).filter(Boolean));
  if (process.env.KUBERNETES_SERVICE_HOST && existsSync(join(SERVICE_ACCOUNT_DIR, 'token'))) return inClusterConfig();
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return kubeConfigFromFiles([home]);
  throw new Error('no Kubernetes config found: set KUBECONFIG, create ~/.kube/config, or run inside a cluster');
}

/**
 * The in-cluster config: the API server from KUBERNETES_SERVICE_HOST/PORT,
 * the service account's CA, and its token file, which the kubelet rotates
 * (so it is re-read, never copied). `dir` is the service account directory.
 */
export function inClusterConfig(dir = SERVICE_ACCOUNT_DIR, env: NodeJS.ProcessEnv = process.env): RestConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    throw new Error('not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set');
  const namespaceFile = join(dir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined;
  return new RestConfig(
    [
      {
        name: 'inCluster',
        server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
        caFile: join(dir, 'ca.crt'),
        skipTLSVerify: false,
      },
    ],
    [{ name: 'inClusterUser', tokenFile: join(dir, 'token') }],
    [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace }],
    'inClusterContext',
  );
}

type YamlMap = Record<string, unknown>;

/**
 * A kubeconfig's text as a document. JSON (what client-node's `exportConfig()`
 * and so envtest write, and a form kubectl reads) is a subset of YAML, so it
 * is parsed by `JSON.parse` first, and js-yaml is loaded only for a file that
 * is not JSON: its import and parse cost an idle operator about 2 MiB of RSS,
 * and an operator in a cluster reads no kubeconfig at all.
 */
function parseKubeConfigText(text: string): YamlMap {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text) as YamlMap;
    } catch {
      // Not JSON after all (YAML flow style can start with "{" too): YAML decides.
    }
  }
  return (yaml().load(text) ?? {}) as YamlMap;
}

let jsYaml: typeof import('js-yaml') | undefined;
function yaml(): typeof import('js-yaml') {
  jsYaml ??= createRequire(import.meta.url)('js-yaml') as typeof import('js-yaml');
  return jsYaml;
}

function kubeConfigFromFiles(paths: string[]): RestConfig {
  const clusters = new Map<string, KubeConfigCluster>();
  const users = new Map<string, KubeConfigUser>();
  const contexts = new Map<string, KubeConfigContext>();
  let currentContext: string | undefined;
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      // kubectl skips a KUBECONFIG entry that does not exist, but an explicit path must.
      if (paths.length > 1 && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new Error(`cannot read kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
    }
    let doc: YamlMap;
    try {
      doc = parseKubeConfigText(text);
    } catch (err) {
      throw new Error(`kubeconfig ${path} is not valid YAML: ${(err as Error).message}`, { cause: err });
    }
    const base = dirname(resolve(path));
    for (const entry of namedEntries(doc.clusters, path, 'clusters'))
      if (!clusters.has(entry.name)) clusters.set(entry.name, clusterFrom(entry.name, field(entry, 'cluster'), base));
    for (const entry of namedEntries(doc.users, path, 'users'))
      if (!users.has(entry.name)) users.set(entry.name, userFrom(entry.name, field(entry, 'user'), base));
    for (const entry of namedEntries(doc.contexts, path, 'contexts'))
      if (!contexts.has(entry.name)) contexts.set(entry.name, contextFrom(entry.name, field(entry, 'context')));
    if (!currentContext && typeof doc['current-context'] === 'string' && doc['current-context'])
      currentContext = doc['current-context'];
  }
  if (!currentContext)
    throw new Error(
      `kubeconfig ${paths.join(delimiter)} has no current-context: set one with \`kubectl config use-context NAME\``,
    );
  return new RestConfig([...clusters.values()], [...users.values()], [...contexts.values()], currentContext);
}

function namedEntries(list: unknown, path: string, what: string): Array<YamlMap & { name: string }> {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new Error(`kubeconfig ${path}: ${what} must be a list`);
  return list.map((entry, i) => {
    if (typeof entry !== 'object' || entry === null || typeof (entry as YamlMap).name !== 'string')
      throw new Error(`kubeconfig ${path}: ${what}[${i}] has no name`);
    return entry as YamlMap & { name: string };
  });
}

function field(entry: YamlMap, key: string): YamlMap {
  const value = entry[key];
  return typeof value === 'object' && value !== null ? (value as YamlMap) : {};
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
/** kubectl resolves a relative file in a kubeconfig against the file's own directory. */
const filePath = (value: unknown, base: string): string | undefined => {
  const path = str(value);
  return path === undefined ? undefined : isAbsolute(path) ? path : resolve(base, path);
};

function clusterFrom(name: string, cluster: YamlMap, base: string): KubeConfigCluster {
  return {
    name,
    server: str(cluster.server) ?? '',
    caData: str(cluster[CLUSTER_FIELDS.caData]),
    caFile: filePath(cluster[CLUSTER_FIELDS.caFile], base),
    skipTLSVerify: cluster[CLUSTER_FIELDS.skipTLSVerify] === true,
    tlsServerName: str(cluster[CLUSTER_FIELDS.tlsServerName]),
    proxyUrl: str(cluster[CLUSTER_FIELDS.proxyUrl]),
  };
}

function userFrom(name: string, user: YamlMap, base: string): KubeConfigUser {
  let exec = user.exec as YamlMap | undefined;
  // A relative command with a slash is relative to the kubeconfig, as client-go resolves it.
  if (exec && typeof exec.command === 'string' && exec.command.includes('/') && !isAbsolute(exec.command))
    exec = { ...exec, command: resolve(base, exec.command) };
  return {
    name,
    token: str(user.token),
    tokenFile: filePath(user.tokenFile ?? user['token-file'], base),
    certData: str(user[USER_FIELDS.certData]),
    certFile: filePath(user[USER_FIELDS.certFile], base),
    keyData: str(user[USER_FIELDS.keyData]),
    keyFile: filePath(user[USER_FIELDS.keyFile], base),
    exec,
    authProvider: user[USER_FIELDS.authProvider],
    username: str(user.username),
    password: str(user.password),
    impersonateUser: str(user[USER_FIELDS.impersonateUser]),
  };
}

function contextFrom(name: string, context: YamlMap): KubeConfigContext {
  return {
    name,
    cluster: str(context.cluster) ?? '',
    user: str(context.user) ?? '',
    namespace: str(context.namespace),
  };
}

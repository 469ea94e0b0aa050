import { join } from 'node:path';
import { CertWatcher, DEFAULT_CERT_NAME, DEFAULT_KEY_NAME } from '../certs/certwatcher.js';
import { selfSignedCertificate } from '../certs/self-signed.js';
import {
  parseBindAddress,
  serveHttp,
  serveHttps,
  type HttpHandler,
  type RunningHttpsServer,
  type RunningServer,
} from '../httpserver/server.js';
import type { Logger } from '../log/log.js';
import type { RestClient } from '../transport/rest.js';
import { MetricsAuthFilter } from './auth.js';
import type { Registry } from './prometheus.js';

/** Where /metrics is served: port 8080 on every interface, where kubebuilder's scaffolded Service points. */
export const DEFAULT_METRICS_BIND_ADDRESS = ':8080';

/**
 * How the metrics server listens: controller-runtime's metricsserver.Options,
 * the manager's `metrics` option.
 */
export interface MetricsServerOptions {
  /** Where /metrics is served, as `host:port` or `:port`; `"0"` or `""` turns it off. Default: `:8080`. */
  bindAddress?: string;
  /**
   * Serve /metrics over HTTPS, only to callers whose bearer token the API
   * server authenticates (TokenReview) and authorizes for `get` on the
   * non-resource URL `/metrics` (SubjectAccessReview), with
   * controller-runtime's caching. kubebuilder's `--metrics-secure` (true in
   * the generated main.ts), served on `:8443` by `config/default`. The
   * manager's identity needs `create` on tokenreviews and
   * subjectaccessreviews (`metrics_auth_role`). Default: false, plain HTTP,
   * as controller-runtime's SecureServing.
   */
  secureServing?: boolean;
  /**
   * With `secureServing`, the directory holding the serving certificate and
   * key (kubebuilder's `--metrics-cert-path`, mounted from a cert-manager
   * Secret); rotated files are picked up without a restart. Default: none,
   * so a self-signed certificate is made at start.
   */
  certDir?: string;
  /** Certificate file name in `certDir` (kubebuilder's `--metrics-cert-name`). Default: `tls.crt`. */
  certName?: string;
  /** Private key file name in `certDir` (kubebuilder's `--metrics-cert-key`). Default: `tls.key`. */
  keyName?: string;
}

/** What a {@link MetricsServer} serves, and what it needs from its manager. */
export interface MetricsServerDependencies {
  /** The registry rendered on each scrape. Required. */
  registry: Registry;
  /** Reviews scrapers' tokens with `secureServing`. Required. */
  rest: RestClient;
  /** Where serving and refused scrapes are logged. Required. */
  logger: Logger;
  /**
   * Runs before each scrape is rendered, to refresh gauges that are computed
   * rather than kept (the manager updates its work queues' progress metrics).
   * Default: nothing.
   */
  beforeScrape?: () => void;
}

/**
 * Serves a registry on /metrics, over plain HTTP or, with `secureServing`,
 * over HTTPS behind TokenReview and SubjectAccessReview: controller-runtime's
 * metrics server. It runs on every replica, leader or not, so every replica
 * can be scraped.
 */
export class MetricsServer {
  private server?: RunningServer;
  /** Aborted by close(): stops the certificate watcher. */
  private readonly closing = new AbortController();

  constructor(
    private readonly options: MetricsServerOptions,
    private readonly deps: MetricsServerDependencies,
  ) {}

  /** The bound address once started (for `:0`), or undefined when off or not started. */
  get address(): string | undefined {
    return this.server?.address;
  }

  /** Listens, unless the bind address turns the server off; resolves once it listens. */
  async start(): Promise<void> {
    if (this.server) throw new Error('the metrics server was already started');
    const at = parseBindAddress(this.options.bindAddress ?? DEFAULT_METRICS_BIND_ADDRESS);
    if (!at) return;
    const secure = this.options.secureServing ?? false;
    this.server = secure ? await this.serveSecure(at) : await serveHttp(at, this.handler);
    this.deps.logger.info({ bindAddress: this.server.address, secure }, 'Serving metrics server');
  }

  /** Stops listening and watching certificates; resolves once the server closed. */
  async close(): Promise<void> {
    this.closing.abort();
    await this.server?.close();
  }

  private readonly handler: HttpHandler = async (req, res) => {
    if (new URL(req.url ?? '/', 'http://metrics').pathname !== '/metrics') {
      res.statusCode = 404;
      res.end('not found\n');
      return;
    }
    this.deps.beforeScrape?.();
    res.setHeader('content-type', this.deps.registry.contentType);
    res.end(await this.deps.registry.metrics());
  };

  /** /metrics over HTTPS behind TokenReview + SubjectAccessReview (see MetricsServerOptions.secureServing). */
  private async serveSecure(address: { host?: string; port: number }): Promise<RunningServer> {
    const log = this.deps.logger.child({ component: 'metrics' });
    const filter = new MetricsAuthFilter(this.deps.rest, log);
    const guarded: HttpHandler = async (req, res) => {
      const verdict = await filter.check(req);
      if (verdict.status !== 200) {
        res.statusCode = verdict.status;
        res.setHeader('content-type', 'text/plain; charset=utf-8');
        res.end(`${verdict.message}\n`);
        return;
      }
      await this.handler(req, res);
    };
    const certDir = this.options.certDir;
    if (!certDir) {
      log.info('no metrics certDir given, serving a self-signed certificate');
      return serveHttps(address, await selfSignedCertificate(), guarded);
    }
    // Assigned once the certificate is loaded; the watcher's callback, made before, reads it.
    // eslint-disable-next-line prefer-const -- const would need the callback after the server, which needs the watcher
    let server: RunningHttpsServer | undefined;
    const watcher = new CertWatcher(
      join(certDir, this.options.certName ?? DEFAULT_CERT_NAME),
      join(certDir, this.options.keyName ?? DEFAULT_KEY_NAME),
      (pair) => server?.setCertificate(pair),
      log,
    );
    const pair = await watcher.load().catch((err: Error) => {
      throw new Error(`metrics server: ${err.message}`);
    });
    server = await serveHttps(address, pair, guarded);
    watcher.start(this.closing.signal);
    return server;
  }
}

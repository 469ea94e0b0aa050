import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import type { Checker } from '../healthz/healthz.js';
import type { Logger } from '../log/log.js';
import type { Runnable } from '../runnable.js';
import { serveHttps, type HttpHandler, type RunningHttpsServer } from '../httpserver/server.js';
import {
  CertWatcher,
  DEFAULT_CERT_NAME,
  DEFAULT_CERT_POLL_INTERVAL_MS,
  DEFAULT_KEY_NAME,
} from '../certs/certwatcher.js';
import { ConversionRegistry, CONVERSION_PATH } from './conversion.js';

/** The webhook port kubebuilder's `config/webhook/service.yaml` targets. */
export const DEFAULT_WEBHOOK_PORT = 9443;
/** controller-runtime's default cert dir, where `config/default/manager_webhook_patch.yaml` mounts the Secret. */
export const DEFAULT_WEBHOOK_CERT_DIR = join(tmpdir(), 'k8s-webhook-server', 'serving-certs');
/** How long the readiness check waits for its own TLS handshake. */
const STARTED_CHECK_TIMEOUT_MS = 10_000;

/** Where and with which certificate the webhook server listens (controller-runtime's webhook.Options). */
export interface WebhookServerOptions {
  /** Interface to listen on. Default: all interfaces. */
  host?: string;
  /** Port to listen on; 0 picks a free one (see {@link WebhookServer.address}). Default: 9443. */
  port?: number;
  /** Directory holding the serving certificate and key. Default: `<os tmpdir>/k8s-webhook-server/serving-certs`. */
  certDir?: string;
  /** Certificate file name inside `certDir` (PEM, chain allowed). Default: `tls.crt`. */
  certName?: string;
  /** Private key file name inside `certDir` (PEM). Default: `tls.key`. */
  keyName?: string;
  /** How often the certificate files are re-read besides file events. Default: 10 s. */
  certPollIntervalMs?: number;
}

/**
 * The HTTPS server for admission and conversion webhooks
 * (`mgr.getWebhookServer()`). It runs on every replica, not only the
 * leader, because the API server calls whichever Pod the Service picks. It
 * reloads its certificate when the files change, and on stop lets calls in
 * flight finish before it closes.
 */
export class WebhookServer implements Runnable {
  private readonly handlers = new Map<string, HttpHandler>();
  /** @internal The `/convert` registry, shared by every hub kind of this server. */
  readonly conversions = new ConversionRegistry();
  private running?: RunningHttpsServer;
  private boundAddress?: string;

  constructor(
    private readonly options: WebhookServerOptions = {},
    private readonly log: Logger,
  ) {}

  /**
   * Serves `handler` at exactly `path` (no prefix matching). Paths must be
   * unique; registering after start works, as in controller-runtime.
   */
  register(path: string, handler: HttpHandler): void {
    if (!path.startsWith('/')) throw new Error(`webhook path "${path}" must start with /`);
    if (this.handlers.has(path))
      throw new Error(`a webhook is already registered at ${path}: each path serves one webhook`);
    this.handlers.set(path, handler);
    this.log.info({ path }, 'Registering webhook');
  }

  /** @internal Registers the `/convert` handler once, when the first hub kind asks for it. */
  ensureConversionHandler(): void {
    if (!this.handlers.has(CONVERSION_PATH))
      this.register(CONVERSION_PATH, this.conversions.handler(this.log.child({ webhook: CONVERSION_PATH })));
  }

  /** Whether a handler is registered at `path`. */
  has(path: string): boolean {
    return this.handlers.has(path);
  }

  /** The bound address (`host:port`) while running, e.g. to learn the port picked for 0. */
  address(): string | undefined {
    return this.boundAddress;
  }

  /**
   * A readiness check that passes once the server accepts TLS connections:
   * `mgr.addReadyzCheck('webhook', server.startedChecker())`, so the Pod gets
   * no webhook traffic before it can answer.
   */
  startedChecker(): Checker {
    return async () => {
      const address = this.boundAddress;
      if (!address) throw new Error('webhook server has not started yet');
      const port = Number(address.slice(address.lastIndexOf(':') + 1));
      const host = this.options.host || '127.0.0.1';
      await new Promise<void>((resolve, reject) => {
        // Only the handshake matters here, not who the certificate names.
        const socket = connect({ host, port, rejectUnauthorized: false, timeout: STARTED_CHECK_TIMEOUT_MS }, () => {
          socket.end();
          resolve();
        });
        socket.once('timeout', () => socket.destroy(new Error('webhook server TLS handshake timed out')));
        socket.once('error', (err: Error) => reject(new Error(`webhook server is not reachable: ${err.message}`)));
      });
    };
  }

  /** Every replica serves webhooks. */
  needLeaderElection(): boolean {
    return false;
  }

  /** Loads the certificate, listens, serves until `signal` aborts, then drains and closes. */
  async start(signal: AbortSignal): Promise<void> {
    const certDir = this.options.certDir ?? DEFAULT_WEBHOOK_CERT_DIR;
    const certFile = join(certDir, this.options.certName ?? DEFAULT_CERT_NAME);
    const keyFile = join(certDir, this.options.keyName ?? DEFAULT_KEY_NAME);
    const watcher = new CertWatcher(
      certFile,
      keyFile,
      (pair) => this.running?.setCertificate(pair),
      this.log,
      this.options.certPollIntervalMs ?? DEFAULT_CERT_POLL_INTERVAL_MS,
    );
    let pair;
    try {
      pair = await watcher.load();
    } catch (err) {
      throw new Error(`webhook server: ${(err as Error).message}`, { cause: err });
    }
    const port = this.options.port ?? DEFAULT_WEBHOOK_PORT;
    try {
      this.running = await serveHttps({ host: this.options.host || undefined, port }, pair, (req, res) =>
        this.route(req, res),
      );
    } catch (err) {
      throw new Error(
        `webhook server cannot listen on ${this.options.host ?? ''}:${port}: ${(err as Error).message}: free the port or set webhookServer.port`,
        { cause: err },
      );
    }
    this.boundAddress = this.running.address;
    watcher.start(signal);
    this.log.info({ address: this.boundAddress, certDir }, 'Serving webhook server');
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    watcher.stop();
    this.boundAddress = undefined;
    await this.running.close();
    this.running = undefined;
    this.log.info('Stopped webhook server');
  }

  private async route(req: Parameters<HttpHandler>[0], res: Parameters<HttpHandler>[1]): Promise<void> {
    const path = new URL(req.url ?? '/', 'https://webhook').pathname;
    const handler = this.handlers.get(path);
    if (!handler) {
      res.statusCode = 404;
      res.end(`no webhook is registered at ${path}\n`);
      return;
    }
    try {
      await handler(req, res);
    } catch (err) {
      this.log.error({ err, path }, 'webhook handler failed');
      if (res.headersSent) res.destroy();
      else {
        res.statusCode = 500;
        res.end('internal error\n');
      }
    }
  }
}

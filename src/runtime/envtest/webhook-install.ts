import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isNotFound } from '../api/errors.js';
import type { RestClient } from '../transport/rest.js';
import type { WebhookServerOptions } from '../webhook/server.js';
import { TinyCA } from '../certs/ca.js';
import { manifestFiles } from './crds.js';
import { freeLoopbackPorts } from './controlplane.js';

const LOOPBACK = '127.0.0.1';
const ADMISSION_API = '/apis/admissionregistration.k8s.io/v1';
const COLLECTIONS = {
  MutatingWebhookConfiguration: `${ADMISSION_API}/mutatingwebhookconfigurations`,
  ValidatingWebhookConfiguration: `${ADMISSION_API}/validatingwebhookconfigurations`,
} as const;
/** The conversion path the runtime serves (kept literal here so envtest does not load the webhook server). */
const CONVERSION_PATH = '/convert';

/**
 * How envtest runs admission and conversion webhooks against the test API
 * server (controller-runtime's WebhookInstallOptions): it makes a CA and a
 * serving certificate, picks a free loopback port for the manager's webhook
 * server, and installs the webhook configurations rewritten to call
 * `https://127.0.0.1:<port><path>` with that CA.
 */
export interface WebhookInstallOptions {
  /**
   * Files or directories (non-recursive) of Mutating/ValidatingWebhookConfiguration
   * YAML, e.g. `['config/webhook']`; other documents there (kustomization,
   * Service) are ignored. Default: none.
   */
  paths?: string[];
  /** Webhook configuration objects built in code, installed with those from `paths`. Default: none. */
  configurations?: object[];
  /**
   * CRD names (`<plural>.<group>`) whose conversion is served by the
   * manager's `/convert` endpoint: envtest sets their `conversion.strategy`
   * to `Webhook` with this server's URL and CA. CRDs that already declare
   * strategy `Webhook` are rewritten the same way. Default: none.
   */
  conversionCRDs?: string[];
  /** Fail `start()` when a path does not exist. Default: false, as for CRD paths. */
  errorIfPathMissing?: boolean;
}

/** The configurations as read, the certificates made and the port picked: everything install needs. */
export class WebhookInstall {
  /** CRDs given a conversion webhook so far, to catch a misspelt `conversionCRDs` entry. */
  private readonly converted = new Set<string>();

  private constructor(
    private readonly options: WebhookInstallOptions,
    private readonly caPem: string,
    /** Where the manager's webhook server listens and reads its certificate. */
    readonly serverOptions: Required<Pick<WebhookServerOptions, 'host' | 'port' | 'certDir'>>,
  ) {}

  /** Makes the CA and serving certificate under `rootDir` and picks a port; installs nothing yet. */
  static async prepare(options: WebhookInstallOptions, rootDir: string): Promise<WebhookInstall> {
    const certDir = join(rootDir, 'webhook-certs');
    await mkdir(certDir, { recursive: true, mode: 0o700 });
    const ca = await TinyCA.create('envtest-webhook-ca');
    const serving = await ca.issue({
      usage: 'server',
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: [LOOPBACK],
    });
    await writeFile(join(certDir, 'tls.crt'), serving.certPem + ca.certPem, { mode: 0o600 });
    await writeFile(join(certDir, 'tls.key'), serving.keyPem, { mode: 0o600 });
    const [port] = (await freeLoopbackPorts(1)) as [number];
    return new WebhookInstall(options, ca.certPem, { host: LOOPBACK, port, certDir });
  }

  /** `https://127.0.0.1:<port>`, the base of every rewritten webhook URL. */
  get baseUrl(): string {
    return `https://${this.serverOptions.host}:${this.serverOptions.port}`;
  }

  private get caBundle(): string {
    return Buffer.from(this.caPem).toString('base64');
  }

  /** Copies of `crds` with the conversion webhook pointed at this server where asked (see `conversionCRDs`). */
  withConversionWebhooks(crds: object[]): object[] {
    const wanted = new Set(this.options.conversionCRDs ?? []);
    return crds.map((crd) => {
      const shape = crd as { metadata?: { name?: string }; spec?: { conversion?: { strategy?: string } } };
      const name = shape.metadata?.name ?? '';
      if (!wanted.has(name) && shape.spec?.conversion?.strategy !== 'Webhook') return crd;
      this.converted.add(name);
      const copy = structuredClone(shape) as { spec: Record<string, unknown> };
      copy.spec.conversion = {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { url: `${this.baseUrl}${CONVERSION_PATH}`, caBundle: this.caBundle },
          conversionReviewVersions: ['v1'],
        },
      };
      return copy;
    });
  }

  /**
   * Called once the CRDs are installed: checks every `conversionCRDs` entry was found, then reads the
   * configurations, rewrites every webhook to this server, and creates (or replaces) them.
   */
  async install(client: RestClient): Promise<void> {
    const missing = (this.options.conversionCRDs ?? []).filter((name) => !this.converted.has(name));
    if (missing.length > 0) {
      throw new Error(
        `envtest: conversionCRDs names ${missing.join(', ')}, but no such CRD was installed: use the CRD's metadata.name (<plural>.<group>) and check crdDirectoryPaths`,
      );
    }
    const configurations = [...(await this.readConfigurations()), ...(this.options.configurations ?? [])];
    for (const configuration of configurations) {
      const rewritten = this.rewrite(configuration);
      const collection = COLLECTIONS[rewritten.kind];
      const name = rewritten.metadata.name;
      try {
        const existing = await client.request<{ metadata?: { resourceVersion?: string } }>(
          'GET',
          `${collection}/${name}`,
        );
        await client.request('PUT', `${collection}/${name}`, {
          body: {
            ...rewritten,
            metadata: { ...rewritten.metadata, resourceVersion: existing.metadata?.resourceVersion },
          },
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await client.request('POST', collection, { body: rewritten });
      }
    }
  }

  private rewrite(configuration: object): WebhookConfigurationShape {
    const shape = structuredClone(configuration) as WebhookConfigurationShape;
    if (!(shape.kind in COLLECTIONS) || !shape.metadata?.name) {
      throw new Error(
        `envtest: a webhook configuration needs kind MutatingWebhookConfiguration or ValidatingWebhookConfiguration and metadata.name (got ${String(shape.kind)} ${String(shape.metadata?.name)})`,
      );
    }
    shape.apiVersion = 'admissionregistration.k8s.io/v1';
    for (const webhook of shape.webhooks ?? []) {
      const path = webhook.clientConfig?.service?.path ?? pathOfUrl(webhook.clientConfig?.url);
      webhook.clientConfig = { url: `${this.baseUrl}${path}`, caBundle: this.caBundle };
    }
    return shape;
  }

  private async readConfigurations(): Promise<object[]> {
    const found: object[] = [];
    const files = await manifestFiles(this.options.paths ?? [], (path) =>
      this.options.errorIfPathMissing
        ? new Error(
            `envtest: webhook path ${path} does not exist: fix webhookInstallOptions.paths (run make manifests to write config/webhook/manifests.yaml)`,
          )
        : undefined,
    );
    for (const file of files) {
      for (const document of parseAllDocuments(await readFile(file, 'utf8'))) {
        if (document.errors.length > 0)
          throw new Error(`envtest: ${file} is not valid YAML: ${document.errors[0]?.message}`);
        const value = document.toJS() as { kind?: string } | null;
        if (value && typeof value === 'object' && typeof value.kind === 'string' && value.kind in COLLECTIONS)
          found.push(value);
      }
    }
    return found;
  }
}

interface WebhookConfigurationShape {
  apiVersion: string;
  kind: keyof typeof COLLECTIONS;
  metadata: { name: string };
  webhooks?: Array<{ clientConfig?: { url?: string; caBundle?: string; service?: { path?: string } } }>;
}

function pathOfUrl(url: string | undefined): string {
  if (!url) return '/';
  try {
    return new URL(url).pathname;
  } catch {
    return '/';
  }
}

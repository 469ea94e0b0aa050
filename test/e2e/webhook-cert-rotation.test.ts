/**
 * Certificate rotation under a running webhook server, the way a Secret
 * volume rotates: kubelet writes the new files into a fresh directory and
 * swaps the `..data` symlink the visible files point through. New TLS
 * connections then present the new certificate, the API server's admission
 * calls keep working once the webhook configuration trusts the new CA (as
 * cert-manager's CA injector does), and the manager never restarts.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, Manager, newWebhookManagedBy } from '../../src/runtime/index.js';
import { ForbiddenError } from '../../src/runtime/api/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { TinyCA, type KeyPairPem } from '../../src/runtime/certs/ca.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';
import { Memcached, memcachedCRD } from './fixtures/memcached.js';
import { MemcachedDefaulter, MemcachedValidator } from './fixtures/memcached-webhooks.js';
import { presentedCertificate } from './tls-client.js';

const webhookConfig = fileURLToPath(
  new URL('../../../test/fixtures/webhook/memcached-admission/config/webhook', import.meta.url),
);
const VALIDATING =
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/validating-webhook-configuration';
const MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/mutating-webhook-configuration';

/** A directory laid out like a mounted Secret: tls.crt -> ..data/tls.crt, ..data -> ..<version>. */
class SecretVolume {
  private generation = 0;
  constructor(readonly dir: string) {}

  async write(pair: { certPem: string; keyPem: string }): Promise<void> {
    const version = `..v${++this.generation}`;
    await mkdir(join(this.dir, version));
    await writeFile(join(this.dir, version, 'tls.crt'), pair.certPem);
    await writeFile(join(this.dir, version, 'tls.key'), pair.keyPem);
    await symlink(version, join(this.dir, '..data_tmp'));
    // rename(2) replaces the old symlink atomically, as kubelet's AtomicWriter does.
    await rename(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (this.generation === 1) {
      await symlink('..data/tls.crt', join(this.dir, 'tls.crt'));
      await symlink('..data/tls.key', join(this.dir, 'tls.key'));
    }
  }
}

describe('webhook certificate rotation without a restart', () => {
  let env: Environment;
  let mgr: Manager;
  let running: Promise<void>;
  let settled = false;
  let api: Client;
  let rest: RestClient;
  let volume: SecretVolume;
  let address: string;
  const { logger, lines } = capturingLogger();

  before(async () => {
    env = await startControlPlane({ crds: [memcachedCRD], webhookInstallOptions: { paths: [webhookConfig] } });
    const envtestCerts = env.webhookServerOptions();
    volume = new SecretVolume(await mkdtemp(join(tmpdir(), 'webhook-secret-')));
    // Start from envtest's certificate, which the installed configurations trust.
    await volume.write({
      certPem: await readFile(join(envtestCerts.certDir!, 'tls.crt'), 'utf8'),
      keyPem: await readFile(join(envtestCerts.certDir!, 'tls.key'), 'utf8'),
    });
    mgr = new Manager({
      kubeConfig: env.kubeConfig,
      webhookServer: { ...envtestCerts, certDir: volume.dir },
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '127.0.0.1:0',
      handleSignals: false,
      logger,
    });
    newWebhookManagedBy(mgr, Memcached)
      .withDefaulter(new MemcachedDefaulter())
      .withValidator(new MemcachedValidator())
      .complete();
    mgr.addReadyzCheck('webhook', mgr.getWebhookServer().startedChecker());
    running = mgr.start().finally(() => (settled = true));
    api = new Client({ rest: new RestClient(env.kubeConfig) });
    rest = new RestClient(env.kubeConfig);
    await eventually(
      'the manager to be ready',
      async () => (await fetch(`http://${mgr.getHealthProbeAddress()}/readyz`)).status === 200,
      60_000,
    );
    address = mgr.getWebhookServer().address()!;
  });

  after(async () => {
    mgr?.stop();
    await running;
    await env?.stop();
    if (volume) await rm(volume.dir, { recursive: true, force: true });
  });

  const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;

  it('rotates: new connections present the new certificate, admission works with the new CA, and the server never restarted', async () => {
    const before = await presentedCertificate(address);
    assert.equal(
      (
        await api.create<Memcached>({
          apiVersion: 'cache.example.com/v1',
          kind: 'Memcached',
          metadata: { name: 'before', namespace: 'default' },
        })
      ).spec?.size,
      1,
    );

    const newCA = await TinyCA.create('rotated-webhook-ca');
    const rotated: KeyPairPem = await newCA.issue({
      usage: 'server',
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    });
    await volume.write(rotated);
    const after = await eventually(
      'the rotated certificate on a new connection',
      async () => {
        const presented = await presentedCertificate(address);
        return presented.fingerprint256 === fingerprintOf(rotated.certPem) ? presented : undefined;
      },
      60_000,
    );
    assert.notEqual(after.fingerprint256, before.fingerprint256);
    assert.equal(mgr.getWebhookServer().address(), address, 'same listener');
    assert.equal(settled, false, 'the manager is still running');
    assert.ok(lines.some((line) => line.msg === 'Updated current TLS certificate'));

    // The API server keeps its established (old-certificate) connections alive; a new CA bundle makes it
    // build a new client, whose new connections must verify the rotated certificate against the new CA,
    // as after cert-manager's CA injector updates the bundle.
    for (const path of [MUTATING, VALIDATING]) {
      const config = await rest.request<{ webhooks: Array<{ clientConfig: { caBundle?: string } }> }>('GET', path);
      for (const webhook of config.webhooks)
        webhook.clientConfig.caBundle = Buffer.from(newCA.certPem).toString('base64');
      await rest.request('PUT', path, { body: config });
    }
    const created = await eventually(
      'admission through the rotated certificate',
      async () =>
        api
          .create<Memcached>({
            apiVersion: 'cache.example.com/v1',
            kind: 'Memcached',
            metadata: { name: 'after', namespace: 'default' },
          })
          .catch(() => undefined),
      60_000,
    );
    assert.equal(created.spec?.size, 1, 'the defaulter answered over the new certificate');
    await assert.rejects(
      api.create({
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: 'big', namespace: 'default' },
        spec: { size: 11 },
      }),
      ForbiddenError,
    );
  });

  it('a half-written pair (new cert, old key) is not taken: the server keeps the last valid pair', async () => {
    const current = await presentedCertificate(address);
    const other = await (await TinyCA.create('mismatched')).issue({ usage: 'server', commonName: 'localhost' });
    const key = await readFile(join(volume.dir, 'tls.key'), 'utf8');
    await volume.write({ certPem: other.certPem, keyPem: key });
    await eventually(
      'the mismatched pair to be seen and refused',
      () =>
        lines.some(
          (line) => line.msg === 'certificate files changed but are not a valid pair yet; keeping the current pair',
        ),
      60_000,
    );
    assert.equal((await presentedCertificate(address)).fingerprint256, current.fingerprint256);
  });
});

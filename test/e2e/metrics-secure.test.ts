/**
 * Secure metrics on a real API server: /metrics over HTTPS, authenticated
 * with TokenReview and authorized with SubjectAccessReview, with
 * ServiceAccount tokens from the TokenRequest API. The manager runs as a
 * user holding only the generated `metrics-auth-role`, and the scraper's
 * permission comes from the generated `metrics-reader` ClusterRole, both
 * rendered from the init templates.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { Manager } from '../../src/runtime/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { TinyCA } from '../../src/runtime/certs/ca.js';
import { renderTemplate } from '../../src/scaffold/render.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { capturingLogger } from './log-capture.js';
import { httpsGet, plainHttpGet, presentedCertificate } from './tls-client.js';

const NAMESPACE = 'default';

describe('secure metrics on a real API server', () => {
  let env: Environment;
  let admin: RestClient;
  let mgr: Manager;
  let running: Promise<void>;
  let address: string;
  const { logger } = capturingLogger();

  /** A ServiceAccount token from the TokenRequest API: a real bearer token the API server can review. */
  async function serviceAccountToken(name: string): Promise<string> {
    await admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
    });
    const review = await admin.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${name}/token`,
      {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
      },
    );
    return review.status.token;
  }

  async function bindClusterRole(
    role: string,
    subject: { kind: 'User' | 'ServiceAccount'; name: string },
  ): Promise<void> {
    await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${role}-${subject.name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [
          subject.kind === 'User'
            ? { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: subject.name }
            : { kind: 'ServiceAccount', name: subject.name, namespace: NAMESPACE },
        ],
      },
    });
  }

  before(async () => {
    env = await startControlPlane();
    admin = new RestClient(env.kubeConfig);
    for (const template of [
      'init/config/rbac/metrics_reader_role.yaml.hbs',
      'init/config/rbac/metrics_auth_role.yaml.hbs',
    ]) {
      await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        body: parse(renderTemplate(template, {})) as object,
      });
    }
    await bindClusterRole('metrics-auth-role', { kind: 'User', name: 'operator' });
    mgr = new Manager({
      kubeConfig: await env.addUser({ name: 'operator' }),
      metrics: { bindAddress: '127.0.0.1:0', secureServing: true },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger,
    });
    running = mgr.start();
    address = await eventually('the metrics address', () => mgr.getMetricsAddress(), 60_000);
  });

  after(async () => {
    mgr?.stop();
    await running;
    await env?.stop();
  });

  it('without a token: 401', async () => {
    assert.equal((await httpsGet(address, '/metrics')).status, 401);
  });

  it('with a token the API server does not accept: 401', async () => {
    assert.equal((await httpsGet(address, '/metrics', { token: 'not-a-real-token' })).status, 401);
  });

  it('with a valid token whose user lacks RBAC: 403 naming the user', async () => {
    const token = await serviceAccountToken('stranger');
    const response = await httpsGet(address, '/metrics', { token });
    assert.equal(response.status, 403);
    assert.match(response.body, /Authorization denied for user system:serviceaccount:default:stranger/);
  });

  it('with a token bound to the generated metrics-reader role: 200 and the metrics; a repeat scrape is answered from the caches', async () => {
    const token = await serviceAccountToken('prometheus');
    await bindClusterRole('metrics-reader', { kind: 'ServiceAccount', name: 'prometheus' });
    // RBAC bindings reach the authorizer through its informer: wait for the first 200.
    const response = await eventually('a 200 for the bound scraper', async () => {
      const attempt = await httpsGet(address, '/metrics', { token });
      return attempt.status === 200 ? attempt : undefined;
    });
    assert.match(response.body, /^# HELP /m);
    assert.match(response.body, /rest_client_requests_total/);
    const requestsBefore = mgr.getRestClient().requestCount;
    assert.equal((await httpsGet(address, '/metrics', { token })).status, 200);
    assert.equal(
      mgr.getRestClient().requestCount,
      requestsBefore,
      'no TokenReview or SubjectAccessReview for a cached token and decision',
    );
  });

  it('serves a self-signed certificate for localhost when no cert dir is given', async () => {
    const certificate = await presentedCertificate(address);
    assert.equal(certificate.subject.CN, 'localhost');
    assert.match(certificate.subjectaltname ?? '', /IP Address:127\.0\.0\.1/);
  });

  it('plain HTTP to the HTTPS port gets no HTTP answer', async () => {
    await assert.rejects(
      plainHttpGet(address, '/metrics'),
      (err: NodeJS.ErrnoException) =>
        ['ECONNRESET', 'HPE_INVALID_CONSTANT', 'HPE_INVALID_VERSION'].includes(err.code ?? '') ||
        /socket hang up|Parse Error/.test(err.message),
    );
  });

  it('with metrics.certDir it serves the mounted certificate, and picks up a rotated one without a restart', async () => {
    const certDir = await mkdtemp(join(tmpdir(), 'metrics-certs-'));
    const writePair = async (ca: TinyCA): Promise<void> => {
      const pair = await ca.issue({
        usage: 'server',
        commonName: 'localhost',
        dnsNames: ['localhost'],
        ipAddresses: ['127.0.0.1'],
      });
      await writeFile(join(certDir, 'tls.crt'), pair.certPem);
      await writeFile(join(certDir, 'tls.key'), pair.keyPem);
    };
    const first = await TinyCA.create('metrics-first');
    const second = await TinyCA.create('metrics-second');
    await writePair(first);
    const mounted = new Manager({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '127.0.0.1:0', secureServing: true, certDir },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger,
    });
    const mountedRunning = mounted.start();
    try {
      const at = await eventually('the metrics address', () => mounted.getMetricsAddress(), 60_000);
      assert.equal(
        (await httpsGet(at, '/metrics', { ca: first.certPem })).status,
        401,
        "verified against the mounted certificate's CA",
      );
      await writePair(second);
      await eventually(
        'the rotated certificate',
        async () =>
          (await httpsGet(at, '/metrics', { ca: second.certPem }).catch(() => ({ status: 0 }))).status === 401,
        60_000,
      );
      await assert.rejects(httpsGet(at, '/metrics', { ca: first.certPem }), /certificate/);
    } finally {
      mounted.stop();
      await mountedRunning;
      await rm(certDir, { recursive: true, force: true });
    }
  });
});

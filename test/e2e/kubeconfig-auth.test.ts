/**
 * The runtime's own kubeconfig loader and credentials against a real API
 * server: who the server says we are (a SelfSubjectReview) for each way a
 * kubeconfig can authenticate. Service account tokens come from the real
 * TokenRequest API, client certificates from envtest's CA.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, connect, type Socket } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { loadKubeConfig } from '../../src/runtime/index.js';
import { RestClient, inClusterConfig } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';

const NAMESPACE = 'default';

/** The user the API server authenticated this client as. */
async function whoAmI(rest: RestClient): Promise<string> {
  const review = await rest.request<{ status?: { userInfo?: { username?: string } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    },
  );
  return review.status?.userInfo?.username ?? '';
}

describe('kubeconfig loader and credentials on a real API server', () => {
  let env: Environment;
  let admin: RestClient;
  let dir: string;
  let server: string;
  let caPem: string;

  /** A real token of service account `name` (created if needed). */
  async function serviceAccountToken(name: string): Promise<string> {
    await admin
      .request('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
      })
      .catch(() => undefined);
    const answer = await admin.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${name}/token`,
      {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
      },
    );
    return answer.status.token;
  }

  /** Writes a kubeconfig whose only user is `user` (YAML, as kubectl writes it) and returns its path. */
  function writeKubeConfig(name: string, user: string): string {
    const path = join(dir, `${name}.yaml`);
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: envtest',
        '  cluster:',
        `    server: ${server}`,
        '    certificate-authority: ca.crt',
        'users:',
        '- name: someone',
        '  user:',
        ...user.split('\n').map((line) => `    ${line}`),
        'contexts:',
        '- name: envtest',
        '  context: { cluster: envtest, user: someone }',
        'current-context: envtest',
        '',
      ].join('\n'),
    );
    return path;
  }

  before(async () => {
    env = await startControlPlane();
    admin = new RestClient(env.kubeConfig, 'kubeconfig-test-admin');
    dir = mkdtempSync(join(tmpdir(), 'kubeconfig-auth-'));
    const cluster = env.kubeConfig.getCurrentCluster()!;
    server = cluster.server;
    caPem = Buffer.from(cluster.caData!, 'base64').toString('utf8');
    writeFileSync(join(dir, 'ca.crt'), caPem);
  });

  after(async () => {
    await admin?.close();
    await env?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates with client certificate and key files named relative to the kubeconfig', async () => {
    const alice = await env.addUser({ name: 'alice', groups: ['team-a'] });
    const user = alice.getCurrentUser()!;
    mkdirSync(join(dir, 'certs'), { recursive: true });
    writeFileSync(join(dir, 'certs', 'alice.crt'), Buffer.from(user.certData!, 'base64'));
    writeFileSync(join(dir, 'certs', 'alice.key'), Buffer.from(user.keyData!, 'base64'));
    const rest = new RestClient(
      loadKubeConfig(writeKubeConfig('cert-files', 'client-certificate: certs/alice.crt\nclient-key: certs/alice.key')),
    );
    try {
      assert.equal(await whoAmI(rest), 'alice');
    } finally {
      await rest.close();
    }
  });

  it('authenticates with a token, and a kubeconfig without a valid user is refused by the server, not the loader', async () => {
    const token = await serviceAccountToken('token-user');
    const rest = new RestClient(loadKubeConfig(writeKubeConfig('token', `token: ${token}`)));
    const anonymous = new RestClient(loadKubeConfig(writeKubeConfig('bad-token', 'token: not-a-real-token')));
    try {
      assert.equal(await whoAmI(rest), `system:serviceaccount:${NAMESPACE}:token-user`);
      await assert.rejects(whoAmI(anonymous), (err: unknown) => (err as { statusCode?: number }).statusCode === 401);
    } finally {
      await rest.close();
      await anonymous.close();
    }
  });

  it('in cluster: re-reads the rotated service account token file', async () => {
    const saDir = join(dir, 'serviceaccount');
    mkdirSync(saDir, { recursive: true });
    writeFileSync(join(saDir, 'ca.crt'), caPem);
    writeFileSync(join(saDir, 'namespace'), NAMESPACE);
    writeFileSync(join(saDir, 'token'), await serviceAccountToken('before-rotation'));
    const url = new URL(server);
    const config = inClusterConfig(saDir, { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port });
    assert.equal(config.getContextObject(config.getCurrentContext())?.namespace, NAMESPACE);
    const rest = new RestClient(config);
    try {
      assert.equal(await whoAmI(rest), `system:serviceaccount:${NAMESPACE}:before-rotation`);
      // The kubelet replaces the projected token; the next requests must carry the new one.
      writeFileSync(join(saDir, 'token'), await serviceAccountToken('after-rotation'));
      await sleep(1200);
      assert.equal(await whoAmI(rest), `system:serviceaccount:${NAMESPACE}:after-rotation`);
    } finally {
      await rest.close();
    }
  });

  for (const apiVersion of ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']) {
    it(`runs an exec credential plugin (${apiVersion}) once, and again only after its credential expires`, async () => {
      const token = await serviceAccountToken('exec-user');
      const version = apiVersion.split('/')[1]!;
      const runs = join(dir, `exec-runs-${version}`);
      const plugin = join(dir, `exec-plugin-${version}.sh`);
      // Counts its runs, checks the spec it is given, and answers with a credential that expires in 12 s
      // (the client refreshes 10 s early, so the second batch below needs a new one after ~2.5 s).
      writeFileSync(
        plugin,
        [
          '#!/bin/sh',
          'echo run >> "$RUNS_FILE"',
          `case "$KUBERNETES_EXEC_INFO" in *'"apiVersion":"${apiVersion}"'*'"interactive":false'*) ;; *) echo "bad KUBERNETES_EXEC_INFO: $KUBERNETES_EXEC_INFO" >&2; exit 1;; esac`,
          `expiry=$(date -u -d @$(( $(date +%s) + 12 )) +%Y-%m-%dT%H:%M:%SZ)`,
          `printf '{"apiVersion":"${apiVersion}","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$TOKEN" "$expiry"`,
          '',
        ].join('\n'),
      );
      chmodSync(plugin, 0o755);
      const path = writeKubeConfig(
        `exec-${version}`,
        [
          'exec:',
          `  apiVersion: ${apiVersion}`,
          `  command: ./exec-plugin-${version}.sh`,
          '  env:',
          `  - { name: RUNS_FILE, value: ${runs} }`,
          `  - { name: TOKEN, value: ${token} }`,
        ].join('\n'),
      );
      const rest = new RestClient(loadKubeConfig(path));
      const runCount = (): number => readFileSync(runs, 'utf8').trim().split('\n').length;
      try {
        const names = await Promise.all(Array.from({ length: 5 }, () => whoAmI(rest)));
        assert.deepEqual(new Set(names), new Set([`system:serviceaccount:${NAMESPACE}:exec-user`]));
        assert.equal(runCount(), 1, 'five concurrent requests share one run of the plugin');
        await whoAmI(rest);
        assert.equal(runCount(), 1, 'the cached credential is reused while it is valid');
        await sleep(2500);
        assert.equal(await whoAmI(rest), `system:serviceaccount:${NAMESPACE}:exec-user`);
        assert.equal(runCount(), 2, 'an expiring credential is refreshed');
      } finally {
        await rest.close();
      }
    });
  }

  it('presents the new client certificate once an exec plugin renews it, on new connections', async () => {
    // Two identities from envtest's CA; the plugin answers with the first, then, once that expires, the second.
    for (const [index, name] of ['cert-renewed-1', 'cert-renewed-2'].entries()) {
      const user = (await env.addUser({ name })).getCurrentUser()!;
      writeFileSync(
        join(dir, `renewed-credential-${index + 1}.json`),
        JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          status: {
            clientCertificateData: Buffer.from(user.certData!, 'base64').toString('utf8'),
            clientKeyData: Buffer.from(user.keyData!, 'base64').toString('utf8'),
            expirationTimestamp: 'EXPIRY',
          },
        }),
      );
    }
    const runs = join(dir, 'renewed-credential-runs');
    writeFileSync(
      join(dir, 'renewing-plugin.sh'),
      [
        '#!/bin/sh',
        'echo run >> "$RUNS_FILE"',
        'n=$(wc -l < "$RUNS_FILE")',
        // Expires in 12 s; the client refreshes 10 s early, so the call after the sleep below needs the second.
        `expiry=$(date -u -d @$(( $(date +%s) + 12 )) +%Y-%m-%dT%H:%M:%SZ)`,
        `sed "s/EXPIRY/$expiry/" "${dir}/renewed-credential-$n.json"`,
        '',
      ].join('\n'),
    );
    chmodSync(join(dir, 'renewing-plugin.sh'), 0o755);
    const path = writeKubeConfig(
      'exec-renewed-certificate',
      [
        'exec:',
        '  apiVersion: client.authentication.k8s.io/v1',
        '  command: ./renewing-plugin.sh',
        '  env:',
        `  - { name: RUNS_FILE, value: ${runs} }`,
      ].join('\n'),
    );
    const rest = new RestClient(loadKubeConfig(path));
    try {
      assert.equal(await whoAmI(rest), 'cert-renewed-1');
      await sleep(2500);
      assert.equal(
        await whoAmI(rest),
        'cert-renewed-2',
        'the pooled connection made with the old certificate is not reused',
      );
    } finally {
      await rest.close();
    }
  });

  it('a failing exec plugin fails the request with a message naming the plugin', async () => {
    const plugin = join(dir, 'failing-plugin.sh');
    writeFileSync(plugin, '#!/bin/sh\necho "cannot reach the identity provider" >&2\nexit 3\n');
    chmodSync(plugin, 0o755);
    const rest = new RestClient(
      loadKubeConfig(
        writeKubeConfig('exec-failing', `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${plugin}`),
      ),
    );
    try {
      await assert.rejects(
        whoAmI(rest),
        /^Error: the exec plugin .*failing-plugin\.sh of kubeconfig user "someone" failed: it exited with 3: cannot reach the identity provider$/,
      );
    } finally {
      await rest.close();
    }
  });

  it('hands a legacy auth-provider to client-node, imported only then', async () => {
    const token = await serviceAccountToken('provider-user');
    // client-node's gcp provider uses a cached access-token that has not expired without running anything.
    const path = writeKubeConfig(
      'auth-provider',
      [
        'auth-provider:',
        '  name: gcp',
        '  config:',
        `    access-token: ${token}`,
        '    expiry: "2999-01-01T00:00:00Z"',
      ].join('\n'),
    );
    const rest = new RestClient(loadKubeConfig(path));
    try {
      assert.equal(await whoAmI(rest), `system:serviceaccount:${NAMESPACE}:provider-user`);
    } finally {
      await rest.close();
    }
  });

  it('reaches the server through the kubeconfig proxy-url (an HTTP CONNECT proxy in front of the real server)', async () => {
    const token = await serviceAccountToken('proxy-user');
    // A minimal CONNECT proxy on loopback: it records each tunnel's target and pipes bytes both ways.
    const tunnels: string[] = [];
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => undefined);
      client.once('data', (head) => {
        const match = /^CONNECT (\S+):(\d+) HTTP\/1\.[01]\r\n/.exec(head.toString('latin1'));
        if (!match) return client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
        tunnels.push(`${match[1]}:${match[2]}`);
        const upstream = connect(Number(match[2]), match[1]!.replace(/^\[|\]$/g, ''), () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(client);
          client.pipe(upstream);
        });
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as { port: number }).port;
    const path = writeKubeConfig('proxy', `token: ${token}`).replace(/\.yaml$/, '-proxied.yaml');
    writeFileSync(
      path,
      readFileSync(join(dir, 'proxy.yaml'), 'utf8').replace(
        '    certificate-authority: ca.crt',
        `    certificate-authority: ca.crt\n    proxy-url: http://127.0.0.1:${port}`,
      ),
    );
    const config = loadKubeConfig(path);
    assert.equal(config.getCurrentCluster()?.proxyUrl, `http://127.0.0.1:${port}`);
    const rest = new RestClient(config);
    try {
      assert.equal(await whoAmI(rest), `system:serviceaccount:${NAMESPACE}:proxy-user`);
      const url = new URL(server);
      assert.ok(tunnels.length >= 1, 'the request went through the proxy');
      assert.deepEqual(new Set(tunnels), new Set([`${url.hostname.replace(/^\[|\]$/g, '')}:${url.port}`]));
    } finally {
      await rest.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('an operator process that loads its (JSON) kubeconfig and talks to the server never imports client-node, js-yaml or child_process', () => {
    const probe = join(dir, 'probe.mjs');
    const runtime = fileURLToPath(new URL('../../src/runtime/index.js', import.meta.url));
    const transport = fileURLToPath(new URL('../../src/runtime/transport/index.js', import.meta.url));
    writeFileSync(
      probe,
      [
        "import { registerHooks } from 'node:module';",
        'const loaded = [];',
        'registerHooks({ resolve(specifier, context, next) { loaded.push(specifier); return next(specifier, context); } });',
        `const { Manager, loadKubeConfig, createLogger } = await import(${JSON.stringify(runtime)});`,
        `const { RestClient } = await import(${JSON.stringify(transport)});`,
        'const rest = new RestClient(loadKubeConfig(process.env.KUBECONFIG));',
        "await rest.request('GET', '/api/v1/namespaces/default');",
        "new Manager({ kubeConfig: loadKubeConfig(process.env.KUBECONFIG), logger: createLogger({ level: 'silent' }), metrics: { bindAddress: '0' }, healthProbeBindAddress: '0' });",
        'await rest.close();',
        // Nor what only some operators need (idle RSS): js-yaml for a kubeconfig that is not JSON (envtest's is), child_process for exec plugins.
        "if (process.moduleLoadList.includes('NativeModule child_process')) loaded.push('node:child_process');",
        // The package, not the transport's own client-node.js (the bridge that imports it only when called).
        "console.log(JSON.stringify(loaded.filter((s) => s.includes('@kubernetes/client-node') || s === 'undici' || s.includes('js-yaml') || s === 'node:child_process')));",
      ].join('\n'),
    );
    const child = spawnSync(process.execPath, [probe], {
      env: { ...process.env, KUBECONFIG: env.kubeConfigPath() },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout.trim().split('\n').at(-1)!), []);
  });
});

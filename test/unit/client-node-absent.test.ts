/**
 * An operator image installs with `--omit=dev --omit=optional`, which leaves
 * out @kubernetes/client-node (an optional dependency of the SDK, a
 * devDependency of a generated project). The runtime must then work for
 * every kubeconfig it reads itself, and a kubeconfig that needs client-node
 * (a legacy auth-provider, a cluster proxy-url) must fail in one line naming
 * the fix. This repository has client-node installed, so the test runs the
 * built runtime from a package copy whose node_modules lacks it: the failure
 * the real setup cannot produce.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../scaffold/harness.js';

/** The built runtime in a package root whose node_modules has every installed package except @kubernetes/*. */
function packageWithoutClientNode(): string {
  const root = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-no-client-node-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'ts-operator-sdk', type: 'module' }));
  mkdirSync(join(root, 'dist'));
  cpSync(join(REPO_ROOT, 'dist', 'src'), join(root, 'dist', 'src'), { recursive: true });
  mkdirSync(join(root, 'node_modules'));
  for (const entry of readdirSync(join(REPO_ROOT, 'node_modules'))) {
    if (entry === '@kubernetes') continue;
    symlinkSync(join(REPO_ROOT, 'node_modules', entry), join(root, 'node_modules', entry));
  }
  return root;
}

/** A kubeconfig for a server at `server`, with `user` (kubeconfig YAML lines) as its user and `cluster` extra lines. */
function kubeconfig(dir: string, name: string, options: { user: string[]; cluster?: string[] }): string {
  const path = join(dir, `${name}.yaml`);
  const lines = [
    'apiVersion: v1',
    'kind: Config',
    'current-context: c',
    'contexts: [{name: c, context: {cluster: k, user: u}}]',
    'clusters:',
    '- name: k',
    '  cluster:',
    '    server: http://127.0.0.1:PORT',
    ...(options.cluster ?? []).map((line) => `    ${line}`),
    'users:',
    '- name: u',
    '  user:',
    ...options.user.map((line) => `    ${line}`),
  ];
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/**
 * Runs in the package copy: one GET per kubeconfig against a loopback
 * server, reporting each outcome (the Authorization header the server saw,
 * or the error).
 */
const PROBE = `
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
const { loadKubeConfig, RestClient } = await import('./dist/src/runtime/transport/index.js');
let clientNode;
try { await import('@kubernetes/client-node'); clientNode = 'installed'; } catch (err) { clientNode = err.code; }
const seen = [];
const server = createServer((req, res) => { seen.push(req.headers.authorization); res.setHeader('content-type', 'application/json'); res.end('{}'); });
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const outcomes = {};
for (const path of JSON.parse(process.argv[1])) {
  writeFileSync(path, readFileSync(path, 'utf8').replace('PORT', String(server.address().port)));
  const rest = new RestClient(loadKubeConfig(path), { timeoutMs: 5000 });
  try {
    await rest.request('GET', '/api');
    outcomes[path] = { authorization: seen.at(-1) };
  } catch (err) {
    outcomes[path] = { error: err.message };
  }
  await rest.close();
}
server.close();
process.stdout.write(JSON.stringify({ clientNode, outcomes }));
`;

test('without @kubernetes/client-node (an operator image), token and certificate users work and one that needs it names the fix', (t) => {
  const root = packageWithoutClientNode();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const token = kubeconfig(root, 'token', { user: ['token: t0ken'] });
  const cert = kubeconfig(root, 'cert', {
    user: [
      `client-certificate-data: ${Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64')}`,
      `client-key-data: ${Buffer.from('-----BEGIN PRIVATE KEY-----\n').toString('base64')}`,
      'token: c3rt',
    ],
  });
  const oidc = kubeconfig(root, 'oidc', {
    user: [
      'auth-provider: {name: oidc, config: {client-id: x, id-token: y, idp-issuer-url: "https://issuer.invalid"}}',
    ],
  });
  const proxied = kubeconfig(root, 'proxied', { user: ['token: t0ken'], cluster: ['proxy-url: http://127.0.0.1:9'] });
  const run = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', PROBE, JSON.stringify([token, cert, oidc, proxied])],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout) as {
    clientNode: string;
    outcomes: Record<string, { authorization?: string; error?: string }>;
  };
  assert.equal(report.clientNode, 'ERR_MODULE_NOT_FOUND', 'the package copy must not resolve @kubernetes/client-node');
  assert.deepEqual(report.outcomes, {
    [token]: { authorization: 'Bearer t0ken' },
    [cert]: { authorization: 'Bearer c3rt' },
    [oidc]: {
      error:
        'the kubeconfig user "u" uses the auth-provider "oidc", which needs @kubernetes/client-node, and it is not installed: add it to the operator\'s dependencies (npm install @kubernetes/client-node)',
    },
    [proxied]: {
      error:
        'the kubeconfig cluster "k" is reached through its proxy-url, which needs @kubernetes/client-node, and it is not installed: add it to the operator\'s dependencies (npm install @kubernetes/client-node)',
    },
  });
});

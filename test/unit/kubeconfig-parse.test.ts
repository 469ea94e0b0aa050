/**
 * The kubeconfig loader reads JSON itself and YAML through js-yaml, which it
 * loads only for a file that is not JSON (an idle operator's RSS). These pin
 * that both forms, and YAML that merely looks like JSON, give the same config,
 * and that a JSON kubeconfig never loads js-yaml.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RestConfig, loadKubeConfig } from '../../src/runtime/transport/kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-parse-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const config = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', 'insecure-skip-tls-verify': true } }],
  users: [{ name: 'u', user: { token: 'abc' } }],
  contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'ns' } }],
  'current-context': 'ctx',
};
const forms: Record<string, string> = {
  json: JSON.stringify(config, null, 2),
  'block YAML': [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster:',
    '    server: https://127.0.0.1:6443',
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: u',
    '  user:',
    '    token: abc',
    'contexts:',
    '- name: ctx',
    '  context: {cluster: c, user: u, namespace: ns}',
    'current-context: ctx',
    '',
  ].join('\n'),
  // Starts with "{" but is not JSON (unquoted keys): YAML must still decide.
  'flow YAML':
    '{apiVersion: v1, kind: Config, clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}], users: [{name: u, user: {token: abc}}], contexts: [{name: ctx, context: {cluster: c, user: u, namespace: ns}}], current-context: ctx}\n',
};

describe('kubeconfig text', () => {
  for (const [form, text] of Object.entries(forms)) {
    it(`reads a ${form} kubeconfig`, () => {
      const path = join(dir, `${form.replace(' ', '-')}.config`);
      writeFileSync(path, text);
      const loaded = loadKubeConfig(path);
      assert.equal(loaded.getCurrentContext(), 'ctx');
      assert.equal(loaded.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
      assert.equal(loaded.getCurrentCluster()?.skipTLSVerify, true);
      assert.equal(loaded.getCurrentUser()?.token, 'abc');
    });
  }

  it('reads back what RestConfig.exportConfig() writes (envtest writes its kubeconfig files this way)', () => {
    const written = new RestConfig(
      [
        { name: 'a', server: 'https://127.0.0.1:6443', caData: 'Q0E=', tlsServerName: 'api', skipTLSVerify: false },
        { name: 'b', server: 'http://127.0.0.1:8080', skipTLSVerify: true, proxyUrl: 'socks5://127.0.0.1:1080' },
      ],
      [
        { name: 'cert', certData: 'Q0VSVA==', keyData: 'S0VZ', impersonateUser: 'jane' },
        { name: 'files', certFile: '/pki/c.crt', keyFile: '/pki/c.key', tokenFile: '/pki/token' },
      ],
      [
        { name: 'one', cluster: 'a', user: 'cert', namespace: 'ns' },
        { name: 'two', cluster: 'b', user: 'files' },
      ],
      'one',
    );
    const path = join(dir, 'exported.config');
    writeFileSync(path, written.exportConfig());
    // kubectl's field names, spelled out: reading and writing share one table, so a wrong name there would still round-trip.
    const file = JSON.parse(written.exportConfig()) as {
      clusters: { cluster: object }[];
      users: { user: object }[];
    };
    assert.deepEqual(Object.keys(file.clusters[0]!.cluster).sort(), [
      'certificate-authority-data',
      'server',
      'tls-server-name',
    ]);
    assert.deepEqual(Object.keys(file.clusters[1]!.cluster).sort(), [
      'insecure-skip-tls-verify',
      'proxy-url',
      'server',
    ]);
    assert.deepEqual(Object.keys(file.users[0]!.user).sort(), ['as', 'client-certificate-data', 'client-key-data']);
    assert.deepEqual(Object.keys(file.users[1]!.user).sort(), ['client-certificate', 'client-key', 'tokenFile']);
    const read = loadKubeConfig(path);
    assert.equal(read.currentContext, 'one');
    assert.deepEqual(
      read.contexts,
      written.contexts.map((context) => ({ namespace: undefined, ...context })),
    );
    const full = <T extends object>(entries: T[], read: T[]): void =>
      entries.forEach((entry, i) => {
        for (const [key, value] of Object.entries(entry)) assert.deepEqual(read[i]![key as keyof T], value, key);
      });
    full(written.clusters, read.clusters);
    full(written.users, read.users);
  });

  it('names the file when it is neither JSON nor YAML', () => {
    const path = join(dir, 'broken.config');
    writeFileSync(path, '{"apiVersion": "v1",\n  clusters: [\n');
    assert.throws(
      () => loadKubeConfig(path),
      (err: Error) => err.message.startsWith(`kubeconfig ${path} is not valid YAML`),
    );
  });

  it('loads js-yaml only for a kubeconfig that is not JSON', () => {
    const kubeconfigModule = fileURLToPath(new URL('../../src/runtime/transport/kubeconfig.js', import.meta.url));
    const probe = (form: string): boolean => {
      const path = join(dir, `probe-${form.replace(' ', '-')}.config`);
      writeFileSync(path, forms[form]!);
      const script = [
        "import { registerHooks } from 'node:module';",
        'let yaml = false;',
        "registerHooks({ resolve(specifier, context, next) { if (specifier.includes('js-yaml')) yaml = true; return next(specifier, context); } });",
        `const { loadKubeConfig } = await import(${JSON.stringify(kubeconfigModule)});`,
        `loadKubeConfig(${JSON.stringify(path)});`,
        'console.log(JSON.stringify(yaml));',
      ].join('\n');
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(child.status, 0, child.stderr);
      return JSON.parse(child.stdout.trim()) as boolean;
    };
    assert.equal(probe('json'), false);
    assert.equal(probe('block YAML'), true); // the probe sees the import when there is one
  });
});

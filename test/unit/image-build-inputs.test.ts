/**
 * What an image build needs from the scaffold, without building one (that is
 * test/cluster/operator-workflow.test.ts): init copies a `file:` tarball into vendor/
 * and the Dockerfile COPYs it, only then; an unreadable tarball is one line
 * and no file written; and which registries `--use-image-digests` speaks
 * plain HTTP to (loopback, or `insecure = true` in a registries.conf).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isInsecureRegistry } from '../../src/generators/bundle/digests.js';
import { hashTree, runCli, runCliOk, tempProjectDir } from '../scaffold/harness.js';

const INIT = ['init', '--domain', 'example.com', '--skip-install'];

test('init with a file: tarball vendors it byte for byte and the Dockerfile copies it', () => {
  const tarball = join(mkdtempSync(join(tmpdir(), 'sdk-tgz-')), 'ts-operator-sdk-9.9.9.tgz');
  const bytes = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x80, 0x7f, 0x0a, 0x0d]);
  writeFileSync(tarball, bytes);
  const dir = tempProjectDir();
  runCliOk(INIT, dir, { env: { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` } });
  assert.deepEqual(readFileSync(join(dir, 'vendor', 'ts-operator-sdk-9.9.9.tgz')), bytes);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  assert.equal(pkg.dependencies['ts-operator-sdk'], 'file:vendor/ts-operator-sdk-9.9.9.tgz');
  const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
  // Copied after package.json and before `npm ci`, which installs it.
  assert.match(
    dockerfile,
    /^COPY package\.json package-lock\.json \.\/\n(#.*\n)*COPY vendor\/ts-operator-sdk-9\.9\.9\.tgz vendor\/ts-operator-sdk-9\.9\.9\.tgz\nRUN npm ci$/m,
  );
  assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /through `vendor\/ts-operator-sdk-9\.9\.9\.tgz`/);
});

test('init with a published version vendors nothing', () => {
  const dir = tempProjectDir();
  runCliOk(INIT, dir, { env: { TS_OPERATOR_SDK_PACKAGE_SPEC: '' } });
  assert.ok(!readdirSync(dir).includes('vendor'));
  const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
  assert.doesNotMatch(dockerfile, /vendor/);
  assert.match(dockerfile, /^FROM \$\{BUILDER_IMAGE\} AS builder$/m);
  assert.match(dockerfile, /^FROM \$\{BASE_IMAGE\}$/m);
});

test('init with a tarball that cannot be read: one line, nothing written', () => {
  const dir = tempProjectDir();
  const before = hashTree(dir);
  const result = runCli(INIT, dir, {
    env: { TS_OPERATOR_SDK_PACKAGE_SPEC: 'file:/nonexistent/ts-operator-sdk-0.1.0.tgz' },
  });
  assert.notEqual(result.status, 0);
  assert.match(
    result.stderr,
    /TS_OPERATOR_SDK_PACKAGE_SPEC=file:\/nonexistent\/ts-operator-sdk-0\.1\.0\.tgz names a tarball that cannot be read \(ENOENT\)/,
  );
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.equal(hashTree(dir), before);
});

test('--use-image-digests speaks plain HTTP to loopback registries and to registries.conf insecure entries only', () => {
  const conf = join(mkdtempSync(join(tmpdir(), 'registries-')), 'registries.conf');
  writeFileSync(
    conf,
    [
      '# a comment: insecure = true',
      '[[registry]]',
      'location = "registry.internal:5000"',
      'insecure = true',
      '',
      '[[registry]]',
      'location = "secure.example.com"',
      '[[registry.mirror]]',
      'location = "mirror.example.com"',
      'insecure = true',
      '',
    ].join('\n'),
  );
  for (const host of ['localhost:5000', 'localhost', '127.0.0.1:41234', '[::1]:5000'])
    assert.equal(isInsecureRegistry(host, []), true, host);
  assert.equal(isInsecureRegistry('registry.internal:5000', [conf]), true);
  assert.equal(isInsecureRegistry('registry.internal:5000', []), false);
  assert.equal(
    isInsecureRegistry('secure.example.com', [conf]),
    false,
    "a mirror's insecure flag is not its registry's",
  );
  assert.equal(isInsecureRegistry('localhost.example.com', [conf]), false);
  assert.equal(isInsecureRegistry('quay.io', [conf, '/nonexistent/registries.conf']), false);
});

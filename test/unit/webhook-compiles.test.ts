/**
 * The webhook templates compile for every kind Kubernetes accepts: kinds
 * that are reserved words once lower-cased, that are names the webhook files
 * import, or globals; all three types on one kind (conversion with a spoke);
 * and the same kind with webhooks in two groups, where main.ts aliases the
 * second setup function. Type-checked with the project's own tsconfig.json
 * against this repository's runtime (no install).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { linkDependencies, REPO_ROOT, runCliOk, tempProjectDir } from '../scaffold/harness.js';

/** Kinds whose names collide with something in the webhook files or their tests. */
const AWKWARD_WEBHOOK_KINDS = [
  'Default',
  'Function',
  'Delete',
  'Ctx',
  'Client',
  'Manager',
  'Environment',
  'RestClient',
  'Promise',
  'Error',
  'AdmissionContext',
  'AdmissionDeniedError',
  'AdmissionWarnings',
  'CustomDefaulter',
  'CustomValidator',
] as const;

test('webhooks for awkward kinds, all three types on one kind, and one kind in two groups give a project that compiles', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir);
  runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v1alpha1', '--kind', 'Memcached', '--controller=false'],
    dir,
  );
  runCliOk(
    [
      'create',
      'webhook',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--defaulting',
      '--programmatic-validation',
      '--conversion',
      '--spoke',
      'v1alpha1',
    ],
    dir,
  );
  for (const kind of AWKWARD_WEBHOOK_KINDS) {
    runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', kind], dir);
    runCliOk(
      [
        'create',
        'webhook',
        '--group',
        'cache',
        '--version',
        'v1',
        '--kind',
        kind,
        '--defaulting',
        '--programmatic-validation',
      ],
      dir,
    );
  }
  runCliOk(['edit', '--multigroup'], dir);
  runCliOk(['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Memcached'], dir);
  runCliOk(['create', 'webhook', '--group', 'ship', '--version', 'v1', '--kind', 'Memcached', '--defaulting'], dir);
  const main = readFileSync(join(dir, 'main.ts'), 'utf8');
  assert.match(
    main,
    /^import \{ setupMemcachedWebhookWithManager \} from '\.\/webhooks\/cache\/v1\/memcached_webhook\.js';$/m,
  );
  assert.match(
    main,
    /^import \{ setupMemcachedWebhookWithManager as setupShipMemcachedV1Webhook \} from '\.\/webhooks\/ship\/v1\/memcached_webhook\.js';$/m,
  );
  assert.match(main, /^ {2}setupShipMemcachedV1Webhook\(mgr\);$/m);

  linkDependencies(dir);
  const result = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--pretty', 'false'],
    { encoding: 'utf8', timeout: 300_000 },
  );
  assert.equal(`${result.stdout}${result.stderr}`, '', 'tsc reported errors');
  assert.equal(result.status, 0);

  // main.ts reads --metrics-secure as Go's flag package does (`=false` works) and refuses a value that is neither.
  const home = mkdtempSync(join(tmpdir(), 'empty-home-'));
  const start = (...args: string[]) =>
    spawnSync(process.execPath, ['dist/main.js', ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: home },
      timeout: 60_000,
    });
  const refused = start('--metrics-secure=maybe');
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /invalid value "maybe" for --metrics-secure\. Pass true or false\./);
  for (const value of ['false', 'true']) {
    // Past flag parsing, the operator stops only because there is no cluster config here.
    const started = start(
      `--metrics-secure=${value}`,
      '--webhook-cert-path=/tmp/certs',
      '--metrics-cert-path=/tmp/metrics',
      '--metrics-cert-name=a.crt',
      '--metrics-cert-key=a.key',
    );
    assert.notEqual(started.status, 0);
    assert.match(started.stderr, /no Kubernetes config found/, started.stderr);
  }
});

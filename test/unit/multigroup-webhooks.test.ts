/**
 * Webhooks across the multigroup switch and across groups: `edit
 * --multigroup` moves a kind's webhook files and its conversion patch with
 * its types (so the next `create webhook` adds to the moved file instead of
 * writing a second one), the switch back restores the project byte for byte,
 * the same kind and version in two groups get webhook names that differ
 * (`generate manifests` accepts the project), and comments inside a PROJECT
 * resource entry survive every command that rewrites the entry.
 *
 * Cost: about 25 CLI runs on --skip-install projects, 10-20 s.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { parse } from 'yaml';
import { copyProject, hashTree, runCliOk, scaffoldWebhookProject } from '../scaffold/harness.js';

/**
 * cache/v1 Memcached (defaulting webhook) and cache/v2 Memcached (the hub of
 * a conversion webhook, v1 its spoke), single group, with comments inside
 * the resource entries of PROJECT.
 */
let withWebhooks: string;

/** Comments a user wrote inside PROJECT resource entries: above a key, after a value, in a nested mapping. */
const COMMENTS = [
  '# owned by the cache team',
  '# keep the controller',
  '# why v1 is namespaced',
  '# set by create webhook',
];

before(() => {
  withWebhooks = scaffoldWebhookProject();
  const path = join(withWebhooks, 'PROJECT');
  const project = readFileSync(path, 'utf8')
    .replace(
      '- api:\n    crdVersion: v1\n    namespaced: true\n  controller: true\n',
      `- api:\n    crdVersion: v1\n    ${COMMENTS[2]}\n    namespaced: true\n  ${COMMENTS[0]}\n  controller: true ${COMMENTS[1]}\n`,
    )
    .replace('  webhooks:\n    defaulting: true\n', `  webhooks:\n    defaulting: true ${COMMENTS[3]}\n`);
  assert.notEqual(project, readFileSync(path, 'utf8'), 'the PROJECT layout the comments go into changed');
  writeFileSync(path, project);
});

const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');
const count = (text: string, part: string): number => text.split(part).length - 1;

test('edit --multigroup moves the webhooks and the conversion patch, and create webhook adds to the moved file', () => {
  const dir = copyProject(withWebhooks);
  runCliOk(['edit', '--multigroup'], dir);
  for (const moved of [
    'webhooks/v1/memcached_webhook.ts',
    'webhooks/v1/memcached_webhook.test.ts',
    'webhooks/v2/memcached_webhook.ts',
    'config/crd/patches/webhook_in_memcacheds.yaml',
  ]) {
    assert.equal(existsSync(join(dir, moved)), false, `${moved} was left behind`);
  }
  for (const target of [
    'webhooks/cache/v1/memcached_webhook.ts',
    'webhooks/cache/v1/memcached_webhook.test.ts',
    'webhooks/cache/v2/memcached_webhook.test.ts',
    'config/crd/patches/webhook_in_cache_memcacheds.yaml',
  ]) {
    assert.ok(existsSync(join(dir, target)), `${target} is missing`);
  }
  assert.match(read(dir, 'config/crd/kustomization.yaml'), /^- path: patches\/webhook_in_cache_memcacheds\.yaml$/m);
  assert.match(
    read(dir, 'webhooks/cache/v2/memcached_webhook.ts'),
    /from '\.\.\/\.\.\/\.\.\/apis\/cache\/v1\/memcached_conversion\.js'/,
  );

  // The next webhook type for the same kind goes into the moved file; main.ts still registers it once.
  runCliOk(
    ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--programmatic-validation'],
    dir,
  );
  assert.equal(existsSync(join(dir, 'webhooks/v1')), false, 'a second webhook file was written in the old place');
  assert.match(
    read(dir, 'webhooks/cache/v1/memcached_webhook.ts'),
    /\.withDefaulter\(new MemcachedCustomDefaulter\(\)\)\n\s+\.withValidator\(new MemcachedCustomValidator\(\)\)/,
  );
  const main = read(dir, 'main.ts');
  assert.equal(count(main, "from './webhooks/cache/v1/memcached_webhook.js'"), 1);
  assert.equal(count(main, 'setupMemcachedWebhookWithManager(mgr);'), 1, main);
});

test('edit --multigroup and back leaves the project byte-identical, webhooks and PROJECT comments included', () => {
  const dir = copyProject(withWebhooks);
  const before = hashTree(dir);
  runCliOk(['edit', '--multigroup'], dir);
  assert.notEqual(hashTree(dir), before);
  runCliOk(['edit', '--multigroup=false'], dir);
  assert.equal(hashTree(dir), before, 'the round trip changed the project');
});

test('the same kind and version in two groups get webhook names and paths that differ, and generate manifests accepts them', () => {
  const dir = copyProject(withWebhooks);
  runCliOk(['edit', '--multigroup'], dir);
  runCliOk(['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Memcached', '--controller=false'], dir);
  runCliOk(
    [
      'create',
      'webhook',
      '--group',
      'ship',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--defaulting',
      '--programmatic-validation',
    ],
    dir,
  );
  runCliOk(
    ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--programmatic-validation'],
    dir,
  );
  runCliOk(['generate', 'manifests'], dir);
  const webhooks = read(dir, 'config/webhook/manifests.yaml')
    .split(/^---$/m)
    .filter((doc) => doc.trim() !== '')
    .flatMap(
      (doc) => (parse(doc) as { webhooks: { name: string; clientConfig: { service: { path: string } } }[] }).webhooks,
    );
  assert.deepEqual(webhooks.map((webhook) => webhook.name).sort(), [
    'mmemcached-v1.cache.kb.io',
    'mmemcached-v1.ship.kb.io',
    'vmemcached-v1.cache.kb.io',
    'vmemcached-v1.ship.kb.io',
  ]);
  assert.equal(
    new Set(webhooks.map((webhook) => webhook.clientConfig.service.path)).size,
    4,
    'two webhooks share a path',
  );
});

test('comments inside a PROJECT resource entry survive create webhook, edit --multigroup and create api', () => {
  const dir = copyProject(withWebhooks);
  runCliOk(
    ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--programmatic-validation'],
    dir,
  );
  runCliOk(['edit', '--multigroup'], dir);
  runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v1alpha1', '--kind', 'Memcached', '--controller=false'],
    dir,
  );
  const project = read(dir, 'PROJECT');
  // Each comment is still inside the v1 entry, next to the key it was written at.
  const v1Entry = project.split(/^- /m).find((entry) => /^ {2}version: v1$/m.test(entry)) ?? '';
  for (const comment of COMMENTS)
    assert.ok(v1Entry.includes(comment), `PROJECT lost ${JSON.stringify(comment)}:\n${project}`);
  assert.match(v1Entry, /# keep the controller\n/);
  assert.match(v1Entry, new RegExp(`${COMMENTS[0]}\\n  controller: true ${COMMENTS[1]}\\n`));
  assert.match(v1Entry, /path: apis\/cache\/v1\n/);
  assert.match(v1Entry, /validation: true\n/);
  assert.match(project, /kind: Memcached\n {2}path: apis\/cache\/v1alpha1\n/);
});

/**
 * Bad input around webhooks and the multigroup layout: files in the way of
 * the webhooks `edit --multigroup` moves (both directions), webhook names
 * another marker of the project already uses (a webhook scaffolded before
 * names carried the group, or written by hand), and names Kubernetes would
 * refuse (a label over 63 characters, a name over 253). Each case keeps the
 * shared contract of ./bad-input.ts: exit 1, one line naming problem and
 * fix, no stack trace, a byte-identical directory.
 *
 * Cost: 8 CLI runs of setup, then one per case; about 15 s.
 */
import { before } from 'node:test';
import { badInputSuite, edit, put, type BadInput } from './bad-input.js';
import { copyProject, runCliOk, scaffoldWebhookProject } from '../scaffold/harness.js';

/** Single group: cache/v1 Memcached with a defaulting webhook, cache/v2 Memcached the hub of a conversion webhook. */
let singleGroup: string;
/** The same after `edit --multigroup`, plus ship/v1 Memcached (types only, no webhook yet). */
let twoGroups: string;

before(() => {
  singleGroup = scaffoldWebhookProject();
  twoGroups = copyProject(singleGroup);
  runCliOk(['edit', '--multigroup'], twoGroups);
  runCliOk(
    ['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Memcached', '--controller=false'],
    twoGroups,
  );
});

/** A project made from `source` and changed by `steps`, each a CLI run. */
function projectFrom(source: () => string, ...steps: string[][]): () => string {
  return () => {
    const dir = copyProject(source());
    for (const step of steps) runCliOk(step, dir);
    return dir;
  };
}

const shipWebhook = (...types: string[]): string[] => [
  'create',
  'webhook',
  '--group',
  'ship',
  '--version',
  'v1',
  '--kind',
  'Memcached',
  ...types,
];
/** A hand-written webhook marker in the ship group's types, named `name`. */
const handWritten = (name: string): ((dir: string) => void) =>
  edit(
    'apis/ship/v1/memcached_types.ts',
    (text) =>
      `${text}\n// +kubebuilder:webhook:path=/mutate-legacy,mutating=true,failurePolicy=fail,sideEffects=None,groups=ship.example.com,resources=memcacheds,verbs=create,versions=v1,name=${name},admissionReviewVersions=v1\n`,
  );
/** A kind of 60 characters: its webhook names' first label has 64 (`m` or `v`, the kind, `-v1`). */
const LONG_KIND = `M${'x'.repeat(59)}`;
const multigroupOn = ['edit', '--multigroup'];
const multigroupOff = ['edit', '--multigroup=false'];
const singleGroupProject = (): string => copyProject(singleGroup);
const multigroupProject = projectFrom(singleGroupProject, multigroupOn);

const CASES: BadInput[] = [
  // edit --multigroup never replaces a file at a webhook's target.
  {
    name: 'edit --multigroup: a user file at the webhook target',
    prepare: put('webhooks/cache/v1/memcached_webhook.ts'),
    args: multigroupOn,
    error:
      /webhooks\/cache\/v1\/memcached_webhook\.ts already exists, and moving webhooks\/v1\/memcached_webhook\.ts to the new layout would overwrite it\. Move or rename that file/,
  },
  {
    name: 'edit --multigroup: a user file at the webhook test target',
    prepare: put('webhooks/cache/v1/memcached_webhook.test.ts'),
    args: multigroupOn,
    error: /webhooks\/cache\/v1\/memcached_webhook\.test\.ts already exists/,
  },
  {
    name: "edit --multigroup: a user file at the conversion hub's webhook target",
    prepare: put('webhooks/cache/v2/memcached_webhook.ts'),
    args: multigroupOn,
    error: /webhooks\/cache\/v2\/memcached_webhook\.ts already exists, and moving webhooks\/v2\/memcached_webhook\.ts/,
  },
  {
    name: 'edit --multigroup: a user file at the conversion patch target',
    prepare: put('config/crd/patches/webhook_in_cache_memcacheds.yaml'),
    args: multigroupOn,
    error:
      /config\/crd\/patches\/webhook_in_cache_memcacheds\.yaml already exists, and moving config\/crd\/patches\/webhook_in_memcacheds\.yaml/,
  },
  {
    name: 'edit --multigroup: a user file next to the webhook whose target is taken',
    prepare: (dir) => {
      put('webhooks/v1/helpers.ts')(dir);
      put('webhooks/cache/v1/helpers.ts', 'mine\n')(dir);
    },
    args: multigroupOn,
    error: /webhooks\/cache\/v1\/helpers\.ts already exists, and moving webhooks\/v1\/helpers\.ts/,
  },
  {
    name: 'edit --multigroup --dry-run: a webhook target conflict is reported the same',
    prepare: put('webhooks/cache/v2/memcached_webhook.test.ts'),
    args: [...multigroupOn, '--dry-run'],
    error: /webhooks\/cache\/v2\/memcached_webhook\.test\.ts already exists/,
  },
  {
    name: 'edit --multigroup=false: a user file at the single-group webhook target',
    dir: multigroupProject,
    prepare: put('webhooks/v1/memcached_webhook.ts'),
    args: multigroupOff,
    error: /webhooks\/v1\/memcached_webhook\.ts already exists, and moving webhooks\/cache\/v1\/memcached_webhook\.ts/,
  },
  {
    name: 'edit --multigroup=false: a user file at the single-group conversion patch target',
    dir: multigroupProject,
    prepare: put('config/crd/patches/webhook_in_memcacheds.yaml'),
    args: multigroupOff,
    error:
      /config\/crd\/patches\/webhook_in_memcacheds\.yaml already exists, and moving config\/crd\/patches\/webhook_in_cache_memcacheds\.yaml/,
  },
  {
    name: 'edit --multigroup=false: two groups with webhooks',
    dir: projectFrom(() => twoGroups, shipWebhook('--defaulting')),
    args: multigroupOff,
    error: /cannot turn multigroup off: the project has 2 API groups \(cache\.example\.com, ship\.example\.com\)/,
  },

  // Webhook names are unique in a project.
  {
    name: 'create webhook: the defaulting name is taken by a hand-written marker',
    dir: () => copyProject(twoGroups),
    prepare: handWritten('mmemcached-v1.ship.kb.io'),
    args: shipWebhook('--defaulting'),
    error:
      /the webhook name mmemcached-v1\.ship\.kb\.io is already used by apis\/ship\/v1\/memcached_types\.ts:\d+, and webhook names must be unique in a project\. Give that marker another name=/,
  },
  {
    name: 'create webhook: the validating name is taken, the defaulting one is free',
    dir: () => copyProject(twoGroups),
    prepare: handWritten('vmemcached-v1.ship.kb.io'),
    args: shipWebhook('--defaulting', '--programmatic-validation'),
    error: /the webhook name vmemcached-v1\.ship\.kb\.io is already used by apis\/ship\/v1\/memcached_types\.ts/,
  },
  {
    name: "create webhook: another group's webhook still has the old group-less name",
    dir: () => copyProject(twoGroups),
    prepare: edit('webhooks/cache/v1/memcached_webhook.ts', (text) =>
      text.replace('name=mmemcached-v1.cache.kb.io', 'name=mmemcached-v1.ship.kb.io'),
    ),
    args: shipWebhook('--defaulting'),
    error:
      /the webhook name mmemcached-v1\.ship\.kb\.io is already used by webhooks\/cache\/v1\/memcached_webhook\.ts:\d+/,
  },
  {
    name: 'create webhook --dry-run: a taken name is reported the same',
    dir: () => copyProject(twoGroups),
    prepare: handWritten('mmemcached-v1.ship.kb.io'),
    args: shipWebhook('--defaulting', '--dry-run'),
    error: /the webhook name mmemcached-v1\.ship\.kb\.io is already used/,
  },

  // Names Kubernetes would refuse.
  {
    name: 'create webhook: a kind whose webhook name has a label over 63 characters',
    dir: projectFrom(singleGroupProject, [
      'create',
      'api',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      LONG_KIND,
      '--controller=false',
    ]),
    args: [
      'create',
      'webhook',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      LONG_KIND,
      '--programmatic-validation',
    ],
    error:
      /the webhook name vm(x){59}-v1\.cache\.kb\.io is not a valid Kubernetes name \(its first label has 64 characters, at most 63\)\. Use a kind of at most 59 characters/,
  },
  {
    name: 'create webhook --defaulting: the same kind, the mutating name',
    dir: projectFrom(singleGroupProject, [
      'create',
      'api',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      LONG_KIND,
      '--controller=false',
    ]),
    args: ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', LONG_KIND, '--defaulting'],
    error: /the webhook name mm(x){59}-v1\.cache\.kb\.io is not a valid Kubernetes name/,
  },
];

badInputSuite(
  'bad input (webhooks and multigroup): one line of error, exit 1, directory byte-identical',
  CASES,
  singleGroupProject,
);

/**
 * Bad input for `create webhook`: an API that is not there, no webhook type,
 * conversion without a second version or with wrong spokes, a type scaffolded
 * twice, foreign or missing PROJECT files, files in the way. Each case keeps
 * the shared contract of ./bad-input.ts: exit 1, one line naming problem and
 * fix, no stack trace, a byte-identical directory.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before } from 'node:test';
import { badInputSuite, type BadInput } from './bad-input.js';
import { copyProject, runCliOk, SCENARIOS, scaffoldScenario, tempProjectDir } from '../scaffold/harness.js';

/** init + create api cache/v1 Memcached + cache/v1alpha1 Memcached (types only). */
let twoVersions: string;
/** The same with a defaulting webhook on v1. */
let withDefaulting: string;

before(() => {
  twoVersions = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
  runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v1alpha1', '--kind', 'Memcached', '--controller=false'],
    twoVersions,
  );
  withDefaulting = copyProject(twoVersions);
  runCliOk(
    ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--defaulting'],
    withDefaulting,
  );
});

const webhook = (...extra: string[]): string[] => [
  'create',
  'webhook',
  '--group',
  'cache',
  '--version',
  'v1',
  '--kind',
  'Memcached',
  ...extra,
];

/** Writes `content` at `path` under the project, creating directories. */
function put(path: string, content = 'user content\n'): (dir: string) => void {
  return (dir) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  };
}

/** Edits a project file in place. */
function edit(path: string, change: (text: string) => string): (dir: string) => void {
  return (dir) => writeFileSync(join(dir, path), change(readFileSync(join(dir, path), 'utf8')));
}

const CASES: BadInput[] = [
  // The API must exist, with types of this project.
  {
    name: 'an API that does not exist',
    args: ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Redis', '--defaulting'],
    error:
      /API cache\.example\.com\/v1, Kind=Redis does not exist in this project\. Create it first with `ts-operator-sdk create api --group cache --version v1 --kind Redis`/,
  },
  {
    name: 'a version the kind does not have',
    args: ['create', 'webhook', '--group', 'cache', '--version', 'v2', '--kind', 'Memcached', '--defaulting'],
    error: /API cache\.example\.com\/v2, Kind=Memcached does not exist in this project \(Memcached has v1, v1alpha1\)/,
  },
  {
    name: 'a group the project does not have',
    args: ['create', 'webhook', '--group', 'apps', '--version', 'v1', '--kind', 'Memcached', '--defaulting'],
    error: /API apps\.example\.com\/v1, Kind=Memcached does not exist/,
  },
  {
    name: 'an external API',
    prepare: edit('PROJECT', (text) =>
      text.replace(
        'resources:\n',
        'resources:\n- domain: cert-manager.io\n  external: true\n  kind: Certificate\n  path: cert-manager.io/v1\n  version: v1\n',
      ),
    ),
    args: [
      'create',
      'webhook',
      '--group',
      'cert-manager.io',
      '--version',
      'v1',
      '--kind',
      'Certificate',
      '--defaulting',
    ],
    error: /Kind=Certificate is an external type, and webhooks can only be scaffolded for this project's own APIs/,
  },
  {
    name: 'an API created without types',
    prepare: edit('PROJECT', (text) =>
      text.replace(/- api:\n {4}crdVersion: v1\n {4}namespaced: true\n {2}controller: true/, '- controller: true'),
    ),
    args: webhook('--defaulting'),
    error: /has no types in this project \(it was created with --resource=false\)/,
  },

  // Flags.
  {
    name: 'no webhook type',
    args: webhook(),
    error: /no webhook type given\. Pass at least one of --defaulting, --programmatic-validation and --conversion/,
  },
  {
    name: '--kind missing',
    args: ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--defaulting'],
    error: /missing --kind\. Pass the kind of the webhook/,
  },
  {
    name: '--version missing',
    args: ['create', 'webhook', '--group', 'cache', '--kind', 'Memcached', '--defaulting'],
    error: /missing --version/,
  },
  {
    name: 'an invalid --kind',
    args: ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'memcached', '--defaulting'],
    error: /kind/i,
  },
  {
    name: 'an invalid --version',
    args: ['create', 'webhook', '--group', 'cache', '--version', 'version1', '--kind', 'Memcached', '--defaulting'],
    error: /version/i,
  },
  {
    name: '--spoke without --conversion',
    args: webhook('--defaulting', '--spoke', 'v1alpha1'),
    error: /--spoke is only meaningful for a conversion webhook\. Add --conversion, or leave out --spoke/,
  },

  // Conversion.
  {
    name: 'conversion for a kind with one version',
    dir: () => {
      const dir = copyProject(twoVersions);
      edit('PROJECT', (text) =>
        text.replace(
          /- api:\n {4}crdVersion: v1\n {4}namespaced: true\n {2}domain: example\.com\n {2}group: cache\n {2}kind: Memcached\n {2}path: apis\/v1alpha1\n {2}version: v1alpha1\n/,
          '',
        ),
      )(dir);
      return dir;
    },
    args: webhook('--conversion', '--spoke', 'v1alpha1'),
    error:
      /a conversion webhook needs at least two versions of Memcached, and cache\.example\.com has only v1\. Add a version first/,
  },
  {
    name: '--conversion without --spoke',
    args: webhook('--conversion'),
    error: /--conversion needs the spoke versions that convert to and from the hub\. Pass --spoke v1alpha1/,
  },
  {
    name: 'a spoke that is not a version',
    args: webhook('--conversion', '--spoke', 'alpha'),
    error: /--spoke "alpha" is not a valid version/,
  },
  {
    name: 'spoke == hub',
    args: webhook('--conversion', '--spoke', 'v1'),
    error: /--spoke v1 is the hub version itself \(--version\)\. Leave v1 out of --spoke/,
  },
  {
    name: 'a spoke the kind does not have',
    args: webhook('--conversion', '--spoke', 'v2'),
    error: /--spoke v2 is not a version of Memcached in this project \(it has v1, v1alpha1\)/,
  },
  {
    name: 'a spoke listed twice',
    args: webhook('--conversion', '--spoke', 'v1alpha1,v1alpha1'),
    error: /--spoke lists v1alpha1 twice/,
  },
  {
    name: 'another version is the storage version',
    prepare: edit('apis/v1alpha1/memcached_types.ts', (text) =>
      text.replace(
        ' * +kubebuilder:object:root=true\n * +kubebuilder:subresource:status',
        ' * +kubebuilder:object:root=true\n * +kubebuilder:storageversion\n * +kubebuilder:subresource:status',
      ),
    ),
    args: webhook('--conversion', '--spoke', 'v1alpha1'),
    error:
      /apis\/v1alpha1\/memcached_types\.ts marks v1alpha1 as the storage version, but the hub .* must be the storage version\. Run the command with --version v1alpha1/,
  },
  {
    name: 'a conversion file in the way',
    prepare: put('apis/v1alpha1/memcached_conversion.ts'),
    args: webhook('--conversion', '--spoke', 'v1alpha1'),
    error: /apis\/v1alpha1\/memcached_conversion\.ts already exists/,
  },
  {
    name: 'a second hub for the kind',
    dir: () => {
      const dir = copyProject(twoVersions);
      runCliOk(webhook('--conversion', '--spoke', 'v1alpha1'), dir);
      return dir;
    },
    args: [
      'create',
      'webhook',
      '--group',
      'cache',
      '--version',
      'v1alpha1',
      '--kind',
      'Memcached',
      '--conversion',
      '--spoke',
      'v1',
    ],
    error: /Memcached already converts through the hub version v1, and a kind has one hub/,
  },

  // A type already scaffolded.
  {
    name: 'a type that is already scaffolded',
    dir: () => copyProject(withDefaulting),
    args: webhook('--defaulting'),
    error:
      /cache\.example\.com\/v1, Kind=Memcached already has a defaulting webhook\. Leave out --defaulting to add another type, or pass --force/,
  },
  {
    name: 'a type that is already scaffolded, with a new one',
    dir: () => copyProject(withDefaulting),
    args: webhook('--defaulting', '--programmatic-validation'),
    error: /already has a defaulting webhook/,
  },

  // The project around it.
  {
    name: 'no PROJECT',
    dir: () => tempProjectDir(),
    args: webhook('--defaulting'),
    error: /no PROJECT file in .*: this command must run in the root of a project/,
  },
  {
    name: 'a Go kubebuilder project',
    prepare: edit('PROJECT', (text) => text.replace('typescript.ts-operator-sdk.io/v1', 'go.kubebuilder.io/v4')),
    args: webhook('--defaulting'),
    error: /layout is "go\.kubebuilder\.io\/v4"/,
  },
  {
    name: 'main.ts without its builder marker',
    prepare: edit('main.ts', (text) => text.replace('// +kubebuilder:scaffold:builder\n', '')),
    args: webhook('--defaulting'),
    error: /main\.ts has no "\/\/ \+kubebuilder:scaffold:builder" marker/,
  },
  {
    name: 'main.ts missing',
    prepare: (dir) => rmSync(join(dir, 'main.ts')),
    args: webhook('--programmatic-validation'),
    error: /main\.ts is missing\. Restore it/,
  },
  {
    name: 'the webhook file lost its marker',
    dir: () => {
      const dir = copyProject(withDefaulting);
      edit('webhooks/v1/memcached_webhook.ts', (text) =>
        text.replace('    // +kubebuilder:scaffold:webhook-builder\n', ''),
      )(dir);
      return dir;
    },
    args: webhook('--programmatic-validation'),
    error: /webhooks\/v1\/memcached_webhook\.ts has no "\/\/ \+kubebuilder:scaffold:webhook-builder" marker/,
  },
  {
    name: 'config/crd/kustomization.yaml lost its webhook patch marker',
    prepare: edit('config/crd/kustomization.yaml', (text) =>
      text.replace('# +kubebuilder:scaffold:crdkustomizewebhookpatch\n', ''),
    ),
    args: webhook('--conversion', '--spoke', 'v1alpha1'),
    error: /config\/crd\/kustomization\.yaml has no "# \+kubebuilder:scaffold:crdkustomizewebhookpatch" marker/,
  },
];

badInputSuite('bad input (create webhook): one line of error, exit 1, directory byte-identical', CASES, () =>
  copyProject(twoVersions),
);

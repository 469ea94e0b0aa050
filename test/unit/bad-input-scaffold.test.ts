/**
 * Bad input for the scaffolding commands (init, create api, edit) and the CLI
 * plumbing around them: move targets that are taken, foreign PROJECT
 * layouts, kinds the API server would refuse, missing types, unreadable or
 * incomplete PROJECT files, files in the way, huge arguments, command groups
 * without a subcommand. Each case keeps the shared contract of
 * ./bad-input.ts: exit 1, one line naming problem and fix, no stack trace,
 * a byte-identical directory.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { asNobody, badInputSuite, type BadInput } from './bad-input.js';
import { CLI, copyProject, runCliOk, SCENARIOS, scaffoldScenario, tempProjectDir } from '../scaffold/harness.js';

/** init + create api cache/v1 Memcached, single group. */
let baseProject: string;
/** The same after `edit --multigroup` (still one group). */
let multigroupProject: string;

before(() => {
  baseProject = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
  multigroupProject = copyProject(baseProject);
  runCliOk(['edit', '--multigroup'], multigroupProject);
});

const emptyDir = (): string => tempProjectDir();
const multigroup = (): string => copyProject(multigroupProject);

const api = (kind: string, ...extra: string[]): string[] => [
  'create',
  'api',
  '--group',
  'cache',
  '--version',
  'v1',
  '--kind',
  kind,
  ...extra,
];
const apiV2 = (kind: string, ...extra: string[]): string[] => [
  'create',
  'api',
  '--group',
  'cache',
  '--version',
  'v2',
  '--kind',
  kind,
  ...extra,
];

/** Writes `content` at `path` under the project, creating directories. */
function put(path: string, content = 'user content\n'): (dir: string) => void {
  return (dir) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  };
}

/** Replaces PROJECT with `text`. */
const project = (text: string): ((dir: string) => void) => put('PROJECT', text);

/** Edits a project file in place. */
function edit(path: string, change: (text: string) => string): (dir: string) => void {
  return (dir) => writeFileSync(join(dir, path), change(readFileSync(join(dir, path), 'utf8')));
}

/** A Go kubebuilder project's PROJECT. */
function goProject(layout: string): (dir: string) => void {
  return project(
    `domain: example.com\nlayout:\n${layout}\nprojectName: memcached-operator\nrepo: github.com/example/memcached-operator\nresources:\n- api:\n    crdVersion: v1\n    namespaced: true\n  controller: true\n  domain: example.com\n  group: cache\n  kind: Memcached\n  path: github.com/example/memcached-operator/api/v1\n  version: v1\nversion: "3"\n`,
  );
}

const HUGE = 100_000;
const huge = (start: string): string => start + 'a'.repeat(HUGE - start.length);
/** The line names the input by its start and its length, not whole. */
const cut = /…["'] \(100000 characters\)/;

const CASES: BadInput[] = [
  // 1. edit --multigroup never replaces a file at a target path.
  {
    name: 'edit --multigroup: a user file at the types target',
    prepare: put('apis/cache/v1/memcached_types.ts'),
    args: ['edit', '--multigroup'],
    error:
      /apis\/cache\/v1\/memcached_types\.ts already exists, and moving apis\/v1\/memcached_types\.ts .* would overwrite it\. Move or rename that file/,
  },
  {
    name: 'edit --multigroup: a user file at the groupversion target',
    prepare: put('apis/cache/v1/groupversion_info.ts'),
    args: ['edit', '--multigroup'],
    error: /apis\/cache\/v1\/groupversion_info\.ts already exists/,
  },
  {
    name: 'edit --multigroup: a user file at the controller target',
    prepare: put('controllers/cache/memcached_controller.ts'),
    args: ['edit', '--multigroup'],
    error: /controllers\/cache\/memcached_controller\.ts already exists/,
  },
  {
    name: 'edit --multigroup: a user file at the controller test target',
    prepare: put('controllers/cache/memcached_controller.test.ts'),
    args: ['edit', '--multigroup'],
    error: /controllers\/cache\/memcached_controller\.test\.ts already exists/,
  },
  {
    name: 'edit --multigroup: a user file at an RBAC role target',
    prepare: put('config/rbac/cache_memcached_editor_role.yaml'),
    args: ['edit', '--multigroup'],
    error: /config\/rbac\/cache_memcached_editor_role\.yaml already exists/,
  },
  {
    name: 'edit --multigroup: a user file next to the types whose target is taken',
    prepare: (dir) => {
      put('apis/v1/helpers.ts')(dir);
      put('apis/cache/v1/helpers.ts', 'mine\n')(dir);
    },
    args: ['edit', '--multigroup'],
    error: /apis\/cache\/v1\/helpers\.ts already exists/,
  },
  {
    name: 'edit --multigroup --dry-run: the same conflict is reported',
    prepare: put('apis/cache/v1/memcached_types.ts'),
    args: ['edit', '--multigroup', '--dry-run'],
    error: /apis\/cache\/v1\/memcached_types\.ts already exists/,
  },
  {
    name: 'edit --multigroup=false: a user file at the single-group types target',
    dir: multigroup,
    prepare: put('apis/v1/memcached_types.ts'),
    args: ['edit', '--multigroup=false'],
    error: /apis\/v1\/memcached_types\.ts already exists, and moving apis\/cache\/v1\/memcached_types\.ts/,
  },
  {
    name: 'edit --multigroup=false: a user file at the single-group controller target',
    dir: multigroup,
    prepare: put('controllers/memcached_controller.ts'),
    args: ['edit', '--multigroup=false'],
    error: /controllers\/memcached_controller\.ts already exists/,
  },

  // 5. PROJECT files of other plugins are refused, in one line.
  {
    name: 'edit --multigroup: a Go kubebuilder v4 project',
    prepare: goProject('- go.kubebuilder.io/v4'),
    args: ['edit', '--multigroup'],
    error: /layout is "go\.kubebuilder\.io\/v4", not "typescript\.ts-operator-sdk\.io\/v1".*Use the tool that made it/,
  },
  {
    name: 'edit --multigroup=false: a Go kubebuilder v4 project',
    prepare: goProject('- go.kubebuilder.io/v4'),
    args: ['edit', '--multigroup=false'],
    error: /layout is "go\.kubebuilder\.io\/v4"/,
  },
  {
    name: 'create api: a Go kubebuilder v4 project',
    prepare: goProject('- go.kubebuilder.io/v4'),
    args: api('Other'),
    error: /layout is "go\.kubebuilder\.io\/v4"/,
  },
  {
    name: 'create api: a Go v3 project with a second plugin',
    prepare: goProject('- go.kubebuilder.io/v3\n- declarative.go.kubebuilder.io/v1'),
    args: api('Other'),
    error: /layout is "go\.kubebuilder\.io\/v3", "declarative\.go\.kubebuilder\.io\/v1"/,
  },
  {
    name: 'create api: layout written as a string',
    prepare: project('domain: example.com\nlayout: go.kubebuilder.io/v4\nversion: "3"\n'),
    args: api('Other'),
    error: /layout is "go\.kubebuilder\.io\/v4"/,
  },
  {
    name: 'create api: an Ansible operator',
    prepare: goProject('- ansible.sdk.operatorframework.io/v1'),
    args: api('Other'),
    error: /layout is "ansible\.sdk\.operatorframework\.io\/v1"/,
  },
  {
    name: 'edit --multigroup: a Helm operator',
    prepare: goProject('- helm.sdk.operatorframework.io/v1'),
    args: ['edit', '--multigroup'],
    error: /layout is "helm\.sdk\.operatorframework\.io\/v1"/,
  },

  // 6. Names the API server would refuse for the group's CRDs.
  {
    name: 'create api: a kind that differs only in case, another version',
    args: apiV2('MemCached'),
    error:
      /kind MemCached differs from the existing kind Memcached \(cache\.example\.com\/v1\) only in case.*Use --kind Memcached/,
  },
  {
    name: 'create api: a kind that differs only in case, same version',
    args: api('MEMCACHED'),
    error: /kind MEMCACHED differs from the existing kind Memcached/,
  },
  {
    name: 'create api: case-only difference, types only',
    args: apiV2('MemCacheD', '--controller=false'),
    error: /differs from the existing kind Memcached .* only in case/,
  },
  {
    name: 'create api: a plural another kind already uses',
    args: api('Other', '--plural', 'memcacheds'),
    error:
      /plural "memcacheds" is already the resource name of kind Memcached in group cache\.example\.com\. Pass a different --plural/,
  },
  {
    name: 'create api: a second version with another plural',
    args: apiV2('Memcached', '--controller=false', '--plural', 'mems'),
    error:
      /kind Memcached already has the plural "memcacheds" \(version v1\), and all versions of a kind share one CRD\. Pass --plural memcacheds/,
  },

  // 9. A controller needs its kind's types.
  {
    name: 'create api: --resource=false --controller for a kind with no types',
    args: api('Other', '--resource=false', '--controller'),
    error: /--resource=false needs the types of Other, but apis\/v1\/other_types\.ts does not exist/,
  },
  {
    name: 'create api: --resource=false for a kind with no types (controller by default)',
    args: api('Other', '--resource=false'),
    error: /apis\/v1\/other_types\.ts does not exist/,
  },
  {
    name: 'create api: --resource=false in a multigroup project',
    dir: multigroup,
    args: api('Other', '--resource=false', '--controller=true'),
    error: /apis\/cache\/v1\/other_types\.ts does not exist/,
  },
  {
    name: 'create api: --resource=false --force after the types were deleted',
    prepare: (dir) => rmSync(join(dir, 'apis/v1/memcached_types.ts')),
    args: api('Memcached', '--resource=false', '--controller', '--force'),
    error: /needs the types of Memcached, but apis\/v1\/memcached_types\.ts does not exist/,
  },

  // 16. A second version: --force is the wrong advice.
  {
    name: 'create api: a second version with a controller',
    args: apiV2('Memcached'),
    error:
      /kind Memcached of group cache\.example\.com already has a controller \(version v1\).*Pass --controller=false to add only the v2 types/,
  },
  {
    name: 'create api: a second version with --controller=true',
    args: apiV2('Memcached', '--controller=true'),
    error: /already has a controller.*--controller=false/,
  },
  {
    name: 'create api: a second version with --force still keeps the controller',
    args: apiV2('Memcached', '--force'),
    error: /already has a controller.*--controller=false/,
  },
  {
    name: 'create api: a second version, controller only',
    args: [
      'create',
      'api',
      '--group',
      'cache',
      '--version',
      'v1beta1',
      '--kind',
      'Memcached',
      '--resource=false',
      '--controller',
    ],
    error: /already has a controller/,
  },

  // 16. PROJECT that exists but cannot be read is not "missing".
  {
    name: 'create api: PROJECT is a directory',
    prepare: (dir) => {
      rmSync(join(dir, 'PROJECT'));
      mkdirSync(join(dir, 'PROJECT'));
    },
    args: api('Other'),
    error: /PROJECT in .* is a directory, not the project's config file/,
  },
  {
    name: 'edit: PROJECT is a directory',
    prepare: (dir) => {
      rmSync(join(dir, 'PROJECT'));
      mkdirSync(join(dir, 'PROJECT'));
    },
    args: ['edit', '--multigroup'],
    error: /PROJECT in .* is a directory/,
  },
  {
    name: 'generate manifests: PROJECT is a directory',
    prepare: (dir) => {
      rmSync(join(dir, 'PROJECT'));
      mkdirSync(join(dir, 'PROJECT'));
    },
    args: ['generate', 'manifests'],
    error: /PROJECT in .* is a directory/,
  },
  {
    name: 'create api: PROJECT is unreadable',
    run: asNobody((dir) => chmodSync(join(dir, 'PROJECT'), 0o000)),
    args: api('Other'),
    error: /cannot read the PROJECT file in .*Make it readable/,
  },
  {
    name: 'edit: PROJECT is unreadable',
    run: asNobody((dir) => chmodSync(join(dir, 'PROJECT'), 0o000)),
    args: ['edit', '--multigroup'],
    error: /cannot read the PROJECT file/,
  },

  // 16. A PROJECT without a usable domain.
  {
    name: 'create api: PROJECT has no domain',
    prepare: edit('PROJECT', (text) => text.replace(/^domain: .*\n/m, '')),
    args: api('Other'),
    error:
      /the PROJECT file has no domain, so the API group would be "cache".*Add a line such as `domain: example\.com` to PROJECT/,
  },
  {
    name: 'create api: PROJECT has no domain and no --group',
    prepare: edit('PROJECT', (text) => text.replace(/^domain: .*\n/m, '')),
    args: ['create', 'api', '--version', 'v1', '--kind', 'Other'],
    error: /the PROJECT file has no domain/,
  },
  {
    name: 'create api: PROJECT has an invalid domain',
    prepare: edit('PROJECT', (text) => text.replace(/^domain: .*$/m, 'domain: Example_COM')),
    args: api('Other'),
    error: /the PROJECT file's domain "Example_COM" is not a DNS-1123 subdomain/,
  },
  {
    name: 'create api: no --group with a one-word domain',
    prepare: project('domain: example\nlayout:\n- typescript.ts-operator-sdk.io/v1\nprojectName: x\nversion: "3"\n'),
    args: ['create', 'api', '--version', 'v1', '--kind', 'Other'],
    error: /the API group "example" has no dot/,
  },
  {
    name: 'create api: group too long for the domain',
    args: [
      'create',
      'api',
      '--group',
      `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}`,
      '--version',
      'v1',
      '--kind',
      'Other',
    ],
    error: /invalid API group .*Choose a shorter --group/,
  },

  // 16. A file where a directory is needed is named, not blamed on permissions.
  {
    name: 'init: a file named .github',
    dir: emptyDir,
    prepare: put('.github'),
    args: ['init', '--skip-install'],
    error: /ENOTDIR at \.github\/workflows.*"\.github" is a file where a directory is needed: move it away/,
  },
  {
    name: 'create api: config/samples is a file',
    prepare: (dir) => {
      rmSync(join(dir, 'config/samples'), { recursive: true });
      put('config/samples')(dir);
    },
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other', '--controller=false'],
    error: /"config\/samples" is a file where a directory is needed/,
  },
  {
    name: 'create api: controllers is a file',
    prepare: (dir) => {
      rmSync(join(dir, 'controllers'), { recursive: true });
      put('controllers')(dir);
    },
    args: api('Other'),
    error: /"controllers" is a file where a directory is needed/,
  },
  {
    name: 'create api: apis/v1 is a file in a fresh version',
    prepare: put('apis/v2'),
    args: apiV2('Other'),
    error: /"apis\/v2" is a file where a directory is needed/,
  },

  // 16. A huge argument is cut, not echoed.
  { name: 'create api: a 100 kB kind', args: api(huge('K')), error: cut },
  {
    name: 'create api: a 100 kB invalid kind',
    args: api(huge('k')),
    error: /invalid kind "kaaaa+…" \(100000 characters\)/,
  },
  {
    name: 'create api: a 100 kB group',
    args: ['create', 'api', '--group', huge('G'), '--version', 'v1', '--kind', 'Other'],
    error: cut,
  },
  {
    name: 'create api: a 100 kB version',
    args: ['create', 'api', '--group', 'cache', '--version', huge('v'), '--kind', 'Other'],
    error: cut,
  },
  { name: 'create api: a 100 kB plural', args: api('Other', '--plural', huge('P')), error: cut },
  { name: 'create api: a 100 kB boolean', args: api('Other', `--namespaced=${huge('x')}`), error: cut },
  { name: 'init: a 100 kB domain', dir: emptyDir, args: ['init', '--skip-install', '--domain', huge('D')], error: cut },
  {
    name: 'init: a 100 kB project name',
    dir: emptyDir,
    args: ['init', '--skip-install', '--project-name', huge('N')],
    error: cut,
  },
  { name: 'a 100 kB unknown option', args: ['create', 'api', `--${huge('x').slice(2)}`], error: cut },
  { name: 'a 100 kB unknown command', args: [huge('x')], error: cut },

  // 15. Command groups without a subcommand.
  {
    name: 'create with no subcommand',
    args: ['create'],
    error:
      /^Error: `ts-operator-sdk create` needs a subcommand \(api, webhook\)\. Run `ts-operator-sdk create --help` for usage\.$/,
  },
  {
    name: 'generate with no subcommand',
    args: ['generate'],
    error: /`ts-operator-sdk generate` needs a subcommand \(.*manifests.*\)\. Run `ts-operator-sdk generate --help`/,
  },
  {
    name: 'generate kustomize with no subcommand',
    args: ['generate', 'kustomize'],
    error: /`ts-operator-sdk generate kustomize` needs a subcommand \(manifests\)/,
  },
  {
    name: 'bundle with no subcommand',
    args: ['bundle'],
    error: /`ts-operator-sdk bundle` needs a subcommand \(validate\)/,
  },
  {
    name: 'create with only --verbose',
    args: ['--verbose', 'create'],
    error: /`ts-operator-sdk create` needs a subcommand/,
  },

  // More names.
  { name: 'create api: kind with an underscore', args: api('Mem_cached'), error: /invalid kind "Mem_cached"/ },
  { name: 'create api: kind starting with a digit', args: api('1Memcached'), error: /invalid kind "1Memcached"/ },
  { name: 'create api: kind with a non-ASCII letter', args: api('Mémcached'), error: /invalid kind "Mémcached"/ },
  { name: 'create api: kind with a space', args: api('Mem cached'), error: /invalid kind "Mem cached"/ },
  { name: 'create api: empty kind', args: api(''), error: /missing --kind/ },
  {
    name: 'create api: group with an underscore',
    args: ['create', 'api', '--group', 'ca_che', '--version', 'v1', '--kind', 'Other'],
    error: /invalid group "ca_che"/,
  },
  {
    name: 'create api: group ending with a dot',
    args: ['create', 'api', '--group', 'cache.', '--version', 'v1', '--kind', 'Other'],
    error: /invalid group "cache\."/,
  },
  {
    name: 'create api: uppercase version',
    args: ['create', 'api', '--group', 'cache', '--version', 'V1', '--kind', 'Other'],
    error: /invalid version "V1"/,
  },
  {
    name: 'create api: alpha without a number',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1alpha', '--kind', 'Other'],
    error: /invalid version "v1alpha"/,
  },
  {
    name: 'create api: plural with a dot',
    args: api('Other', '--plural', 'oth.ers'),
    error: /invalid plural "oth\.ers"/,
  },
  { name: 'create api: empty plural', args: api('Other', '--plural', ''), error: /invalid plural ""/ },
  { name: 'create api: --resource=2', args: api('Other', '--resource=2'), error: /"2" is not true or false/ },
  { name: 'edit: --multigroup=maybe', args: ['edit', '--multigroup=maybe'], error: /"maybe" is not true or false/ },

  // More PROJECT corruption.
  {
    name: 'create api: PROJECT is empty',
    prepare: project(''),
    args: api('Other'),
    error: /the PROJECT file is corrupt: it is not a YAML mapping/,
  },
  {
    name: 'create api: PROJECT is a YAML list',
    prepare: project('- version: "3"\n'),
    args: api('Other'),
    error: /not a YAML mapping/,
  },
  {
    name: 'create api: PROJECT resources is a mapping',
    prepare: project('version: "3"\ndomain: example.com\nresources:\n  kind: X\n'),
    args: api('Other'),
    error: /"resources" must be a list/,
  },
  {
    name: 'create api: PROJECT resource without a kind',
    prepare: project('version: "3"\ndomain: example.com\nresources:\n- version: v1\n'),
    args: api('Other'),
    error: /resources\[0\] needs "kind" and "version"/,
  },
  {
    name: 'create api: PROJECT multigroup is a string',
    prepare: project('version: "3"\ndomain: example.com\nmultigroup: "yes"\n'),
    args: api('Other'),
    error: /"multigroup" must be true or false/,
  },
  {
    name: 'create api: PROJECT domain is a number',
    prepare: project('version: "3"\ndomain: 5\n'),
    args: api('Other'),
    error: /"domain" must be a string/,
  },
  {
    name: 'create api: PROJECT layout is a number',
    prepare: project('version: "3"\ndomain: example.com\nlayout: 5\n'),
    args: api('Other'),
    error: /"layout" must be a list of plugin keys/,
  },
  {
    name: 'create api: PROJECT plugins is a list',
    prepare: project('version: "3"\ndomain: example.com\nplugins: [a]\n'),
    args: api('Other'),
    error: /"plugins" must be a mapping/,
  },
  {
    name: 'edit: PROJECT without a version',
    prepare: project('domain: example.com\n'),
    args: ['edit', '--multigroup'],
    error: /unsupported version null/,
  },
  {
    name: 'edit: PROJECT with a tab-indented line',
    prepare: project('version: "3"\n\tdomain: example.com\n'),
    args: ['edit', '--multigroup'],
    error: /the PROJECT file is corrupt: invalid YAML/,
  },

  // More markers and files the commands need.
  {
    name: 'create api: main.ts is missing',
    prepare: (dir) => rmSync(join(dir, 'main.ts')),
    args: api('Other'),
    error: /main\.ts is missing\. Restore it/,
  },
  {
    name: 'create api: imports marker removed',
    prepare: edit('main.ts', (text) => text.replace('// +kubebuilder:scaffold:imports\n', '')),
    args: api('Other'),
    error: /main\.ts has no "\/\/ \+kubebuilder:scaffold:imports" marker/,
  },
  {
    name: 'create api: CRD kustomization marker removed',
    prepare: edit('config/crd/kustomization.yaml', (text) =>
      text.replace(/.*\+kubebuilder:scaffold:crdkustomizeresource\n/, ''),
    ),
    args: api('Other'),
    error: /config\/crd\/kustomization\.yaml has no "# \+kubebuilder:scaffold:crdkustomizeresource" marker/,
  },
  {
    name: 'create api: RBAC kustomization marker removed',
    prepare: edit('config/rbac/kustomization.yaml', (text) =>
      text.replace(/.*\+kubebuilder:scaffold:rbackustomizeroles\n/, ''),
    ),
    args: api('Other'),
    error: /config\/rbac\/kustomization\.yaml has no .*rbackustomizeroles/,
  },
  {
    name: 'create api: a user file at the new types path',
    prepare: put('apis/v1/other_types.ts'),
    args: api('Other'),
    error: /apis\/v1\/other_types\.ts already exists/,
  },
  {
    name: 'edit --multigroup: read-only directory',
    run: asNobody((dir) => chmodSync(dir, 0o555)),
    args: ['edit', '--multigroup'],
    error: /could not write the project files \(EACCES.*Make the directory writable/,
  },
  {
    name: 'create api: read-only apis directory',
    run: asNobody((dir) => chmodSync(join(dir, 'apis/v1'), 0o555)),
    args: api('Other'),
    error: /could not write the project files \(EACCES.*Make the directory writable/,
  },
];

badInputSuite('bad input (scaffold): one line of error, exit 1, directory byte-identical', CASES, () =>
  copyProject(baseProject),
);

test('the scaffold bad-input table has at least 60 cases with distinct names', () => {
  assert.ok(CASES.length >= 60, `${CASES.length} cases`);
  assert.equal(new Set(CASES.map((c) => c.name)).size, CASES.length);
});

test('a deleted working directory is one line of error, not a stack trace', () => {
  const dir = tempProjectDir();
  const result = spawnSync(
    'sh',
    [
      '-c',
      'cd "$1" && rmdir "$1" && exec "$2" "$3" create api --group cache --version v1 --kind Other',
      'sh',
      dir,
      process.execPath,
      CLI,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  assert.equal(result.status, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(
    result.stderr,
    /^Error: the current directory no longer exists \(ENOENT\)\. Change into an existing directory.*\.\n$/,
  );
});

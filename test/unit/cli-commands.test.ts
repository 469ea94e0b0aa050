import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { asNobody, badInputSuite, type BadInput } from './bad-input.js';
import {
  copyProject,
  hashTree,
  REPO_ROOT,
  runCli,
  runCliOk,
  SCENARIOS,
  scaffoldScenario,
  tempProjectDir,
  writeStandInCrd,
} from '../scaffold/harness.js';

const MEMCACHED = ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'];

/** A project after init + create api Memcached, copied fresh for each case. */
let baseProject: string;
/** The same with edit --multigroup and a second group. */
let multigroupProject: string;

before(() => {
  baseProject = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
  multigroupProject = scaffoldScenario(SCENARIOS[2]!, { extraInitArgs: ['--skip-install'] });
});

/** Readable (so PROJECT loads) but not writable: as `nobody` when we are root, which ignores permissions. */
const readOnlyRun = asNobody(
  () => undefined,
  (dir) => chmodSync(dir, 0o555),
);

const emptyDir = (): string => tempProjectDir();

const BAD_INPUTS: BadInput[] = [
  {
    name: 'init: invalid domain',
    dir: emptyDir,
    args: ['init', '--domain', 'Example_COM', '--skip-install'],
    error: /invalid domain "Example_COM".*--domain example\.com/,
  },
  {
    name: 'init: invalid project name',
    dir: emptyDir,
    args: ['init', '--project-name', 'Bad_Name', '--skip-install'],
    error: /invalid project name "Bad_Name"/,
  },
  {
    name: 'init: unknown license',
    dir: emptyDir,
    args: ['init', '--license', 'mit', '--skip-install'],
    error: /unknown license "mit"\. Pass --license apache2 or --license none\./,
  },
  {
    name: 'init: non-empty directory',
    dir: emptyDir,
    prepare: (dir) => writeFileSync(join(dir, 'notes.txt'), 'x'),
    args: ['init', '--skip-install'],
    error: /target directory is not empty and contains "notes\.txt"/,
  },
  {
    name: 'init: a subdirectory is not allowed either',
    dir: emptyDir,
    prepare: (dir) => execFileSync('mkdir', [join(dir, 'src')]),
    args: ['init', '--skip-install'],
    error: /contains "src"/,
  },
  { name: 'init: PROJECT already exists', args: ['init', '--skip-install'], error: /already has a PROJECT file/ },
  {
    name: 'init: unknown flag',
    dir: emptyDir,
    args: ['init', '--bogus'],
    error: /unknown option '--bogus'.*ts-operator-sdk init --help/,
  },
  {
    name: 'create api: outside a project',
    dir: emptyDir,
    args: MEMCACHED,
    error: /no PROJECT file in .*ts-operator-sdk init/,
  },
  {
    name: 'create api: PROJECT is not YAML',
    prepare: (dir) => writeFileSync(join(dir, 'PROJECT'), 'version: "3"\nresources: [\n'),
    args: [...MEMCACHED.slice(0, 7), 'Other'],
    error: /the PROJECT file is corrupt: invalid YAML/,
  },
  {
    name: 'create api: PROJECT of an unknown version',
    prepare: (dir) => writeFileSync(join(dir, 'PROJECT'), 'version: "2"\n'),
    args: MEMCACHED,
    error: /unsupported version "2"/,
  },
  {
    name: 'create api: invalid group',
    args: ['create', 'api', '--group', 'Cache', '--version', 'v1', '--kind', 'Memcached'],
    error: /invalid group "Cache"/,
  },
  {
    name: 'create api: version without v',
    args: ['create', 'api', '--group', 'cache', '--version', '1', '--kind', 'Other'],
    error: /invalid version "1"/,
  },
  {
    name: 'create api: unknown version stage',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1gamma1', '--kind', 'Other'],
    error: /invalid version "v1gamma1"/,
  },
  {
    name: 'create api: lowercase kind',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'memcached'],
    error: /invalid kind "memcached".*PascalCase/,
  },
  {
    name: 'create api: kind with a dash',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Mem-cached'],
    error: /invalid kind "Mem-cached"/,
  },
  {
    name: 'create api: kind too long',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', `K${'a'.repeat(63)}`],
    error: /at most 63 characters/,
  },
  {
    name: 'create api: missing --kind',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1'],
    error: /missing --kind/,
  },
  {
    name: 'create api: missing --version',
    args: ['create', 'api', '--group', 'cache', '--kind', 'Other'],
    error: /missing --version/,
  },
  {
    name: 'create api: 63-character kind whose plural is longer than 63',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', `K${'a'.repeat(62)}`],
    error: /plural resource name "ka+s" of 64 characters, longer than the 63 .*Pass --plural .* or a shorter --kind\./,
  },
  {
    name: 'create api: acronym kind whose derived plural is mixed case',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Dns'],
    error: /kind "Dns" gives the plural resource name "dnsDNSes".*Pass a lowercase --plural such as --plural dnses\./,
  },
  {
    name: 'create api: uppercase plural',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other', '--plural', 'Others'],
    error: /invalid plural "Others"/,
  },
  {
    name: 'create api: invalid boolean',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other', '--namespaced=maybe'],
    error: /"maybe" is not true or false/,
  },
  {
    name: 'create api: resource already exists',
    args: MEMCACHED,
    error: /API cache\.example\.com\/v1, Kind=Memcached already exists\. Pass --force/,
  },
  {
    name: 'create api: second group without multigroup',
    args: ['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Frigate'],
    error: /multiple groups are not allowed by default, to enable multi-group run `ts-operator-sdk edit --multigroup`/,
  },
  {
    name: 'create api: nothing to create',
    args: [
      'create',
      'api',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      'Other',
      '--resource=false',
      '--controller=false',
    ],
    error: /nothing to create/,
  },
  {
    name: 'create api: scaffold marker removed from main.ts',
    prepare: (dir) =>
      writeFileSync(
        join(dir, 'main.ts'),
        readFileSync(join(dir, 'main.ts'), 'utf8').replace('// +kubebuilder:scaffold:builder\n', ''),
      ),
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other'],
    error: /main\.ts has no "\/\/ \+kubebuilder:scaffold:builder" marker/,
  },
  {
    name: 'create api: read-only directory',
    run: readOnlyRun,
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other'],
    error: /could not write the project files \(EACCES.*nothing was changed\. Make the directory writable/,
  },
  {
    name: 'edit: --multigroup=false with two groups',
    dir: () => copyProject(multigroupProject),
    args: ['edit', '--multigroup=false'],
    error: /cannot turn multigroup off: the project has 2 API groups/,
  },
  { name: 'edit: no flag', args: ['edit'], error: /nothing to edit\. Pass --multigroup/ },
  {
    name: 'completion: unsupported shell',
    args: ['completion', 'powershell'],
    error: /unsupported shell "powershell"/,
  },
  { name: 'unknown command', args: ['frobnicate'], error: /unknown command 'frobnicate'/ },
];

badInputSuite('bad input: one line of error, exit 1, directory byte-identical', BAD_INPUTS, () =>
  copyProject(baseProject),
);

test('the bad-input table has at least 20 cases', () => {
  assert.ok(BAD_INPUTS.length >= 20);
});

test('create api twice: the second run fails and changes nothing; --force rewrites only that API', () => {
  const dir = copyProject(baseProject);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other'], dir);
  const typesFile = join(dir, 'apis/v1/memcached_types.ts');
  const controllerFile = join(dir, 'controllers/memcached_controller.ts');
  const otherTypes = join(dir, 'apis/v1/other_types.ts');
  writeFileSync(typesFile, '// edited by the user\n');
  writeFileSync(controllerFile, '// edited by the user\n');
  writeFileSync(otherTypes, '// edited by the user\n');
  const mainBefore = readFileSync(join(dir, 'main.ts'), 'utf8');

  const beforeSecond = hashTree(dir);
  assert.equal(runCli(MEMCACHED, dir).status, 1);
  assert.equal(hashTree(dir), beforeSecond);

  const result = runCliOk([...MEMCACHED, '--force'], dir);
  assert.equal(result.stderr, '');
  assert.match(readFileSync(typesFile, 'utf8'), /export interface MemcachedSpec/);
  assert.match(readFileSync(controllerFile, 'utf8'), /class MemcachedReconciler/);
  assert.equal(readFileSync(otherTypes, 'utf8'), '// edited by the user\n', "another API's files are left alone");
  assert.equal(readFileSync(join(dir, 'main.ts'), 'utf8'), mainBefore, 'main.ts fragments are inserted once');
  const crdKustomization = readFileSync(join(dir, 'config/crd/kustomization.yaml'), 'utf8');
  assert.equal(crdKustomization.split('bases/cache.example.com_memcacheds.yaml').length, 2, 'one CRD entry');
  const project = readFileSync(join(dir, 'PROJECT'), 'utf8');
  assert.equal(project.split('kind: Memcached').length, 2, 'one PROJECT entry');
});

test('--dry-run prints CREATE/UPDATE lines and writes nothing', () => {
  const dir = copyProject(baseProject);
  const before = hashTree(dir);
  const result = runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v2', '--kind', 'Memcached', '--controller=false', '--dry-run'],
    dir,
  );
  assert.equal(hashTree(dir), before);
  const lines = result.stdout.trimEnd().split('\n');
  assert.ok(lines.includes('CREATE apis/v2/memcached_types.ts'), result.stdout);
  assert.ok(lines.includes('CREATE apis/v2/groupversion_info.ts'));
  assert.ok(lines.includes('UPDATE PROJECT'));
  // Same kind, new version: the CRD entry exists already, only the sample is new.
  assert.ok(lines.includes('UPDATE config/samples/kustomization.yaml'));
  assert.ok(!lines.includes('UPDATE config/crd/kustomization.yaml'));
  assert.ok(
    lines.every((line) => /^(CREATE|UPDATE|DELETE) \S+$/.test(line)),
    result.stdout,
  );

  const empty = tempProjectDir();
  const init = runCliOk(['init', '--domain', 'example.com', '--dry-run'], empty);
  assert.ok(init.stdout.includes('CREATE PROJECT\n'));
  assert.ok(init.stdout.includes('CREATE config/default/kustomization.yaml\n'));
  assert.equal(hashTree(empty), hashTree(tempProjectDir()), 'init --dry-run wrote nothing');
});

test("init accepts dot-files, *.md and ALL-CAPS files, and keeps the user's README", () => {
  const dir = tempProjectDir();
  writeFileSync(join(dir, 'README.md'), 'my readme\n');
  writeFileSync(join(dir, 'LICENSE'), 'license\n');
  writeFileSync(join(dir, '.gitignore'), 'mine\n');
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  assert.equal(readFileSync(join(dir, 'README.md'), 'utf8'), 'my readme\n');
  assert.equal(readFileSync(join(dir, '.gitignore'), 'utf8'), 'mine\n');
  assert.ok(existsSync(join(dir, 'PROJECT')));
});

test('init --license none writes no boilerplate and no header', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--license', 'none', '--skip-install'], dir);
  assert.equal(existsSync(join(dir, 'hack/boilerplate.ts.txt')), false);
  assert.match(readFileSync(join(dir, 'main.ts'), 'utf8'), /^import \{ parseArgs \}/);
  assert.match(readFileSync(join(dir, 'PROJECT'), 'utf8'), /^domain: my\.domain$/m);
});

test('generated types match the shape the CRD generator parses', () => {
  const types = readFileSync(join(baseProject, 'apis/v1/memcached_types.ts'), 'utf8');
  assert.match(
    types,
    /\n \* \+kubebuilder:object:root=true\n \* \+kubebuilder:subresource:status\n \*\/\nexport interface Memcached extends KubernetesObject \{/,
  );
  assert.match(
    types,
    /export const Memcached = defineKind<Memcached>\(\{\n {2}\.\.\.GroupVersion,\n {2}kind: 'Memcached',\n {2}plural: 'memcacheds',\n {2}namespaced: true,\n\}\);/,
  );
  assert.match(
    readFileSync(join(baseProject, 'apis/v1/groupversion_info.ts'), 'utf8'),
    /\+groupName=cache\.example\.com\n \*\/\nexport const GroupVersion = \{ group: 'cache\.example\.com', version: 'v1' \} as const;/,
  );
  const controller = readFileSync(join(baseProject, 'controllers/memcached_controller.ts'), 'utf8');
  for (const marker of [
    'resources=memcacheds,verbs=get;list;watch;create;update;patch;delete',
    'resources=memcacheds/status,verbs=get;update;patch',
    'resources=memcacheds/finalizers,verbs=update',
  ]) {
    assert.ok(controller.includes(`+kubebuilder:rbac:groups=cache.example.com,${marker}`), marker);
  }
});

describe('scenarios: PROJECT golden and kustomize build', () => {
  for (const scenario of SCENARIOS) {
    test(scenario.name, () => {
      const dir = scaffoldScenario(scenario, { extraInitArgs: ['--skip-install'] });
      assert.equal(readFileSync(join(dir, 'PROJECT'), 'utf8'), scenario.project);
      // What `make manifests` runs: the CRD and RBAC generator, on the scaffolded types.
      runCliOk(['generate', 'manifests'], dir);
      const built = execFileSync('kubectl', ['kustomize', join(dir, 'config/default')], { encoding: 'utf8' });
      const projectName = /^projectName: (.*)$/m.exec(scenario.project)![1]!;
      assert.ok(built.includes(`name: ${projectName}-controller-manager\n`));
      assert.ok(built.includes(`namespace: ${projectName}-system\n`));
      for (const crd of scenario.crds) {
        assert.ok(built.includes(`name: ${crd.plural}.${crd.group}\n`), `CRD ${crd.plural}.${crd.group}`);
        assert.ok(built.includes(`${crd.kind.toLowerCase()}-admin-role`), 'admin role');
        const crdText = readFileSync(join(dir, 'config/crd/bases', `${crd.group}_${crd.plural}.yaml`), 'utf8');
        assert.match(crdText, new RegExp(`scope: ${crd.namespaced ? 'Namespaced' : 'Cluster'}\\n`));
      }
      execFileSync('kubectl', ['kustomize', join(dir, 'config/samples')], { encoding: 'utf8' });
      execFileSync('kubectl', ['kustomize', join(dir, 'config/scorecard')], { encoding: 'utf8' });
      rmSync(join(dir, '..'), { recursive: true, force: true });
    });
  }
});

test('cluster-scoped types carry the scope marker and namespaced: false', () => {
  const dir = scaffoldScenario(SCENARIOS[1]!, { extraInitArgs: ['--skip-install'] });
  const types = readFileSync(join(dir, 'apis/v1alpha1/cactus_types.ts'), 'utf8');
  assert.match(types, / \* \+kubebuilder:subresource:status\n \* \+kubebuilder:resource:scope=Cluster\n \*\//);
  assert.match(types, /plural: 'cacti',\n {2}namespaced: false,/);
});

test('edit --multigroup moves files and fixes imports; the no-group sample has no leading underscore', () => {
  const mainTs = readFileSync(join(multigroupProject, 'main.ts'), 'utf8');
  assert.ok(mainTs.includes("import { MemcachedReconciler } from './controllers/cache/memcached_controller.js';"));
  assert.ok(mainTs.includes("import { FrigateReconciler } from './controllers/ship/frigate_controller.js';"));
  assert.ok(
    readFileSync(join(multigroupProject, 'controllers/cache/memcached_controller.ts'), 'utf8').includes(
      "from '../../apis/cache/v1/memcached_types.js'",
    ),
  );
  assert.equal(existsSync(join(multigroupProject, 'apis/v1')), false, 'the old directory is gone');
  assert.equal(existsSync(join(multigroupProject, 'controllers/memcached_controller.ts')), false);
  assert.match(
    readFileSync(join(multigroupProject, 'config/rbac/kustomization.yaml'), 'utf8'),
    /- cache_memcached_admin_role\.yaml\n/,
  );
  const noGroup = scaffoldScenario(SCENARIOS[3]!, { extraInitArgs: ['--skip-install'] });
  assert.ok(existsSync(join(noGroup, 'config/samples/v1alpha1_podroute.yaml')));
});

test('edit --multigroup=false moves a single-group project back', () => {
  const dir = copyProject(baseProject);
  const original = hashTree(dir);
  runCliOk(['edit', '--multigroup'], dir);
  assert.ok(existsSync(join(dir, 'apis/cache/v1/memcached_types.ts')));
  runCliOk(['edit', '--multigroup=false'], dir);
  assert.equal(hashTree(dir), original, 'a round trip restores the same tree');
});

test('version, completion and help', () => {
  const dir = tempProjectDir();
  assert.match(runCliOk(['version'], dir).stdout, /^ts-operator-sdk version: "0\.1\.0", node version: "v\d+/);
  const bash = runCliOk(['completion', 'bash'], dir).stdout;
  assert.match(bash, /complete -F _ts_operator_sdk ts-operator-sdk/);
  assert.match(bash, /"create api"\) words="[^"]*--kind/);
  execFileSync('bash', ['-n', '-c', bash]);
  assert.match(runCliOk(['completion', 'zsh'], dir).stdout, /^#compdef ts-operator-sdk/);
  assert.match(runCliOk(['completion', 'fish'], dir).stdout, /complete -c ts-operator-sdk .* -a init/);
  for (const command of [['init'], ['create', 'api'], ['edit'], ['version'], ['completion']]) {
    const help = runCliOk([...command, '--help'], dir).stdout;
    assert.match(help, /Examples:\n {2}(#|\$)/, `${command.join(' ')} --help has examples`);
  }
});

test('on a terminal, create api asks Create Resource / Create Controller and follows the answers', () => {
  // `script` gives the CLI a pseudo-terminal as stdin, the only way to get a real TTY in a test.
  const dir = copyProject(baseProject);
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(REPO_ROOT, 'bin/ts-operator-sdk.js'))} create api --group cache --version v1 --kind Prompted`;
  // (Types yes, controller no: a controller without types is refused, see bad-input-scaffold.test.ts.)
  const output = execFileSync('script', ['-qec', command, '/dev/null'], {
    cwd: dir,
    input: 'y\nn\n',
    encoding: 'utf8',
  });
  assert.match(output, /Create Resource \[y\/n\]/);
  assert.match(output, /Create Controller \[y\/n\]/);
  assert.ok(existsSync(join(dir, 'apis/v1/prompted_types.ts')), 'answered y to the resource');
  assert.equal(existsSync(join(dir, 'controllers/prompted_controller.ts')), false, 'answered n to the controller');
});

test('the generated Makefile parses, lists its targets, and set-image works without kustomize', () => {
  const dir = copyProject(baseProject);
  writeStandInCrd(dir, SCENARIOS[0]!.crds[0]!);
  const env = {
    ...process.env,
    PATH: process.env
      .PATH!.split(':')
      .filter((entry) => !existsSync(join(entry, 'kustomize')))
      .join(':'),
  };
  // eslint-disable-next-line no-control-regex -- ANSI colour codes start with ESC
  const help = execFileSync('make', ['help'], { cwd: dir, encoding: 'utf8', env }).replace(/\x1b\[[0-9;]*m/g, '');
  for (const target of [
    'manifests',
    'test',
    'build',
    'run',
    'docker-build',
    'deploy',
    'bundle',
    'catalog-build',
    'setup-envtest',
    'envtest-start',
  ]) {
    assert.match(help, new RegExp(`\\b${target}\\b`), target);
  }
  // The Makefile stops targets that need the CLI until `npm install` put it in node_modules/.bin.
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', '.bin', 'ts-operator-sdk'), '');
  const bundle = execFileSync('make', ['-n', 'bundle'], { cwd: dir, encoding: 'utf8', env });
  assert.match(bundle, /ts-operator-sdk generate kustomize manifests -q/);
  // The build runs to completion before anything is piped, so a failed build never reaches generate bundle.
  assert.match(
    bundle,
    /manifests="\$\(kubectl kustomize config\/manifests\)"; \\\n\s+printf '%s\\n' "\$manifests" \| npx --no-install ts-operator-sdk generate bundle -q --overwrite --version 0\.0\.1/,
  );
  assert.match(bundle, /ts-operator-sdk bundle validate \.\/bundle/);
  execFileSync('make', ['set-image', 'IMG=quay.io/example/memcached-operator:v0.0.2'], { cwd: dir, env });
  execFileSync('make', ['set-image', 'IMG=quay.io/example/memcached-operator:v0.0.3'], { cwd: dir, env });
  const built = execFileSync('kubectl', ['kustomize', 'config/default'], { cwd: dir, encoding: 'utf8' });
  assert.match(built, /image: quay\.io\/example\/memcached-operator:v0\.0\.3\n/);
});

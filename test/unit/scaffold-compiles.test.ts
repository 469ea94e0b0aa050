/**
 * Inputs that must succeed and leave a project that compiles: kinds named
 * like JavaScript reserved words (once lower-cased) or like what the
 * templates import, the same kind in two groups, a second version of a kind,
 * and an owner with a comment terminator. Also: PROJECT rewrites keep what
 * the tool does not model.
 *
 * The generated TypeScript is type-checked with this repository's compiler
 * against this repository's package (node_modules/ts-operator-sdk links to
 * the repo root, so its dist/ types are what the project sees), so no case
 * needs an npm install.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { linkDependencies, REPO_ROOT, runCli, runCliOk, tempProjectDir } from '../scaffold/harness.js';

/**
 * Kinds Kubernetes accepts that collide with something in the generated
 * code: lower-cased they are reserved words or the reconcile method's
 * locals; as they are, they are names the templates import or globals the
 * templates use.
 */
export const AWKWARD_KINDS = [
  // reserved words once the first letter is lower-cased
  'Function',
  'Default',
  'Import',
  'Package',
  'Interface',
  'Class',
  'New',
  'Delete',
  'Enum',
  'Await',
  'Yield',
  'Let',
  'Static',
  'This',
  'Void',
  'Null',
  'Arguments',
  'Eval',
  'Undefined',
  'Async',
  // the reconcile method's parameters and locals, and the controller's imports, lower-cased
  'Ctx',
  'Req',
  'Metadata',
  'Spec',
  'IgnoreNotFound',
  'NewControllerManagedBy',
  // names the templates import
  'Condition',
  'GroupVersion',
  'KubernetesObject',
  'V1ObjectMeta',
  'V1ListMeta',
  'Client',
  'Manager',
  'Request',
  'Result',
  'Reconciler',
  'ReconcileContext',
  'Environment',
  'RestClient',
  // globals the templates use, and other globals
  'Promise',
  'Error',
  'AbortController',
  'Object',
  'Array',
  'Symbol',
  'String',
  'Date',
  'Map',
] as const;

/** Type-checks the project with its own tsconfig.json; returns tsc's diagnostics (empty when clean). */
function typecheck(dir: string): { status: number | null; output: string } {
  const result = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--noEmit', '--pretty', 'false'],
    { encoding: 'utf8', timeout: 300_000 },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

test('awkward kinds, the same kind in two groups, a second version and an owner with */ give a project that compiles', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--owner', 'A */ B /* C', '--skip-install'], dir);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir);
  for (const kind of AWKWARD_KINDS)
    runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', kind], dir);

  // A second version: types only, and the storage-version advice.
  const second = runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v2', '--kind', 'Memcached', '--controller=false'],
    dir,
  );
  assert.match(
    second.stdout,
    /Memcached now has 2 versions \(v1, v2\): mark exactly one of them with `\+kubebuilder:storageversion`/,
  );

  // The same kind in a second group.
  runCliOk(['edit', '--multigroup'], dir);
  runCliOk(['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Memcached'], dir);
  runCliOk(['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Promise'], dir);
  const main = readFileSync(join(dir, 'main.ts'), 'utf8');
  assert.match(main, /^import \{ MemcachedReconciler \} from '\.\/controllers\/cache\/memcached_controller\.js';$/m);
  assert.match(
    main,
    /^import \{ MemcachedReconciler as ShipMemcachedReconciler \} from '\.\/controllers\/ship\/memcached_controller\.js';$/m,
  );
  assert.match(main, /^new ShipMemcachedReconciler\(mgr\.getClient\(\)\)\.setupWithManager\(mgr\);$/m);

  // The owner cannot end the license comment early.
  assert.match(readFileSync(join(dir, 'hack/boilerplate.ts.txt'), 'utf8'), /Copyright \d+ A \*\\\/ B \/\* C\./);

  linkDependencies(dir);
  const { status, output } = typecheck(dir);
  assert.equal(output, '', 'tsc reported errors');
  assert.equal(status, 0);

  // The CRD generator reads the aliased imports too (kind Condition imports the SDK's Condition as SdkCondition).
  const v1Types = join(dir, 'apis/cache/v1/memcached_types.ts');
  writeFileSync(
    v1Types,
    readFileSync(v1Types, 'utf8').replace(
      ' * Memcached is the Schema for the memcacheds API.\n',
      ' * Memcached is the Schema for the memcacheds API.\n * +kubebuilder:storageversion\n',
    ),
  );
  runCliOk(['generate', 'manifests'], dir);
  const conditionCrd = readFileSync(join(dir, 'config/crd/bases/cache.example.com_conditions.yaml'), 'utf8');
  assert.match(conditionCrd, /conditions:\n(.*\n)*? +lastTransitionTime:/);
  assert.match(
    readFileSync(join(dir, 'config/crd/bases/cache.example.com_functions.yaml'), 'utf8'),
    /kind: Function\n/,
  );
});

test('the same kind in a group and without a group: main.ts aliases the second reconciler', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  runCliOk(['edit', '--multigroup'], dir);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir);
  runCliOk(['create', 'api', '--version', 'v1', '--kind', 'Memcached'], dir);
  const main = readFileSync(join(dir, 'main.ts'), 'utf8');
  assert.match(
    main,
    /import \{ MemcachedReconciler as ExampleComMemcachedReconciler \} from '\.\/controllers\/memcached_controller\.js';/,
  );
  linkDependencies(dir);
  const { status, output } = typecheck(dir);
  assert.equal(output, '', 'tsc reported errors');
  assert.equal(status, 0);
});

test('PROJECT rewrites keep unknown keys, plugin configs and comments', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir);
  const path = join(dir, 'PROJECT');
  const original = readFileSync(path, 'utf8')
    .replace(/^domain: /m, 'cliVersion: 4.6.0\n# Our team owns this operator.\ndomain: ')
    .replace(/^projectName: (.*)$/m, 'projectName: $1 # keep this name\nrepo: github.com/example/memcached-operator')
    .replace(
      '  scorecard.sdk.operatorframework.io/v2: {}',
      '  scorecard.sdk.operatorframework.io/v2: {}\n  deploy-image.go.kubebuilder.io/v1-alpha:\n    resources:\n    - kind: Memcached\n      options:\n        image: memcached:1.6 # pinned',
    )
    .replace('  kind: Memcached\n', '  kind: Memcached\n  x-custom: kept\n');
  writeFileSync(path, original);

  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other'], dir);
  runCliOk(['edit', '--multigroup'], dir);
  const after = readFileSync(path, 'utf8');
  for (const kept of [
    'cliVersion: 4.6.0',
    '# Our team owns this operator.',
    '# keep this name',
    'repo: github.com/example/memcached-operator',
    'deploy-image.go.kubebuilder.io/v1-alpha:',
    'image: memcached:1.6 # pinned',
    'x-custom: kept',
    '# Code generated by tool. DO NOT EDIT.',
  ]) {
    assert.ok(after.includes(kept), `PROJECT lost ${JSON.stringify(kept)}:\n${after}`);
  }
  assert.match(after, /^multigroup: true$/m);
  assert.match(after, /kind: Other/);
  assert.match(after, /path: apis\/cache\/v1/);
  // Still the model's view of the file: the next command reads it.
  assert.equal(runCli(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other'], dir).status, 1);
});

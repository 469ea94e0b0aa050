/**
 * `create api --external-api-path` end to end on the file system: OpenShift's
 * Route with a controller and cert-manager's Certificate without one, both
 * typed from their CRDs. PROJECT records them as kubebuilder does
 * (`external: true`, path, domain; no `api`), no CRD, sample or role is
 * scaffolded for them, the controller's RBAC markers name the kind's group,
 * `generate manifests` puts that group in role.yaml and writes no CRD for
 * it, and the whole project (main.ts, controllers, generated types)
 * type-checks under its strict tsconfig.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatProject, parseProject } from '../../src/scaffold/project.js';
import { REPO_ROOT, runCliOk, SCENARIOS, scaffoldScenario } from '../scaffold/harness.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'external');

test('Route with a controller and Certificate without one: PROJECT, files, RBAC, manifests, and a project that compiles', () => {
  const dir = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
  const kustomizationBefore = readFileSync(join(dir, 'config/crd/kustomization.yaml'), 'utf8');
  // The generated file follows the project's prettier printWidth.
  writeFileSync(join(dir, '.prettierrc.json'), '{\n  "singleQuote": true,\n  "printWidth": 120\n}\n');
  const route = runCliOk(
    [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v1',
      '--kind',
      'Route',
      '--external-api-path',
      'apis/external/route/v1',
      '--external-api-domain',
      'openshift.io',
      '--from-crd',
      join(FIXTURES, 'route.crd.yaml'),
    ],
    dir,
  );
  assert.match(route.stdout, /crdDirectoryPaths: \['config\/crd\/external'\]/);
  // No domain flag: the CRD's group gives it. No --version: the storage version.
  runCliOk(
    [
      'create',
      'api',
      '--group',
      'cert-manager',
      '--kind',
      'Certificate',
      '--external-api-path',
      'apis/external/certmanager/v1',
      '--from-crd',
      join(FIXTURES, 'certificate.crd.yaml'),
      '--controller=false',
    ],
    dir,
  );

  const project = readFileSync(join(dir, 'PROJECT'), 'utf8');
  assert.match(
    project,
    /^- controller: true\n  domain: openshift\.io\n  external: true\n  group: route\n  kind: Route\n  path: apis\/external\/route\/v1\n  version: v1\n/m,
  );
  assert.match(
    project,
    /^- domain: io\n  external: true\n  group: cert-manager\n  kind: Certificate\n  path: apis\/external\/certmanager\/v1\n  version: v1\n/m,
  );
  // The round trip keeps the external entries as they are.
  assert.equal(formatProject(parseProject(project)), project);

  assert.match(
    readFileSync(join(dir, 'apis/external/route/v1/route_types.ts'), 'utf8'),
    /^import \{ defineKind, type IntOrString, type Time, type int32 \} from 'ts-operator-sdk';$/m,
  );
  assert.ok(existsSync(join(dir, 'apis/external/certmanager/v1/certificate_types.ts')));
  assert.ok(existsSync(join(dir, 'config/crd/external/route.openshift.io_routes.yaml')));
  assert.ok(!existsSync(join(dir, 'controllers/certificate_controller.ts')), 'no controller for --controller=false');
  assert.ok(
    !existsSync(join(dir, 'config/rbac/route_editor_role.yaml')),
    'no roles for a kind the project does not serve',
  );
  assert.ok(!existsSync(join(dir, 'config/samples/route_v1_route.yaml')), 'no sample');
  assert.equal(
    readFileSync(join(dir, 'config/crd/kustomization.yaml'), 'utf8'),
    kustomizationBefore,
    'the external CRD is not deployed',
  );

  const controller = readFileSync(join(dir, 'controllers/route_controller.ts'), 'utf8');
  assert.match(
    controller,
    /^ \* \+kubebuilder:rbac:groups=route\.openshift\.io,resources=routes,verbs=get;list;watch;create;update;patch;delete$/m,
  );
  assert.match(controller, /^import \{ Route \} from '\.\.\/apis\/external\/route\/v1\/route_types\.js';$/m);
  assert.match(controller, /^\/\*\n/, "the template's own comment leaves no line behind");
  assert.doesNotMatch(controller, /\bspec\b/, 'the external controller assumes nothing about the spec');
  assert.match(
    readFileSync(join(dir, 'main.ts'), 'utf8'),
    /^new RouteReconciler\(mgr\.getClient\(\)\)\.setupWithManager\(mgr\);$/m,
  );

  runCliOk(['generate', 'manifests'], dir);
  const role = readFileSync(join(dir, 'config/rbac/role.yaml'), 'utf8');
  assert.match(role, /- apiGroups:\n  - route\.openshift\.io\n  resources:\n  - routes\n/);
  assert.ok(
    !existsSync(join(dir, 'config/crd/bases/route.openshift.io_routes.yaml')),
    'no CRD is generated for an external kind',
  );

  // A second own API later: the external entries stay byte for byte, and an external group does not make the project multigroup.
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other'], dir);
  const after = readFileSync(join(dir, 'PROJECT'), 'utf8');
  for (const entry of project.split(/^(?=- )/m).filter((part) => part.includes('external: true')))
    assert.ok(after.includes(entry.replace(/version: "3"\n$/, '')), `kept:\n${entry}`);

  // --force regenerates the types from the CRD.
  runCliOk(
    [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v1',
      '--kind',
      'Route',
      '--external-api-path',
      'apis/external/route/v1',
      '--external-api-domain',
      'openshift.io',
      '--from-crd',
      join(FIXTURES, 'route.crd.yaml'),
      '--controller=false',
      '--force',
    ],
    dir,
  );
  assert.match(
    readFileSync(join(dir, 'PROJECT'), 'utf8'),
    /^- controller: true\n  domain: openshift\.io\n  external: true\n/m,
    '--controller=false on a re-run keeps the controller',
  );

  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'ts-operator-sdk'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@kubernetes'), join(dir, 'node_modules', '@kubernetes'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
  const tsc = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--noEmit', '--pretty', 'false'],
    { encoding: 'utf8', timeout: 300_000 },
  );
  assert.equal(`${tsc.stdout}${tsc.stderr}`, '', 'tsc reported errors');
  assert.equal(tsc.status, 0);
});

/**
 * Bad input that would make the CLI touch files it does not own: names that
 * become paths (`../` in an object name, a CRD group or plural, a package or
 * project name, a resource marker), partial bundle input that would empty a
 * bundle, symbolic links out of the project, and files that are not UTF-8.
 * Each case keeps the contract of ./bad-input.ts (exit 1, one line naming
 * problem and fix, a byte-identical directory); cases whose input aims
 * outside the project also keep its parent directory byte-identical.
 * The same file checks what generate bundle may still remove, and --dry-run.
 * Cost: about 60 s on 2 busy cores (one CLI run per case, one scaffolded project).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { badInputSuite, type BadInput } from './bad-input.js';
import {
  bundleProject,
  copyProject,
  hashTree,
  runCli,
  runCliOk,
  tempProjectDir,
  type RunOptions,
} from '../scaffold/harness.js';

const GENERATE = ['generate', 'bundle', '-q', '--overwrite', '--version', '0.0.1'];
/** A run that changes the bundle (a new version), so it must write. */
const NEXT_VERSION = ['generate', 'bundle', '-q', '--overwrite', '--version', '0.0.2'];
const CRD_FILE = 'config/crd/bases/cache.example.com_memcacheds.yaml';
const TYPES_FILE = 'apis/v1/memcached_types.ts';
const RECORD = 'bundle/.ts-operator-sdk-generated.yaml';

/** A scaffolded Memcached project with its manifests, base CSV and a generated bundle. */
let baseProject: string;
/** `kubectl kustomize config/manifests` of it: what `make bundle` pipes in. */
let manifests: string;
/** A project straight after init. */
let initProject: string;

before(() => {
  ({ dir: baseProject, manifests } = bundleProject(GENERATE));
  initProject = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], initProject);
});

/** The piped manifests with the first object of `kind` changed by `edit`. */
function edited(kind: string, edit: (object: any) => void): string {
  const objects = parseAllDocuments(manifests).map((document) => document.toJS());
  edit(objects.find((object) => object?.kind === kind));
  return objects.map((object) => `---\n${stringify(object)}`).join('');
}
const pipedEdit = (kind: string, edit: (object: any) => void) => (): RunOptions => ({ input: edited(kind, edit) });
/** The piped manifests without the objects `drop` selects. */
const pipedWithout = (drop: (object: any) => boolean) => (): RunOptions => ({
  input: parseAllDocuments(manifests)
    .map((document) => document.toJS())
    .filter((object) => !drop(object))
    .map((object) => `---\n${stringify(object)}`)
    .join(''),
});
/** The piped manifests plus one more object. */
const pipedPlus = (extra: object) => (): RunOptions => ({ input: `${manifests}\n---\n${stringify(extra)}` });
const configMap = (name: string, apiVersion = 'v1', kind = 'ConfigMap'): object => ({
  apiVersion,
  kind,
  metadata: { name },
  data: { a: 'b' },
});

/** Writes `content` at `path` under the project, creating directories. */
const put =
  (path: string, content: string | Buffer) =>
  (dir: string): void => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  };
/** Replaces a line of a text file. */
const editText =
  (path: string, change: (text: string) => string) =>
  (dir: string): void =>
    writeFileSync(join(dir, path), change(readFileSync(join(dir, path), 'utf8')));
/** Adds a Latin-1 line (a byte that is not UTF-8) at the top of a project file. */
const latin1 =
  (path: string, comment = '#') =>
  (dir: string): void =>
    writeFileSync(
      join(dir, path),
      Buffer.concat([
        Buffer.from(`${comment} Copyright `),
        Buffer.from([0xa9]),
        Buffer.from(' 2026 Acme GmbH\n'),
        readFileSync(join(dir, path)),
      ]),
    );
const latin1Ts = (path: string) => latin1(path, '//');

/** A directory next to the project (inside its temp parent) that `path` in the project links to. */
const linkOut =
  (path: string, keep: 'move' | 'empty' = 'move') =>
  (dir: string): void => {
    const outside = mkdtempSync(join(dirname(dir), 'outside-'));
    const target = join(outside, 'target');
    if (keep === 'move') renameSync(join(dir, path), target);
    else {
      rmSync(join(dir, path), { recursive: true, force: true });
      mkdirSync(target);
    }
    symlinkSync(target, join(dir, path));
  };
/** `path` becomes a link to a file outside the project. */
const fileLinkOut =
  (path: string) =>
  (dir: string): void => {
    const outside = mkdtempSync(join(dirname(dir), 'outside-'));
    renameSync(join(dir, path), join(outside, 'file'));
    symlinkSync(join(outside, 'file'), join(dir, path));
  };

/** A CRD file for `create api --from-crd`, from the project's own CRD, changed by `edit`. */
const crdFile =
  (edit: (crd: any) => void) =>
  (dir: string): void => {
    const crd = parse(readFileSync(join(dir, CRD_FILE), 'utf8'));
    crd.spec.group = 'route.openshift.io';
    crd.metadata.name = `${crd.spec.names.plural}.route.openshift.io`;
    edit(crd);
    writeFileSync(join(dir, 'crafted.crd.yaml'), stringify(crd));
  };
const FROM_CRD = [
  'create',
  'api',
  '--group',
  'route',
  '--version',
  'v1',
  '--kind',
  'Memcached',
  '--external-api-domain',
  'openshift.io',
  '--external-api-path',
  'apis/external/route/v1',
  '--from-crd',
  'crafted.crd.yaml',
];
/** The `+kubebuilder:resource` marker on the Memcached type. */
const resourceMarker = (path: string) =>
  editText(TYPES_FILE, (text) =>
    text.replace(/^(export interface Memcached )/m, `// +kubebuilder:resource:path=${path}\n$1`),
  );

const CASES: BadInput[] = [
  // ---- names that become file names in generate bundle ----
  {
    name: 'a ConfigMap named ../../../x on stdin',
    args: GENERATE,
    run: pipedPlus(configMap('../../../x')),
    watchParent: true,
    error:
      /the name of ConfigMap "\.\.\/\.\.\/\.\.\/x" in stdin is invalid: it must be a DNS-1123 subdomain.*Fix it in the input manifests/,
  },
  {
    name: 'a Secret named ../x',
    args: GENERATE,
    run: pipedPlus(configMap('../x', 'v1', 'Secret')),
    watchParent: true,
    error: /the name of Secret "\.\.\/x" in stdin is invalid/,
  },
  {
    name: 'a ServiceAccount named a/b',
    args: GENERATE,
    run: pipedPlus(configMap('a/b', 'v1', 'ServiceAccount')),
    error: /the name of ServiceAccount "a\/b" in stdin is invalid/,
  },
  {
    name: 'the controller Service renamed ../../svc',
    args: GENERATE,
    run: pipedEdit('Service', (svc) => (svc.metadata.name = '../../svc')),
    watchParent: true,
    error: /the name of Service "\.\.\/\.\.\/svc" in stdin is invalid: it must be a DNS-1035 label/,
  },
  {
    name: 'a ClusterRole named ../../../x',
    args: GENERATE,
    run: pipedEdit('ClusterRole', (role) => (role.metadata.name = '../../../x')),
    watchParent: true,
    error: /the name of ClusterRole "\.\.\/\.\.\/\.\.\/x" in stdin is invalid: it may not contain '\/' or '%'/,
  },
  {
    name: 'a Role named ..',
    args: GENERATE,
    run: pipedPlus({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: '..' }, rules: [] }),
    error: /the name of Role "\.\." in stdin is invalid: it may not be "\.\."/,
  },
  {
    name: 'a RoleBinding named with %2F',
    args: GENERATE,
    run: pipedPlus({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: '..%2F..%2Fx' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [],
    }),
    error: /the name of RoleBinding "\.\.%2F\.\.%2Fx" in stdin is invalid: it may not contain '\/' or '%'/,
  },
  {
    name: 'a NetworkPolicy named ../np',
    args: GENERATE,
    run: pipedPlus(configMap('../np', 'networking.k8s.io/v1', 'NetworkPolicy')),
    watchParent: true,
    error: /the name of NetworkPolicy "\.\.\/np" in stdin is invalid/,
  },
  {
    name: 'a sample named ../../x',
    args: GENERATE,
    run: pipedPlus({ apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: '../../x' }, spec: {} }),
    watchParent: true,
    error: /the name of Memcached "\.\.\/\.\.\/x" in stdin is invalid/,
  },
  {
    name: 'an apiVersion whose group climbs out',
    args: GENERATE,
    run: pipedPlus(configMap('ok', '../../x/v1')),
    watchParent: true,
    error: /the apiVersion "\.\.\/\.\.\/x\/v1" of ConfigMap "ok" in stdin is not <group>\/<version> or <version>/,
  },
  {
    name: 'an apiVersion with three parts',
    args: GENERATE,
    run: pipedPlus(configMap('ok', 'a/b/v1')),
    error: /the apiVersion "a\/b\/v1" of ConfigMap "ok" in stdin is not <group>\/<version>/,
  },
  {
    name: 'a version with a slash in a core apiVersion',
    args: GENERATE,
    run: pipedPlus(configMap('ok', '..')),
    error: /the apiVersion "\.\." of ConfigMap "ok" in stdin is not <group>\/<version>/,
  },
  {
    name: 'a kind with a slash',
    args: GENERATE,
    run: pipedPlus(configMap('ok', 'v1', 'Config/../../Map')),
    error: /the kind of Config\/\.\.\/\.\.\/Map "ok" in stdin is not a Kubernetes kind/,
  },
  {
    name: 'a CRD whose group climbs out',
    args: GENERATE,
    run: pipedEdit('CustomResourceDefinition', (crd) => (crd.spec.group = '../../../x')),
    watchParent: true,
    error:
      /spec\.group "\.\.\/\.\.\/\.\.\/x" of CustomResourceDefinition "memcacheds\.cache\.example\.com" in stdin is not a DNS-1123 subdomain/,
  },
  {
    name: 'a CRD whose plural climbs out',
    args: GENERATE,
    run: pipedEdit('CustomResourceDefinition', (crd) => (crd.spec.names.plural = '../../x')),
    watchParent: true,
    error: /spec\.names\.plural "\.\.\/\.\.\/x" of CustomResourceDefinition .* is not a DNS-1123 label/,
  },
  {
    name: 'a CRD named other than <plural>.<group>',
    args: GENERATE,
    run: pipedEdit('CustomResourceDefinition', (crd) => (crd.metadata.name = 'other.cache.example.com')),
    error:
      /the name of CustomResourceDefinition "other\.cache\.example\.com" in stdin must be memcacheds\.cache\.example\.com \(<plural>\.<group>\)/,
  },
  {
    name: 'a bad name in a file of --input-dir',
    args: ['generate', 'bundle', '-q', '--input-dir', 'input'],
    prepare: put('input/all.yaml', stringify(configMap('../../../x'))),
    watchParent: true,
    error: /the name of ConfigMap "\.\.\/\.\.\/\.\.\/x" in input\/all\.yaml is invalid/,
  },
  {
    name: 'a projectName that climbs out (generate bundle)',
    args: GENERATE,
    prepare: editText('PROJECT', (text) => text.replace('projectName: memcached-operator', 'projectName: ../../../x')),
    run: () => ({ input: manifests }),
    watchParent: true,
    error:
      /the projectName in PROJECT, package name "\.\.\/\.\.\/\.\.\/x", is not a DNS-1123 label.*Fix projectName in PROJECT, or pass --package/,
  },
  {
    name: 'a projectName that climbs out (generate kustomize manifests)',
    args: ['generate', 'kustomize', 'manifests', '-q'],
    prepare: editText('PROJECT', (text) => text.replace('projectName: memcached-operator', 'projectName: ../../x')),
    watchParent: true,
    error: /the projectName in PROJECT, package name "\.\.\/\.\.\/x", is not a DNS-1123 label/,
  },
  {
    name: 'generate bundle --package ../../x',
    args: [...GENERATE, '--package', '../../x'],
    run: () => ({ input: manifests }),
    watchParent: true,
    error: /package name "\.\.\/\.\.\/x", is not a DNS-1123 label.*Pass a name such as --package memcached-operator/,
  },
  {
    name: 'generate bundle --package ..',
    args: [...GENERATE, '--package', '..'],
    run: () => ({ input: manifests }),
    error: /package name "\.\.", is not a DNS-1123 label/,
  },
  {
    name: 'generate bundle --package with a capital',
    args: [...GENERATE, '--package', 'Memcached'],
    run: () => ({ input: manifests }),
    error: /package name "Memcached", is not a DNS-1123 label/,
  },
  {
    name: 'generate kustomize manifests --package a/b',
    args: ['generate', 'kustomize', 'manifests', '-q', '--package', 'a/b'],
    error: /package name "a\/b", is not a DNS-1123 label/,
  },

  // ---- names that become paths in create api --from-crd ----
  {
    name: '--from-crd with a plural that climbs out',
    args: FROM_CRD,
    prepare: crdFile((crd) => {
      crd.spec.names.plural = '../../x';
      crd.metadata.name = '../../x.route.openshift.io';
    }),
    watchParent: true,
    error:
      /crafted\.crd\.yaml CRD 1 is not a usable CustomResourceDefinition: spec\.names\.plural "\.\.\/\.\.\/x" is not a DNS-1123 label/,
  },
  {
    name: '--from-crd with a plural holding a slash',
    args: FROM_CRD,
    prepare: crdFile((crd) => {
      crd.spec.names.plural = 'a/b';
      crd.metadata.name = 'a/b.route.openshift.io';
    }),
    error: /spec\.names\.plural "a\/b" is not a DNS-1123 label/,
  },
  {
    name: '--from-crd with an upper-case plural',
    args: FROM_CRD,
    prepare: crdFile((crd) => {
      crd.spec.names.plural = 'Memcacheds';
      crd.metadata.name = 'Memcacheds.route.openshift.io';
    }),
    error: /spec\.names\.plural "Memcacheds" is not a DNS-1123 label/,
  },
  {
    name: '--from-crd with a group that climbs out',
    args: FROM_CRD,
    prepare: crdFile((crd) => {
      crd.spec.group = '../../route.openshift.io';
      crd.metadata.name = 'memcacheds.../../route.openshift.io';
    }),
    watchParent: true,
    error: /spec\.group "\.\.\/\.\.\/route\.openshift\.io" is not a DNS-1123 subdomain/,
  },
  {
    name: '--from-crd with a name other than <plural>.<group>',
    args: FROM_CRD,
    prepare: crdFile((crd) => (crd.metadata.name = 'x.route.openshift.io')),
    error: /metadata\.name is "x\.route\.openshift\.io", not memcacheds\.route\.openshift\.io \(<plural>\.<group>\)/,
  },

  // ---- +kubebuilder:resource:path (the CRD's plural, and its file in config/crd/bases) ----
  {
    name: 'a resource marker path that climbs out',
    args: ['generate', 'manifests'],
    prepare: resourceMarker('../../../../x'),
    watchParent: true,
    problem:
      /^apis\/v1\/memcached_types\.ts:\d+: \+kubebuilder:resource:path=\.\.\/\.\.\/\.\.\/\.\.\/x: path must be a lowercase resource name \(a DNS-1123 label.*found "\.\.\/\.\.\/\.\.\/\.\.\/x"$/,
    error: /generate manifests found 1 problem in the API types/,
  },
  {
    name: 'a resource marker path with a slash',
    args: ['generate', 'manifests'],
    prepare: resourceMarker('a/b'),
    problem: /: path must be a lowercase resource name .*found "a\/b"$/,
    error: /generate manifests found 1 problem/,
  },
  {
    name: 'a resource marker path in capitals',
    args: ['generate', 'manifests'],
    prepare: resourceMarker('Memcacheds'),
    problem: /: path must be a lowercase resource name .*found "Memcacheds"$/,
    error: /generate manifests found 1 problem/,
  },
  {
    name: 'a resource marker path of ..',
    args: ['generate', 'manifests'],
    prepare: resourceMarker('..'),
    problem: /: path must be a lowercase resource name .*found "\.\."$/,
    error: /generate manifests found 1 problem/,
  },

  {
    name: 'a group so long that a file named after it has no room for its temporary copy',
    dir: () => copyProject(initProject),
    args: [
      'create',
      'api',
      '--group',
      ['a'.repeat(60), 'b'.repeat(60), 'c'.repeat(60), 'd'.repeat(50)].join('.'),
      '--version',
      'v1',
      '--kind',
      'Foo',
    ],
    error: /the file name a{40}… \(\d+ bytes\) is too long to write safely: file names hold at most 255 bytes/,
  },

  // ---- input that lacks what the bundle must hold ----
  {
    name: '--deploy-dir config/manager alone (no CRDs, no RBAC)',
    args: ['generate', 'bundle', '-q', '--deploy-dir', 'config/manager'],
    error:
      /the base CSV owns memcacheds\.cache\.example\.com, but the input \(config\/manager\) has no such CRD; the bundle was left as it was.*add --crds-dir config\/crd\/bases/,
  },
  {
    name: 'an empty --deploy-dir with a valid --crds-dir',
    args: ['generate', 'bundle', '-q', '--deploy-dir', 'empty', '--crds-dir', 'config/crd/bases'],
    prepare: (dir) => mkdirSync(join(dir, 'empty')),
    error: /the input \(empty, config\/crd\/bases\) has no Deployment, so the bundle's CSV would install no operator/,
  },
  {
    name: 'stdin without the Deployment',
    args: GENERATE,
    run: pipedWithout((object) => object?.kind === 'Deployment'),
    error: /the input on stdin has no Deployment/,
  },
  {
    name: 'stdin without the CRD',
    args: GENERATE,
    run: pipedWithout((object) => object?.kind === 'CustomResourceDefinition'),
    error: /the base CSV owns memcacheds\.cache\.example\.com, but the input on stdin has no such CRD/,
  },
  {
    name: 'stdin without any Role while the bundle grants permissions',
    args: GENERATE,
    run: pipedWithout((object) => object?.kind === 'Role' || object?.kind === 'ClusterRole'),
    error: /the input on stdin has no Role or ClusterRole, but the bundle's CSV grants the operator permissions now/,
  },
  {
    name: 'a record of generated manifests that is not a list',
    args: GENERATE,
    prepare: put(RECORD, 'manifests: all of them\n'),
    run: () => ({ input: manifests }),
    error:
      /bundle\/\.ts-operator-sdk-generated\.yaml is not the list of generated manifests that generate bundle keeps/,
  },
  {
    name: 'a record of generated manifests naming a path',
    args: GENERATE,
    prepare: put(RECORD, 'manifests:\n- ../../PROJECT\n'),
    run: () => ({ input: manifests }),
    watchParent: true,
    error: /bundle\/\.ts-operator-sdk-generated\.yaml is not the list of generated manifests/,
  },

  // ---- symbolic links out of the project ----
  {
    name: 'bundle/manifests is a link out of the project',
    args: NEXT_VERSION,
    prepare: linkOut('bundle/manifests'),
    run: () => ({ input: manifests }),
    watchParent: true,
    error:
      /^Error: refusing to write bundle\/manifests\/.*: bundle\/manifests is a symbolic link to .*, outside the project/,
  },
  {
    name: 'bundle is a link out of the project (not named as the output)',
    args: NEXT_VERSION,
    prepare: linkOut('bundle'),
    run: () => ({ input: manifests }),
    watchParent: true,
    error: /bundle is a symbolic link to .*outside-.*, outside the project/,
  },
  {
    name: 'PROJECT is a link to a file outside',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Foo'],
    prepare: fileLinkOut('PROJECT'),
    watchParent: true,
    error: /refusing to write PROJECT: PROJECT is a symbolic link to .*file, outside the project/,
  },
  {
    name: 'main.ts is a link to a file outside',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Foo'],
    prepare: fileLinkOut('main.ts'),
    watchParent: true,
    error: /refusing to write main\.ts: main\.ts is a symbolic link to .*file, outside the project/,
  },
  {
    name: 'config/crd is a link out of the project',
    args: ['generate', 'manifests'],
    prepare: (dir) => {
      linkOut('config/crd')(dir);
      rmSync(join(dir, 'config/crd/bases', 'cache.example.com_memcacheds.yaml'));
    },
    watchParent: true,
    error: /refusing to write config\/crd\/.*: config\/crd is a symbolic link to .*, outside the project/,
  },
  {
    name: 'config/rbac/role.yaml is a link outside',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Foo'],
    prepare: (dir) => {
      fileLinkOut('config/rbac/kustomization.yaml')(dir);
    },
    watchParent: true,
    error: /refusing to write config\/rbac\/kustomization\.yaml: config\/rbac\/kustomization\.yaml is a symbolic link/,
  },
  {
    name: 'config/manifests is a link out (the default output)',
    args: ['generate', 'kustomize', 'manifests', '-q'],
    prepare: (dir) => {
      linkOut('config/manifests')(dir);
      rmSync(join(dir, 'config/manifests/bases/memcached-operator.clusterserviceversion.yaml'));
    },
    watchParent: true,
    error: /config\/manifests is a symbolic link to .*, outside the project/,
  },

  // ---- files that are not UTF-8 ----
  {
    name: 'create api with a Latin-1 line in main.ts',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Foo'],
    prepare: latin1Ts('main.ts'),
    error:
      /main\.ts is not UTF-8 text \(byte 0xa9 on line 1 is not valid UTF-8\), and ts-operator-sdk edits it as text\. Convert it to UTF-8/,
  },
  {
    name: 'create api with a Latin-1 PROJECT',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Foo'],
    prepare: latin1('PROJECT'),
    error: /PROJECT is not UTF-8 text/,
  },
  {
    name: 'create api with a Latin-1 RBAC kustomization',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Foo'],
    prepare: latin1('config/rbac/kustomization.yaml'),
    error: /config\/rbac\/kustomization\.yaml is not UTF-8 text/,
  },
  {
    name: 'create webhook with a Latin-1 main.ts',
    args: ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--defaulting'],
    prepare: latin1Ts('main.ts'),
    error: /main\.ts is not UTF-8 text \(byte 0xa9 on line 1/,
  },
  {
    name: 'edit --multigroup with a Latin-1 controller',
    args: ['edit', '--multigroup'],
    prepare: latin1Ts('controllers/memcached_controller.ts'),
    error: /controllers\/memcached_controller\.ts is not UTF-8 text/,
  },
  {
    name: 'generate manifests with a Latin-1 CRD kustomization',
    args: ['generate', 'manifests'],
    prepare: (dir) => {
      latin1('config/crd/kustomization.yaml')(dir);
      rmSync(join(dir, CRD_FILE));
    },
    error: /config\/crd\/kustomization\.yaml is not UTF-8 text/,
  },
  {
    name: 'generate kustomize manifests with a Latin-1 base CSV',
    args: ['generate', 'kustomize', 'manifests', '-q'],
    prepare: latin1('config/manifests/bases/memcached-operator.clusterserviceversion.yaml'),
    error: /config\/manifests\/bases\/memcached-operator\.clusterserviceversion\.yaml is not UTF-8 text/,
  },
  {
    name: 'generate bundle with a Latin-1 bundle CSV',
    args: GENERATE,
    prepare: latin1('bundle/manifests/memcached-operator.clusterserviceversion.yaml'),
    run: () => ({ input: manifests }),
    error: /bundle\/manifests\/memcached-operator\.clusterserviceversion\.yaml is not UTF-8 text/,
  },
];

badInputSuite(
  'bad input (the file boundary): one line of error, exit 1, nothing written in or outside the project',
  CASES,
  () => copyProject(baseProject),
);

test('generate bundle removes only what it wrote: a README and a hand-added manifest stay, a dropped object goes, and it says so', () => {
  const dir = copyProject(baseProject);
  put('bundle/manifests/README.txt', 'notes for reviewers\n')(dir);
  put(
    'bundle/manifests/namespace.yaml',
    stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extra' } }),
  )(dir);
  const extra = `${manifests}\n---\n${stringify(configMap('extra-settings'))}`;
  runCliOk(GENERATE, dir, { input: extra });
  assert.ok(existsSync(join(dir, 'bundle/manifests/extra-settings_v1_configmap.yaml')));
  assert.match(readFileSync(join(dir, RECORD), 'utf8'), /- extra-settings_v1_configmap\.yaml/);
  const result = runCliOk(['generate', 'bundle', '--overwrite', '--version', '0.0.1'], dir, { input: manifests });
  assert.match(
    result.stderr,
    /^INFO Removed bundle\/manifests\/extra-settings_v1_configmap\.yaml: an earlier generate bundle wrote it, and the input no longer produces it$/m,
  );
  assert.equal(existsSync(join(dir, 'bundle/manifests/extra-settings_v1_configmap.yaml')), false);
  assert.equal(readFileSync(join(dir, 'bundle/manifests/README.txt'), 'utf8'), 'notes for reviewers\n');
  assert.ok(existsSync(join(dir, 'bundle/manifests/namespace.yaml')));
  assert.doesNotMatch(readFileSync(join(dir, RECORD), 'utf8'), /extra-settings|README|namespace\.yaml/);
});

test('--dry-run of generate bundle and generate kustomize manifests lists the changes and writes nothing', () => {
  const dir = copyProject(baseProject);
  rmSync(join(dir, 'config/manifests/bases'), { recursive: true });
  const before = hashTree(dir);
  const bundle = runCliOk([...NEXT_VERSION, '--dry-run'], dir, { input: manifests });
  assert.match(bundle.stdout, /^UPDATE bundle\/manifests\/memcached-operator\.clusterserviceversion\.yaml$/m);
  const kustomize = runCliOk(['generate', 'kustomize', 'manifests', '-q', '--dry-run'], dir);
  assert.equal(kustomize.stdout, 'CREATE config/manifests/bases/memcached-operator.clusterserviceversion.yaml\n');
  assert.equal(hashTree(dir), before);
});

test('a name that climbs out, through the real pipeline (kubectl kustomize config/manifests | generate bundle), is refused in one line', () => {
  const dir = copyProject(baseProject);
  editText('config/samples/cache_v1_memcached.yaml', (text) =>
    text.replace('name: memcached-sample', 'name: ../../../../x'),
  )(dir);
  const before = hashTree(dirname(dir));
  const piped = execFileSync('kubectl', ['kustomize', 'config/manifests'], { cwd: dir, encoding: 'utf8' });
  const result = runCli(NEXT_VERSION, dir, { input: piped });
  assert.equal(result.status, 1, result.stderr);
  assert.match(
    result.stderr,
    /^Error: the name of Memcached "\.\.\/\.\.\/\.\.\/\.\.\/x" in stdin is invalid: it must be a DNS-1123 subdomain[^\n]*\n$/,
  );
  assert.equal(hashTree(dirname(dir)), before);
});

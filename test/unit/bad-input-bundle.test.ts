/**
 * Bad input for the bundle side of the CLI (`generate bundle`, `generate
 * kustomize manifests`, `bundle validate`, `setup-envtest`, `generate
 * manifests`): broken stdin, broken CSV and Deployment fields, broken bundle
 * directories (FIFOs, symlink loops, unreadable files, a 22 MB ConfigMap,
 * alias bombs) and path flags. Every case keeps the bad-input contract (see
 * bad-input.ts); the cases that must succeed with absolute paths check the
 * result exists where expected and validates.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { parseAllDocuments, parse, stringify } from 'yaml';
import { asNobody, badInputSuite, FATAL_LOG_LINE, type BadInput } from './bad-input.js';
import { setupEnvtestAssets } from '../../src/runtime/envtest/setup-envtest.js';
import {
  bundleProject,
  CLI,
  copyProject,
  hashTree,
  REPO_ROOT,
  runCli,
  runCliOk,
  tempProjectDir,
  type RunOptions,
} from '../scaffold/harness.js';

const GENERATE = ['generate', 'bundle', '-q', '--overwrite', '--version', '0.0.1'];
const VALIDATE = ['bundle', 'validate', 'bundle'];
const BASE_CSV = 'config/manifests/bases/memcached-operator.clusterserviceversion.yaml';
const BUNDLE_CSV = 'bundle/manifests/memcached-operator.clusterserviceversion.yaml';

/** A scaffolded Memcached project with CRDs, a base CSV and a generated bundle. */
let baseProject: string;
/** `kubectl kustomize config/manifests` of the base project: what `make bundle` pipes in. */
let manifests: string;

before(() => {
  ({ dir: baseProject, manifests } = bundleProject(GENERATE));
});

// ---- inputs ----

/** Inputs outside every project copy, for absolute-path cases. */
const OUTSIDE = mkdtempSync(join(tmpdir(), 'bad-input-bundle-outside-'));
const OUTSIDE_BROKEN_BASE = join(OUTSIDE, 'broken-base');
mkdirSync(join(OUTSIDE_BROKEN_BASE, 'bases'), { recursive: true });
writeFileSync(join(OUTSIDE_BROKEN_BASE, 'bases', 'memcached-operator.clusterserviceversion.yaml'), 'kind: [\n');
const OUTSIDE_BUNDLE_WITHOUT_METADATA = join(OUTSIDE, 'no-metadata');
cpSync(
  join(REPO_ROOT, 'test', 'fixtures', 'bundles', 'memcached', 'manifests'),
  join(OUTSIDE_BUNDLE_WITHOUT_METADATA, 'manifests'),
  { recursive: true },
);

const piped = (text: () => string) => (): RunOptions => ({ input: text() });

/** The piped manifests with the first object of `kind` changed by `edit`. */
function editedManifests(kind: string, edit: (object: any) => void): string {
  const objects = parseAllDocuments(manifests).map((document) => document.toJS());
  const target = objects.find((object) => object?.kind === kind);
  assert.ok(target, `no ${kind} in the manifests`);
  edit(target);
  return objects.map((object) => `---\n${stringify(object)}`).join('');
}
const pipedEdit = (kind: string, edit: (object: any) => void) => piped(() => editedManifests(kind, edit));
/** The piped manifests after one more document. */
const pipedBefore = (extra: string) => piped(() => `${extra}\n---\n${manifests}`);
/** The piped manifests plus one more document. */
const pipedPlus = (extra: string) => piped(() => `${manifests}\n---\n${extra}`);

function editYamlFile(path: string, edit: (doc: any) => void): void {
  const doc = parse(readFileSync(path, 'utf8'));
  edit(doc);
  writeFileSync(path, stringify(doc));
}
const editBase =
  (edit: (csv: any) => void) =>
  (dir: string): void =>
    editYamlFile(join(dir, BASE_CSV), edit);

/** Nine levels of nine-fold aliases: ~387 million strings if expanded. */
function aliasBomb(kind = 'ConfigMap'): string {
  const lines = [`apiVersion: v1`, `kind: ${kind}`, `metadata:`, `  name: lol`, `x:`];
  lines.push(`  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`);
  for (let level = 1; level < 9; level++)
    lines.push(
      `  a${level}: &a${level} [${Array(9)
        .fill(`*a${level - 1}`)
        .join(',')}]`,
    );
  return `${lines.join('\n')}\n`;
}

/** A ConfigMap of `keys` entries, ~110 bytes each: 200,000 keys are ~22 MB. */
function hugeConfigMap(keys: number): string {
  const filler = 'x'.repeat(80);
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: huge', 'data:'];
  for (let i = 0; i < keys; i++) lines.push(`  key-${String(i).padStart(7, '0')}: value-${filler}-${i}`);
  return `${lines.join('\n')}\n`;
}

const mkfifo = (path: string): void => void execFileSync('mkfifo', [path]);
const symlinkLoop = (path: string): void => symlinkSync(path, path);

/** Runs the CLI as `nobody` (root ignores permissions); the case's `prepare` did the chmod. */
const runAsNobody = asNobody(() => undefined);

const crd = (spec: unknown): string =>
  stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    ...(spec === undefined ? {} : { spec }),
  });
const WIDGET_SPEC = {
  group: 'example.com',
  names: { kind: 'Widget', plural: 'widgets' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true }],
};
/** The piped manifests without the CSV, so `generate bundle` reads the base from --kustomize-dir. */
const withoutCsv = (): string =>
  parseAllDocuments(manifests)
    .map((document) => document.toJS())
    .filter((object) => object?.kind !== 'ClusterServiceVersion')
    .map((object) => `---\n${stringify(object)}`)
    .join('');
const containers = (pod: (spec: any) => void) =>
  pipedEdit('Deployment', (deployment) => pod(deployment.spec.template.spec));

/** A directory of manifests next to the project (outside it), filled by `fill`. */
function inputDir(dir: string, fill: (input: string) => void): void {
  const input = join(dir, 'input');
  mkdirSync(input);
  fill(input);
}
const INPUT = [...GENERATE, '--input-dir', 'input'];

// ---- generate bundle: stdin ----

const STDIN_CASES: BadInput[] = [
  {
    name: 'stdin: empty (a failed kustomize build) keeps the bundle',
    args: GENERATE,
    run: piped(() => ''),
    error:
      /stdin holds no Kubernetes objects.*the bundle was left as it was.*kustomize build config\/manifests\) succeeded/,
  },
  {
    name: 'stdin: only blank lines',
    args: GENERATE,
    run: piped(() => '\n\n  \n'),
    error: /stdin holds no Kubernetes objects/,
  },
  {
    name: 'stdin: only comments',
    args: GENERATE,
    run: piped(() => '# nothing\n# here\n'),
    error: /stdin holds no Kubernetes objects/,
  },
  {
    name: 'stdin: only document separators',
    args: GENERATE,
    run: piped(() => '---\n---\n---\n'),
    error: /stdin holds no Kubernetes objects/,
  },
  {
    name: 'stdin: a null document',
    args: GENERATE,
    run: piped(() => '~\n'),
    error: /stdin holds no Kubernetes objects/,
  },
  {
    name: 'stdin: a List with no items',
    args: GENERATE,
    run: piped(() => 'apiVersion: v1\nkind: List\n'),
    error: /a List in document 1 of stdin has no items list.*items:/,
  },
  {
    name: 'stdin: a List whose items is a number',
    args: GENERATE,
    run: piped(() => 'apiVersion: v1\nkind: List\nitems: 5\n'),
    error: /a List in document 1 of stdin has no items list/,
  },
  {
    name: 'stdin: a ConfigMapList whose items is a map',
    args: GENERATE,
    run: piped(() => 'apiVersion: v1\nkind: ConfigMapList\nitems: {a: 1}\n'),
    error: /a ConfigMapList in document 1 of stdin has no items list/,
  },
  {
    name: 'stdin: a List with empty items',
    args: GENERATE,
    run: piped(() => 'apiVersion: v1\nkind: List\nitems: []\n'),
    error: /stdin holds no Kubernetes objects/,
  },
  {
    name: 'stdin: a List item that is a number',
    args: GENERATE,
    run: piped(() => 'apiVersion: v1\nkind: List\nitems: [5]\n'),
    error: /document 1 of stdin is not a Kubernetes object/,
  },
  {
    name: 'stdin: a YAML alias bomb',
    args: GENERATE,
    run: piped(() => aliasBomb()),
    error: /stdin document 1 expands YAML aliases more than 100 times \(an alias bomb\)/,
  },
  {
    name: 'stdin: an alias bomb after valid manifests',
    args: GENERATE,
    run: pipedPlus(aliasBomb()),
    error: /stdin document \d+ expands YAML aliases/,
  },
  {
    name: 'stdin: invalid YAML',
    args: GENERATE,
    run: piped(() => 'apiVersion: v1\nkind: [unclosed\n'),
    error: /stdin is not valid YAML \(document 1/,
  },
  {
    name: 'stdin: a repeated key',
    args: GENERATE,
    run: piped(() => 'apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: a}\n'),
    error: /stdin is not valid YAML.*"kind" is repeated/,
  },
  {
    name: 'stdin: a plain string',
    args: GENERATE,
    run: piped(() => 'hello\n'),
    error: /document 1 of stdin is not a Kubernetes object/,
  },
  {
    name: 'stdin: a top-level list',
    args: GENERATE,
    run: piped(() => '- apiVersion: v1\n  kind: ConfigMap\n'),
    error: /document 1 of stdin is not a Kubernetes object/,
  },
  {
    name: 'stdin: an object without metadata.name',
    args: GENERATE,
    run: pipedPlus('apiVersion: v1\nkind: ConfigMap\n'),
    error: /a ConfigMap in stdin has no metadata\.name/,
  },
  {
    name: 'stdin: metadata that is a number',
    args: GENERATE,
    run: pipedPlus('apiVersion: v1\nkind: ConfigMap\nmetadata: 5\n'),
    error: /a ConfigMap in stdin has no metadata\.name/,
  },
  {
    name: 'stdin: one document over the size bound',
    args: GENERATE,
    run: piped(() => hugeConfigMap(100_000)),
    error: /document 1 of stdin is 1\d\.\d MiB, more than the 8\.0 MiB a manifest may have/,
  },
  {
    name: 'stdin: larger than the stream bound',
    args: GENERATE,
    run: piped(() => `# ${'x'.repeat(1000)}\n`.repeat(34_000)),
    error: /stdin is larger than 32\.0 MiB/,
  },
];

// ---- generate bundle: broken objects in the input ----

const OBJECT_CASES: BadInput[] = [
  {
    name: 'CRD: no spec (was undefined_undefined.yaml)',
    args: GENERATE,
    run: pipedPlus(crd(undefined)),
    error: /CustomResourceDefinition widgets\.example\.com has no spec.*make manifests/,
  },
  {
    name: 'CRD: spec is a string',
    args: GENERATE,
    run: pipedPlus(crd('x')),
    error: /spec of CustomResourceDefinition widgets\.example\.com is string "x", not a map/,
  },
  {
    name: 'CRD: no spec.group',
    args: GENERATE,
    run: pipedPlus(crd({ ...WIDGET_SPEC, group: undefined })),
    error: /has no spec\.group/,
  },
  {
    name: 'CRD: no spec.names',
    args: GENERATE,
    run: pipedPlus(crd({ ...WIDGET_SPEC, names: undefined })),
    error: /has no spec\.names\.plural/,
  },
  {
    name: 'CRD: no plural',
    args: GENERATE,
    run: pipedPlus(crd({ ...WIDGET_SPEC, names: { kind: 'Widget' } })),
    error: /has no spec\.names\.plural/,
  },
  {
    name: 'CRD: no kind',
    args: GENERATE,
    run: pipedPlus(crd({ ...WIDGET_SPEC, names: { plural: 'widgets' } })),
    error: /has no spec\.names\.kind/,
  },
  {
    name: 'CRD: versions is a number',
    args: GENERATE,
    run: pipedPlus(crd({ ...WIDGET_SPEC, versions: 5 })),
    error: /spec\.versions of CustomResourceDefinition widgets\.example\.com is number 5, not a list/,
  },
  {
    name: 'CRD: a version without a name',
    args: GENERATE,
    run: pipedPlus(crd({ ...WIDGET_SPEC, versions: [{ served: true }] })),
    error: /spec\.versions\[0\]\.name of .* is missing/,
  },
  {
    name: 'Deployment: containers: 7',
    args: GENERATE,
    run: containers((pod) => (pod.containers = 7)),
    error:
      /spec\.template\.spec\.containers of Deployment memcached-operator-controller-manager is number 7, not a list/,
  },
  {
    name: 'Deployment: a container that is a number',
    args: GENERATE,
    run: containers((pod) => (pod.containers = [5])),
    error: /spec\.template\.spec\.containers\[0\] of Deployment .* is number 5, not a map/,
  },
  {
    name: 'Deployment: initContainers is a string',
    args: GENERATE,
    run: containers((pod) => (pod.initContainers = 'x')),
    error: /spec\.template\.spec\.initContainers of .* is string "x", not a list/,
  },
  {
    name: 'Deployment: env is a number',
    args: GENERATE,
    run: containers((pod) => (pod.containers[0].env = 3)),
    error: /containers\[0\]\.env of .* is number 3, not a list/,
  },
  {
    name: 'Deployment: an env entry without a name',
    args: GENERATE,
    run: containers((pod) => (pod.containers[0].env = [{ value: 'x' }])),
    error: /containers\[0\]\.env\[0\]\.name of .* is missing/,
  },
  {
    name: 'Deployment: image is a number',
    args: GENERATE,
    run: containers((pod) => (pod.containers[0].image = 5)),
    error: /containers\[0\]\.image of .* is number 5, not a string/,
  },
  {
    name: 'Deployment: spec is a number',
    args: GENERATE,
    run: pipedEdit('Deployment', (d) => (d.spec = 5)),
    error: /spec of Deployment .* is number 5, not a map/,
  },
  {
    name: 'Deployment: template.spec is a list',
    args: GENERATE,
    run: pipedEdit('Deployment', (d) => (d.spec.template.spec = [])),
    error: /spec\.template\.spec of Deployment .* is a list, not a map/,
  },
  {
    name: 'ClusterRole: rules is a string',
    args: GENERATE,
    run: pipedEdit('ClusterRole', (r) => (r.rules = 'all')),
    error: /rules of ClusterRole .* is string "all", not a list/,
  },
  {
    name: 'RoleBinding: subjects is a map',
    args: GENERATE,
    run: pipedEdit('RoleBinding', (b) => (b.subjects = { kind: 'ServiceAccount' })),
    error: /subjects of RoleBinding .* is a map, not a list/,
  },
  {
    name: 'ClusterRoleBinding: roleRef is a number',
    args: GENERATE,
    run: pipedEdit('ClusterRoleBinding', (b) => (b.roleRef = 5)),
    error: /roleRef of ClusterRoleBinding .* is number 5, not a map/,
  },
  {
    name: 'Service: ports is a number',
    args: GENERATE,
    run: pipedEdit('Service', (s) => (s.spec.ports = 5)),
    error: /spec\.ports of Service .* is number 5, not a list/,
  },
  {
    name: 'webhook configuration: webhooks is a number',
    args: GENERATE,
    run: pipedPlus(
      'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: v}\nwebhooks: 5\n',
    ),
    error: /webhooks of ValidatingWebhookConfiguration v is not a list/,
  },
  {
    name: 'webhook configuration: clientConfig is a string',
    args: GENERATE,
    run: pipedPlus(
      'apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: m}\nwebhooks: [{name: m.example.com, clientConfig: x}]\n',
    ),
    error: /clientConfig of webhook m\.example\.com is string "x", not a map/,
  },
  {
    name: 'CSV in the input: spec.install: 5',
    args: GENERATE,
    run: pipedBefore(
      'apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: memcached-operator.v0.0.9}\nspec: {install: 5}\n',
    ),
    error: /spec\.install of the base CSV memcached-operator\.v0\.0\.9 in the input is number 5, not a map/,
  },
];

// ---- generate bundle: the base CSV ----

const BASE_CASES: BadInput[] = [
  {
    name: 'base CSV: spec.install: 5',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.install = 5)),
    run: piped(withoutCsv),
    error:
      /spec\.install of the base CSV config\/manifests\/bases\/memcached-operator\.clusterserviceversion\.yaml is number 5, not a map.*generate kustomize manifests/,
  },
  {
    name: 'base CSV: spec.install.spec is a string',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.install.spec = 'x')),
    run: piped(withoutCsv),
    error: /spec\.install\.spec of the base CSV .* is string "x", not a map/,
  },
  {
    name: 'base CSV: spec.install.strategy is a list',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.install.strategy = [])),
    run: piped(withoutCsv),
    error: /spec\.install\.strategy of the base CSV .* is a list, not a string/,
  },
  {
    name: 'base CSV: deployments is a number',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.install.spec = { deployments: 5 })),
    run: piped(withoutCsv),
    error: /spec\.install\.spec\.deployments of the base CSV .* is number 5, not a list/,
  },
  {
    name: 'base CSV: customresourcedefinitions is a list',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.customresourcedefinitions = [])),
    run: piped(withoutCsv),
    error: /spec\.customresourcedefinitions of the base CSV .* is a list, not a map/,
  },
  {
    name: 'base CSV: owned is a number',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.customresourcedefinitions = { owned: 5 })),
    run: piped(withoutCsv),
    error: /spec\.customresourcedefinitions\.owned of the base CSV .* is number 5, not a list/,
  },
  {
    name: 'base CSV: relatedImages is a number',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.relatedImages = 5)),
    run: piped(withoutCsv),
    error: /spec\.relatedImages of the base CSV .* is number 5, not a list/,
  },
  {
    name: 'base CSV: a related image without image',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec.relatedImages = [{ name: 'a' }])),
    run: piped(withoutCsv),
    error: /spec\.relatedImages\[0\]\.image of the base CSV .* is missing/,
  },
  {
    name: 'base CSV: annotations is a number',
    args: GENERATE,
    prepare: editBase((csv) => (csv.metadata.annotations = 5)),
    run: piped(withoutCsv),
    error: /metadata\.annotations of the base CSV .* is number 5, not a map/,
  },
  {
    name: 'base CSV: spec is a number',
    args: GENERATE,
    prepare: editBase((csv) => (csv.spec = 5)),
    run: piped(withoutCsv),
    error: /spec of the base CSV .* is number 5, not a map/,
  },
  {
    name: 'base CSV: an alias bomb',
    args: GENERATE,
    prepare: (dir) => writeFileSync(join(dir, BASE_CSV), aliasBomb('ClusterServiceVersion')),
    run: piped(withoutCsv),
    error: /config\/manifests\/bases\/memcached-operator\.clusterserviceversion\.yaml document 1 expands YAML aliases/,
  },
  {
    name: 'base CSV: a directory',
    args: GENERATE,
    prepare: (dir) => {
      rmSync(join(dir, BASE_CSV));
      mkdirSync(join(dir, BASE_CSV));
    },
    run: piped(withoutCsv),
    error: /clusterserviceversion\.yaml is a directory, not a manifest file/,
  },
  {
    name: 'base CSV: a FIFO',
    args: GENERATE,
    prepare: (dir) => {
      rmSync(join(dir, BASE_CSV));
      mkfifo(join(dir, BASE_CSV));
    },
    run: piped(withoutCsv),
    error: /clusterserviceversion\.yaml is a named pipe \(FIFO\), not a manifest file/,
  },
  {
    name: 'base CSV: a symlink loop',
    args: GENERATE,
    prepare: (dir) => {
      rmSync(join(dir, BASE_CSV));
      symlinkLoop(join(dir, BASE_CSV));
    },
    run: piped(withoutCsv),
    error: /clusterserviceversion\.yaml is a symlink loop/,
  },
  {
    name: 'base CSV: a dangling symlink',
    args: GENERATE,
    prepare: (dir) => {
      rmSync(join(dir, BASE_CSV));
      symlinkSync('gone.yaml', join(dir, BASE_CSV));
    },
    run: piped(withoutCsv),
    error: /clusterserviceversion\.yaml does not exist \(or is a broken symlink\)/,
  },
  {
    name: 'base CSV: unreadable',
    args: GENERATE,
    prepare: (dir) => chmodSync(join(dir, BASE_CSV), 0o000),
    run: () => ({ ...runAsNobody(), input: withoutCsv() }),
    error: /clusterserviceversion\.yaml is not readable \(permission denied\)/,
  },
  {
    name: 'base CSV: larger than a manifest file may be',
    args: GENERATE,
    prepare: (dir) => writeFileSync(join(dir, BASE_CSV), hugeConfigMap(90_000)),
    run: piped(withoutCsv),
    error: /clusterserviceversion\.yaml is \d+\.\d MiB, more than the 8\.0 MiB a manifest file may have/,
  },
];

// ---- generate bundle: input directories ----

const DIRECTORY_CASES: BadInput[] = [
  {
    name: '--input-dir: empty directory',
    args: INPUT,
    prepare: (dir) => inputDir(dir, () => undefined),
    error: /input holds no Kubernetes objects.*Pass the directory that holds the operator's manifests/,
  },
  {
    name: '--input-dir: only a kustomization.yaml',
    args: INPUT,
    prepare: (dir) =>
      inputDir(dir, (input) => writeFileSync(join(input, 'kustomization.yaml'), 'resources:\n- a.yaml\n')),
    error: /input holds no Kubernetes objects/,
  },
  {
    name: '--input-dir: a FIFO named x.yaml',
    args: INPUT,
    prepare: (dir) => inputDir(dir, (input) => mkfifo(join(input, 'x.yaml'))),
    error: /input\/x\.yaml is a named pipe \(FIFO\)/,
  },
  {
    name: '--input-dir: a symlink loop',
    args: INPUT,
    prepare: (dir) => inputDir(dir, (input) => symlinkLoop(join(input, 'loop.yaml'))),
    error: /input\/loop\.yaml is a symlink loop/,
  },
  {
    name: '--input-dir: a symlink to a directory named x.yaml',
    args: INPUT,
    prepare: (dir) => inputDir(dir, (input) => symlinkSync('..', join(input, 'x.yaml'))),
    error: /input\/x\.yaml is a directory, not a manifest file/,
  },
  {
    name: '--input-dir: an unreadable file',
    args: INPUT,
    prepare: (dir) =>
      inputDir(dir, (input) => {
        writeFileSync(join(input, 'a.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n');
        chmodSync(join(input, 'a.yaml'), 0);
      }),
    run: runAsNobody,
    error: /input\/a\.yaml is not readable \(permission denied\).*chmod u\+r/,
  },
  {
    name: '--input-dir: an alias bomb',
    args: INPUT,
    prepare: (dir) => inputDir(dir, (input) => writeFileSync(join(input, 'bomb.yaml'), aliasBomb())),
    error: /input\/bomb\.yaml document 1 expands YAML aliases/,
  },
  {
    name: '--input-dir: a file over the size bound',
    args: INPUT,
    prepare: (dir) => inputDir(dir, (input) => writeFileSync(join(input, 'huge.yaml'), hugeConfigMap(90_000))),
    error: /input\/huge\.yaml is \d+\.\d MiB, more than the 8\.0 MiB/,
  },
  {
    name: '--input-dir: absolute path that does not exist',
    args: [...GENERATE, '--input-dir', join(tmpdir(), 'no-such-manifests-dir')],
    error: /input directory \/.*no-such-manifests-dir does not exist/,
  },
  {
    name: '--deploy-dir: a file without apiVersion and kind',
    args: [...GENERATE, '--deploy-dir', 'input'],
    prepare: (dir) => inputDir(dir, (input) => writeFileSync(join(input, 'notes.yaml'), 'hello: world\n')),
    error: /document 1 of input\/notes\.yaml is not a Kubernetes object/,
  },
  {
    name: '--crds-dir: a CRD with no spec',
    args: [...GENERATE, '--deploy-dir', 'config/rbac', '--crds-dir', 'input'],
    prepare: (dir) => inputDir(dir, (input) => writeFileSync(join(input, 'crd.yaml'), crd(undefined))),
    error: /CustomResourceDefinition widgets\.example\.com has no spec/,
  },
];

// ---- bundle validate: broken bundle directories ----

const fatal = (entry: Omit<BadInput, 'line'>): BadInput => ({ ...entry, line: FATAL_LOG_LINE });
const MANIFEST = (dir: string, name: string): string => join(dir, 'bundle', 'manifests', name);
const ANNOTATIONS = (dir: string): string => join(dir, 'bundle', 'metadata', 'annotations.yaml');

const VALIDATE_CASES: BadInput[] = [
  fatal({
    name: 'bundle validate: a FIFO in manifests/',
    args: VALIDATE,
    prepare: (dir) => mkfifo(MANIFEST(dir, 'pipe.yaml')),
    error: /bundle\/manifests\/pipe\.yaml is a named pipe \(FIFO\), not a manifest file/,
  }),
  fatal({
    name: 'bundle validate: a symlink loop in manifests/',
    args: VALIDATE,
    prepare: (dir) => symlinkLoop(MANIFEST(dir, 'loop.yaml')),
    error: /bundle\/manifests\/loop\.yaml is a symlink loop/,
  }),
  fatal({
    name: 'bundle validate: a dangling symlink in manifests/',
    args: VALIDATE,
    prepare: (dir) => symlinkSync('gone.yaml', MANIFEST(dir, 'dangling.yaml')),
    error: /bundle\/manifests\/dangling\.yaml does not exist \(or is a broken symlink\)/,
  }),
  fatal({
    name: 'bundle validate: a symlink to a directory in manifests/',
    args: VALIDATE,
    prepare: (dir) => symlinkSync('..', MANIFEST(dir, 'up')),
    error: /bundle\/manifests\/up is a directory, not a manifest file/,
  }),
  fatal({
    name: 'bundle validate: an unreadable CSV',
    args: VALIDATE,
    prepare: (dir) => chmodSync(join(dir, BUNDLE_CSV), 0),
    run: runAsNobody,
    error: /bundle\/manifests\/memcached-operator\.clusterserviceversion\.yaml is not readable \(permission denied\)/,
  }),
  fatal({
    name: 'bundle validate: an unreadable manifests/ directory',
    args: VALIDATE,
    prepare: (dir) => chmodSync(join(dir, 'bundle', 'manifests'), 0),
    run: runAsNobody,
    error: /bundle\/manifests is not readable \(permission denied\)/,
  }),
  fatal({
    name: 'bundle validate: annotations.yaml is a directory',
    args: VALIDATE,
    prepare: (dir) => {
      rmSync(ANNOTATIONS(dir));
      mkdirSync(ANNOTATIONS(dir));
    },
    error: /bundle\/metadata\/annotations\.yaml is a directory, not a manifest file/,
  }),
  fatal({
    name: 'bundle validate: annotations.yaml is a FIFO',
    args: VALIDATE,
    prepare: (dir) => {
      rmSync(ANNOTATIONS(dir));
      mkfifo(ANNOTATIONS(dir));
    },
    error: /bundle\/metadata\/annotations\.yaml is a named pipe \(FIFO\)/,
  }),
  fatal({
    name: 'bundle validate: annotations.yaml is a symlink loop',
    args: VALIDATE,
    prepare: (dir) => {
      rmSync(ANNOTATIONS(dir));
      symlinkLoop(ANNOTATIONS(dir));
    },
    error: /bundle\/metadata\/annotations\.yaml is a symlink loop/,
  }),
  fatal({
    name: 'bundle validate: annotations.yaml is unreadable',
    args: VALIDATE,
    prepare: (dir) => chmodSync(ANNOTATIONS(dir), 0),
    run: runAsNobody,
    error: /bundle\/metadata\/annotations\.yaml is not readable/,
  }),
  fatal({
    name: 'bundle validate: a 22 MB ConfigMap with 200,000 keys is refused by size',
    args: VALIDATE,
    prepare: (dir) => writeFileSync(MANIFEST(dir, 'huge_v1_configmap.yaml'), hugeConfigMap(200_000)),
    error: /bundle\/manifests\/huge_v1_configmap\.yaml is 2\d\.\d MiB, more than the 8\.0 MiB a manifest file may have/,
  }),
  fatal({
    name: 'bundle validate: manifests adding up past the bound',
    args: VALIDATE,
    prepare: (dir) => {
      const big = hugeConfigMap(60_000);
      for (let i = 0; i < 6; i++) writeFileSync(MANIFEST(dir, `big${i}_v1_configmap.yaml`), big);
    },
    error: /the files in bundle\/manifests add up to more than 32\.0 MiB/,
  }),
  fatal({
    name: 'bundle validate: an alias bomb in a manifest',
    args: VALIDATE,
    prepare: (dir) => writeFileSync(MANIFEST(dir, 'bomb_v1_configmap.yaml'), aliasBomb()),
    error:
      /bundle\/manifests\/bomb_v1_configmap\.yaml document 1 expands YAML aliases more than 100 times \(an alias bomb\)/,
  }),
  fatal({
    name: 'bundle validate: an alias bomb in annotations.yaml',
    args: VALIDATE,
    prepare: (dir) => writeFileSync(ANNOTATIONS(dir), aliasBomb('Annotations')),
    error: /bundle\/metadata\/annotations\.yaml document 1 expands YAML aliases/,
  }),
  fatal({
    name: 'bundle validate: a repeated key in the CSV',
    args: VALIDATE,
    prepare: (dir) =>
      writeFileSync(
        join(dir, BUNDLE_CSV),
        `kind: ClusterServiceVersion\n${readFileSync(join(dir, BUNDLE_CSV), 'utf8')}`,
      ),
    error:
      /invalid YAML in bundle\/manifests\/memcached-operator\.clusterserviceversion\.yaml: map keys must be unique; \\"kind\\" is repeated/,
  }),
  fatal({
    name: 'bundle validate: an absolute path that does not exist',
    args: ['bundle', 'validate', join(tmpdir(), 'no-such-bundle-dir')],
    error: /bundle directory \/.*no-such-bundle-dir not found/,
  }),
  fatal({
    name: 'bundle validate: an absolute path with no metadata',
    args: ['bundle', 'validate', OUTSIDE_BUNDLE_WITHOUT_METADATA],
    error: /metadata not found in \/.*\/no-metadata.*expected \/.*\/no-metadata\/metadata\/annotations\.yaml/,
  }),
];

// ---- other commands: paths and nesting ----

/** 600 interfaces, each holding the next: deeper than any stack-safe recursion. */
function deepTypes(dir: string, inline: boolean): void {
  const file = join(dir, 'apis/v1/memcached_types.ts');
  const source = readFileSync(file, 'utf8');
  const chain = inline ? `  deep?: ${'{ next?: '.repeat(600)}string${' }'.repeat(600)};\n` : '  deep?: Level0;\n';
  const levels = inline
    ? ''
    : `${Array.from({ length: 600 }, (_, i) => `export interface Level${i} { next?: Level${i + 1}; }`).join('\n')}\nexport interface Level600 { leaf?: string; }\n`;
  writeFileSync(file, source.replace('  foo?: string;\n}\n', `  foo?: string;\n${chain}}\n${levels}`));
}

const OTHER_CASES: BadInput[] = [
  {
    name: 'generate manifests: 600-deep nested interfaces',
    args: ['generate', 'manifests'],
    prepare: (dir) => deepTypes(dir, false),
    error: /apis\/v1\/memcached_types\.ts:\d+: the API types nest more than 100 levels deep here.*RawExtension/,
  },
  {
    name: 'generate manifests: 600-deep inline object types',
    args: ['generate', 'manifests'],
    prepare: (dir) => deepTypes(dir, true),
    error: /the API types nest too deeply to read.*at most 100 levels/,
  },
  {
    name: 'generate kustomize manifests: an absolute --input-dir with an invalid base',
    args: ['generate', 'kustomize', 'manifests', '-q', '--input-dir', OUTSIDE_BROKEN_BASE],
    error: /\.\.\/.*bases\/memcached-operator\.clusterserviceversion\.yaml is not valid YAML/,
  },
  {
    name: 'setup-envtest: --bin-dir is a file',
    args: ['setup-envtest', '1.36.3', '--index-url', 'http://127.0.0.1:9/index.yaml', '--bin-dir', 'README.md'],
    error: /--bin-dir README\.md is not a directory/,
  },
  {
    name: 'setup-envtest: a version after the version',
    args: ['setup-envtest', '1.36.3', '1.35.0'],
    error: /unexpected argument "1\.35\.0" after version "1\.36\.3"/,
  },
  {
    name: 'setup-envtest: use with a bad version',
    args: ['setup-envtest', 'use', 'one'],
    error: /cannot read version "one"/,
  },
];

badInputSuite(
  'bad input (bundle side): one line of error, exit 1, directory byte-identical',
  [...STDIN_CASES, ...OBJECT_CASES, ...BASE_CASES, ...DIRECTORY_CASES, ...VALIDATE_CASES, ...OTHER_CASES],
  () => copyProject(baseProject),
);

test('the bundle-side bad-input table has at least 60 cases', () => {
  assert.ok(
    STDIN_CASES.length +
      OBJECT_CASES.length +
      BASE_CASES.length +
      DIRECTORY_CASES.length +
      VALIDATE_CASES.length +
      OTHER_CASES.length >=
      60,
  );
});

// ---- absolute and relative paths that must work ----

const SUCCESS_LINE = /All validation tests have completed successfully/;

describe('path flags and arguments accept absolute paths', () => {
  test('bundle validate /abs/bundle from another directory passes, as bundle validate ./bundle does', () => {
    const project = copyProject(baseProject);
    const elsewhere = tempProjectDir('elsewhere');
    const absolute = runCli(['bundle', 'validate', join(project, 'bundle')], elsewhere);
    assert.equal(absolute.status, 0, absolute.stderr);
    assert.match(absolute.stderr, SUCCESS_LINE);
    const relative = runCli(['bundle', 'validate', './bundle'], project);
    assert.equal(relative.status, 0, relative.stderr);
  });

  test('generate kustomize manifests --output-dir /abs/dir writes there, not under the project', () => {
    const project = copyProject(baseProject);
    const before = hashTree(project);
    const output = join(mkdtempSync(join(tmpdir(), 'kustomize-out-')), 'manifests');
    runCliOk(['generate', 'kustomize', 'manifests', '-q', '--output-dir', output], project);
    assert.ok(existsSync(join(output, 'bases', 'memcached-operator.clusterserviceversion.yaml')));
    assert.ok(existsSync(join(output, 'kustomization.yaml')));
    assert.equal(hashTree(project), before, 'nothing was written into the project');
  });

  test('generate kustomize manifests --input-dir /abs and --apis-dir /abs read from there', () => {
    const project = copyProject(baseProject);
    const input = mkdtempSync(join(tmpdir(), 'kustomize-in-'));
    cpSync(join(project, 'config', 'manifests'), input, { recursive: true });
    editYamlFile(
      join(input, 'bases', 'memcached-operator.clusterserviceversion.yaml'),
      (csv) => (csv.spec.displayName = 'From An Absolute Input'),
    );
    runCliOk(
      ['generate', 'kustomize', 'manifests', '-q', '--input-dir', input, '--apis-dir', join(project, 'apis')],
      project,
    );
    const base = parse(readFileSync(join(project, BASE_CSV), 'utf8'));
    assert.equal(base.spec.displayName, 'From An Absolute Input');
    assert.equal(
      base.spec.customresourcedefinitions.owned[0].kind,
      'Memcached',
      'owned CRDs come from the absolute --apis-dir',
    );
  });

  test('generate bundle --kustomize-dir /abs uses the base CSV there', () => {
    const project = copyProject(baseProject);
    const kustomizeDir = mkdtempSync(join(tmpdir(), 'kustomize-dir-'));
    cpSync(join(project, 'config', 'manifests'), kustomizeDir, { recursive: true });
    editYamlFile(
      join(kustomizeDir, 'bases', 'memcached-operator.clusterserviceversion.yaml'),
      (csv) => (csv.spec.displayName = 'Absolute Base'),
    );
    runCliOk([...GENERATE, '--kustomize-dir', kustomizeDir], project, { input: withoutCsv() });
    assert.equal(parse(readFileSync(join(project, BUNDLE_CSV), 'utf8')).spec.displayName, 'Absolute Base');
  });

  test('generate bundle --input-dir /abs --output-dir /abs writes a bundle there that validates', () => {
    const project = copyProject(baseProject);
    const input = mkdtempSync(join(tmpdir(), 'bundle-input-'));
    writeFileSync(join(input, 'all.yaml'), manifests);
    const output = join(mkdtempSync(join(tmpdir(), 'bundle-output-')), 'bundle');
    runCliOk([...GENERATE, '--input-dir', input, '--output-dir', output], project);
    assert.ok(existsSync(join(output, 'manifests', 'memcached-operator.clusterserviceversion.yaml')));
    assert.ok(existsSync(join(output, 'metadata', 'annotations.yaml')));
    assert.ok(!existsSync(join(project, output.slice(1))), 'the absolute path was not glued onto the project');
    const validate = runCli(['bundle', 'validate', output], project);
    assert.equal(validate.status, 0, validate.stdout + validate.stderr);
  });

  test('generate bundle --deploy-dir skips kustomization.yaml, as operator-sdk does', () => {
    const project = copyProject(baseProject);
    // config/rbac (with its kustomization.yaml) plus the manager's Deployment: a whole input, so the bundle may be replaced.
    cpSync(join(project, 'config', 'rbac'), join(project, 'deploy'), { recursive: true });
    cpSync(join(project, 'config', 'manager', 'manager.yaml'), join(project, 'deploy', 'manager.yaml'));
    runCliOk([...GENERATE, '--deploy-dir', 'deploy', '--crds-dir', 'config/crd/bases'], project);
    const files = readdirSync(join(project, 'bundle', 'manifests'));
    assert.ok(
      files.some((name) => /_clusterrole\.yaml$/.test(name)),
      files.join(', '),
    );
    assert.ok(!files.some((name) => /kustomization/i.test(name)), files.join(', '));
  });
});

// ---- no hangs: each bound, with a deadline in the test ----

const DEADLINE_MS = 20_000;

/** Runs the CLI with a deadline: a hang ends as a killed child (status null), which fails the assertions. */
function runWithDeadline(
  args: string[],
  cwd: string,
  input?: string,
): { status: number | null; stderr: string; ms: number } {
  const started = Date.now();
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: DEADLINE_MS,
  });
  return { status: result.status, stderr: result.stderr, ms: Date.now() - started };
}

describe('no hangs: bounded reads fail fast', () => {
  test('a FIFO in manifests/ fails instead of blocking bundle validate', () => {
    const project = copyProject(baseProject);
    mkfifo(MANIFEST(project, 'pipe.yaml'));
    const result = runWithDeadline(VALIDATE, project);
    assert.equal(result.status, 1, `killed after ${result.ms} ms: ${result.stderr}`);
    assert.match(result.stderr, /named pipe/);
  });

  test('a 22 MB ConfigMap with 200,000 keys is refused by size before parsing', () => {
    const project = copyProject(baseProject);
    const configMap = hugeConfigMap(200_000);
    assert.ok(configMap.length > 21_000_000);
    writeFileSync(MANIFEST(project, 'huge_v1_configmap.yaml'), configMap);
    const validate = runWithDeadline(VALIDATE, project);
    assert.equal(validate.status, 1, `killed after ${validate.ms} ms`);
    assert.match(validate.stderr, /MiB, more than the 8\.0 MiB/);
    const generate = runWithDeadline(GENERATE, copyProject(baseProject), configMap);
    assert.equal(generate.status, 1, `killed after ${generate.ms} ms`);
    assert.match(generate.stderr, /document 1 of stdin is 2\d\.\d MiB/);
  });

  test('an alias bomb fails fast, naming it', () => {
    const result = runWithDeadline(GENERATE, copyProject(baseProject), aliasBomb());
    assert.equal(result.status, 1, `killed after ${result.ms} ms`);
    assert.match(result.stderr, /an alias bomb/);
  });

  test('a map of 40,000 keys under the size bound parses in linear time (no quadratic duplicate-key check)', () => {
    // The yaml library's own duplicate-key check took ~40 s for this on the reference machine.
    const project = copyProject(baseProject);
    const result = runWithDeadline(GENERATE, project, `${manifests}\n---\n${hugeConfigMap(40_000)}`);
    assert.equal(result.status, 0, `status ${result.status} after ${result.ms} ms: ${result.stderr}`);
    assert.ok(existsSync(join(project, 'bundle', 'manifests', 'huge_v1_configmap.yaml')));
  });
});

// ---- no hangs: setup-envtest's network bounds ----

interface StallServer {
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback release server whose archive download stalls: `mode` body
 * sends headers and a few bytes, then nothing; `headers` never answers.
 */
async function startStallServer(mode: 'body' | 'headers'): Promise<StallServer> {
  const open = new Set<import('node:http').ServerResponse>();
  let url = '';
  const server = createServer((request, response) => {
    if (request.url === '/envtest-releases.yaml') {
      const name = 'envtest-v1.36.3-linux-amd64.tar.gz';
      response.end(
        stringify({
          releases: { 'v1.36.3': { [name]: { hash: 'a'.repeat(128), selfLink: `${url}/download/${name}` } } },
        }),
      );
      return;
    }
    open.add(response);
    if (mode === 'body') {
      response.writeHead(200, { 'content-type': 'application/gzip' });
      response.write(Buffer.alloc(1024));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () => {
      for (const response of open) response.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Closes the server shortly before the test's deadline, so that if the bound
 * under test is broken the download errors out (and the test fails on its
 * message) instead of keeping the test process alive forever.
 */
function closeBeforeDeadline(server: StallServer): NodeJS.Timeout {
  return setTimeout(() => void server.close(), DEADLINE_MS - 5_000);
}

const stagingLeft = (cacheDir: string): string[] =>
  existsSync(join(cacheDir, 'k8s'))
    ? readdirSync(join(cacheDir, 'k8s')).filter((name) => name.startsWith('.download-'))
    : [];

describe('no hangs: setup-envtest bounds every network read and cleans partial downloads', () => {
  const options = { platform: 'linux', arch: 'amd64', version: '1.36.3' };

  test(
    'a download that stalls mid-body fails after the idle timeout and leaves no .download-*',
    { timeout: DEADLINE_MS },
    async () => {
      const server = await startStallServer('body');
      const cacheDir = mkdtempSync(join(tmpdir(), 'envtest-stall-'));
      const backstop = closeBeforeDeadline(server);
      try {
        await assert.rejects(
          setupEnvtestAssets({
            ...options,
            indexUrl: `${server.url}/envtest-releases.yaml`,
            cacheDir,
            timeouts: { idleMs: 1_000 },
          }),
          /stalled \(no data for 1 s\)/,
        );
        assert.deepEqual(stagingLeft(cacheDir), []);
      } finally {
        clearTimeout(backstop);
        await server.close();
      }
    },
  );

  test(
    'a server that never sends headers fails after the headers timeout and leaves no .download-*',
    { timeout: DEADLINE_MS },
    async () => {
      const server = await startStallServer('headers');
      const cacheDir = mkdtempSync(join(tmpdir(), 'envtest-stall-'));
      const backstop = closeBeforeDeadline(server);
      try {
        await assert.rejects(
          setupEnvtestAssets({
            ...options,
            indexUrl: `${server.url}/envtest-releases.yaml`,
            cacheDir,
            timeouts: { headersMs: 1_000 },
          }),
          /cannot download .*Headers Timeout/i,
        );
        assert.deepEqual(stagingLeft(cacheDir), []);
      } finally {
        clearTimeout(backstop);
        await server.close();
      }
    },
  );

  test(
    'SIGTERM during a download removes its .download-*; one left by kill -9 is removed by the next run',
    { timeout: 3 * DEADLINE_MS },
    async () => {
      const server = await startStallServer('body');
      const cacheDir = mkdtempSync(join(tmpdir(), 'envtest-kill-'));
      const args = [
        CLI,
        'setup-envtest',
        '1.36.3',
        '--os',
        'linux',
        '--arch',
        'amd64',
        '--index-url',
        `${server.url}/envtest-releases.yaml`,
        '--bin-dir',
        cacheDir,
      ];
      /** Starts the CLI, waits for its staging directory, sends `signal`, and returns how it ended. */
      const interrupt = async (signal: NodeJS.Signals): Promise<NodeJS.Signals | null> => {
        const child = spawn(process.execPath, args, { stdio: 'ignore' });
        const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, how) => resolve(how)));
        for (const deadline = Date.now() + DEADLINE_MS; stagingLeft(cacheDir).length === 0;) {
          assert.ok(Date.now() < deadline, 'the download never started');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        child.kill(signal);
        return ended;
      };
      try {
        assert.equal(await interrupt('SIGTERM'), 'SIGTERM', 'the signal still ends the process');
        assert.deepEqual(stagingLeft(cacheDir), [], 'SIGTERM cleaned up');
        assert.equal(await interrupt('SIGKILL'), 'SIGKILL');
        const left = stagingLeft(cacheDir);
        assert.equal(left.length, 1, 'kill -9 cannot clean up');
        await assert.rejects(
          setupEnvtestAssets({
            ...options,
            indexUrl: `${server.url}/envtest-releases.yaml`,
            cacheDir,
            timeouts: { idleMs: 500 },
          }),
          /stalled/,
        );
        assert.deepEqual(stagingLeft(cacheDir), [], 'the next run removed the abandoned staging directory');
      } finally {
        await server.close();
      }
    },
  );
});

// ---- Makefile: run the real targets ----

/** Runs `make <args>` in `dir`; the CLI comes from this repository (the project has no node_modules). */
function make(dir: string, args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; output: string } {
  const result = spawnSync('make', ['--no-print-directory', `OPERATOR_SDK=${process.execPath} ${CLI}`, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe('Makefile targets', () => {
  test('set-image without kustomize quotes a numeric tag, so kubectl kustomize still builds', () => {
    const project = copyProject(baseProject);
    const result = make(project, ['set-image', 'KUSTOMIZE=', 'IMG=example.com/memcached-operator:1.0']);
    assert.equal(result.status, 0, result.output);
    const built = execFileSync('kubectl', ['kustomize', 'config/default'], { cwd: project, encoding: 'utf8' });
    assert.match(built, /image: example\.com\/memcached-operator:1\.0\n/);
    const digest = make(project, [
      'set-image',
      'KUSTOMIZE=',
      `IMG=example.com/memcached-operator@sha256:${'1'.repeat(64)}`,
    ]);
    assert.equal(digest.status, 0, digest.output);
    assert.match(
      execFileSync('kubectl', ['kustomize', 'config/default'], { cwd: project, encoding: 'utf8' }),
      /image: example\.com\/memcached-operator@sha256:1{64}\n/,
    );
  });

  test('bundle stops before generate bundle when the kustomize build fails, and the bundle is untouched', () => {
    const project = copyProject(baseProject);
    // A wrapper that records each CLI call, so the test sees whether generate bundle ran at all.
    const calls = join(project, '..', 'calls.log');
    const wrapper = join(project, '..', 'sdk.sh');
    writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> ${calls}\nexec ${process.execPath} ${CLI} "$@"\n`);
    chmodSync(wrapper, 0o755);
    const bundleBefore = hashTree(join(project, 'bundle'));
    const result = make(project, ['bundle', 'KUSTOMIZE=', `OPERATOR_SDK=${wrapper}`, 'KUSTOMIZE_BUILD=false']);
    assert.notEqual(result.status, 0, result.output);
    assert.doesNotMatch(readFileSync(calls, 'utf8'), /generate bundle/);
    assert.equal(hashTree(join(project, 'bundle')), bundleBefore);
  });

  test('bundle with a working build generates and validates', () => {
    const project = copyProject(baseProject);
    const result = make(project, ['bundle', 'KUSTOMIZE=', 'VERSION=0.0.2']);
    assert.equal(result.status, 0, result.output);
    assert.match(readFileSync(join(project, BUNDLE_CSV), 'utf8'), /name: memcached-operator\.v0\.0\.2/);
  });

  test('catalog-build runs twice in a row (catalog.Dockerfile from the first run is removed)', () => {
    const project = copyProject(baseProject);
    // A stand-in for opm (not installed here), with the behaviour that matters: `generate dockerfile` refuses an existing file.
    const opm = join(project, '..', 'opm');
    writeFileSync(
      opm,
      `#!/bin/sh
case "$1" in
  init) echo "schema: olm.package"; echo "name: $2" ;;
  render) echo '{ "name": "memcached-operator.v0.0.1" }' ;;
  validate) test -d "$2" ;;
  generate) if [ -e catalog.Dockerfile ]; then echo "catalog.Dockerfile already exists" >&2; exit 1; fi; echo "FROM scratch" > catalog.Dockerfile ;;
esac
`,
    );
    chmodSync(opm, 0o755);
    for (const run of [1, 2]) {
      const result = make(project, ['catalog-build', `OPM=${opm}`, 'CONTAINER_TOOL=true']);
      assert.equal(result.status, 0, `run ${run}: ${result.output}`);
    }
    assert.ok(existsSync(join(project, 'catalog.Dockerfile')));
  });
});

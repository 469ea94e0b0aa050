import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { logLine } from '../../src/validation/report.js';
import { CONVERSION, WEBHOOK } from './broken-bundles.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'bundles', 'memcached');
const CLI = join(REPO_ROOT, 'bin', 'ts-operator-sdk.js');
const CSV_FILE = 'manifests/memcached-operator.clusterserviceversion.yaml';
const CRD_FILE = 'manifests/cache.example.com_memcacheds.yaml';
const CSV = 'memcached-operator.v0.0.1';

const MIN_KUBE = `Warning: Value : (${CSV}) csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. Otherwise, it would mean that your operator project can be distributed and installed in any cluster version available, which is not necessarily the case for all projects.`;
const EMPTY_ICON = `Error: Value : (${CSV}) csv.Spec.Icon elements should contain both data and mediatype`;
const SUCCESS = 'All validation tests have completed successfully';

interface Output {
  type: 'error' | 'warning' | 'info';
  message: string;
}

const workRoot = mkdtempSync(join(tmpdir(), 'bundle-validate-'));
after(() => rmSync(workRoot, { recursive: true, force: true }));

let caseCounter = 0;
/** A fresh copy of the valid bundle at <case dir>/bundle; returns the case dir (the cwd for the CLI). */
function freshBundle(): string {
  const caseDir = join(workRoot, `case-${++caseCounter}`);
  cpSync(FIXTURE, join(caseDir, 'bundle'), { recursive: true });
  return caseDir;
}

function editYaml(caseDir: string, file: string, edit: (doc: any) => void): void {
  const path = join(caseDir, 'bundle', file);
  const doc = parse(readFileSync(path, 'utf8'));
  edit(doc);
  writeFileSync(path, stringify(doc));
}

const editCsv = (caseDir: string, edit: (csv: any) => void): void => editYaml(caseDir, CSV_FILE, edit);
const writeManifest = (caseDir: string, file: string, doc: unknown): void =>
  writeFileSync(join(caseDir, 'bundle', 'manifests', file), stringify(doc));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI with stdin closed, from the case dir, on ./bundle. */
function runCli(caseDir: string, args: string[]): Run {
  const result = spawnSync(process.execPath, [CLI, 'bundle', 'validate', ...args], {
    cwd: caseDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Parses non-TTY logrus lines, dropping the clock: `time="…" level=x msg="…"` → {type, message}. */
function logEntries(text: string): Output[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const match = /^time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" level=(\w+) msg=(".*"|\S+)$/.exec(line);
      assert.ok(match, `not a logrus text line: ${line}`);
      const message = match[2]!.startsWith('"') ? (JSON.parse(match[2]!) as string) : match[2]!;
      return { type: match[1] as Output['type'], message };
    });
}

const warn = (message: string): Output => ({ type: 'warning', message });
const err = (message: string): Output => ({ type: 'error', message });

/** Asserts the exact outputs in text and in json-alpha1, the exit code, and the stderr log. */
function expectOutputs(caseDir: string, args: string[], outputs: Output[]): void {
  const passed = !outputs.some((output) => output.type === 'error');
  const text = runCli(caseDir, ['bundle', ...args]);
  assert.deepEqual(logEntries(text.stdout), outputs, `text output of ${args.join(' ')}`);
  assert.equal(text.code, passed ? 0 : 1, text.stderr);
  assert.deepEqual(logEntries(text.stderr), passed ? [{ type: 'info', message: SUCCESS }] : []);

  const json = runCli(caseDir, ['bundle', ...args, '-o', 'json-alpha1']);
  assert.equal(json.code, passed ? 0 : 1, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), { passed, outputs: outputs.length === 0 ? null : outputs });
  assert.equal(
    json.stdout,
    `${JSON.stringify({ passed, outputs: outputs.length === 0 ? null : outputs }, null, 4)}\n`,
    'json-alpha1 uses 4-space indentation',
  );
  assert.deepEqual(logEntries(json.stderr), passed ? [{ type: 'info', message: SUCCESS }] : []);
}

/** Asserts a structural failure: one fatal line on stderr, nothing on stdout, exit 1, in both formats. */
function expectFatal(caseDir: string, args: string[], message: string): void {
  for (const format of ['text', 'json-alpha1']) {
    const run = runCli(caseDir, [...args, '-o', format]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.deepEqual(logEntries(run.stderr), [{ type: 'fatal', message }]);
  }
}

const withWebhook =
  (webhook: Record<string, unknown>) =>
  (csv: any): void => {
    csv.spec.webhookdefinitions = [webhook];
  };

describe('bundle validate: the valid Memcached bundle', () => {
  test('passes the default checks with exactly the minKubeVersion warning', () => {
    expectOutputs(freshBundle(), [], [warn(MIN_KUBE)]);
  });

  test('--select-optional suite=operatorframework reports what the api reports for a scaffolded CSV', () => {
    // The scaffolded CSV carries an icon entry with empty data and mediatype: operatorhubv2 errors on it.
    expectOutputs(
      freshBundle(),
      ['--select-optional', 'suite=operatorframework'],
      [warn(MIN_KUBE), warn(MIN_KUBE), err(EMPTY_ICON)],
    );
  });

  test('without an icon, operatorhubv2 warns instead, and the bundle passes with warnings only', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => delete csv.spec.icon);
    expectOutputs(
      dir,
      ['--select-optional', 'suite=operatorframework'],
      [
        // operatorhubv2 checks the icon before minKubeVersion, so its warnings come in that order.
        // No channel-naming warning: operator-sdk loads manifests/ only, so the api never sees the channels.
        warn(MIN_KUBE),
        warn(`Warning: Value : (${CSV}) csv.Spec.Icon not specified`),
        warn(MIN_KUBE),
      ],
    );
  });

  test('minKubeVersion set: no warnings at all, and outputs is null in json-alpha1', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.spec.minKubeVersion = '1.25.0'));
    expectOutputs(dir, [], []);
  });

  test('--list-optional prints the tab-aligned table', () => {
    const run = runCli(freshBundle(), ['--list-optional']);
    assert.equal(run.code, 0);
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME {2,}LABELS {2,}DESCRIPTION$/);
    const column = lines[0]!.indexOf('LABELS');
    for (const name of ['operatorhubv2', 'capabilities', 'categories', 'alpha-deprecated-apis', 'good-practices']) {
      const row = lines.find((line) => line.startsWith(`${name} `));
      assert.ok(row, `row for ${name}`);
      assert.equal(row.indexOf(`name=${name}`), column);
    }
    assert.equal(lines.filter((line) => line.trim() === 'suite=operatorframework').length, 5);
  });
});

describe('bundle validate: structural failures are one fatal line', () => {
  test('missing metadata directory', () => {
    const dir = freshBundle();
    rmSync(join(dir, 'bundle', 'metadata'), { recursive: true });
    expectFatal(
      dir,
      ['bundle'],
      'metadata not found in bundle: expected bundle/metadata/annotations.yaml; run `make bundle` (or `ts-operator-sdk generate bundle`) to create it',
    );
  });

  test('CSV that is not valid YAML names the file and the reason', () => {
    const dir = freshBundle();
    writeFileSync(
      join(dir, 'bundle', CSV_FILE),
      'apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: [unclosed\n',
    );
    const run = runCli(dir, ['bundle']);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    const [entry, ...rest] = logEntries(run.stderr);
    assert.deepEqual(rest, []);
    assert.equal(entry!.type, 'fatal');
    assert.match(
      entry!.message,
      /^invalid YAML in bundle\/manifests\/memcached-operator\.clusterserviceversion\.yaml: .+; fix the syntax and run again$/,
    );
  });

  test('a spec.version that is not semver fails to load', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.spec.version = 'one'));
    expectFatal(
      dir,
      ['bundle'],
      'invalid spec.version "one" in bundle/manifests/memcached-operator.clusterserviceversion.yaml: not a semantic version; use MAJOR.MINOR.PATCH, e.g. 0.0.1',
    );
  });

  test('an image reference is refused: only directories are supported', () => {
    expectFatal(
      freshBundle(),
      ['quay.io/example/memcached-operator-bundle:v0.0.1'],
      'bundle directory quay.io/example/memcached-operator-bundle:v0.0.1 not found: only bundle directories can be validated here, not image references; unpack the bundle image into a directory (or run `make bundle`) and pass that directory',
    );
  });

  test('a selector that matches no validator is a usage error', () => {
    const run = runCli(freshBundle(), ['bundle', '--select-optional', 'name=nope']);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr,
      'Error: selector "name=nope" does not match any validator labels. Run `ts-operator-sdk bundle validate --list-optional` to see the validators and their labels.\n',
    );
  });

  test('an unknown output format is a usage error', () => {
    const run = runCli(freshBundle(), ['bundle', '-o', 'yaml']);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, 'Error: invalid value for output flag: yaml. Use one of: text, json-alpha1.\n');
  });
});

describe('bundle validate: default checks on broken bundles', () => {
  test('missing annotation', () => {
    const dir = freshBundle();
    editYaml(
      dir,
      'metadata/annotations.yaml',
      (doc) => delete doc.annotations['operators.operatorframework.io.bundle.package.v1'],
    );
    expectOutputs(
      dir,
      [],
      [
        err(
          'error validating format in bundle: Bundle validation errors: Missing annotation "operators.operatorframework.io.bundle.package.v1"',
        ),
        warn(MIN_KUBE),
      ],
    );
  });

  test('wrong mediatype', () => {
    const dir = freshBundle();
    editYaml(
      dir,
      'metadata/annotations.yaml',
      (doc) => (doc.annotations['operators.operatorframework.io.bundle.mediatype.v1'] = 'plain'),
    );
    expectOutputs(
      dir,
      [],
      [
        err(
          'error validating format in bundle: Bundle validation errors: Expecting annotation "operators.operatorframework.io.bundle.mediatype.v1" to have value "registry+v1" instead of "plain"',
        ),
        warn(MIN_KUBE),
      ],
    );
  });

  test('empty channels', () => {
    const dir = freshBundle();
    editYaml(
      dir,
      'metadata/annotations.yaml',
      (doc) => (doc.annotations['operators.operatorframework.io.bundle.channels.v1'] = ''),
    );
    expectOutputs(
      dir,
      [],
      [
        err(
          'error validating format in bundle: Bundle validation errors: Expecting annotation "operators.operatorframework.io.bundle.channels.v1" to have non-empty value',
        ),
        warn(MIN_KUBE),
      ],
    );
  });

  test('owned CRD missing from the bundle', () => {
    const dir = freshBundle();
    rmSync(join(dir, 'bundle', CRD_FILE));
    expectOutputs(
      dir,
      [],
      [
        err(
          `Error: Value cache.example.com/v1, Kind=Memcached: owned CRD "cache.example.com/v1, Kind=Memcached" not found in bundle "${CSV}"`,
        ),
        warn(MIN_KUBE),
      ],
    );
  });

  test('CRD in the bundle that the CSV does not own (an error, as in operator-framework/api: OLM would refuse it)', () => {
    const dir = freshBundle();
    const crd = parse(readFileSync(join(dir, 'bundle', CRD_FILE), 'utf8'));
    crd.metadata.name = 'memcachedbackups.cache.example.com';
    crd.spec.names = {
      kind: 'MemcachedBackup',
      listKind: 'MemcachedBackupList',
      plural: 'memcachedbackups',
      singular: 'memcachedbackup',
    };
    writeManifest(dir, 'cache.example.com_memcachedbackups.yaml', crd);
    expectOutputs(
      dir,
      [],
      [
        err(
          `Error: Value cache.example.com/v1, Kind=MemcachedBackup: CRD "cache.example.com/v1, Kind=MemcachedBackup" is present in bundle "${CSV}" but not defined in CSV`,
        ),
        warn(MIN_KUBE),
      ],
    );
  });

  test('a two-version CRD whose CSV owns only v1 passes: the other version belongs to the owned CRD', () => {
    const dir = freshBundle();
    editYaml(dir, CRD_FILE, (crd) => crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2', storage: false }));
    expectOutputs(dir, [], [warn(MIN_KUBE)]);
  });

  test('the same CRD version twice', () => {
    const dir = freshBundle();
    cpSync(join(dir, 'bundle', CRD_FILE), join(dir, 'bundle', 'manifests', 'cache.example.com_memcacheds_copy.yaml'));
    expectOutputs(
      dir,
      [],
      [
        err(
          `Error: Value cache.example.com/v1, Kind=Memcached: duplicate CRD "cache.example.com/v1, Kind=Memcached" in bundle "${CSV}"`,
        ),
        warn(MIN_KUBE),
      ],
    );
  });

  test('a bundle over the 1 MiB compressed limit', () => {
    const dir = freshBundle();
    // Random bytes do not compress, so ~1.2 MB of them stays over the limit after gzip.
    writeManifest(dir, 'blob_v1_secret.yaml', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'blob' },
      data: { blob: randomBytes(1_200_000).toString('base64') },
    });
    const run = runCli(dir, ['bundle', '-o', 'json-alpha1']);
    assert.equal(run.code, 1);
    const report = JSON.parse(run.stdout) as { passed: boolean; outputs: Output[] };
    assert.equal(report.passed, false);
    assert.equal(report.outputs.length, 2);
    assert.match(
      report.outputs[0]!.message,
      new RegExp(
        `^Error: Value ${CSV.replace(/\./g, '\\.')}: maximum bundle compressed size with gzip size exceeded: size=~1\\.\\d MB , max=1\\.0 MB\\. Bundle uncompressed size is 1\\.\\d MB$`,
      ),
    );
    assert.deepEqual(report.outputs[1], warn(MIN_KUBE));
  });

  test('ServiceAccount manifest clashing with the deployment SA', () => {
    const dir = freshBundle();
    writeManifest(dir, 'memcached-operator-controller-manager_v1_serviceaccount.yaml', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'memcached-operator-controller-manager' },
    });
    expectOutputs(
      dir,
      [],
      [
        err(
          'Error: Value memcached-operator-controller-manager: invalid service account found in bundle. This service account memcached-operator-controller-manager in your bundle is not valid, because a service account with the same name was already specified in your CSV. If this was unintentional, please remove the service account manifest from your bundle. If it was intentional to specify a separate service account, please rename the SA in either the bundle manifest or the CSV.',
        ),
        warn(MIN_KUBE),
      ],
    );
  });

  test('invalid alm-examples JSON (Go reports the offset after the bad byte)', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      (csv) =>
        (csv.metadata.annotations['alm-examples'] = '[{"apiVersion":"cache.example.com/v1","kind":"Memcached",}]'),
    );
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        err(
          'Error: Value invalid character at 58\n [{"apiVersion":"cache.example.com/v1","kind":"Memcached",}<--(see the invalid character): invalid example',
        ),
      ],
    );
  });

  test('example for an API the CSV does not provide', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      (csv) =>
        (csv.metadata.annotations['alm-examples'] =
          '[{"apiVersion":"cache.example.com/v1","kind":"Memcache","metadata":{"name":"x"}}]'),
    );
    expectOutputs(
      dir,
      [],
      [
        warn('Warning: Value cache.example.com/v1, Kind=Memcached: provided API should have an example annotation'),
        warn(MIN_KUBE),
        err('Error: Value cache.example.com/v1, Kind=Memcache: example must have a provided API'),
      ],
    );
  });

  test('no installModes', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => delete csv.spec.installModes);
    expectOutputs(dir, [], [warn(MIN_KUBE), err(`Error: Value : (${CSV}) install modes not found`)]);
  });

  test('duplicate installModes pass, as in api v0.34 (its duplicate check never fires)', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      (csv) =>
        (csv.spec.installModes = [
          { supported: false, type: 'AllNamespaces' },
          { supported: true, type: 'AllNamespaces' },
        ]),
    );
    expectOutputs(dir, [], [warn(MIN_KUBE)]);
  });

  test('no installMode supported', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      (csv) => (csv.spec.installModes = csv.spec.installModes.map((mode: any) => ({ ...mode, supported: false }))),
    );
    expectOutputs(dir, [], [warn(MIN_KUBE), err(`Error: Value : (${CSV}) none of InstallModeTypes are supported`)]);
  });

  test('minKubeVersion that is not strict semver', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.spec.minKubeVersion = '1.22'));
    expectOutputs(dir, [], [err(`Error: Value : (${CSV}) csv.Spec.MinKubeVersion has an invalid value: 1.22`)]);
  });

  test('missing displayName', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => delete csv.spec.displayName);
    expectOutputs(dir, [], [warn(MIN_KUBE), err('Error: Field Spec.DisplayName, Value field: required field missing')]);
  });

  test('missing install strategy', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => delete csv.spec.install.strategy);
    expectOutputs(
      dir,
      [],
      [warn(MIN_KUBE), err('Error: Field Spec.InstallStrategy.StrategyName, Value field: required field missing')],
    );
  });

  test('CSV name that is not a DNS-1123 subdomain', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.metadata.name = 'Memcached-Operator.v0.0.1'));
    const name = 'Memcached-Operator.v0.0.1';
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE.replace(CSV, name)),
        err(
          `Error: Value : (${name}) metadata.name "${name}" is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        ),
      ],
    );
  });

  test('annotation with the wrong case', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.metadata.annotations['olm.skiprange'] = '<0.0.1'));
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        err(
          `Error: Value ${CSV}: provided annotation olm.skiprange uses wrong case and should be olm.skipRange instead`,
        ),
      ],
    );
  });

  test('namespace on a bundle object', () => {
    const dir = freshBundle();
    writeManifest(dir, 'extra-sa_v1_serviceaccount.yaml', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'extra-sa', namespace: 'memcached-operator-system' },
    });
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        err(
          'Error: Value extra-sa: error validating object: metadata.namespace: Forbidden: not allowed on this type. &{map[apiVersion:v1 kind:ServiceAccount metadata:map[name:extra-sa namespace:memcached-operator-system]]}',
        ),
      ],
    );
  });

  test('unsupported kind', () => {
    const dir = freshBundle();
    writeManifest(dir, 'extra_apps_v1_deployment.yaml', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'extra' },
      spec: {},
    });
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        err('Error: Value apps/v1, Kind=Deployment: unsupported media type registry+v1 for bundle object'),
      ],
    );
  });

  test('two storage versions', () => {
    const dir = freshBundle();
    editYaml(dir, CRD_FILE, (crd) => crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2' }));
    editCsv(dir, (csv) =>
      csv.spec.customresourcedefinitions.owned.push({
        description: 'Memcached v2',
        displayName: 'Memcached',
        kind: 'Memcached',
        name: 'memcacheds.cache.example.com',
        version: 'v2',
      }),
    );
    const crd = parse(readFileSync(join(dir, 'bundle', CRD_FILE), 'utf8'));
    const versions = JSON.stringify(crd.spec.versions);
    expectOutputs(
      dir,
      [],
      [
        warn('Warning: Value cache.example.com/v2, Kind=Memcached: provided API should have an example annotation'),
        warn(MIN_KUBE),
        err(
          `Error: Field spec.versions, Value ${versions}: spec.versions: Invalid value: ${versions}: must have exactly one version marked as storage version`,
        ),
      ],
    );
  });
});

describe("bundle validate: OLM's webhook rules", () => {
  test('deploymentName that matches no deployment', () => {
    const dir = freshBundle();
    editCsv(dir, withWebhook({ ...WEBHOOK, deploymentName: 'webhook-server' }));
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value : (${CSV}) webhookdefinition "vmemcached.kb.io" has deploymentName "webhook-server", which matches no deployment in spec.install.spec.deployments (OLM fails this CSV at install time)`,
        ),
      ],
    );
  });

  test('unsupported type', () => {
    const dir = freshBundle();
    editCsv(dir, withWebhook({ ...WEBHOOK, type: 'ValidatingWebhook' }));
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value : (${CSV}) webhookdefinition "vmemcached.kb.io" has type "ValidatingWebhook": the type must be one of ValidatingAdmissionWebhook, MutatingAdmissionWebhook, ConversionWebhook (OLM fails this CSV at install time)`,
        ),
      ],
    );
  });

  test('a valid conversion webhook passes', () => {
    const dir = freshBundle();
    editCsv(dir, withWebhook(CONVERSION));
    expectOutputs(dir, [], [warn(MIN_KUBE)]);
  });

  test('conversion webhook with OwnNamespace supported', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => {
      withWebhook(CONVERSION)(csv);
      csv.spec.installModes[0].supported = true;
    });
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        err(`Error: Value : (${CSV}) only AllNamespaces InstallModeType is supported when conversionCRDs is present`),
      ],
    );
  });

  test('conversion webhook targeting a CRD the CSV does not own', () => {
    const dir = freshBundle();
    editCsv(dir, withWebhook({ ...CONVERSION, conversionCRDs: ['memcachedbackups.cache.example.com'] }));
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value : (${CSV}) webhookdefinition "cmemcacheds.kb.io" converts CRD "memcachedbackups.cache.example.com", which is not in spec.customresourcedefinitions.owned: a conversion webhook may only target CRDs the CSV owns (OLM fails this CSV at install time)`,
        ),
      ],
    );
  });

  test('conversion webhook on a CRD with preserveUnknownFields true', () => {
    const dir = freshBundle();
    editCsv(dir, withWebhook(CONVERSION));
    editYaml(dir, CRD_FILE, (crd) => (crd.spec.preserveUnknownFields = true));
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value : (${CSV}) webhookdefinition "cmemcacheds.kb.io" converts CRD "memcacheds.cache.example.com", whose spec.preserveUnknownFields is true: set it to false (or remove it) in the CRD (OLM fails this CSV at install time)`,
        ),
        err(
          'Error: Field spec.preserveUnknownFields, Value true: spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
        ),
      ],
    );
  });

  test('admission rule matching all groups', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      withWebhook({
        ...WEBHOOK,
        rules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['*'] }],
      }),
    );
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value : (${CSV}) webhookdefinition "vmemcached.kb.io" has a rule matching all API groups ("*"): OLM rejects admission webhooks that intercept every group; list the groups the webhook needs (OLM fails this CSV at install time)`,
        ),
      ],
    );
  });

  test('admission rule matching operators.coreos.com', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      withWebhook({
        ...WEBHOOK,
        type: 'MutatingAdmissionWebhook',
        rules: [
          {
            apiGroups: ['operators.coreos.com'],
            apiVersions: ['v1alpha1'],
            operations: ['CREATE'],
            resources: ['subscriptions'],
          },
        ],
      }),
    );
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value : (${CSV}) webhookdefinition "vmemcached.kb.io" has a rule matching the operators.coreos.com group: OLM rejects admission webhooks that intercept OLM's own resources (OLM fails this CSV at install time)`,
        ),
      ],
    );
  });

  test('admission rule matching webhook configurations', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      withWebhook({
        ...WEBHOOK,
        rules: [
          {
            apiGroups: ['admissionregistration.k8s.io'],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['validatingwebhookconfigurations'],
          },
        ],
      }),
    );
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value : (${CSV}) webhookdefinition "vmemcached.kb.io" has a rule matching ValidatingWebhookConfigurations or MutatingWebhookConfigurations (admissionregistration.k8s.io): OLM rejects admission webhooks that intercept webhook configurations (OLM fails this CSV at install time)`,
        ),
      ],
    );
  });
});

describe('bundle validate: optional validators', () => {
  test('capabilities: a value that is not a level', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.metadata.annotations.capabilities = 'Installs and stuff'));
    expectOutputs(
      dir,
      ['--select-optional', 'name=capabilities'],
      [
        warn(MIN_KUBE),
        err(
          `Error: Value : (${CSV}) csv.Metadata.Annotations.Capabilities "Installs and stuff" is not a valid capabilities level`,
        ),
      ],
    );
  });

  test('categories: an unknown category', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.metadata.annotations.categories = 'Database,Magic'));
    expectOutputs(
      dir,
      ['--select-optional', 'name=categories'],
      [
        warn(MIN_KUBE),
        err(
          `Error: Value : (${CSV}) csv.Metadata.Annotations["categories"] value "Magic" is not in the set of standard categories`,
        ),
      ],
    );
  });

  test('operatorhubv2: provider name missing and a bad maintainer email', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => {
      csv.spec.provider = { url: 'https://your.domain' };
      csv.spec.maintainers = [{ email: 'invalidemail', name: 'Maintainer Name' }];
      csv.spec.icon = [{ base64data: 'iVBORw0KGgo=', mediatype: 'image/png' }];
    });
    expectOutputs(
      dir,
      ['--select-optional', 'name=operatorhubv2'],
      [
        warn(MIN_KUBE),
        warn(MIN_KUBE),
        err(`Error: Value : (${CSV}) csv.Spec.Provider.Name not specified`),
        err(
          `Error: Value : (${CSV}) csv.Spec.Maintainers email invalidemail is invalid: mail: missing '@' or angle-addr`,
        ),
      ],
    );
  });

  test('alpha-deprecated-apis: a PodDisruptionBudget policy/v1beta1 is an error for k8s-version=1.25', () => {
    const dir = freshBundle();
    writeManifest(dir, 'memcached-pdb_policy_v1beta1_poddisruptionbudget.yaml', {
      apiVersion: 'policy/v1beta1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'memcached-pdb' },
      spec: { minAvailable: 1 },
    });
    const removed = `Value ${CSV}: this bundle is using APIs which were deprecated and removed in v1.25. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-25. Migrate the API(s) for PodDisruptionBudget: (["memcached-pdb"])`;
    expectOutputs(
      dir,
      ['--select-optional', 'name=alpha-deprecated-apis', '--optional-values', 'k8s-version=1.25'],
      [warn(MIN_KUBE), err(`Error: ${removed}`)],
    );
    // Before 1.25 the API still exists, so it is only a warning.
    expectOutputs(
      dir,
      ['--select-optional', 'name=alpha-deprecated-apis', '--optional-values=k8s-version=1.24'],
      [warn(MIN_KUBE), warn(`Warning: ${removed}`)],
    );
  });

  test('good-practices: missing resource requests', () => {
    const dir = freshBundle();
    editCsv(
      dir,
      (csv) => delete csv.spec.install.spec.deployments[0].spec.template.spec.containers[0].resources.requests,
    );
    expectOutputs(
      dir,
      ['--select-optional', 'name=good-practices'],
      [
        warn(MIN_KUBE),
        warn(
          `Warning: Value ${CSV}: unable to find the resource requests for the container: (manager). It is recommended to ensure the resource request for CPU and Memory. Be aware that for some clusters configurations it is required to specify requests or limits for those values. Otherwise, the system or quota may reject Pod creation. More info: https://master.sdk.operatorframework.io/docs/best-practices/managing-resources/`,
        ),
      ],
    );
  });

  test('empty deployments: accepted by the default checks, as operator-framework/api does', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => (csv.spec.install.spec.deployments = []));
    expectOutputs(dir, [], [warn(MIN_KUBE)]);
  });

  test('deployments absent: a required field', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => delete csv.spec.install.spec.deployments);
    expectOutputs(
      dir,
      [],
      [
        warn(MIN_KUBE),
        err('Error: Field Spec.InstallStrategy.StrategySpec.DeploymentSpecs, Value field: required field missing'),
      ],
    );
  });

  for (const [name, fix] of [
    [
      'operatorhub',
      'select suite=operatorframework instead: operatorhubv2, capabilities and categories run its checks',
    ],
    ['community', 'run github.com/redhat-openshift-ecosystem/ocp-olm-catalog-validator on the bundle'],
    ['multiarch', 'run `operator-sdk bundle validate <bundle-dir> --select-optional name=multiarch`'],
  ] as const) {
    test(`selecting the ${name} validator says in one line that it is not supported, and what to run instead`, () => {
      const run = runCli(freshBundle(), ['bundle', '--select-optional', `name=${name}`]);
      assert.equal(run.code, 1);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr.split('\n').filter((line) => line !== '').length, 1, run.stderr);
      assert.ok(
        run.stderr.startsWith(
          `Error: the ${name} validator (selected by "name=${name}") is not supported by ts-operator-sdk: `,
        ),
        run.stderr,
      );
      // The fix is the second sentence of the one line, so it starts upper-case.
      assert.ok(run.stderr.includes(`${fix.charAt(0).toUpperCase()}${fix.slice(1)}.`), run.stderr);
    });
  }

  test('good-practices: no deployments list', () => {
    const dir = freshBundle();
    editCsv(dir, (csv) => delete csv.spec.install.spec.deployments);
    expectOutputs(
      dir,
      ['--select-optional', 'name=good-practices'],
      [
        warn(MIN_KUBE),
        err('Error: Field Spec.InstallStrategy.StrategySpec.DeploymentSpecs, Value field: required field missing'),
        err(`Error: Value ${CSV}: unable to find a deployment to install in the CSV`),
      ],
    );
  });
});

describe('bundle validate: text format on a terminal', () => {
  test('uses the short logrus form with seconds since start', () => {
    const startedAt = new Date('2026-01-01T00:00:00Z');
    assert.equal(
      logLine('warning', 'Warning: x', { tty: true, now: new Date('2026-01-01T00:00:03Z'), startedAt }),
      'WARN[0003] Warning: x',
    );
    assert.equal(
      logLine('error', 'Error: y', { tty: false, now: startedAt, startedAt }),
      'time="2026-01-01T00:00:00Z" level=error msg="Error: y"',
    );
  });
});

/**
 * TypeScript types from CRDs we do not own: OpenShift's Route and
 * cert-manager's Certificate (trimmed copies of the real CRDs), and a
 * made-up Widget with what those two lack. The output is compared with
 * golden files (laid out as prettier 3 lays them out with the generated
 * project's single quotes, at the default printWidth 80 and at 120; checked
 * with `prettier --single-quote [--print-width 120] --check` when they were
 * written, as this suite cannot download prettier), then type-checked under the generated project's
 * strict tsconfig plus noUncheckedIndexedAccess, exactOptionalPropertyTypes
 * and noUnusedLocals, next to code that uses the types the way a controller
 * does and `@ts-expect-error` lines for what the schema forbids.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import {
  chooseVersion,
  crdModel,
  readCrdFile,
  type CrdModel,
} from '../../src/generators/crd-to-typescript/crd-source.js';
import { crdToTypeScript } from '../../src/generators/crd-to-typescript/schema-to-typescript.js';
import { REPO_ROOT, tempProjectDir } from '../scaffold/harness.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'external');
const fixture = (name: string): string => join(FIXTURES, name);
const read = (name: string): CrdModel => readCrdFile(fixture(`${name}.crd.yaml`), `${name}.crd.yaml`);
const generate = (name: string): string => {
  const crd = read(name);
  return crdToTypeScript(crd, chooseVersion(crd));
};

for (const name of ['route', 'certificate', 'widgets']) {
  test(`${name}: the generated module matches its golden file byte for byte, twice`, () => {
    const golden = readFileSync(fixture(`${name}.ts.golden`), 'utf8');
    assert.equal(generate(name), golden);
    assert.equal(generate(name), golden, 'a second run gives the same text');
  });
}

test("route at the project's printWidth 120 (the generated .prettierrc.json): prettier's layout at that width", () => {
  const crd = read('route');
  const wide = crdToTypeScript(crd, chooseVersion(crd), { printWidth: 120 });
  assert.equal(wide, readFileSync(fixture('route.w120.ts.golden'), 'utf8'));
  assert.match(
    wide,
    /^import \{ defineKind, type IntOrString, type Time, type int32 \} from 'ts-operator-sdk';$/m,
    'prettier joins an import that fits',
  );
});

test('Route: required fields, enums as unions, int32 and IntOrString, nested objects and arrays are typed from the schema', () => {
  const route = generate('route');
  assert.match(
    route,
    /^export interface Route extends KubernetesObject \{\n(?:.*\n)*?  spec: RouteSpec;\n(?:.*\n)*?  status\?: RouteStatus;\n\}$/m,
  );
  assert.match(route, /^  to: RouteSpecTo;$/m, 'spec.to is required');
  assert.match(route, /^  termination: 'edge' \| 'reencrypt' \| 'passthrough';$/m);
  assert.match(route, /^  weight\?: int32;$/m);
  assert.match(route, /^  targetPort: IntOrString;$/m);
  assert.match(route, /^  alternateBackends\?: RouteSpecAlternateBackends\[\];$/m);
  assert.match(route, /^  lastTransitionTime\?: Time;$/m);
  assert.doesNotMatch(route, /^  (apiVersion|kind|metadata)\?:/m, 'KubernetesObject already declares them');
  assert.match(
    route,
    /^export const Route = defineKind<Route>\(\{\n  group: 'route\.openshift\.io',\n  version: 'v1',\n  kind: 'Route',\n  plural: 'routes',\n  namespaced: true,\n\}\);$/m,
  );
});

test('Certificate: maps, int64 for integers without a format, a long enum list as a named union, multi-line descriptions as TSDoc', () => {
  const certificate = generate('certificate');
  assert.match(certificate, /^  annotations\?: Record<string, string>;$/m);
  assert.match(certificate, /^  size\?: int64;$/m);
  assert.match(certificate, /^  observedGeneration\?: int64;$/m);
  assert.match(certificate, /^  revisionHistoryLimit\?: int32;$/m);
  assert.match(certificate, /^  usages\?: CertificateSpecUsagesItem\[\];$/m);
  assert.match(certificate, /^export type CertificateSpecUsagesItem =\n  \| 'signing'\n/m);
  assert.match(certificate, /^  status: 'True' \| 'False' \| 'Unknown';$/m);
  assert.match(
    certificate,
    /^\/\*\*\n \* A Certificate resource should be created to ensure an up to date and signed\n \* X\.509 certificate is stored in the Kubernetes Secret resource named in `spec\.secretName`\.\n \*\n \* The stored/m,
  );
  assert.match(certificate, /^  issuerRef: CertificateSpecIssuerRef;$/m);
  assert.match(certificate, /^  secretName: string;$/m);
});

test('Widget: the storage version by default, cluster scope, preserve-unknown-fields, nullable, quoted keys, escaped comment ends, unique names', () => {
  const widget = generate('widgets');
  assert.match(widget, /version v1beta1\. DO NOT EDIT\./);
  assert.match(widget, /^  namespaced: false,$/m);
  assert.match(widget, /^  config\?: Record<string, unknown>;$/m);
  assert.match(widget, /^  \[key: string\]: unknown;$/m);
  assert.match(widget, /^  nickname\?: string \| null;$/m);
  assert.match(widget, /^  empty\?: Record<string, never>;$/m);
  assert.match(widget, /^  'spec-tls'\?: WidgetSpecSpecTls;$/m);
  assert.match(widget, /^  specTls\?: WidgetSpecSpecTls2;$/m);
  assert.match(widget, /^  quoting\?: "it's" \| 'back\\\\slash';$/m);
  assert.match(widget, /^  matrix\?: int64\[\]\[\];$/m);
  assert.match(widget, /^  ports\?: Record<string, WidgetSpecPorts>;$/m);
  assert.doesNotMatch(widget, /early \*\/ if/, 'a description cannot end the comment');
  // Too long for one line: a map breaks at its type arguments, an array of a named type stays long (as prettier prints them).
  assert.match(
    widget,
    /^  backendsByRegionAndZoneForFailover\?: Record<\n    string,\n    WidgetSpecBackendsByRegionAndZoneForFailover\n  >;$/m,
  );
  assert.match(
    widget,
    /^  listenersOrderedByPriorityDescending\?: WidgetSpecListenersOrderedByPriorityDescending\[\];$/m,
  );
  assert.doesNotMatch(
    widget,
    /^export type WidgetSpecListenersOrderedByPriorityDescending2 /m,
    'no alias that only renames an array',
  );
});

test('version choice: the storage version, else the first served one that is not deprecated; an asked-for version must exist and be served', () => {
  const widgets = read('widgets');
  assert.equal(chooseVersion(widgets).name, 'v1beta1');
  assert.equal(chooseVersion(widgets, 'v1alpha1').name, 'v1alpha1');
  const noStorageServed: CrdModel = { ...widgets, versions: widgets.versions.map((v) => ({ ...v, storage: false })) };
  assert.equal(chooseVersion(noStorageServed).name, 'v1beta1', 'v1alpha1 is deprecated');
  assert.throws(
    () => chooseVersion(widgets, 'v2'),
    (error: unknown) =>
      error instanceof UsageError && /has no version v2; it has v1alpha1, v1beta1, v1/.test(error.message),
  );
  assert.throws(
    () => chooseVersion(widgets, 'v1'),
    (error: unknown) =>
      error instanceof UsageError &&
      /version v1 of the CRD widgets\.example\.com is not served.*Pass a served version: v1alpha1, v1beta1/.test(
        error.message,
      ),
  );
});

test('bad CRD input: each is one UsageError naming the problem', () => {
  const dir = tempProjectDir('bad-crds');
  const cases: [string, string, RegExp][] = [
    ['not-a-crd.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n', /holds no CustomResourceDefinition/],
    ['broken.yaml', 'kind: [\n', /document 1 is not valid YAML/],
    [
      'v1beta1.yaml',
      'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nspec: {}\n',
      /apiVersion is "apiextensions\.k8s\.io\/v1beta1", not apiextensions\.k8s\.io\/v1/,
    ],
    [
      'no-schema.yaml',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: a.b\n  names: {kind: A, plural: as}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n',
      /version v1 has no schema\.openAPIV3Schema/,
    ],
    [
      'two.yaml',
      `${readFileSync(fixture('route.crd.yaml'), 'utf8')}\n---\n${readFileSync(fixture('widgets.crd.yaml'), 'utf8')}`,
      /holds 2 CRDs \(Route, Widget\).*Pass --kind/,
    ],
  ];
  for (const [name, text, expected] of cases) {
    writeFileSync(join(dir, name), text);
    assert.throws(
      () => readCrdFile(join(dir, name), name),
      (error: unknown) => error instanceof UsageError && expected.test(error.message) && !error.message.includes('\n'),
      name,
    );
  }
  assert.throws(() => readCrdFile(join(dir, 'missing.yaml'), 'missing.yaml'), /missing\.yaml does not exist/);
  assert.equal(readCrdFile(join(dir, 'two.yaml'), 'two.yaml', 'Widget').kind, 'Widget');
  assert.throws(
    () =>
      crdModel(
        {
          apiVersion: 'apiextensions.k8s.io/v1',
          spec: { group: 'a.b', names: { kind: 'A', plural: 'as' }, scope: 'Somewhere', versions: [] },
        },
        'x',
      ),
    /spec\.scope is "Somewhere"/,
  );
});

/** Code a controller would write against the generated types, plus what the schema forbids. */
const USAGE = `import { Route, type RouteSpec } from './route_types.js';
import { Certificate, type CertificateSpecUsagesItem } from './certificate_types.js';
import { Widget } from './widgets_types.js';

export const spec: RouteSpec = { to: { kind: 'Service', name: 'web' }, port: { targetPort: 'http' }, tls: { termination: 'edge' } };
export const route: Route = { apiVersion: Route.apiVersion, kind: Route.kind, metadata: { name: 'web' }, spec };
export const firstHost: string | undefined = route.status?.ingress?.[0]?.host;
export const usage: CertificateSpecUsagesItem = 'server auth';
export const certificate: Certificate = { spec: { issuerRef: { name: 'ca' }, secretName: 'tls', usages: [usage], secretTemplate: { labels: { a: 'b' } } } };
export const widget: Widget = { spec: { extras: { mode: 'x', anything: 1 }, nickname: null, ports: { http: { port: 80, protocol: 'TCP' } } } };
export const label: string | undefined = certificate.spec.secretTemplate?.labels?.['a'];
export const kinds = [Route.plural, Certificate.group, Widget.namespaced];

// @ts-expect-error spec.to is required
export const noTarget: RouteSpec = { host: 'a.example.com' };
// @ts-expect-error termination is an enum
export const badTermination: RouteSpec = { to: { kind: 'Service', name: 'web' }, tls: { termination: 'sometimes' } };
// @ts-expect-error weight is an int32, not a string
export const badWeight: RouteSpec = { to: { kind: 'Service', name: 'web', weight: '5' } };
// @ts-expect-error usages are a closed list
export const badUsage: CertificateSpecUsagesItem = 'anything';
// @ts-expect-error secretName is required
export const noSecret: Certificate = { spec: { issuerRef: { name: 'ca' } } };
`;

test('the generated modules compile under strict mode with zero errors, and reject what the schema forbids', () => {
  const dir = tempProjectDir('external-types');
  const apis = join(dir, 'apis', 'external');
  mkdirSync(apis, { recursive: true });
  for (const name of ['route', 'certificate', 'widgets']) writeFileSync(join(apis, `${name}_types.ts`), generate(name));
  writeFileSync(join(apis, 'usage.ts'), USAGE);
  const generatedTsconfig = JSON.parse(
    readFileSync(join(REPO_ROOT, 'templates', 'init', 'tsconfig.json.hbs'), 'utf8'),
  ) as { compilerOptions: Record<string, unknown> };
  const compilerOptions = {
    ...generatedTsconfig.compilerOptions,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noUnusedLocals: true,
    noPropertyAccessFromIndexSignature: true,
    noEmit: true,
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['apis/**/*.ts'] }));
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'ts-operator-sdk'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@kubernetes'), join(dir, 'node_modules', '@kubernetes'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
  const result = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--pretty', 'false'],
    { encoding: 'utf8', timeout: 300_000 },
  );
  assert.equal(`${result.stdout}${result.stderr}`, '', 'tsc reported errors');
  assert.equal(result.status, 0);
});

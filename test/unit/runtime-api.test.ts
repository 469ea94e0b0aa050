/**
 * The runtime's published API is deliberate: every export of the package's
 * entry points is documented, every option of an `*Options` interface is
 * documented (with its default), and no `@internal` member reaches the
 * published declarations. Read from the emitted .d.ts files, as a user's
 * editor sees them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'node:test';
import type * as TypeScript from 'typescript';
import type { ClusterObject } from '../../src/cluster/session.js';
import type { ManifestObject } from '../../src/generators/bundle/input-objects.js';
import type { UnstructuredObject } from '../../src/runtime/api/unstructured.js';

const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
const runtimeDir = fileURLToPath(new URL('../../src/runtime/', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types?: string; default?: string }>;
};
/** The package's entry points, as package.json `exports` publishes them: `ts-operator-sdk` and its subpaths. */
const subpaths = Object.entries(packageJson.exports).filter(([subpath]) => subpath !== './package.json');
const entryPoints = subpaths.map(([subpath, target]) => ({
  label: subpath === '.' ? 'ts-operator-sdk' : `ts-operator-sdk/${subpath.slice(2)}`,
  declarations: join(repoRoot, typeof target === 'string' ? target : (target.types ?? '')),
  module: join(repoRoot, typeof target === 'string' ? target : (target.default ?? '')),
}));
/** Every runtime export, from whichever entry point publishes it. */
async function allExports(): Promise<Record<string, unknown>> {
  const modules = await Promise.all(
    entryPoints.map(async (entry) => (await import(pathToFileURL(entry.module).href)) as object),
  );
  return Object.assign({}, ...modules) as Record<string, unknown>;
}

function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarationFiles(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Exports (and options) without a doc comment, as `entry: Name` or `entry: Options.member`. */
function undocumentedExports(): string[] {
  const program = ts.createProgram(
    entryPoints.map((entry) => entry.declarations),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const missing: string[] = [];
  const documented = (symbol: TypeScript.Symbol): boolean =>
    symbol.getDocumentationComment(checker).some((part) => part.text.trim() !== '');
  for (const { label, declarations } of entryPoints) {
    const source = program.getSourceFile(declarations);
    assert.ok(source, `${declarations} was emitted`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    assert.ok(moduleSymbol, `${declarations} is a module`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!documented(symbol)) missing.push(`${label}: ${exported.name}`);
      if (symbol.flags & ts.SymbolFlags.Interface && exported.name.endsWith('Options')) {
        for (const member of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
          if (!documented(member)) missing.push(`${label}: ${exported.name}.${member.name}`);
        }
      }
    }
  }
  return missing;
}

test('every export of the runtime entry points, and every option, has a doc comment', () => {
  assert.deepEqual(undocumentedExports(), []);
});

test('no @internal member is published in the runtime declarations', () => {
  const leaks = declarationFiles(runtimeDir).filter((file) => readFileSync(file, 'utf8').includes('@internal'));
  assert.deepEqual(leaks, []);
});

test('helpers that are not part of the API are not exported from any entry point', async () => {
  const api = await allExports();
  for (const name of [
    'resourcePath',
    'apiErrorFrom',
    'admits',
    'admissionHandler',
    'defaultingAdmit',
    'validatingAdmit',
    'ConversionRegistry',
    'CertWatcher',
    'MetricsAuthFilter',
    'createJsonPatch',
    'selfSignedCertificate',
    'serveHttps',
  ]) {
    assert.equal(name in api, false, `${name} is exported`);
  }
});

test('the webhook API the scaffolded code uses is exported from the entry points', async () => {
  const api = await allExports();
  for (const name of [
    'newWebhookManagedBy',
    'WebhookBuilder',
    'WebhookServer',
    'AdmissionDeniedError',
    'mutatingWebhookPath',
    'validatingWebhookPath',
    'CONVERSION_PATH',
    'DEFAULT_WEBHOOK_PORT',
    'DEFAULT_WEBHOOK_CERT_DIR',
  ]) {
    assert.equal(name in api, true, `${name} is not exported`);
  }
  const { mutatingWebhookPath, validatingWebhookPath } = await import('../../src/runtime/builder/index.js');
  assert.equal(
    mutatingWebhookPath({ group: 'cache.example.com', version: 'v1', kind: 'Memcached' }),
    '/mutate-cache-example-com-v1-memcached',
  );
  assert.equal(
    validatingWebhookPath({ group: 'cache.example.com', version: 'v1', kind: 'Memcached' }),
    '/validate-cache-example-com-v1-memcached',
  );
  // controller-runtime's names for the core group (its part left empty) and a mixed-case kind.
  assert.equal(mutatingWebhookPath({ group: '', version: 'v1', kind: 'Pod' }), '/mutate--v1-pod');
  assert.equal(
    validatingWebhookPath({ group: 'gateway.networking.k8s.io', version: 'v1beta1', kind: 'HTTPRoute' }),
    '/validate-gateway-networking-k8s-io-v1beta1-httproute',
  );
  const envtest = await import('../../src/runtime/envtest/index.js');
  assert.equal(typeof envtest.Environment.prototype.webhookServerOptions, 'function');
});

test('the root entry point keeps at most 30 names; every runtime package with a public surface has its subpath', async () => {
  const root = entryPoints.find((entry) => entry.label === 'ts-operator-sdk');
  assert.ok(root);
  const program = ts.createProgram([root.declarations], { module: ts.ModuleKind.NodeNext, noEmit: true });
  const source = program.getSourceFile(root.declarations);
  assert.ok(source);
  const moduleSymbol = program.getTypeChecker().getSymbolAtLocation(source);
  assert.ok(moduleSymbol);
  const names = program.getTypeChecker().getExportsOfModule(moduleSymbol);
  assert.ok(names.length <= 30, `the root exports ${names.length} names: move the rarer ones to their subpath`);
  const packages = readdirSync(runtimeDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && readdirSync(join(runtimeDir, entry.name)).includes('index.js'))
    .map((entry) => `ts-operator-sdk/${entry.name}`);
  assert.deepEqual(
    packages.filter((label) => !entryPoints.some((entry) => entry.label === label)),
    [],
    'a package with an index.ts is published in package.json exports',
  );
  for (const entry of entryPoints) {
    assert.ok(entry.declarations.endsWith('.d.ts'), `${entry.label} has types`);
    await import(pathToFileURL(entry.module).href);
  }
});

test("no entry point's declarations but ts-operator-sdk/client-node reach client-node's own files", () => {
  // client-node's root reaches all of its API (~850 declaration files): every project's type check would parse
  // them. The runtime names its models through copies (scripts/model-declarations.js) instead.
  const lean = entryPoints.filter((entry) => entry.label !== 'ts-operator-sdk/client-node');
  const program = ts.createProgram(
    lean.map((entry) => entry.declarations),
    { module: ts.ModuleKind.NodeNext, noEmit: true, skipLibCheck: true, types: [] },
  );
  const reached = program
    .getSourceFiles()
    .map((file) => file.fileName)
    .filter((file) => file.includes('/@kubernetes/client-node/'));
  assert.deepEqual(reached.slice(0, 3), [], `${reached.length} client-node files reached`);
  const models = program.getSourceFiles().filter((file) => file.fileName.includes('/dist/src/runtime/api/models/'));
  assert.ok(
    models.some((file) => file.fileName.endsWith('/V1Deployment.d.ts')),
    'the Deployment kind keeps its model type',
  );
});

/** The CLI's views of the untyped object narrow the runtime's one type; this fails to compile if one stops being it. */
const cliViewsNarrowUnstructured: [ClusterObject, ManifestObject] extends [UnstructuredObject, UnstructuredObject]
  ? true
  : false = true;

test("the untyped object has one home, published as ts-operator-sdk/api's UnstructuredObject", () => {
  assert.equal(cliViewsNarrowUnstructured, true);
  const api = entryPoints.find((entry) => entry.label === 'ts-operator-sdk/api');
  assert.ok(api);
  const program = ts.createProgram([api.declarations], { module: ts.ModuleKind.NodeNext, noEmit: true });
  const source = program.getSourceFile(api.declarations);
  assert.ok(source);
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(source);
  assert.ok(moduleSymbol);
  assert.ok(
    checker.getExportsOfModule(moduleSymbol).some((symbol) => symbol.name === 'UnstructuredObject'),
    'ts-operator-sdk/api does not export UnstructuredObject',
  );
});

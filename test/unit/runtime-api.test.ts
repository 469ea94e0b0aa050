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
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type * as TypeScript from 'typescript';

const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
const runtimeDir = fileURLToPath(new URL('../../src/runtime/', import.meta.url));
const entryPoints = [join(runtimeDir, 'index.d.ts'), join(runtimeDir, 'envtest', 'index.d.ts')];

function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarationFiles(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Exports (and options) without a doc comment, as `entry: Name` or `entry: Options.member`. */
function undocumentedExports(): string[] {
  const program = ts.createProgram(entryPoints, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const missing: string[] = [];
  const documented = (symbol: TypeScript.Symbol): boolean =>
    symbol.getDocumentationComment(checker).some((part) => part.text.trim() !== '');
  for (const entry of entryPoints) {
    const source = program.getSourceFile(entry);
    assert.ok(source, `${entry} was emitted`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    assert.ok(moduleSymbol, `${entry} is a module`);
    const label = entry.includes('envtest') ? 'ts-operator-sdk/envtest' : 'ts-operator-sdk';
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

test('helpers that are not part of the API are not exported from the entry point', async () => {
  const api = await import('../../src/runtime/index.js');
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
  const api = await import('../../src/runtime/index.js');
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
  assert.equal(
    api.mutatingWebhookPath({ group: 'cache.example.com', version: 'v1', kind: 'Memcached' }),
    '/mutate-cache-example-com-v1-memcached',
  );
  assert.equal(
    api.validatingWebhookPath({ group: 'cache.example.com', version: 'v1', kind: 'Memcached' }),
    '/validate-cache-example-com-v1-memcached',
  );
  const envtest = await import('../../src/runtime/envtest/index.js');
  assert.equal(typeof envtest.Environment.prototype.webhookServerOptions, 'function');
});

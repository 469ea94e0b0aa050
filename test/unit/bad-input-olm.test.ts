/**
 * The offline parts of the OLM commands: image references (what `run bundle`
 * refuses before any network call), Go-style durations, the bundle reader's
 * refusals, the tar reader and the catalog an upgrade produces.
 *
 * Run: node --test dist/test/unit/bad-input-olm.test.js
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDuration } from '../../src/cluster/session.js';
import { readBundle } from '../../src/commands/run/bundle-image.js';
import { catalogFor, catalogWithUpgrade, parseCatalog, serializeCatalog } from '../../src/commands/run/catalog.js';
import { UsageError } from '../../src/errors.js';
import { isLoopbackRegistry, parseImageReference } from '../../src/oci/reference.js';
import { readTar } from '../../src/runtime/envtest/tar.js';
import { fixtureBundleFiles, tarFiles } from '../e2e/olm-fixtures.js';

const bundleFiles = (version: string) =>
  new Map(
    Object.entries(fixtureBundleFiles(version, 'localhost:5000/op:v1', ['/manager'])).map(([path, text]) => [
      path,
      Buffer.from(text),
    ]),
  );

describe('image references', () => {
  test('valid references parse to registry, repository, tag and digest', () => {
    assert.deepEqual(parseImageReference('quay.io/example/bundle:v0.0.1'), {
      registry: 'quay.io',
      repository: 'example/bundle',
      tag: 'v0.0.1',
      digest: undefined,
      original: 'quay.io/example/bundle:v0.0.1',
    });
    assert.equal(parseImageReference('busybox').repository, 'library/busybox');
    assert.equal(parseImageReference('busybox').tag, 'latest');
    assert.equal(parseImageReference('localhost:5000/op').registry, 'localhost:5000');
    const pinned = parseImageReference(`example.com/a/b@sha256:${'a'.repeat(64)}`);
    assert.equal(pinned.tag, undefined);
    assert.equal(pinned.digest, `sha256:${'a'.repeat(64)}`);
  });

  for (const [reference, reason] of [
    ['', /empty/],
    ['Quay.io//x', /empty component/],
    ['quay.io/Example/bundle:v1', /component "Example"/],
    ['quay.io/example/bundle:-v1', /tag "-v1"/],
    ['quay.io/example/bundle@sha256:xyz', /digest "sha256:xyz"/],
    ['quay.io/example bundle:v1', /whitespace/],
    ['quay..io/example/bundle', /registry "quay\.\.io"/],
  ] as const) {
    test(`"${reference}" is refused: ${reason}`, () => {
      assert.throws(
        () => parseImageReference(reference),
        (err: Error) => err.name === 'InvalidReferenceError' && reason.test(err.message),
      );
    });
  }

  test('loopback registries are recognised (they get plain HTTP)', () => {
    assert.equal(isLoopbackRegistry('localhost:5000'), true);
    assert.equal(isLoopbackRegistry('127.0.0.1:5000'), true);
    assert.equal(isLoopbackRegistry('[::1]:5000'), true);
    assert.equal(isLoopbackRegistry('quay.io'), false);
  });
});

test("durations take Go's form and refuse anything else in one line", () => {
  assert.equal(parseDuration('--timeout', '2m'), 120_000);
  assert.equal(parseDuration('--timeout', '1m30s'), 90_000);
  assert.equal(parseDuration('--timeout', '500ms'), 500);
  for (const bad of ['', '2', 'two minutes', '0s', '-1m']) {
    assert.throws(
      () => parseDuration('--timeout', bad),
      (err: unknown) => err instanceof UsageError && /--timeout .* is not a duration/.test(err.message),
    );
  }
});

describe('bundle images', () => {
  test('a bundle without annotations, package or exactly one CSV is refused with the fix', () => {
    const image = 'localhost:5000/x:v1';
    const without = (path: string) => new Map([...bundleFiles('0.0.1')].filter(([p]) => p !== path));
    assert.throws(
      () => readBundle(image, without('metadata/annotations.yaml')),
      /is not an operator bundle: it has no metadata\/annotations\.yaml\. Pass a bundle image/,
    );
    assert.throws(
      () => readBundle(image, without('manifests/widget-operator.clusterserviceversion.yaml')),
      /holds 0 ClusterServiceVersions, not one/,
    );
    const noPackage = bundleFiles('0.0.1');
    noPackage.set(
      'metadata/annotations.yaml',
      Buffer.from('annotations:\n  operators.operatorframework.io.bundle.channels.v1: alpha\n'),
    );
    assert.throws(() => readBundle(image, noPackage), /has no operators\.operatorframework\.io\.bundle\.package\.v1/);
  });

  test('the upgrade catalog adds the new bundle with `replaces` and refuses the same version twice', () => {
    const first = readBundle('r/b:v1', bundleFiles('0.0.1'));
    const second = readBundle('r/b:v2', bundleFiles('0.0.2'));
    const catalog = parseCatalog(serializeCatalog(catalogFor(first)));
    assert.deepEqual(
      catalog.filter((b) => b.schema === 'olm.channel').map((b) => b.entries),
      [[{ name: 'widget-operator.v0.0.1' }]],
    );
    const upgraded = catalogWithUpgrade(catalog, second, 'widget-operator.v0.0.1');
    assert.deepEqual(upgraded.find((b) => b.schema === 'olm.channel')!.entries, [
      { name: 'widget-operator.v0.0.1' },
      { name: 'widget-operator.v0.0.2', replaces: 'widget-operator.v0.0.1' },
    ]);
    assert.deepEqual(
      upgraded.filter((b) => b.schema === 'olm.bundle').map((b) => b.name),
      ['widget-operator.v0.0.1', 'widget-operator.v0.0.2'],
    );
    const bundleBlob = upgraded.find((b) => b.name === 'widget-operator.v0.0.2')!;
    assert.deepEqual(bundleBlob.properties!.find((p) => p.type === 'olm.gvk')!.value, {
      group: 'olmtest.example.com',
      kind: 'Widget',
      version: 'v1',
    });
    assert.equal(bundleBlob.properties!.filter((p) => p.type === 'olm.bundle.object').length, 2);
    // The input is left alone.
    assert.equal(catalog.find((b) => b.schema === 'olm.channel')!.entries!.length, 1);
    assert.throws(() => catalogWithUpgrade(upgraded, second, 'widget-operator.v0.0.1'), /already in the catalog/);
  });
});

test('the tar reader returns regular files and refuses a corrupt header', () => {
  const archive = tarFiles({ './metadata/annotations.yaml': 'a: 1\n', 'manifests/x.yaml': Buffer.alloc(1000, 120) });
  assert.deepEqual(
    readTar(archive).map((file) => [file.path, file.data.length]),
    [
      ['metadata/annotations.yaml', 5],
      ['manifests/x.yaml', 1000],
    ],
  );
  const corrupt = Buffer.from(archive);
  corrupt[0] = corrupt[0]! ^ 1;
  assert.throws(() => readTar(corrupt), /bad header checksum/);
  assert.throws(() => readTar(archive.subarray(0, 1024 + 512 + 100)), /truncated/);
});

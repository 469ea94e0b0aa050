import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateManifests, type ManifestInputs } from '../../src/generators/manifests.js';

/** Fixture projects live in the source tree; tests run from dist/test/unit. */
export const CRD_FIXTURES = fileURLToPath(new URL('../../../test/fixtures/crd/', import.meta.url));
// Set UPDATE_GOLDEN=1 to rewrite the goldens after an intended output change (then review the diff).
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

/** The fixture projects and the PROJECT resources each one declares. */
export const FIXTURES: Record<string, Omit<ManifestInputs, 'projectDir'>> = {
  memcached: {
    domain: 'example.com',
    multigroup: false,
    resources: [
      { group: 'cache', domain: 'example.com', version: 'v1', kind: 'Memcached', path: 'apis/v1', namespaced: true },
    ],
  },
  allmarkers: {
    domain: 'example.com',
    multigroup: false,
    resources: [
      { group: 'test', domain: 'example.com', version: 'v1', kind: 'Widget', path: 'apis/v1', namespaced: true },
    ],
  },
  multiversion: {
    domain: 'example.com',
    multigroup: false,
    resources: [
      {
        group: 'test',
        domain: 'example.com',
        version: 'v1alpha1',
        kind: 'Gadget',
        path: 'apis/v1alpha1',
        namespaced: false,
      },
      { group: 'test', domain: 'example.com', version: 'v1', kind: 'Gadget', path: 'apis/v1', namespaced: false },
      {
        group: 'test',
        domain: 'example.com',
        version: 'v1beta1',
        kind: 'Gadget',
        path: 'apis/v1beta1',
        namespaced: false,
      },
      { group: 'test', domain: 'example.com', version: 'v2', kind: 'Gadget', path: 'apis/v2', namespaced: false },
    ],
  },
};

// The generator version changes with every release; goldens hold a placeholder.
const normalizeVersion = (text: string): string =>
  text.replace(/(ts-operator-sdk\.io\/generator-version: ).*/g, '$1<version>');

for (const [name, inputs] of Object.entries(FIXTURES)) {
  test(`golden: ${name} manifests match the committed YAML and are byte-identical on re-run`, async () => {
    const projectDir = path.join(CRD_FIXTURES, name);
    const first = await generateManifests({ projectDir, ...inputs });
    const second = await generateManifests({ projectDir, ...inputs });
    assert.deepEqual(second, first, 'a second run must produce byte-identical output');
    assert.ok(
      first.some((f) => f.path.startsWith('config/crd/bases/')),
      'at least one CRD is generated',
    );
    for (const file of first) {
      const goldenPath = path.join(projectDir, 'golden', file.path);
      const actual = normalizeVersion(file.content);
      if (UPDATE) {
        mkdirSync(path.dirname(goldenPath), { recursive: true });
        writeFileSync(goldenPath, actual);
      }
      assert.ok(existsSync(goldenPath), `missing golden ${goldenPath}: run with UPDATE_GOLDEN=1 and review it`);
      assert.equal(actual, readFileSync(goldenPath, 'utf8'), `${file.path} differs from its golden`);
    }
  });
}

test('golden: memcached CRD has size minimum 0, status.nodes and map-keyed conditions', async () => {
  const files = await generateManifests({
    projectDir: path.join(CRD_FIXTURES, 'memcached'),
    ...FIXTURES['memcached']!,
  });
  const crd = files.find((f) => f.path === 'config/crd/bases/cache.example.com_memcacheds.yaml');
  assert.ok(crd);
  assert.match(
    crd.content,
    /size:\n {16}description: Size is the number of memcached pods\.\n {16}format: int32\n {16}minimum: 0\n {16}type: integer/,
  );
  assert.match(crd.content, /nodes:\n {16}description: .*\n {16}items:\n {18}type: string\n {16}type: array/);
  assert.match(crd.content, /x-kubernetes-list-map-keys:\n {16}- type\n {16}x-kubernetes-list-type: map/);
  assert.ok(crd.content.startsWith('---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n'));
});

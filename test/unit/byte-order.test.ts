/**
 * Sorted output is in byte order, as Go's sort.Strings sorts (operator-sdk,
 * kubebuilder, controller-gen): upper case before lower case, and `-` `.`
 * `_` in ASCII order. An ICU collation (localeCompare) would put `a` before
 * `B` and `_` before `.`, so these lists would come out in another order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { byteOrder } from '../../src/byte-order.js';
import { mergeRelatedImages } from '../../src/generators/csv/fill.js';
import { VirtualTree } from '../../src/scaffold/tree.js';

test('byteOrder sorts as Go sort.Strings does', () => {
  // Go: sort.Strings([]string{"b", "a_b", "B", "a.b", "a-b", "A", "a"}) prints this.
  assert.deepEqual(['b', 'a_b', 'B', 'a.b', 'a-b', 'A', 'a'].sort(byteOrder), [
    'A',
    'B',
    'a',
    'a-b',
    'a.b',
    'a_b',
    'b',
  ]);
  assert.equal(byteOrder('same', 'same'), 0);
});

test('the tree lists its changes in byte order of the path', () => {
  const tree = new VirtualTree(mkdtempSync(join(tmpdir(), 'ts-operator-sdk-order-')));
  for (const path of ['config/a_b.yaml', 'api/v1.ts', 'README.md', 'config/a.b.yaml', 'Dockerfile'])
    tree.write(path, 'x');
  assert.deepEqual(
    tree.changes().map((change) => change.path),
    ['Dockerfile', 'README.md', 'api/v1.ts', 'config/a.b.yaml', 'config/a_b.yaml'],
  );
});

test("a CSV's related images are sorted by name in byte order", () => {
  const merged = mergeRelatedImages(
    [
      { name: 'proxy', image: 'example.com/proxy:v1' },
      { name: 'Proxy-Legacy', image: 'example.com/proxy:v0' },
    ],
    [{ name: 'memcached', image: 'docker.io/memcached:1.6' }],
  );
  assert.deepEqual(
    merged.map((image) => image.name),
    ['Proxy-Legacy', 'memcached', 'proxy'],
  );
});

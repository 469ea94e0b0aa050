import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { scaffoldFiles } from '../../src/scaffold/files.js';
import { applyInserters, uncommentLine } from '../../src/scaffold/inserter.js';
import { VirtualTree } from '../../src/scaffold/tree.js';
import { hashTree } from '../scaffold/harness.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'ts-operator-sdk-tree-'));
}

test('the virtual tree reads through to disk and reports CREATE/UPDATE/DELETE', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'kept.txt'), 'same');
  writeFileSync(join(dir, 'changed.txt'), 'old');
  writeFileSync(join(dir, 'gone.txt'), 'bye');
  const tree = new VirtualTree(dir);
  tree.write('kept.txt', 'same');
  tree.write('changed.txt', 'new');
  tree.write('a/b/new.txt', 'hello');
  tree.delete('gone.txt');
  assert.equal(tree.read('changed.txt'), 'new');
  assert.equal(tree.exists('gone.txt'), false);
  assert.deepEqual(tree.list(), ['a/b/new.txt', 'changed.txt', 'kept.txt']);
  assert.deepEqual(tree.changes(), [
    { action: 'CREATE', path: 'a/b/new.txt' },
    { action: 'UPDATE', path: 'changed.txt' },
    { action: 'DELETE', path: 'gone.txt' },
  ]);
  assert.equal(readFileSync(join(dir, 'changed.txt'), 'utf8'), 'old', 'nothing is written before commit');
});

test('commit writes everything at once', async () => {
  const dir = tempDir();
  const tree = new VirtualTree(dir);
  tree.write('x/y/z.txt', 'z');
  tree.write('top.txt', 't');
  await tree.commit();
  assert.equal(readFileSync(join(dir, 'x/y/z.txt'), 'utf8'), 'z');
  assert.equal(readFileSync(join(dir, 'top.txt'), 'utf8'), 't');
  assert.deepEqual(tree.changes(), []);
});

test('a failed commit rolls back and leaves the directory byte-identical', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'existing.txt'), 'original');
  // A file where a directory must be created makes the commit fail half-way,
  // after other files were already staged (this works even as root).
  writeFileSync(join(dir, 'blocker'), 'not a directory');
  mkdirSync(join(dir, 'sub'));
  const before = hashTree(dir);
  const tree = new VirtualTree(dir);
  tree.write('existing.txt', 'changed');
  tree.write('sub/new.txt', 'new');
  tree.write('aaa/first.txt', 'first');
  tree.write('blocker/inside.txt', 'cannot be written');
  await assert.rejects(
    tree.commit(),
    (error: unknown) => error instanceof UsageError && /nothing was changed/.test(error.message),
  );
  assert.equal(hashTree(dir), before);
  assert.equal(existsSync(join(dir, 'aaa')), false);
});

test('inserters add each fragment once, above the marker, with its indentation', () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'main.ts'),
    'import a;\n// +kubebuilder:scaffold:imports\n\nfunction f() {\n  // +kubebuilder:scaffold:builder\n}\n',
  );
  const tree = new VirtualTree(dir);
  const inserters = [
    { path: 'main.ts', marker: '// +kubebuilder:scaffold:imports', fragments: ['import b;'] },
    { path: 'main.ts', marker: '// +kubebuilder:scaffold:builder', fragments: ['setup(b);'] },
  ];
  applyInserters(tree, inserters);
  applyInserters(tree, inserters);
  assert.equal(
    tree.read('main.ts'),
    'import a;\nimport b;\n// +kubebuilder:scaffold:imports\n\nfunction f() {\n  setup(b);\n  // +kubebuilder:scaffold:builder\n}\n',
  );
});

test('an inserter whose marker is gone is an error, not a guess', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'main.ts'), 'nothing here\n');
  const tree = new VirtualTree(dir);
  assert.throws(
    () => applyInserters(tree, [{ path: 'main.ts', marker: '// +kubebuilder:scaffold:imports', fragments: ['x'] }]),
    /has no "\/\/ \+kubebuilder:scaffold:imports" marker/,
  );
});

test('uncommentLine enables a commented kustomization entry once', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'k.yaml'), 'resources:\n#- ../crd\n- ../rbac\n');
  const tree = new VirtualTree(dir);
  uncommentLine(tree, 'k.yaml', '- ../crd');
  uncommentLine(tree, 'k.yaml', '- ../crd');
  assert.equal(tree.read('k.yaml'), 'resources:\n- ../crd\n- ../rbac\n');
});

test('file specs honour skip, error and overwrite', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'README.md'), 'mine');
  const tree = new VirtualTree(dir);
  const data = { projectName: 'p', year: 2026, owner: '', apache2: false };
  scaffoldFiles(tree, [{ path: 'README.md', template: 'init/README.md.hbs', ifExists: 'skip' }], data);
  assert.equal(tree.read('README.md'), 'mine');
  assert.throws(
    () => scaffoldFiles(tree, [{ path: 'README.md', template: 'init/README.md.hbs', ifExists: 'error' }], data),
    /README.md already exists/,
  );
  scaffoldFiles(tree, [{ path: 'README.md', template: 'init/README.md.hbs', ifExists: 'overwrite' }], data);
  assert.match(tree.read('README.md')!, /^# p\n/);
  chmodSync(dir, 0o755);
});

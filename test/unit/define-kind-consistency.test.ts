/**
 * One source of truth for plural and scope: `generate manifests` refuses a
 * types file whose `defineKind({ plural, namespaced })` disagrees with what
 * the CRD gets from the `+kubebuilder:resource` marker or PROJECT. Each bad
 * case must print the `file:line` of the defineKind property, end with the
 * one error line, exit 1, print nothing on stdout and leave the project
 * byte-identical. The scaffold as generated (namespaced, cluster-scoped with
 * an irregular plural) passes.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { copyProject, hashTree, runCli, runCliOk, tempProjectDir } from '../scaffold/harness.js';

/** init + create api cache/v1 Memcached (namespaced) + ops/v1 Cactus (cluster-scoped, plural cacti), multigroup. */
let baseProject: string;

const MEMCACHED = 'apis/cache/v1/memcached_types.ts';
const CACTUS = 'apis/ops/v1/cactus_types.ts';

before(() => {
  baseProject = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], baseProject);
  runCliOk(['edit', '--multigroup'], baseProject);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], baseProject);
  runCliOk(
    [
      'create',
      'api',
      '--group',
      'ops',
      '--version',
      'v1',
      '--kind',
      'Cactus',
      '--plural',
      'cacti',
      '--namespaced=false',
    ],
    baseProject,
  );
});

function edit(dir: string, path: string, change: (text: string) => string): void {
  const before = readFileSync(join(dir, path), 'utf8');
  const after = change(before);
  assert.notEqual(after, before, `the edit of ${path} changed nothing`);
  writeFileSync(join(dir, path), after);
}

/** The 1-based line of `path` that matches `pattern` (the scaffold's layout may change; the line is found, not assumed). */
function lineOf(dir: string, path: string, pattern: RegExp): number {
  const index = readFileSync(join(dir, path), 'utf8')
    .split('\n')
    .findIndex((line) => pattern.test(line));
  assert.ok(index >= 0, `${pattern} not found in ${path}`);
  return index + 1;
}

/** Adds a `+kubebuilder:resource` marker to the root type's comment. */
const addResourceMarker =
  (args: string) =>
  (text: string): string =>
    text.replace(/( \* \+kubebuilder:subresource:status\n)/, `$1 * +kubebuilder:resource:${args}\n`);

interface Disagreement {
  name: string;
  prepare: (dir: string) => void;
  /** The file of the defineKind and the property whose line is reported. */
  file: string;
  property: 'plural' | 'namespaced';
  message: RegExp;
}

const CASES: Disagreement[] = [
  {
    name: 'defineKind plural edited, PROJECT unchanged',
    prepare: (dir) => edit(dir, MEMCACHED, (t) => t.replace("plural: 'memcacheds'", "plural: 'mems'")),
    file: MEMCACHED,
    property: 'plural',
    message:
      /defineKind for Memcached v1 says plural "mems", but PROJECT gives plural "memcacheds", and the CRD uses that: make them the same$/,
  },
  {
    name: 'defineKind namespaced edited, PROJECT unchanged',
    prepare: (dir) => edit(dir, MEMCACHED, (t) => t.replace('namespaced: true', 'namespaced: false')),
    file: MEMCACHED,
    property: 'namespaced',
    message:
      /defineKind for Memcached v1 says namespaced: false, but PROJECT gives scope Namespaced, and the CRD uses that/,
  },
  {
    name: 'a path= marker added, defineKind unchanged',
    prepare: (dir) => edit(dir, MEMCACHED, addResourceMarker('path=mcs')),
    file: MEMCACHED,
    property: 'plural',
    message:
      /defineKind for Memcached v1 says plural "memcacheds", but \+kubebuilder:resource:path=mcs \(apis\/cache\/v1\/memcached_types\.ts:\d+\) gives plural "mcs"/,
  },
  {
    name: 'a scope=Cluster marker added to a namespaced kind',
    prepare: (dir) => edit(dir, MEMCACHED, addResourceMarker('scope=Cluster')),
    file: MEMCACHED,
    property: 'namespaced',
    message:
      /defineKind for Memcached v1 says namespaced: true, but \+kubebuilder:resource:scope=Cluster \(apis\/cache\/v1\/memcached_types\.ts:\d+\) gives scope Cluster/,
  },
  {
    name: 'the plural edited in PROJECT only',
    prepare: (dir) => edit(dir, 'PROJECT', (t) => t.replace('plural: cacti', 'plural: cactuses')),
    file: CACTUS,
    property: 'plural',
    message: /defineKind for Cactus v1 says plural "cacti", but PROJECT gives plural "cactuses"/,
  },
  {
    name: 'a cluster-scoped kind whose defineKind says namespaced',
    prepare: (dir) => edit(dir, CACTUS, (t) => t.replace('namespaced: false', 'namespaced: true')),
    file: CACTUS,
    property: 'namespaced',
    message:
      /defineKind for Cactus v1 says namespaced: true, but \+kubebuilder:resource:scope=Cluster \(apis\/ops\/v1\/cactus_types\.ts:\d+\) gives scope Cluster/,
  },
];

describe('generate manifests: defineKind disagrees with the marker or PROJECT', () => {
  for (const bad of CASES) {
    test(bad.name, () => {
      const dir = copyProject(baseProject);
      bad.prepare(dir);
      const before = hashTree(dir);
      const result = runCli(['generate', 'manifests'], dir);
      assert.equal(result.status, 1, result.stderr);
      assert.equal(result.stdout, '');
      const lines = result.stderr.trimEnd().split('\n');
      const line = lineOf(dir, bad.file, new RegExp(`\\b${bad.property}: `));
      assert.equal(lines.length, 2, `expected one problem and the error line, got:\n${result.stderr}`);
      assert.ok(lines[0]!.startsWith(`${bad.file}:${line}: `), `expected ${bad.file}:${line}, got: ${lines[0]}`);
      assert.match(lines[0]!, bad.message);
      assert.match(
        lines[1]!,
        /^Error: generate manifests found 1 problem in the API types and controllers \(listed above\); nothing was written\. Fix them and run it again\.$/,
      );
      assert.equal(hashTree(dir), before, 'the project changed');
    });
  }
});

test('the scaffold as generated agrees with itself: namespaced, and cluster-scoped with an irregular plural', () => {
  const dir = copyProject(baseProject);
  runCliOk(['generate', 'manifests'], dir);
  assert.match(readFileSync(join(dir, 'config/crd/bases/ops.example.com_cacti.yaml'), 'utf8'), /scope: Cluster/);
});

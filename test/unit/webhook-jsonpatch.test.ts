/**
 * The defaulting webhook's JSON patch: applying it (with an independent
 * RFC 6902 applier written here) to the original must give exactly the
 * mutated object, and the operations must be the small ones the diff promises.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createJsonPatch } from '../../src/runtime/webhook/jsonpatch.js';
import type { JsonPatchOperation } from '../../src/runtime/client/index.js';

/** A minimal RFC 6902 applier (add/remove/replace) that follows RFC 6901 unescaping strictly. */
function applyPatch(document: unknown, operations: JsonPatchOperation[]): unknown {
  let root = structuredClone(document);
  for (const operation of operations) {
    if (operation.path === '') {
      assert.equal(operation.op, 'replace');
      root = structuredClone(operation.value);
      continue;
    }
    const tokens = operation.path
      .slice(1)
      .split('/')
      .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = tokens.pop()!;
    let parent = root as Record<string, unknown>;
    for (const token of tokens) {
      assert.ok(Object.hasOwn(parent, token), `${operation.path}: ${token} does not exist`);
      parent = parent[token] as Record<string, unknown>;
    }
    if (operation.op === 'add') parent[last] = structuredClone(operation.value);
    else if (operation.op === 'replace') {
      assert.ok(Object.hasOwn(parent, last), `replace of a missing ${operation.path}`);
      parent[last] = structuredClone(operation.value);
    } else if (operation.op === 'remove') {
      assert.ok(Object.hasOwn(parent, last), `remove of a missing ${operation.path}`);
      delete parent[last];
    } else assert.fail(`unexpected op ${operation.op}`);
  }
  return root;
}

const roundTrip = (before: unknown, after: unknown): JsonPatchOperation[] => {
  const operations = createJsonPatch(before, after);
  assert.deepEqual(applyPatch(before, operations), JSON.parse(JSON.stringify(after)));
  return operations;
};

describe('createJsonPatch', () => {
  it('no change, no operations', () => {
    assert.deepEqual(
      roundTrip({ spec: { size: 1, list: [1, { a: 2 }] } }, { spec: { list: [1, { a: 2 }], size: 1 } }),
      [],
    );
  });

  it('adds a missing member deep inside, and a missing parent whole', () => {
    assert.deepEqual(roundTrip({ spec: {} }, { spec: { size: 1 } }), [{ op: 'add', path: '/spec/size', value: 1 }]);
    assert.deepEqual(roundTrip({ metadata: { name: 'a' } }, { metadata: { name: 'a' }, spec: { size: 1 } }), [
      { op: 'add', path: '/spec', value: { size: 1 } },
    ]);
  });

  it('replaces changed scalars and type changes, removes deleted members', () => {
    assert.deepEqual(
      roundTrip({ spec: { size: 1, mode: 'a', gone: true } }, { spec: { size: 2, mode: { deep: 'b' } } }),
      [
        { op: 'remove', path: '/spec/gone' },
        { op: 'replace', path: '/spec/size', value: 2 },
        { op: 'replace', path: '/spec/mode', value: { deep: 'b' } },
      ],
    );
  });

  it('replaces a changed array whole (documented), and leaves an equal one alone', () => {
    assert.deepEqual(
      roundTrip({ spec: { ports: [1, 2, 3], same: [{ a: 1 }] } }, { spec: { ports: [1, 3], same: [{ a: 1 }] } }),
      [{ op: 'replace', path: '/spec/ports', value: [1, 3] }],
    );
  });

  it('escapes ~ and / in member names (RFC 6901), ~ first', () => {
    const before = { metadata: { labels: { 'app.kubernetes.io/name': 'x' } } };
    const after = { metadata: { labels: { 'app.kubernetes.io/name': 'y', 'a~1b': 'tilde-one', '~/': 'both' } } };
    assert.deepEqual(roundTrip(before, after), [
      { op: 'replace', path: '/metadata/labels/app.kubernetes.io~1name', value: 'y' },
      { op: 'add', path: '/metadata/labels/a~01b', value: 'tilde-one' },
      { op: 'add', path: '/metadata/labels/~0~1', value: 'both' },
    ]);
  });

  it('treats undefined members of the mutated object as absent, as JSON does', () => {
    assert.deepEqual(
      roundTrip({ spec: { size: 1, mode: 'a' } }, { spec: { size: 1, mode: undefined, extra: undefined } }),
      [{ op: 'remove', path: '/spec/mode' }],
    );
  });

  it('null is a value, not an absence', () => {
    assert.deepEqual(roundTrip({ spec: { size: 1 } }, { spec: { size: null } }), [
      { op: 'replace', path: '/spec/size', value: null },
    ]);
  });
});

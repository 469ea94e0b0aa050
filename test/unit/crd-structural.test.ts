import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkStructural } from '../../src/generators/crd/structural.js';
import { SourceMap, type JSONSchemaProps } from '../../src/generators/crd/schema-types.js';
import { ProblemList } from '../../src/generators/problems.js';

// The type builder never emits most of these shapes; hand-built schemas exercise the rules the API server enforces.
function problemsOf(schema: JSONSchemaProps, sources = new SourceMap()): string[] {
  const problems = new ProblemList();
  checkStructural(schema, sources, { file: 'apis/v1/x_types.ts', line: 1 }, problems);
  return problems.items.map((p) => `${p.file}:${p.line}: ${p.message}`);
}

const root = (spec: JSONSchemaProps): JSONSchemaProps => ({
  type: 'object',
  properties: { metadata: { type: 'object' }, spec },
});

test('structural: a valid schema has no problems', () => {
  assert.deepEqual(problemsOf(root({ type: 'object', properties: { a: { type: 'string', default: 'x' } } })), []);
});

test('structural: each rule is reported with the source line of the node', () => {
  const sources = new SourceMap();
  const bad: JSONSchemaProps = {
    type: 'object',
    properties: { a: { type: 'string' } },
    additionalProperties: { type: 'string' },
  };
  sources.set(bad, 'apis/v1/x_types.ts', 42);
  assert.deepEqual(problemsOf(root(bad), sources), [
    'apis/v1/x_types.ts:42: .spec: properties and additionalProperties cannot be used together; use an interface for fixed fields or Record<string, T> for a map',
  ]);
});

test('structural: $ref, missing type, uniqueItems, arrays without items', () => {
  const found = problemsOf(
    root({
      type: 'object',
      properties: {
        r: { $ref: '#/x', type: 'object' },
        u: { properties: {} },
        s: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        n: { type: 'array' },
      },
    }),
  );
  assert.ok(found.some((p) => p.endsWith('.spec.r: $ref is not allowed in CRD schemas; inline the type')));
  assert.ok(found.some((p) => p.includes('.spec.u: every schema node needs a type')));
  assert.ok(found.some((p) => p.includes('.spec.s: uniqueItems is forbidden')));
  assert.ok(found.some((p) => p.includes('.spec.n: arrays need an items schema')));
});

test('structural: junctor rules', () => {
  const found = problemsOf(
    root({
      type: 'object',
      properties: { a: { type: 'string' } },
      anyOf: [{ required: ['a'] }, { properties: { b: { type: 'string', description: 'no' } } }],
    }),
  );
  assert.ok(found.some((p) => p.includes('.spec.anyOf[1].b: type is not allowed inside allOf/anyOf/oneOf/not')));
  assert.ok(found.some((p) => p.includes('.spec.anyOf[1].b: description is not allowed')));
  assert.ok(found.some((p) => p.includes('.spec.anyOf[1]: field b is used inside a junctor but not declared')));
  assert.deepEqual(
    problemsOf(
      root({
        type: 'object',
        properties: { q: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true } },
      }),
    ),
    [],
    'int-or-string may use type inside anyOf',
  );
});

test('structural: metadata may only constrain name and generateName', () => {
  const found = problemsOf({
    type: 'object',
    properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
  });
  assert.ok(found.some((p) => p.includes('.metadata: metadata may only constrain name and generateName, not labels')));
});

test('structural: defaults must validate against their schema', () => {
  const found = problemsOf(
    root({
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: 1, default: 0 },
        e: { type: 'string', enum: ['a'], default: 'b' },
        o: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'], default: {} },
      },
    }),
  );
  assert.ok(found.some((p) => p.includes('.spec.n: default 0 does not match')));
  assert.ok(found.some((p) => p.includes('.spec.e: default "b" does not match')));
  assert.ok(found.some((p) => p.includes('.spec.o: default {} does not match')));
});

test('structural: list-map keys must be required scalar item fields', () => {
  const found = problemsOf(
    root({
      type: 'object',
      properties: {
        l: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k'],
          items: { type: 'object', properties: { k: { type: 'string' } } },
        },
      },
    }),
  );
  assert.ok(
    found.some((p) => p.includes('.spec.l: listMapKey k must be a required field of the items or have a default')),
  );
});

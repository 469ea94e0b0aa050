import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { matchesLabels, parseSelector, requirementsOf } from '../../src/runtime/api/labels.js';
import {
  annotationChangedPredicate,
  generationChangedPredicate,
  labelChangedPredicate,
  resourceVersionChangedPredicate,
  admits,
  and,
  labelSelectorPredicate,
  not,
  or,
} from '../../src/runtime/predicate/predicate.js';

const obj = (meta: KubernetesObject['metadata']): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', ...meta },
});

test('generationChangedPredicate passes spec changes only', () => {
  assert.equal(generationChangedPredicate.update!(obj({ generation: 1 }), obj({ generation: 2 })), true);
  assert.equal(
    generationChangedPredicate.update!(
      obj({ generation: 2, resourceVersion: '1' }),
      obj({ generation: 2, resourceVersion: '2' }),
    ),
    false,
  );
  assert.equal(admits(generationChangedPredicate, { type: 'create', object: obj({}) }), true, 'creates always pass');
});

test('resourceVersion, label and annotation change predicates', () => {
  assert.equal(
    resourceVersionChangedPredicate.update!(obj({ resourceVersion: '1' }), obj({ resourceVersion: '1' })),
    false,
  );
  assert.equal(
    resourceVersionChangedPredicate.update!(obj({ resourceVersion: '1' }), obj({ resourceVersion: '2' })),
    true,
  );
  assert.equal(labelChangedPredicate.update!(obj({ labels: { a: '1' } }), obj({ labels: { a: '1' } })), false);
  assert.equal(labelChangedPredicate.update!(obj({ labels: { a: '1' } }), obj({ labels: { a: '2' } })), true);
  assert.equal(labelChangedPredicate.update!(obj({}), obj({ labels: { a: '1' } })), true);
  assert.equal(annotationChangedPredicate.update!(obj({ annotations: { a: '1' } }), obj({ annotations: {} })), true);
  assert.equal(
    annotationChangedPredicate.update!(obj({ annotations: { a: '1' } }), obj({ annotations: { a: '1' } })),
    false,
  );
});

test('label selector predicate, string and object forms', () => {
  const byString = labelSelectorPredicate('app=web,tier in (a,b),!canary');
  assert.equal(byString.create!(obj({ labels: { app: 'web', tier: 'a' } })), true);
  assert.equal(byString.create!(obj({ labels: { app: 'web', tier: 'c' } })), false);
  assert.equal(byString.create!(obj({ labels: { app: 'web', tier: 'a', canary: 'y' } })), false);
  const byObject = labelSelectorPredicate({
    matchLabels: { app: 'web' },
    matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }],
  });
  assert.equal(byObject.update!(obj({}), obj({ labels: { app: 'web', env: 'dev' } })), true);
  assert.equal(byObject.update!(obj({}), obj({ labels: { app: 'web', env: 'prod' } })), false);
});

test('and / or / not combine predicates per event type', () => {
  const gen = generationChangedPredicate;
  const label = labelChangedPredicate;
  const oldObject = obj({ generation: 1, labels: { a: '1' } });
  const onlyLabels = obj({ generation: 1, labels: { a: '2' } });
  assert.equal(and(gen, label).update!(oldObject, onlyLabels), false);
  assert.equal(or(gen, label).update!(oldObject, onlyLabels), true);
  assert.equal(not(gen).update!(oldObject, onlyLabels), true);
  assert.equal(not(gen).create!(oldObject), false, 'not() of a pass-through create blocks it');
});

test('selector parsing rejects malformed terms with the term named', () => {
  assert.throws(() => parseSelector('app in a,b'), /invalid label selector term "app in a"/);
  assert.deepEqual(parseSelector('a==1, b!=2'), [
    { key: 'a', op: 'in', values: ['1'] },
    { key: 'b', op: 'notin', values: ['2'] },
  ]);
  assert.equal(
    matchesLabels(requirementsOf({ matchExpressions: [{ key: 'x', operator: 'Exists' }] }), { x: '' }),
    true,
  );
  assert.equal(matchesLabels([], undefined), true, 'an empty selector matches everything');
});

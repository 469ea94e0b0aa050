import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatBytes } from '../../src/validation/bundle.js';
import { goQuotedList, goValue, GroupVersionKind, renderFinding } from '../../src/validation/diagnostics.js';
import { parseSemver, parseSemverTolerant, qualifiedNameProblems } from '../../src/validation/names.js';
import { parseSelector, selectValidators } from '../../src/validation/optional.js';

describe('api error rendering', () => {
  test('field, value and detail combine like the api does', () => {
    assert.equal(
      renderFinding({ level: 'Error', field: 'Spec.DisplayName', badValue: 'field', detail: 'required field missing' }),
      'Error: Field Spec.DisplayName, Value field: required field missing',
    );
    assert.equal(
      renderFinding({ level: 'Warning', badValue: '', detail: '(x.v1.0.0) d' }),
      'Warning: Value : (x.v1.0.0) d',
    );
    assert.equal(renderFinding({ level: 'Error', detail: 'no value' }), 'Error: : no value');
    assert.equal(renderFinding({ level: 'Error', field: 'spec', detail: 'd' }), 'Error: Field spec: d');
    assert.equal(renderFinding({ level: 'Error', detail: '' }), 'ErrMessageMissing');
  });

  test('GVKs print like schema.GroupVersionKind, core group without a slash', () => {
    assert.equal(
      GroupVersionKind.of('cache.example.com/v1', 'Memcached').toString(),
      'cache.example.com/v1, Kind=Memcached',
    );
    assert.equal(GroupVersionKind.of('v1', 'Pod').toString(), 'v1, Kind=Pod');
  });

  test("Go's %v and %+q forms", () => {
    assert.equal(goValue({ b: [1, 'x'], a: { z: true, y: null } }), 'map[a:map[y:<nil> z:true] b:[1 x]]');
    assert.equal(goQuotedList(['alpha', 'bêta']), '["alpha" "b\\u00eata"]');
  });

  test('sizes in decimal units with one decimal', () => {
    assert.equal(formatBytes(999), '999 B');
    assert.equal(formatBytes(1 << 20), '1.0 MB');
    assert.equal(formatBytes(948_576), '948.6 kB');
  });
});

describe('versions and names', () => {
  test('strict semver rejects what blang/semver Parse rejects', () => {
    assert.ok(parseSemver('1.22.0'));
    assert.ok(parseSemver('0.0.1-alpha.1+build.5'));
    for (const bad of ['1.22', 'v1.22.0', '01.2.3', '1.2.3-01', '']) assert.equal(parseSemver(bad), undefined, bad);
  });

  test('tolerant semver pads and strips like ParseTolerant', () => {
    assert.equal(parseSemverTolerant('v1.25')?.text, '1.25.0');
    assert.equal(parseSemverTolerant(' 1.26.1 ')?.text, '1.26.1');
    assert.equal(parseSemverTolerant('one'), undefined);
  });

  test('label keys: prefix and name parts', () => {
    assert.deepEqual(qualifiedNameProblems('app.kubernetes.io/name'), []);
    assert.deepEqual(qualifiedNameProblems('/name'), ['prefix part must be non-empty']);
    assert.equal(qualifiedNameProblems('bad key').length, 1);
  });
});

describe('label selectors for optional validators', () => {
  test('equality, inequality, set and existence terms', () => {
    const labels = { name: 'capabilities', suite: 'operatorframework' };
    assert.ok(parseSelector('suite=operatorframework')(labels));
    assert.ok(parseSelector('suite==operatorframework,name=capabilities')(labels));
    assert.equal(parseSelector('name!=capabilities')(labels), false);
    assert.ok(parseSelector('name in (categories, capabilities)')(labels));
    assert.equal(parseSelector('name notin (capabilities)')(labels), false);
    assert.ok(parseSelector('suite')(labels));
    assert.equal(parseSelector('!suite')(labels), false);
  });

  test('selecting by suite picks all five, by name one, and a typo is an error', () => {
    assert.deepEqual(
      selectValidators('suite=operatorframework').map((validator) => validator.name),
      ['operatorhubv2', 'capabilities', 'categories', 'alpha-deprecated-apis', 'good-practices'],
    );
    assert.deepEqual(
      selectValidators('name=good-practices').map((validator) => validator.name),
      ['good-practices'],
    );
    assert.deepEqual(selectValidators(''), []);
    assert.throws(
      () => selectValidators('suite=operatorhub'),
      /selector "suite=operatorhub" does not match any validator labels/,
    );
    assert.throws(() => selectValidators('name=(x'), /invalid label selector/);
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { isDns1123Label, isDns1123Subdomain } from '../../src/validation/names.js';
import {
  pluralize,
  validateGroup,
  validateKind,
  validateProjectName,
  validateVersion,
} from '../../src/scaffold/names.js';

test('pluralize follows kubebuilder (flect) outcomes', () => {
  const table: [string, string][] = [
    ['Memcached', 'memcacheds'],
    ['Policy', 'policies'],
    ['Gateway', 'gateways'],
    ['Key', 'keys'],
    ['Proxy', 'proxies'],
    ['Bus', 'buses'],
    ['Status', 'statuses'],
    ['Class', 'classes'],
    ['Box', 'boxes'],
    ['Match', 'matches'],
    ['Mesh', 'meshes'],
    ['Quiz', 'quizzes'],
    ['Person', 'people'],
    ['Child', 'children'],
    ['Index', 'indices'],
    ['Analysis', 'analyses'],
    ['Data', 'data'],
    ['Series', 'series'],
    ['Podroute', 'podroutes'],
    ['CronJob', 'cronjobs'],
    ['Ingress', 'ingresses'],
    ['Salesperson', 'salespeople'],
  ];
  for (const [kind, plural] of table) assert.equal(pluralize(kind), plural, kind);
});

test('DNS-1123 label and subdomain checks', () => {
  assert.ok(isDns1123Label('memcached-operator'));
  assert.ok(!isDns1123Label('Memcached'));
  assert.ok(!isDns1123Label('-a'));
  assert.ok(!isDns1123Label('a'.repeat(64)));
  assert.ok(isDns1123Subdomain('cache.example.com'));
  assert.ok(!isDns1123Subdomain('cache..example.com'));
  assert.ok(!isDns1123Subdomain(''));
});

test('validators accept good names and reject bad ones with a fix', () => {
  for (const version of ['v1', 'v1alpha1', 'v2beta3', 'v10']) assert.doesNotThrow(() => validateVersion(version));
  for (const version of ['1', 'v1gamma1', 'V1', 'v1alpha', 'v1.0'])
    assert.throws(() => validateVersion(version), UsageError);
  for (const kind of ['Memcached', 'PodRoute', 'A1']) assert.doesNotThrow(() => validateKind(kind));
  for (const kind of ['memcached', 'Mem-cached', 'Mem_cached', '1Kind', `K${'a'.repeat(63)}`])
    assert.throws(() => validateKind(kind), UsageError);
  assert.doesNotThrow(() => validateGroup('', 'quay.io'));
  assert.doesNotThrow(() => validateGroup('cache', 'example.com'));
  for (const group of ['Cache', 'ca_che', '-cache'])
    assert.throws(() => validateGroup(group, 'example.com'), UsageError);
  assert.throws(() => validateProjectName('My_Project'), /DNS-1123 label.*--project-name/);
});

test('a UsageError reads as one line: problem. Fix.', () => {
  const error = new UsageError('something\nbroke.', 'do this.');
  assert.equal(error.message, 'something broke. Do this.');
});

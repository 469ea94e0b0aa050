import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRoles, readRbacMarkers } from '../../src/generators/rbac/rbac.js';
import { ProblemList } from '../../src/generators/problems.js';

function roles(source: string): { roles: Array<Record<string, unknown>>; problems: string[] } {
  const problems = new ProblemList();
  const markers = readRbacMarkers(source, 'controllers/x.ts', problems);
  const built = buildRoles(markers, problems);
  return { roles: built, problems: problems.items.map((p) => `${p.file}:${p.line}: ${p.message}`).sort() };
}

test('rbac: verbs merge per resource, then resources with equal verbs, then groups, sorted like controller-gen', () => {
  const { roles: built, problems } = roles(
    [
      '// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list',
      '// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=watch;get',
      '// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch',
      '// +kubebuilder:rbac:groups=batch,resources=deployments;statefulsets,verbs=list;watch;get',
      '// +kubebuilder:rbac:groups=core,resources=pods,verbs=get',
    ].join('\n'),
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(built, [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'manager-role' },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { apiGroups: ['apps', 'batch'], resources: ['deployments', 'statefulsets'], verbs: ['get', 'list', 'watch'] },
      ],
    },
  ]);
});

test('rbac: namespace= goes to a Role per namespace, roleName renames, * absorbs other verbs, URLs merge', () => {
  const { roles: built } = roles(
    [
      '/**',
      ' * +kubebuilder:rbac:groups="",resources=secrets,verbs=get,namespace=b-ns',
      ' * +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;*,namespace=a-ns',
      ' */',
      '// +kubebuilder:rbac:urls=/metrics,verbs=get',
      '// +kubebuilder:rbac:urls=/healthz,verbs=get',
      '// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,roleName=reader',
    ].join('\n'),
  );
  assert.deepEqual(
    built.map((r) => [r['kind'], r['metadata']]),
    [
      ['ClusterRole', { name: 'manager-role' }],
      ['ClusterRole', { name: 'reader' }],
      ['Role', { name: 'manager-role', namespace: 'a-ns' }],
      ['Role', { name: 'manager-role', namespace: 'b-ns' }],
    ],
  );
  assert.deepEqual(built[0]!['rules'], [{ nonResourceURLs: ['/healthz', '/metrics'], verbs: ['get'] }]);
  assert.deepEqual(built[2]!['rules'], [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
});

test('rbac: a list ending in its separator, as the seeds write it, has no empty item (as controller-gen)', () => {
  const { roles: built, problems } = roles(
    [
      '//+kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;',
      '// +kubebuilder:rbac:groups=apps;,resources=deployments;,verbs={get,watch,}',
    ].join('\n'),
  );
  assert.deepEqual(problems, []);
  assert.deepEqual((built[0] as { rules: unknown }).rules, [
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'watch'] },
  ]);
});

test('rbac: malformed markers are reported at file:line', () => {
  const { problems } = roles(
    [
      'export const a = 1;',
      '// +kubebuilder:rbac:groups=apps,resources=deployments',
      '// +kubebuilder:rbac:resources=pods,verbs=get',
      '// +kubebuilder:rbac:groups=apps,resources=x,verbs=get,verb=list',
      '// +kubebuilder:rbac:urls=/m,verbs=get,namespace=n',
      '// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;;list',
      '// +kubebuilder:rbac:groups=;apps,resources=deployments,verbs=get',
    ].join('\n'),
  );
  assert.deepEqual(problems, [
    'controllers/x.ts:2: marker +kubebuilder:rbac is missing the required argument verbs=',
    'controllers/x.ts:3: +kubebuilder:rbac:resources=pods,verbs=get: resources= needs groups= (write groups="" or groups=core for the core API group)',
    'controllers/x.ts:4: marker +kubebuilder:rbac has no argument "verb": use one of groups, resources, resourceNames, verbs, urls, namespace, roleName',
    'controllers/x.ts:5: +kubebuilder:rbac:urls=/m,verbs=get,namespace=n: urls= cannot be used with namespace=: non-resource URLs exist only in ClusterRoles',
    'controllers/x.ts:6: +kubebuilder:rbac argument verbs has an empty item in "get;;list": remove the extra ; (write "" for an empty string)',
    'controllers/x.ts:7: +kubebuilder:rbac argument groups has an empty item in ";apps": remove the extra ; (write "" for an empty string)',
  ]);
});

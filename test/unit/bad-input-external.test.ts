/**
 * Bad input for `create api --external-api-path` (kinds another project
 * owns): flags that need each other, a CRD that does not match the flags, a
 * types directory that is not the project's to use, types that are missing.
 * Each case keeps the contract of ./bad-input.ts: exit 1, one line naming
 * problem and fix, no stack trace, a byte-identical directory.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before } from 'node:test';
import { badInputSuite, type BadInput } from './bad-input.js';
import { copyProject, REPO_ROOT, SCENARIOS, scaffoldScenario } from '../scaffold/harness.js';

/** init + create api cache/v1 Memcached, single group. */
let baseProject: string;

before(() => {
  baseProject = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
});

const ROUTE_CRD = join(REPO_ROOT, 'test', 'fixtures', 'external', 'route.crd.yaml');
const TYPES = 'apis/external/route/v1';
/** `create api` for OpenShift's Route, with `extra` flags. */
const route = (...extra: string[]): string[] => [
  'create',
  'api',
  '--group',
  'route',
  '--version',
  'v1',
  '--kind',
  'Route',
  '--external-api-domain',
  'openshift.io',
  ...extra,
];

const CASES: BadInput[] = [
  {
    name: '--resource with --external-api-path',
    args: route('--external-api-path', TYPES, '--from-crd', ROUTE_CRD, '--resource'),
    error:
      /--resource cannot be used with --external-api-path: an external kind's CRD belongs to the project that owns it/,
  },
  {
    name: '--from-crd without --external-api-path',
    args: route('--from-crd', ROUTE_CRD),
    error: /--external-api-domain is for kinds another project owns, and needs --external-api-path/,
  },
  {
    name: '--from-cluster without --external-api-path',
    args: [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v1',
      '--kind',
      'Route',
      '--from-cluster',
      'routes.route.openshift.io',
    ],
    error: /--from-cluster is for kinds another project owns, and needs --external-api-path/,
  },
  {
    name: '--from-crd and --from-cluster together',
    args: route('--external-api-path', TYPES, '--from-crd', ROUTE_CRD, '--from-cluster', 'routes.route.openshift.io'),
    error: /--from-crd and --from-cluster both name the CRD to read\. Pass only one of them/,
  },
  {
    name: 'a group and domain that do not join to the CRD group',
    args: [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v1',
      '--kind',
      'Route',
      '--external-api-domain',
      'example.com',
      '--external-api-path',
      TYPES,
      '--from-crd',
      ROUTE_CRD,
    ],
    error: /the CRD routes\.route\.openshift\.io is in group route\.openshift\.io, not route\.example\.com/,
  },
  {
    name: 'a kind the CRD is not for',
    args: [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v1',
      '--kind',
      'Ingress',
      '--external-api-domain',
      'openshift.io',
      '--external-api-path',
      TYPES,
      '--from-crd',
      ROUTE_CRD,
    ],
    error: /route\.crd\.yaml has no CRD of kind Ingress; it has Route/,
  },
  {
    name: 'a version the CRD does not have',
    args: [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v2',
      '--kind',
      'Route',
      '--external-api-domain',
      'openshift.io',
      '--external-api-path',
      TYPES,
      '--from-crd',
      ROUTE_CRD,
    ],
    error: /the CRD routes\.route\.openshift\.io has no version v2; it has v1\. Pass one of those as --version/,
  },
  {
    name: 'a plural the CRD does not use',
    args: route('--external-api-path', TYPES, '--from-crd', ROUTE_CRD, '--plural', 'rts'),
    error: /names its plural "routes", not "rts"\. Leave out --plural/,
  },
  {
    name: 'a CRD file that does not exist',
    args: route('--external-api-path', TYPES, '--from-crd', 'missing-crd.yaml'),
    error: /missing-crd\.yaml does not exist/,
  },
  {
    name: 'a CRD file that is not a CRD',
    prepare: (dir) => writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\n'),
    args: route('--external-api-path', TYPES, '--from-crd', 'cm.yaml'),
    error: /cm\.yaml holds no CustomResourceDefinition/,
  },
  {
    name: 'no CRD and no types for the controller',
    args: route('--external-api-path', TYPES),
    error:
      /the controller of Route needs its types in apis\/external\/route\/v1\/route_types\.ts, which does not exist\. Generate them with --from-crd/,
  },
  {
    name: 'no CRD, no domain',
    args: ['create', 'api', '--group', 'route', '--version', 'v1', '--kind', 'Route', '--external-api-path', TYPES],
    error: /missing --external-api-domain/,
  },
  {
    name: 'no CRD and no controller',
    args: route('--external-api-path', TYPES, '--controller=false'),
    error: /nothing to create: no CRD to generate types from and --controller is false/,
  },
  {
    name: "the types directory of the project's own API",
    args: route('--external-api-path', 'apis/v1', '--from-crd', ROUTE_CRD),
    error: /--external-api-path apis\/v1 holds the types of this project's Memcached/,
  },
  {
    name: 'a types directory outside the project',
    args: route('--external-api-path', '../elsewhere', '--from-crd', ROUTE_CRD),
    error: /--external-api-path "\.\.\/elsewhere" is not a directory inside the project/,
  },
  {
    name: 'an absolute types directory',
    args: route('--external-api-path', '/tmp/route', '--from-crd', ROUTE_CRD),
    error: /--external-api-path "\/tmp\/route" is not a directory inside the project/,
  },
  {
    name: 'the same external kind twice without --force',
    prepare: (dir) =>
      writeFileSync(
        join(dir, 'PROJECT'),
        `${'domain: example.com\nlayout:\n- typescript.ts-operator-sdk.io/v1\nprojectName: memcached-operator\nresources:\n- controller: true\n  domain: openshift.io\n  external: true\n  group: route\n  kind: Route\n  path: apis/external/route/v1\n  version: v1\nversion: "3"\n'}`,
      ),
    args: route('--external-api-path', TYPES, '--from-crd', ROUTE_CRD),
    error: /API route\.openshift\.io\/v1, Kind=Route already exists\. Pass --force to regenerate its types/,
  },
  {
    name: 'an external path for a kind the project owns',
    args: [
      'create',
      'api',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--external-api-domain',
      'example.com',
      '--external-api-path',
      'apis/external/cache/v1',
      '--force',
    ],
    error: /cache\.example\.com\/v1, Kind=Memcached is an API of this project, not an external one/,
  },
  {
    name: '--from-cluster without a kubeconfig',
    run: () => ({ env: { KUBECONFIG: '/nonexistent/kubeconfig' } }),
    args: route('--external-api-path', TYPES, '--from-cluster', 'routes.route.openshift.io'),
    error:
      /cannot read the CRD routes\.route\.openshift\.io from a cluster: cannot read kubeconfig \/nonexistent\/kubeconfig: ENOENT.*Point KUBECONFIG at the cluster, or pass the CRD as a file with --from-crd/,
  },
];

badInputSuite(
  'bad input (create api --external-api-path): one line of error, exit 1, directory byte-identical',
  CASES,
  () => copyProject(baseProject),
);

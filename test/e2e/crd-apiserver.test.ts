import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpMethod, RequestContext } from '@kubernetes/client-node';
import { fetch } from 'undici';
import { Environment } from '../../src/runtime/envtest/index.js';
import { RestClient } from '../../src/runtime/transport/rest.js';
import { toClientNodeKubeConfig } from '../../src/runtime/transport/client-node.js';
import type { RestConfig } from '../../src/runtime/transport/index.js';
import { InvalidError } from '../../src/runtime/api/errors.js';
import { generateManifests, type ManifestInputs } from '../../src/generators/manifests.js';

const FIXTURES_DIR = fileURLToPath(new URL('../../../test/fixtures/crd/', import.meta.url));
const api = (domain: string) => ({ domain, multigroup: false });
const PROJECTS: Record<string, Omit<ManifestInputs, 'projectDir'>> = {
  memcached: {
    ...api('example.com'),
    resources: [
      { group: 'cache', domain: 'example.com', version: 'v1', kind: 'Memcached', path: 'apis/v1', namespaced: true },
    ],
  },
  allmarkers: {
    ...api('example.com'),
    resources: [
      { group: 'test', domain: 'example.com', version: 'v1', kind: 'Widget', path: 'apis/v1', namespaced: true },
    ],
  },
  multiversion: {
    ...api('example.com'),
    resources: [
      {
        group: 'test',
        domain: 'example.com',
        version: 'v1alpha1',
        kind: 'Gadget',
        path: 'apis/v1alpha1',
        namespaced: false,
      },
      { group: 'test', domain: 'example.com', version: 'v1', kind: 'Gadget', path: 'apis/v1', namespaced: false },
      {
        group: 'test',
        domain: 'example.com',
        version: 'v1beta1',
        kind: 'Gadget',
        path: 'apis/v1beta1',
        namespaced: false,
      },
      { group: 'test', domain: 'example.com', version: 'v2', kind: 'Gadget', path: 'apis/v2', namespaced: false },
    ],
  },
};

let env: Environment;
let kubeConfig: RestConfig;
let client: RestClient;
let crdDir: string;
const crdNames: string[] = [];

before(async () => {
  if (!process.env['KUBEBUILDER_ASSETS']) {
    throw new Error(
      'KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$HOME/.cache/ts-operator-sdk/test-assets/k8s-v1.36.3-etcd-v3.6.8 (or run through scripts/with-test-assets.sh)',
    );
  }
  crdDir = mkdtempSync(path.join(tmpdir(), 'crd-e2e-'));
  for (const [name, inputs] of Object.entries(PROJECTS)) {
    for (const file of await generateManifests({ projectDir: path.join(FIXTURES_DIR, name), ...inputs })) {
      if (!file.path.startsWith('config/crd/bases/')) continue;
      const target = path.join(crdDir, path.basename(file.path));
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, file.content);
      crdNames.push(/\n {2}name: (\S+)/.exec(file.content)![1]!);
    }
  }
  env = new Environment();
  kubeConfig = await env.start();
  client = new RestClient(kubeConfig);
  await env.installCRDs({ paths: [crdDir] });
});

after(async () => {
  await env?.stop();
  if (crdDir) rmSync(crdDir, { recursive: true, force: true });
});

const widgets = '/apis/test.example.com/v1/namespaces/default/widgets';

function validWidget(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'test.example.com/v1',
    kind: 'Widget',
    metadata: { name },
    spec: { name: 'my-widget', owner: 'team-a', ...spec },
  };
}

/** Creates the object and returns the 422 causes' field paths (fails if the server accepted it). */
async function rejectedFields(collection: string, object: Record<string, unknown>): Promise<string[]> {
  try {
    await client.request('POST', collection, { body: object });
  } catch (err) {
    assert.ok(err instanceof InvalidError, `expected 422 Invalid, got ${String(err)}`);
    // Causes without a field ("<nil>") only say that later CEL rules were skipped.
    return (err.status?.details?.causes ?? []).map((c) => c.field ?? '').filter((f) => f !== '' && f !== '<nil>');
  }
  assert.fail(`the API server accepted an invalid object: ${JSON.stringify(object)}`);
}

test('every generated CRD becomes Established', async () => {
  assert.equal(crdNames.length, 3);
  for (const name of crdNames) {
    const crd = await client.request<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
    assert.ok(
      crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'),
      `${name} is not Established`,
    );
  }
});

test('a valid Widget is accepted and the server applies defaults', async () => {
  const created = await client.request<{ spec: Record<string, unknown> }>('POST', widgets, {
    body: validWidget('defaults', {
      ports: [{ name: 'http', number: 80 }],
      note: null,
      surge: '25%',
      memory: '1Gi',
      target: 8080,
    }),
  });
  assert.equal(created.spec['replicas'], 1, 'replicas defaults to 1');
  assert.equal(created.spec['tier'], 'silver');
  assert.equal(created.spec['paused'], false);
  assert.deepEqual(created.spec['ports'], [{ name: 'http', number: 80, protocol: 'TCP', host: 'localhost' }]);
  assert.equal(created.spec['note'], null, 'nullable field keeps null');
});

test('client-node core types (V1ResourceRequirements, V1EnvVar, V1PodTemplateSpec) validate like Kubernetes', async () => {
  const spec = {
    resources: { limits: { cpu: '500m', memory: 1073741824 }, requests: { cpu: '250m' } },
    env: [
      { name: 'MODE', value: 'fast' },
      { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    template: {
      metadata: { labels: { app: 'widget' } },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'busybox',
            ports: [{ containerPort: 80 }],
            livenessProbe: { httpGet: { port: 'http', path: '/' } },
          },
        ],
      },
    },
  };
  const created = await client.request<{ spec: typeof spec }>('POST', widgets, {
    body: validWidget('core-types', spec),
  });
  assert.equal(created.spec.template.spec.containers[0]!.image, 'busybox');
  assert.deepEqual(
    await rejectedFields(widgets, validWidget('bad-quantity', { resources: { limits: { cpu: 'lots' } } })),
    ['spec.resources.limits.cpu'],
  );
  assert.deepEqual(await rejectedFields(widgets, validWidget('bad-env', { env: [{ value: 'x' }] })), [
    'spec.env[0].name',
  ]);
  assert.deepEqual(
    await rejectedFields(
      widgets,
      validWidget('bad-template', { template: { spec: { containers: [{ image: 'busybox' }] } } }),
    ),
    ['spec.template.spec.containers[0].name'],
  );
  assert.deepEqual(
    await rejectedFields(
      widgets,
      validWidget('bad-port', {
        template: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 'eighty' }] }] } },
      }),
    ),
    ['spec.template.spec.containers[0].ports[0].containerPort'],
  );
});

const violations: Array<[string, Record<string, unknown>, string]> = [
  ['Minimum', { replicas: 0 }, 'spec.replicas'],
  ['Maximum', { replicas: 11 }, 'spec.replicas'],
  ['ExclusiveMinimum', { minReplicas: 0 }, 'spec.minReplicas'],
  ['ExclusiveMaximum', { maxReplicas: 100 }, 'spec.maxReplicas'],
  ['MultipleOf', { maxReplicas: 3 }, 'spec.maxReplicas'],
  ['MinLength', { name: 'ab' }, 'spec.name'],
  ['MaxLength', { name: 'a'.repeat(21) }, 'spec.name'],
  ['Pattern', { name: 'Abc-def' }, 'spec.name'],
  ['Format', { email: 'not an email' }, 'spec.email'],
  ['Enum (marker on alias)', { tier: 'platinum' }, 'spec.tier'],
  ['Enum (string-literal union)', { mode: 'slow' }, 'spec.mode'],
  ['MinItems', { ports: [] }, 'spec.ports'],
  ['MaxItems', { ports: ['a', 'b', 'c', 'd'].map((name, i) => ({ name, number: i + 1 })) }, 'spec.ports'],
  [
    'listType=map',
    {
      ports: [
        { name: 'a', number: 1 },
        { name: 'a', number: 2 },
      ],
    },
    'spec.ports[1]',
  ],
  ['listType=set', { tags: ['x', 'x'] }, 'spec.tags[1]'],
  ['MinProperties', { labels: {} }, 'spec.labels'],
  ['MaxProperties', { labels: { a: '1', b: '2', c: '3', d: '4', e: '5' } }, 'spec.labels'],
  ['XValidation', { minReplicas: 5, maxReplicas: 4 }, 'spec'],
  ['Required', { owner: undefined }, 'spec.owner'],
  ['Type', { extra: 'text' }, 'spec.extra'],
  ['XIntOrString', { target: true }, 'spec.target'],
  ['Quantity pattern', { memory: 'lots' }, 'spec.memory'],
  ['Time format', { startAt: 'yesterday' }, 'spec.startAt'],
  ['@minimum/@maximum tags', { ports: [{ name: 'p', number: 70000 }] }, 'spec.ports[0].number'],
  ['@pattern tag', { ports: [{ name: 'p', number: 1, host: 'UPPER' }] }, 'spec.ports[0].host'],
  ['@maxLength tag', { ports: [{ name: 'p', number: 1, host: 'a'.repeat(254) }] }, 'spec.ports[0].host'],
];

for (const [marker, spec, field] of violations) {
  test(`${marker}: a violating Widget is rejected at ${field}`, async () => {
    const name = `bad-${marker
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/-$/, '')}`;
    const fields = await rejectedFields(widgets, validWidget(name, spec));
    assert.ok(fields.includes(field), `expected a cause at ${field}, got ${JSON.stringify(fields)}`);
  });
}

test('Memcached: size below Minimum=0 is rejected; a valid one gets status via the status subresource', async () => {
  const path = '/apis/cache.example.com/v1/namespaces/default/memcacheds';
  const base = { apiVersion: 'cache.example.com/v1', kind: 'Memcached' };
  assert.deepEqual(await rejectedFields(path, { ...base, metadata: { name: 'neg' }, spec: { size: -1 } }), [
    'spec.size',
  ]);
  await client.request('POST', path, { body: { ...base, metadata: { name: 'ok' }, spec: { size: 3 } } });
  const current = await client.request<Record<string, unknown>>('GET', `${path}/ok`);
  const conditions = [
    {
      type: 'Available',
      status: 'True',
      reason: 'Reconciled',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    },
  ];
  const updated = await client.request<{ status: { conditions: unknown[] } }>('PUT', `${path}/ok/status`, {
    body: { ...current, status: { conditions, nodes: ['a'] } },
  });
  assert.equal(updated.status.conditions.length, 1);
  const badReason = [{ ...conditions[0], reason: '1bad' }];
  await assert.rejects(
    client.request('PUT', `${path}/ok/status`, { body: { ...updated, status: { conditions: badReason } } }),
    InvalidError,
  );
});

test('multi-version Gadget: both versions served, v1 stores, defaults and enums apply', async () => {
  const v1 = '/apis/test.example.com/v1/gadgets';
  assert.deepEqual(
    await rejectedFields(v1, {
      apiVersion: 'test.example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'green' },
      spec: { color: 'green' },
    }),
    ['spec.color'],
  );
  const created = await client.request<{ spec: { color: string } }>('POST', v1, {
    body: { apiVersion: 'test.example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { count: 2 } },
  });
  assert.equal(created.spec.color, 'blue');
  const viaAlpha = await client.request<{ apiVersion: string }>('GET', '/apis/test.example.com/v1alpha1/gadgets/g1');
  assert.equal(viaAlpha.apiVersion, 'test.example.com/v1alpha1');
});

test('printer columns appear in a Table request', async () => {
  await client.request('POST', widgets, { body: validWidget('table', { replicas: 3, tier: 'gold' }) });
  const url = `${client.server}${widgets}/table`;
  const context = new RequestContext(url, HttpMethod.GET);
  await (await toClientNodeKubeConfig(kubeConfig)).applySecurityAuthentication(context);
  const response = await fetch(url, {
    headers: { ...context.getHeaders(), accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    dispatcher: context.getDispatcher(),
  });
  assert.equal(response.status, 200);
  const table = (await response.json()) as {
    kind: string;
    columnDefinitions: Array<{ name: string; priority?: number }>;
    rows: Array<{ cells: unknown[] }>;
  };
  assert.equal(table.kind, 'Table');
  const names = table.columnDefinitions.map((c) => c.name);
  assert.deepEqual(names, ['Name', 'Replicas', 'Tier', 'Age']);
  assert.equal(table.columnDefinitions.find((c) => c.name === 'Tier')?.priority, 1);
  assert.deepEqual(table.rows[0]!.cells.slice(0, 3), ['table', 3, 'gold']);
});

test('scale subresource, short names and categories come from the markers', async () => {
  await client.request('POST', widgets, { body: validWidget('scaled', { replicas: 2 }) });
  const scale = await client.request<{ kind: string; spec: { replicas: number } }>('GET', `${widgets}/scaled/scale`);
  assert.equal(scale.kind, 'Scale');
  assert.equal(scale.spec.replicas, 2);
  const discovery = await client.request<{
    resources: Array<{ name: string; shortNames?: string[]; categories?: string[]; singularName?: string }>;
  }>('GET', '/apis/test.example.com/v1');
  const widget = discovery.resources.find((r) => r.name === 'widgets');
  assert.deepEqual(widget?.shortNames, ['wd', 'wdg']);
  assert.deepEqual(widget?.categories, ['all', 'widgets']);
  assert.ok(discovery.resources.some((r) => r.name === 'widgets/scale'));
});

test('pruning drops unknown fields; RawExtension and XPreserveUnknownFields keep them; XEmbeddedResource needs apiVersion and kind', async () => {
  const created = await client.request<{ spec: Record<string, unknown> }>('POST', widgets, {
    body: validWidget('pruning', {
      bogus: 1,
      payload: { any: { nested: [1, 'two'] } },
      extra: { a: 'x' },
      embedded: { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } },
    }),
  });
  assert.equal(created.spec['bogus'], undefined, 'unknown fields are pruned');
  assert.deepEqual(created.spec['payload'], { any: { nested: [1, 'two'] } });
  assert.deepEqual(created.spec['extra'], { a: 'x' });
  assert.deepEqual((created.spec['embedded'] as Record<string, unknown>)['data'], { k: 'v' });
  const fields = await rejectedFields(widgets, validWidget('bad-embedded', { embedded: { data: {} } }));
  assert.ok(
    fields.includes('spec.embedded.apiVersion') && fields.includes('spec.embedded.kind'),
    `got ${JSON.stringify(fields)}`,
  );
});

test('unservedversion is in the CRD but not served; skipversion is left out', async () => {
  const crd = await client.request<{ spec: { versions: Array<{ name: string; served: boolean; storage: boolean }> } }>(
    'GET',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.example.com',
  );
  assert.deepEqual(
    crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
    [
      ['v1', true, true],
      ['v1alpha1', true, false],
      ['v1beta1', false, false],
    ],
  );
  await assert.rejects(
    client.request('GET', '/apis/test.example.com/v1beta1/gadgets'),
    (err: Error) => err.name === 'NotFoundError',
  );
});

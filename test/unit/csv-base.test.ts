/**
 * `generate kustomize manifests`: the base CSV, descriptors read from
 * +operator-sdk:csv markers in TypeScript types, user edits kept on re-run,
 * and no prompt without a terminal.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { generateKustomizeManifestsCommand } from '../../src/commands/generate/kustomize-manifests.js';
import type { CommandIO } from '../../src/cli/io.js';
import { mergeOwned, newBaseCsv, updateBaseCsvText } from '../../src/generators/csv/base.js';
import { readOwnedCrdDescriptions, spacedWords } from '../../src/generators/csv/descriptors.js';
import { UsageError } from '../../src/errors.js';

const TYPES = `import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import type { Condition, int32 } from 'ts-operator-sdk';

/** Backend is where the cache stores data. */
export interface Backend {
  /**
   * Address of the backend server.
   * +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Backend address",order=2
   */
  address?: string;
}

/** MemcachedSpec defines the desired state of Memcached. */
export interface MemcachedSpec {
  /**
   * Size is the number of memcached pods.
   * +kubebuilder:validation:Minimum=0
   * +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount","urn:alm:descriptor:io.kubernetes:custom"},order=1
   */
  size?: int32;
  /**
   * ContainerPort is the port memcached listens on.
   * +operator-sdk:csv:customresourcedefinitions:type=spec
   */
  containerPort?: int32;
  /** Not a descriptor: no marker. */
  note?: string;
  backend?: Backend;
}

/** MemcachedStatus defines the observed state of Memcached. */
export interface MemcachedStatus {
  /**
   * Conditions store the status conditions of the Memcached instances.
   * +operator-sdk:csv:customresourcedefinitions:type=status
   */
  conditions?: Condition[];
  /** +operator-sdk:csv:customresourcedefinitions:type=spec */
  misplaced?: string;
}

/**
 * Memcached is the Schema for the memcacheds API.
 * +kubebuilder:object:root=true
 * +operator-sdk:csv:customresourcedefinitions:displayName="Memcached Cluster",resources={{Deployment,v1,memcached-deployment},{Service,v1,memcached-service}}
 */
export interface Memcached extends KubernetesObject {
  metadata?: V1ObjectMeta;
  spec?: MemcachedSpec;
  status?: MemcachedStatus;
}
`;

const PROJECT = `domain: example.com
layout:
- typescript.ts-operator-sdk.io/v1
projectName: memcached-operator
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: example.com
  group: cache
  kind: Memcached
  path: apis/v1
  version: v1
version: "3"
`;

function project(types = TYPES): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-base-'));
  mkdirSync(join(dir, 'apis', 'v1'), { recursive: true });
  writeFileSync(join(dir, 'apis', 'v1', 'memcached_types.ts'), types);
  writeFileSync(join(dir, 'PROJECT'), PROJECT);
  return dir;
}

const RESOURCE = {
  group: 'cache',
  domain: 'example.com',
  version: 'v1',
  kind: 'Memcached',
  path: 'apis/v1',
  namespaced: true,
};

function silentIO(lines: string[] = []): CommandIO {
  return {
    out: (l) => lines.push(l),
    progress: (l) => lines.push(l),
    debug: () => undefined,
    confirm: () => Promise.reject(new Error('no prompts expected')),
  };
}

describe('descriptors from +operator-sdk:csv markers', () => {
  it('reads display name, description, resources and ordered spec/status descriptors, nested paths included', () => {
    const [owned] = readOwnedCrdDescriptions(project(), [RESOURCE]);
    assert.deepEqual(owned, {
      name: 'memcacheds.cache.example.com',
      version: 'v1',
      kind: 'Memcached',
      displayName: 'Memcached Cluster',
      description: 'Memcached is the Schema for the memcacheds API.',
      resources: [
        { kind: 'Deployment', name: 'memcached-deployment', version: 'v1' },
        { kind: 'Service', name: 'memcached-service', version: 'v1' },
      ],
      specDescriptors: [
        {
          displayName: 'Container Port',
          description: 'ContainerPort is the port memcached listens on.',
          path: 'containerPort',
        },
        {
          displayName: 'Size',
          description: 'Size is the number of memcached pods.',
          path: 'size',
          'x-descriptors': ['urn:alm:descriptor:com.tectonic.ui:podCount', 'urn:alm:descriptor:io.kubernetes:custom'],
        },
        { displayName: 'Backend address', description: 'Address of the backend server.', path: 'backend.address' },
      ],
      statusDescriptors: [
        {
          displayName: 'Conditions',
          description: 'Conditions store the status conditions of the Memcached instances.',
          path: 'conditions',
        },
      ],
    });
  });

  it('lists a kind without markers by name only, with the spaced kind as display name', () => {
    const [owned] = readOwnedCrdDescriptions(project(TYPES.replace(/\+operator-sdk[^\n]*\n/g, '\n')), [
      { ...RESOURCE },
    ]);
    assert.deepEqual(Object.keys(owned!).sort(), ['description', 'displayName', 'kind', 'name', 'version']);
    assert.equal(owned!.displayName, 'Memcached');
  });

  it('reports a field marker without type=, and malformed resources, as file:line problems', () => {
    const bad = TYPES.replace(
      'type=spec\n   */\n  containerPort',
      'displayName="Port"\n   */\n  containerPort',
    ).replace(
      'resources={{Deployment,v1,memcached-deployment},{Service,v1,memcached-service}}',
      'resources={{Deployment,v1}}',
    );
    assert.throws(
      () => readOwnedCrdDescriptions(project(bad), [RESOURCE]),
      (err: unknown) => {
        assert.ok(err instanceof UsageError);
        const messages = err.problems.map((p) => `${p.file}:${p.line}: ${p.message}`);
        assert.ok(
          messages.some((m) => /memcached_types\.ts:\d+: .*containerPort needs type=spec or type=status/.test(m)),
          messages.join('\n'),
        );
        assert.ok(
          messages.some((m) => /needs three parts/.test(m)),
          messages.join('\n'),
        );
        return true;
      },
    );
  });

  it('titles names like operator-sdk', () => {
    assert.equal(spacedWords('containerPort'), 'Container Port');
    assert.equal(spacedWords('HTTPRoute'), 'HTTP Route');
    assert.equal(spacedWords('memcached-operator'), 'Memcached Operator');
  });
});

describe('base CSV', () => {
  it("has operator-sdk's placeholders", () => {
    const csv = newBaseCsv('memcached-operator', []);
    assert.equal(csv.metadata.name, 'memcached-operator.v0.0.0');
    assert.equal(csv.metadata['namespace'], 'placeholder');
    assert.deepEqual(csv.metadata.annotations, { 'alm-examples': '[]', capabilities: 'Basic Install' });
    assert.equal(csv.spec['displayName'], 'Memcached Operator');
    assert.equal(csv.spec['description'], 'Memcached Operator description. TODO.');
    assert.deepEqual(csv.spec['install'], { spec: { deployments: null }, strategy: '' });
    assert.deepEqual(
      (csv.spec['installModes'] as Array<{ type: string; supported: boolean }>)
        .filter((m) => m.supported)
        .map((m) => m.type),
      ['AllNamespaces'],
    );
  });

  it('re-applies marker descriptors, keeps user edits and hand-written descriptors, and is byte-identical when nothing changed', () => {
    const generated = readOwnedCrdDescriptions(project(), [RESOURCE]);
    const edited = `# my notes stay\n${YAML.stringify(newBaseCsv('memcached-operator', generated)).replace('Memcached Operator description. TODO.', 'Runs memcached.').replace('displayName: Memcached Cluster', 'displayName: My Cache')}`;
    assert.equal(updateBaseCsvText(edited, generated), edited);
    const withoutStatus = generated.map((g) => ({
      ...g,
      statusDescriptors: undefined,
      specDescriptors: [{ displayName: 'Size', path: 'size' }],
    }));
    const updated = updateBaseCsvText(edited, withoutStatus);
    const parsed = YAML.parse(updated) as {
      spec: { description: string; customresourcedefinitions: { owned: Array<Record<string, unknown>> } };
    };
    assert.match(updated, /^# my notes stay/);
    assert.equal(parsed.spec.description, 'Runs memcached.');
    assert.equal(parsed.spec.customresourcedefinitions.owned[0]!['displayName'], 'My Cache');
    assert.deepEqual(parsed.spec.customresourcedefinitions.owned[0]!['specDescriptors'], [
      { displayName: 'Size', path: 'size' },
    ]);
    // No status markers any more: the base's status descriptors stay.
    assert.equal((parsed.spec.customresourcedefinitions.owned[0]!['statusDescriptors'] as unknown[]).length, 1);
  });

  it('appends new APIs and keeps entries it does not generate', () => {
    const merged = mergeOwned(
      [{ name: 'others.x.io', version: 'v1', kind: 'Other', displayName: 'Other' }],
      [{ name: 'as.x.io', version: 'v1', kind: 'A', displayName: 'A' }],
    );
    assert.deepEqual(
      merged.map((m) => m.kind),
      ['Other', 'A'],
    );
  });
});

describe('generate kustomize manifests command', () => {
  it('without a terminal never asks, even with --interactive, and writes the base and a missing kustomization', async () => {
    const dir = project();
    const lines: string[] = [];
    let asked = 0;
    await generateKustomizeManifestsCommand(
      { directory: dir, interactive: true, terminal: false, quiet: false, ask: () => Promise.resolve(String(++asked)) },
      silentIO(lines),
    );
    assert.equal(asked, 0);
    assert.ok(lines.some((l) => /--interactive ignored/.test(l)));
    const base = readFileSync(
      join(dir, 'config/manifests/bases/memcached-operator.clusterserviceversion.yaml'),
      'utf8',
    );
    assert.match(base, /displayName: Memcached Operator/);
    assert.match(
      readFileSync(join(dir, 'config/manifests/kustomization.yaml'), 'utf8'),
      /bases\/memcached-operator\.clusterserviceversion\.yaml/,
    );
  });

  it('on a terminal asks for the UI metadata once, then keeps the answers on re-run', async () => {
    const dir = project();
    const answers = [
      'Memcached',
      'Caches things',
      'Example Inc',
      'https://example.com',
      'cache, memcached',
      'Jane:jane@example.com, Joe:joe@example.com',
    ];
    const questions: string[] = [];
    const ask = (q: string): Promise<string> => {
      questions.push(q);
      return Promise.resolve(answers.shift() ?? '');
    };
    await generateKustomizeManifestsCommand({ directory: dir, terminal: true, quiet: true, ask }, silentIO());
    assert.equal(questions.length, 6);
    const path = join(dir, 'config/manifests/bases/memcached-operator.clusterserviceversion.yaml');
    const first = readFileSync(path, 'utf8');
    const csv = YAML.parse(first) as { spec: Record<string, unknown> };
    assert.equal(csv.spec['displayName'], 'Memcached');
    assert.deepEqual(csv.spec['keywords'], ['cache', 'memcached']);
    assert.deepEqual(csv.spec['maintainers'], [
      { name: 'Jane', email: 'jane@example.com' },
      { name: 'Joe', email: 'joe@example.com' },
    ]);
    await generateKustomizeManifestsCommand({ directory: dir, terminal: true, quiet: true, ask }, silentIO());
    assert.equal(questions.length, 6, 'an existing base is never re-prompted');
    assert.equal(readFileSync(path, 'utf8'), first);
  });

  it('without PROJECT needs --package', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-noproject-'));
    await assert.rejects(
      generateKustomizeManifestsCommand({ directory: dir, terminal: false, quiet: true }, silentIO()),
      (err: unknown) => err instanceof UsageError && /--package <name> must be set/.test(err.message),
    );
  });
});

describe('generate kustomize manifests on a real terminal', () => {
  const cli = fileURLToPath(new URL('../../../bin/ts-operator-sdk.js', import.meta.url));
  // util-linux `script` gives the CLI a pseudo-terminal, so stdin.isTTY is true as for a person at a shell.
  const onTerminal = (dir: string, args: string, answers: string) =>
    spawnSync(
      'script',
      [
        '-qec',
        `${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} generate kustomize manifests ${args}`,
        '/dev/null',
      ],
      { cwd: dir, input: answers, encoding: 'utf8', timeout: 60_000 },
    );

  it('asks the six questions and keeps answers typed ahead', () => {
    const dir = project();
    const result = onTerminal(dir, '', 'My Op\nDoes things\nACME\n\nk1, k2\nJane:j@example.com\n');
    assert.equal(result.status, 0, result.stdout);
    const csv = YAML.parse(
      readFileSync(join(dir, 'config/manifests/bases/memcached-operator.clusterserviceversion.yaml'), 'utf8'),
    ) as { spec: Record<string, unknown> };
    assert.equal(csv.spec['displayName'], 'My Op');
    assert.deepEqual(csv.spec['provider'], { name: 'ACME', url: 'https://your.domain' });
    assert.deepEqual(csv.spec['keywords'], ['k1', 'k2']);
  });

  it('a terminal closed mid-way is a one-line error naming --interactive=false; --interactive=false asks nothing', () => {
    const dir = project();
    const result = onTerminal(dir, '', 'My Op\n');
    assert.notEqual(result.status, 0);
    assert.match(
      result.stdout,
      /Error: no answer to "Description for the operator \(required\):" \(stdin was closed\)\. Answer the questions, or pass --interactive=false to write placeholders\./,
    );
    const quiet = onTerminal(dir, '--interactive=false', '');
    assert.equal(quiet.status, 0, quiet.stdout);
    assert.doesNotMatch(quiet.stdout, /Display name/);
  });
});

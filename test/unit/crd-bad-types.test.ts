import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../src/errors.js';
import { generateManifests, type ApiResource } from '../../src/generators/manifests.js';

const HEADER = `import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import type { int32, float64 } from 'ts-operator-sdk';
`;

/** A one-kind project whose ThingSpec body is `specBody` (line 4 of the file is its first line). */
function thingTypes(specBody: string, extra = ''): string {
  return `${HEADER}
export interface ThingSpec {
${specBody}
}
${extra}
/** +kubebuilder:object:root=true */
export interface Thing extends KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: ThingSpec;
}
`;
}

const v1: ApiResource = {
  group: 'bad',
  domain: 'example.com',
  version: 'v1',
  kind: 'Thing',
  path: 'apis/v1',
  namespaced: true,
};

interface BadCase {
  name: string;
  files: Record<string, string>;
  resources?: ApiResource[];
  allowDangerousTypes?: boolean;
  /** Expected `file:line: message` (message as a regex source). */
  expect: RegExp;
}

const cases: BadCase[] = [
  {
    name: 'number without a format',
    files: { 'apis/v1/thing_types.ts': thingTypes('  size: number;') },
    expect:
      /^apis\/v1\/thing_types\.ts:5: a plain number has no integer format: use int32 or int64 from ts-operator-sdk, or float64 with --allow-dangerous-types$/m,
  },
  {
    name: 'float64 without --allow-dangerous-types',
    files: { 'apis/v1/thing_types.ts': thingTypes('  ratio: float64;') },
    expect: /^apis\/v1\/thing_types\.ts:5: float64 fields are rejected .*--allow-dangerous-types/m,
  },
  {
    name: 'recursive type (would need $ref)',
    files: { 'apis/v1/thing_types.ts': thingTypes('  tree: Node;', 'export interface Node { children?: Node[]; }\n') },
    expect: /^apis\/v1\/thing_types\.ts:7: recursive type Node -> Node: CRD schemas cannot use \$ref/m,
  },
  {
    name: 'enum conflicting with pattern',
    files: {
      'apis/v1/thing_types.ts': thingTypes(
        '  /**\n   * +kubebuilder:validation:Enum=abc;XYZ\n   * +kubebuilder:validation:Pattern=^[a-z]+$\n   */\n  mode: string;',
      ),
    },
    expect:
      /^apis\/v1\/thing_types\.ts:6: \+kubebuilder:validation:Enum=abc;XYZ: enum value "XYZ" does not match the pattern/m,
  },
  {
    name: 'unknown marker',
    files: { 'apis/v1/thing_types.ts': thingTypes('  // +kubebuilder:validation:Minimun=1\n  size: int32;') },
    expect: /^apis\/v1\/thing_types\.ts:5: unknown marker \+kubebuilder:validation:Minimun: check the spelling/m,
  },
  {
    name: 'malformed marker value',
    files: { 'apis/v1/thing_types.ts': thingTypes('  // +kubebuilder:validation:Minimum=one\n  size: int32;') },
    expect: /^apis\/v1\/thing_types\.ts:5: \+kubebuilder:validation:Minimum must be a number, found "one"$/m,
  },
  {
    name: 'bad CEL rule',
    files: {
      'apis/v1/thing_types.ts': thingTypes(
        '  // +kubebuilder:validation:XValidation:rule="self.size > (1",message="too small"\n  size: int32;',
      ),
    },
    expect: /^apis\/v1\/thing_types\.ts:5: .*CEL rule "self\.size > \(1" has an unclosed "\("/m,
  },
  {
    name: 'missing Spec',
    files: {
      'apis/v1/thing_types.ts': `${HEADER}\n/** +kubebuilder:object:root=true */\nexport interface Thing extends KubernetesObject {\n  apiVersion?: string;\n  kind?: string;\n  metadata?: V1ObjectMeta;\n}\n`,
    },
    expect: /^apis\/v1\/thing_types\.ts:5: Thing has no spec field: add `spec\?: ThingSpec`/m,
  },
  {
    name: 'missing metadata, the base interface not extended',
    files: {
      'apis/v1/thing_types.ts': `${HEADER}\n/** +kubebuilder:object:root=true */\nexport interface Thing {\n  spec?: { size?: int32 };\n}\n`,
    },
    expect:
      /^apis\/v1\/thing_types\.ts:5: Thing has no metadata field: extend `KubernetesObject` \(from ts-operator-sdk\/api\), or add `metadata\?: V1ObjectMeta`$/m,
  },
  {
    // ts-operator-sdk/api's KubernetesObject is recognised by its import like client-node's.
    name: 'KubernetesObject from ts-operator-sdk/api embedded in a spec',
    files: {
      'apis/v1/thing_types.ts': thingTypes('  inner: SdkObject;').replace(
        HEADER,
        `${HEADER}import type { KubernetesObject as SdkObject } from 'ts-operator-sdk/api';\n`,
      ),
    },
    expect: /^apis\/v1\/thing_types\.ts:\d+: KubernetesObject cannot be embedded in a schema/m,
  },
  {
    name: 'two storage versions',
    files: {
      'apis/v1/thing_types.ts': thingTypes('  size?: int32;').replace(
        '/** +kubebuilder:object:root=true */',
        '/**\n * +kubebuilder:object:root=true\n * +kubebuilder:storageversion\n */',
      ),
      'apis/v2/thing_types.ts': thingTypes('  size?: int32;').replace(
        '/** +kubebuilder:object:root=true */',
        '/**\n * +kubebuilder:object:root=true\n * +kubebuilder:storageversion\n */',
      ),
    },
    resources: [v1, { ...v1, version: 'v2', path: 'apis/v2' }],
    expect:
      /^apis\/v1\/thing_types\.ts:10: Thing has more than one storage version \(v1, v2\): keep \+kubebuilder:storageversion on exactly one$/m,
  },
  {
    name: 'default not matching its type',
    files: { 'apis/v1/thing_types.ts': thingTypes('  // +kubebuilder:default=abc\n  size?: int32;') },
    expect:
      /^apis\/v1\/thing_types\.ts:6: \.spec\.size: default "abc" does not match the field's schema \(value must be integer\)/m,
  },
  {
    name: 'uniqueItems',
    files: {
      'apis/v1/thing_types.ts': thingTypes('  // +kubebuilder:validation:UniqueItems=true\n  tags?: string[];'),
    },
    expect: /^apis\/v1\/thing_types\.ts:5: .*uniqueItems is forbidden in structural schemas .*use \+listType=set/m,
  },
  {
    name: 'Minimum on a string',
    files: { 'apis/v1/thing_types.ts': thingTypes('  // +kubebuilder:validation:Minimum=1\n  name?: string;') },
    expect:
      /^apis\/v1\/thing_types\.ts:5: \+kubebuilder:validation:Minimum=1: Minimum applies to integer or number fields, but this field is string/m,
  },
  {
    name: 'listType=map without listMapKey',
    files: {
      'apis/v1/thing_types.ts': thingTypes(
        '  // +listType=map\n  items?: Item[];',
        'export interface Item { name: string; }\n',
      ),
    },
    expect: /^apis\/v1\/thing_types\.ts:5: \+listType=map: listType=map needs at least one \+listMapKey/m,
  },
  {
    name: 'properties mixed with an index signature',
    files: {
      'apis/v1/thing_types.ts': thingTypes(
        '  bag?: Bag;',
        'export interface Bag { fixed: string; [key: string]: string; }\n',
      ),
    },
    expect: /^apis\/v1\/thing_types\.ts:7: a type cannot mix named properties and an index signature/m,
  },
  {
    name: 'union that is not a string-literal union',
    files: { 'apis/v1/thing_types.ts': thingTypes('  value?: string | boolean;') },
    expect: /^apis\/v1\/thing_types\.ts:5: union `string \| boolean` cannot be expressed in a structural schema/m,
  },
  {
    name: 'marker on the wrong declaration',
    files: { 'apis/v1/thing_types.ts': thingTypes('  // +kubebuilder:subresource:status\n  size?: int32;') },
    expect: /^apis\/v1\/thing_types\.ts:5: marker \+kubebuilder:subresource:status cannot be used on a field/m,
  },
  {
    name: 'rbac marker without verbs',
    files: {
      'apis/v1/thing_types.ts': thingTypes('  size?: int32;'),
      'controllers/thing_controller.ts':
        '// +kubebuilder:rbac:groups=apps,resources=deployments\nexport const x = 1;\n',
    },
    expect: /^controllers\/thing_controller\.ts:1: marker \+kubebuilder:rbac is missing the required argument verbs=$/m,
  },
];

for (const c of cases) {
  test(`bad types: ${c.name} gives file:line and produces nothing`, async () => {
    const projectDir = mkdtempSync(path.join(tmpdir(), 'crd-bad-'));
    try {
      for (const [file, content] of Object.entries(c.files)) {
        mkdirSync(path.dirname(path.join(projectDir, file)), { recursive: true });
        writeFileSync(path.join(projectDir, file), content);
      }
      let result: unknown;
      let error: unknown;
      try {
        result = await generateManifests({
          projectDir,
          domain: 'example.com',
          multigroup: false,
          resources: c.resources ?? [v1],
          allowDangerousTypes: c.allowDangerousTypes,
        });
      } catch (err) {
        error = err;
      }
      assert.equal(result, undefined, 'no files may be returned');
      assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
      assert.match(error.message, c.expect);
      for (const p of error.problems) assert.match(`${p.file}:${p.line}`, /^[\w/.-]+\.ts:\d+$/);
      assert.equal(existsSync(path.join(projectDir, 'config')), false, 'nothing is written');
    } finally {
      rmSync(projectDir, { recursive: true, force: true });
    }
  });
}

test('bad types: float64 is accepted with allowDangerousTypes', async () => {
  const projectDir = mkdtempSync(path.join(tmpdir(), 'crd-float-'));
  try {
    mkdirSync(path.join(projectDir, 'apis/v1'), { recursive: true });
    writeFileSync(path.join(projectDir, 'apis/v1/thing_types.ts'), thingTypes('  ratio?: float64;'));
    const files = await generateManifests({
      projectDir,
      domain: 'example.com',
      multigroup: false,
      resources: [v1],
      allowDangerousTypes: true,
    });
    const crd = files.find((f) => f.path === 'config/crd/bases/bad.example.com_things.yaml');
    assert.match(crd?.content ?? '', /ratio:\n {16}type: number/);
  } finally {
    rmSync(projectDir, { recursive: true, force: true });
  }
});

test('package-level +kubebuilder:validation:Optional makes fields without ? optional; +required still wins', async () => {
  const projectDir = mkdtempSync(path.join(tmpdir(), 'crd-optional-'));
  try {
    mkdirSync(path.join(projectDir, 'apis/v1'), { recursive: true });
    writeFileSync(
      path.join(projectDir, 'apis/v1/groupversion_info.ts'),
      "/**\n * +groupName=bad.example.com\n * +kubebuilder:validation:Optional\n */\nexport const GroupVersion = { group: 'bad.example.com', version: 'v1' } as const;\n",
    );
    writeFileSync(
      path.join(projectDir, 'apis/v1/thing_types.ts'),
      thingTypes('  plain: string;\n  // +required\n  must: string;'),
    );
    const files = await generateManifests({ projectDir, domain: 'example.com', multigroup: false, resources: [v1] });
    const crd = files.find((f) => f.path === 'config/crd/bases/bad.example.com_things.yaml')?.content ?? '';
    assert.match(crd, /must:\n {16}type: string\n {14}plain:\n {16}type: string\n {12}required:\n {12}- must\n/);
  } finally {
    rmSync(projectDir, { recursive: true, force: true });
  }
});

test('a +groupName that disagrees with PROJECT is reported at the marker', async () => {
  const projectDir = mkdtempSync(path.join(tmpdir(), 'crd-group-'));
  try {
    mkdirSync(path.join(projectDir, 'apis/v1'), { recursive: true });
    writeFileSync(
      path.join(projectDir, 'apis/v1/groupversion_info.ts'),
      "/** +groupName=other.example.com */\nexport const GroupVersion = { group: 'other.example.com', version: 'v1' } as const;\n",
    );
    writeFileSync(path.join(projectDir, 'apis/v1/thing_types.ts'), thingTypes('  size?: int32;'));
    await assert.rejects(
      generateManifests({ projectDir, domain: 'example.com', multigroup: false, resources: [v1] }),
      /apis\/v1\/groupversion_info\.ts:1: \+groupName=other\.example\.com does not match the API group bad\.example\.com that PROJECT declares for Thing v1/,
    );
  } finally {
    rmSync(projectDir, { recursive: true, force: true });
  }
});

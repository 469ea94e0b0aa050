/**
 * The markers `generate manifests` understands, named exactly as
 * controller-gen names them so Go kubebuilder docs apply verbatim.
 */

import { SCAFFOLD_MARKER_PREFIX } from '../../scaffold/markers.js';

/** Where a marker may appear. */
export type MarkerTarget = 'field' | 'type' | 'package' | 'controller';

/**
 * How a marker's argument is written:
 * - `flag`: no argument (`+optional`), optionally `=true`/`=false`;
 * - `value`: one value after `=` (`+kubebuilder:validation:Minimum=0`), kept as raw text
 *   and converted once the field's type is known;
 * - `named`: `key=value` pairs after `:` (`+kubebuilder:printcolumn:name=Size,type=integer`).
 */
export type MarkerArgs =
  | { form: 'flag' }
  | { form: 'value'; kind: ValueKind }
  | { form: 'named'; params: Record<string, { kind: ValueKind; required?: boolean }> };

/** How raw argument text is interpreted. `any` is resolved against the field's schema later. */
export type ValueKind = 'string' | 'int' | 'number' | 'bool' | 'list' | 'any';

/** One known marker. */
export interface MarkerDefinition {
  name: string;
  targets: readonly MarkerTarget[];
  args: MarkerArgs;
  /** True when the marker may appear several times on one declaration. */
  repeatable?: boolean;
}

const FIELD_OR_TYPE: readonly MarkerTarget[] = ['field', 'type'];
const v = (kind: ValueKind): MarkerArgs => ({ form: 'value', kind });
const flag: MarkerArgs = { form: 'flag' };

const definitions: MarkerDefinition[] = [
  // validation (controller-tools pkg/crd/markers/validation.go)
  { name: 'kubebuilder:validation:Minimum', targets: FIELD_OR_TYPE, args: v('number') },
  { name: 'kubebuilder:validation:Maximum', targets: FIELD_OR_TYPE, args: v('number') },
  { name: 'kubebuilder:validation:ExclusiveMinimum', targets: FIELD_OR_TYPE, args: v('bool') },
  { name: 'kubebuilder:validation:ExclusiveMaximum', targets: FIELD_OR_TYPE, args: v('bool') },
  { name: 'kubebuilder:validation:MultipleOf', targets: FIELD_OR_TYPE, args: v('number') },
  { name: 'kubebuilder:validation:MinLength', targets: FIELD_OR_TYPE, args: v('int') },
  { name: 'kubebuilder:validation:MaxLength', targets: FIELD_OR_TYPE, args: v('int') },
  { name: 'kubebuilder:validation:Pattern', targets: FIELD_OR_TYPE, args: v('string') },
  { name: 'kubebuilder:validation:MinItems', targets: FIELD_OR_TYPE, args: v('int') },
  { name: 'kubebuilder:validation:MaxItems', targets: FIELD_OR_TYPE, args: v('int') },
  { name: 'kubebuilder:validation:UniqueItems', targets: FIELD_OR_TYPE, args: v('bool') },
  { name: 'kubebuilder:validation:MinProperties', targets: FIELD_OR_TYPE, args: v('int') },
  { name: 'kubebuilder:validation:MaxProperties', targets: FIELD_OR_TYPE, args: v('int') },
  { name: 'kubebuilder:validation:Enum', targets: FIELD_OR_TYPE, args: v('list') },
  { name: 'kubebuilder:validation:Format', targets: FIELD_OR_TYPE, args: v('string') },
  { name: 'kubebuilder:validation:Type', targets: FIELD_OR_TYPE, args: v('string') },
  {
    name: 'kubebuilder:validation:XValidation',
    targets: FIELD_OR_TYPE,
    repeatable: true,
    args: {
      form: 'named',
      params: {
        rule: { kind: 'string', required: true },
        message: { kind: 'string' },
        messageExpression: { kind: 'string' },
        reason: { kind: 'string' },
        fieldPath: { kind: 'string' },
        optionalOldSelf: { kind: 'bool' },
      },
    },
  },
  { name: 'kubebuilder:validation:XIntOrString', targets: FIELD_OR_TYPE, args: flag },
  { name: 'kubebuilder:validation:XPreserveUnknownFields', targets: FIELD_OR_TYPE, args: flag },
  { name: 'kubebuilder:pruning:PreserveUnknownFields', targets: FIELD_OR_TYPE, args: flag },
  { name: 'kubebuilder:validation:XEmbeddedResource', targets: FIELD_OR_TYPE, args: flag },
  { name: 'kubebuilder:validation:EmbeddedResource', targets: FIELD_OR_TYPE, args: flag },
  // required / optional; on a type or package they set the default for its fields
  { name: 'kubebuilder:validation:Required', targets: ['field', 'type', 'package'], args: flag },
  { name: 'kubebuilder:validation:Optional', targets: ['field', 'type', 'package'], args: flag },
  { name: 'required', targets: ['field'], args: flag },
  { name: 'optional', targets: ['field'], args: flag },
  { name: 'nullable', targets: FIELD_OR_TYPE, args: flag },
  { name: 'kubebuilder:default', targets: FIELD_OR_TYPE, args: v('any') },
  { name: 'default', targets: FIELD_OR_TYPE, args: v('any') },
  { name: 'kubebuilder:example', targets: FIELD_OR_TYPE, args: v('any') },
  // topology
  { name: 'listType', targets: FIELD_OR_TYPE, args: v('string') },
  { name: 'listMapKey', targets: FIELD_OR_TYPE, args: v('string'), repeatable: true },
  { name: 'mapType', targets: FIELD_OR_TYPE, args: v('string') },
  { name: 'structType', targets: FIELD_OR_TYPE, args: v('string') },
  // CRD-level, on the root type
  { name: 'kubebuilder:object:root', targets: ['type'], args: v('bool') },
  { name: 'kubebuilder:object:generate', targets: ['type', 'package'], args: v('bool') },
  { name: 'kubebuilder:subresource:status', targets: ['type'], args: flag },
  {
    name: 'kubebuilder:subresource:scale',
    targets: ['type'],
    args: {
      form: 'named',
      params: {
        specpath: { kind: 'string', required: true },
        statuspath: { kind: 'string', required: true },
        selectorpath: { kind: 'string' },
      },
    },
  },
  {
    name: 'kubebuilder:resource',
    targets: ['type'],
    args: {
      form: 'named',
      params: {
        path: { kind: 'string' },
        shortName: { kind: 'list' },
        categories: { kind: 'list' },
        singular: { kind: 'string' },
        scope: { kind: 'string' },
      },
    },
  },
  {
    name: 'kubebuilder:printcolumn',
    targets: ['type'],
    repeatable: true,
    args: {
      form: 'named',
      params: {
        name: { kind: 'string', required: true },
        type: { kind: 'string', required: true },
        JSONPath: { kind: 'string', required: true },
        description: { kind: 'string' },
        format: { kind: 'string' },
        priority: { kind: 'int' },
      },
    },
  },
  { name: 'kubebuilder:storageversion', targets: ['type'], args: flag },
  {
    name: 'kubebuilder:deprecatedversion',
    targets: ['type'],
    args: { form: 'named', params: { warning: { kind: 'string' } } },
  },
  { name: 'kubebuilder:unservedversion', targets: ['type'], args: flag },
  { name: 'kubebuilder:skipversion', targets: ['type', 'package'], args: flag },
  {
    name: 'kubebuilder:metadata',
    targets: ['type'],
    args: { form: 'named', params: { annotations: { kind: 'list' }, labels: { kind: 'list' } } },
  },
  // OLM CSV descriptors (operator-sdk), read by `generate kustomize manifests`;
  // `resources` is kept raw because its value nests braces: {{Deployment,v1,name}}.
  {
    name: 'operator-sdk:csv:customresourcedefinitions',
    targets: FIELD_OR_TYPE,
    args: {
      form: 'named',
      params: {
        type: { kind: 'string' },
        displayName: { kind: 'string' },
        xDescriptors: { kind: 'list' },
        order: { kind: 'int' },
        resources: { kind: 'any' },
      },
    },
  },
  // package level
  { name: 'groupName', targets: ['package'], args: v('string') },
  { name: 'versionName', targets: ['package'], args: v('string') },
  // RBAC (controller-tools pkg/rbac/parser.go)
  {
    name: 'kubebuilder:rbac',
    targets: ['controller'],
    repeatable: true,
    args: {
      form: 'named',
      params: {
        groups: { kind: 'list' },
        resources: { kind: 'list' },
        resourceNames: { kind: 'list' },
        verbs: { kind: 'list', required: true },
        urls: { kind: 'list' },
        namespace: { kind: 'string' },
        roleName: { kind: 'string' },
      },
    },
  },
  // Admission webhooks (controller-tools pkg/webhook/parser.go). controller-gen reads them as
  // package markers, so they may sit above any declaration; the webhook generator checks the
  // arguments (required ones included) to report every problem with a fix, not just the first.
  {
    name: 'kubebuilder:webhook',
    targets: ['field', 'type', 'package', 'controller'],
    repeatable: true,
    args: {
      form: 'named',
      params: {
        path: { kind: 'string' },
        url: { kind: 'string' },
        mutating: { kind: 'bool' },
        failurePolicy: { kind: 'string' },
        matchPolicy: { kind: 'string' },
        sideEffects: { kind: 'string' },
        timeoutSeconds: { kind: 'int' },
        groups: { kind: 'list' },
        resources: { kind: 'list' },
        verbs: { kind: 'list' },
        versions: { kind: 'list' },
        name: { kind: 'string' },
        webhookVersions: { kind: 'list' },
        admissionReviewVersions: { kind: 'list' },
        reinvocationPolicy: { kind: 'string' },
        serviceName: { kind: 'string' },
        serviceNamespace: { kind: 'string' },
        servicePort: { kind: 'int' },
      },
    },
  },
];

const byName = new Map(definitions.map((d) => [d.name, d]));
// Longest names first, so `kubebuilder:validation:XValidation` wins over shorter prefixes.
const namesLongestFirst = [...byName.keys()].sort((a, b) => b.length - a.length);

/**
 * Finds the marker whose name starts `body` and is followed by the end, `=` or `:`.
 * Returns undefined for an unknown marker.
 */
export function lookupMarker(body: string): MarkerDefinition | undefined {
  for (const name of namesLongestFirst) {
    if (!body.startsWith(name)) continue;
    const next = body.charAt(name.length);
    if (next === '' || next === '=' || next === ':') return byName.get(name);
  }
  return undefined;
}

/**
 * Prefixes of markers that belong to other generators (deepcopy, client-gen,
 * the scaffolder). They are legal in API files but have no effect on manifests.
 */
export const FOREIGN_MARKER_PREFIXES: readonly string[] = [
  SCAFFOLD_MARKER_PREFIX,
  'genclient',
  'k8s:deepcopy-gen',
  'kubebuilder:webhookconfiguration',
];

/** JSDoc tags accepted as aliases of validation markers (`@minimum 0`). */
export const JSDOC_TAG_ALIASES: Readonly<Record<string, string>> = {
  minimum: 'kubebuilder:validation:Minimum',
  maximum: 'kubebuilder:validation:Maximum',
  exclusiveMinimum: 'kubebuilder:validation:ExclusiveMinimum',
  exclusiveMaximum: 'kubebuilder:validation:ExclusiveMaximum',
  multipleOf: 'kubebuilder:validation:MultipleOf',
  minLength: 'kubebuilder:validation:MinLength',
  maxLength: 'kubebuilder:validation:MaxLength',
  pattern: 'kubebuilder:validation:Pattern',
  minItems: 'kubebuilder:validation:MinItems',
  maxItems: 'kubebuilder:validation:MaxItems',
  minProperties: 'kubebuilder:validation:MinProperties',
  maxProperties: 'kubebuilder:validation:MaxProperties',
  format: 'kubebuilder:validation:Format',
  enum: 'kubebuilder:validation:Enum',
  default: 'kubebuilder:default',
  example: 'kubebuilder:example',
  nullable: 'nullable',
};

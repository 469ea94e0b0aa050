import type { JSONSchemaProps } from './schema-types.js';

/** resource.Quantity's serialization pattern, as apimachinery declares it. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** Schema of resource.Quantity (controller-tools known_types.go). */
export function quantitySchema(): JSONSchemaProps {
  return {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
  };
}

/** Schema of intstr.IntOrString. */
export function intOrStringSchema(): JSONSchemaProps {
  return { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true };
}

/** The TypeMeta field descriptions controller-gen copies onto every root type. */
export const API_VERSION_DESCRIPTION = [
  'APIVersion defines the versioned schema of this representation of an object.',
  'Servers should convert recognized schemas to the latest internal value, and',
  'may reject unrecognized values.',
  'More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
].join('\n');

/** See API_VERSION_DESCRIPTION. */
export const KIND_DESCRIPTION = [
  'Kind is a string value representing the REST resource this object represents.',
  'Servers may infer this from the endpoint the client submits requests to.',
  'Cannot be updated.',
  'In CamelCase.',
  'More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
].join('\n');

/** metav1.Condition exactly as controller-gen emits it. */
export function conditionSchema(): JSONSchemaProps {
  return {
    description: 'Condition contains details for one aspect of the current state of this API Resource.',
    properties: {
      lastTransitionTime: {
        description: [
          'lastTransitionTime is the last time the condition transitioned from one status to another.',
          'This should be when the underlying condition changed.  If that is not known, then using the time when the API field changed is acceptable.',
        ].join('\n'),
        format: 'date-time',
        type: 'string',
      },
      message: {
        description: [
          'message is a human readable message indicating details about the transition.',
          'This may be an empty string.',
        ].join('\n'),
        maxLength: 32768,
        type: 'string',
      },
      observedGeneration: {
        description: [
          'observedGeneration represents the .metadata.generation that the condition was set based upon.',
          'For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, the condition is out of date',
          'with respect to the current state of the instance.',
        ].join('\n'),
        format: 'int64',
        minimum: 0,
        type: 'integer',
      },
      reason: {
        description: [
          "reason contains a programmatic identifier indicating the reason for the condition's last transition.",
          'Producers of specific condition types may define expected values and meanings for this field,',
          'and whether the values are considered a guaranteed API.',
          'The value should be a CamelCase string.',
          'This field may not be empty.',
        ].join('\n'),
        maxLength: 1024,
        minLength: 1,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
        type: 'string',
      },
      status: {
        description: 'status of the condition, one of True, False, Unknown.',
        enum: ['True', 'False', 'Unknown'],
        type: 'string',
      },
      type: {
        description: 'type of condition in CamelCase or in foo.example.com/CamelCase.',
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
        type: 'string',
      },
    },
    required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
    type: 'object',
  };
}

/**
 * Schemas of the aliases exported by ts-operator-sdk (src/runtime/api/types.ts),
 * keyed by exported name. `float64` is handled by the caller (it needs the
 * allow-dangerous-types switch).
 */
export const SDK_KNOWN_TYPES: Readonly<Record<string, () => JSONSchemaProps>> = {
  int32: () => ({ format: 'int32', type: 'integer' }),
  int64: () => ({ format: 'int64', type: 'integer' }),
  Time: () => ({ format: 'date-time', type: 'string' }),
  MicroTime: () => ({ format: 'date-time', type: 'string' }),
  Duration: () => ({ type: 'string' }),
  Quantity: quantitySchema,
  IntOrString: intOrStringSchema,
  RawExtension: () => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
  Condition: conditionSchema,
};

/**
 * client-node fields that are resource.Quantity (or maps of it) in the Go API
 * but plain `string` in the generated TypeScript classes. Keyed `Class.field`.
 */
export const CLIENT_NODE_QUANTITY_FIELDS: ReadonlySet<string> = new Set([
  'V1ResourceRequirements.limits',
  'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits',
  'V1VolumeResourceRequirements.requests',
  'V1EmptyDirVolumeSource.sizeLimit',
  'V1ResourceFieldSelector.divisor',
  'V1PodSpec.overhead',
  'V1PodResources.limits',
  'V1PodResources.requests',
  'V1ContainerStatus.allocatedResources',
  'V1PersistentVolumeClaimStatus.allocatedResources',
  'V1PersistentVolumeClaimStatus.capacity',
  'V1PersistentVolumeSpec.capacity',
  'V1NodeStatus.allocatable',
  'V1NodeStatus.capacity',
  'V1ResourceQuotaSpec.hard',
  'V1ResourceQuotaStatus.hard',
  'V1ResourceQuotaStatus.used',
  'V1LimitRangeItem.default',
  'V1LimitRangeItem.defaultRequest',
  'V1LimitRangeItem.max',
  'V1LimitRangeItem.maxLimitRequestRatio',
  'V1LimitRangeItem.min',
]);

/** client-node types that controller-gen emits as a bare object (ObjectMeta is never expanded). */
export const CLIENT_NODE_OPAQUE_OBJECTS: ReadonlySet<string> = new Set(['V1ObjectMeta', 'V1ListMeta']);

/** The client-node module, whose models an API type may embed. */
export const CLIENT_NODE_MODULE = '@kubernetes/client-node';

/**
 * Whether an import specifier is the SDK: its root or a subpath of it
 * (`ts-operator-sdk/api`, where `KubernetesObject` lives). Types imported from
 * it are recognised by their import alone.
 */
export function isSdkModule(specifier: string): boolean {
  return specifier === 'ts-operator-sdk' || specifier.startsWith('ts-operator-sdk/');
}

/**
 * Whether types imported from `specifier` are recognised by their import
 * alone: the SDK's (root or subpath) and client-node's, among them
 * `KubernetesObject`, the base of a kind, which both declare with one shape.
 */
export function isRecognisedModule(specifier: string): boolean {
  return specifier === CLIENT_NODE_MODULE || isSdkModule(specifier);
}

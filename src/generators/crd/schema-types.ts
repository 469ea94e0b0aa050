/** apiextensions.k8s.io/v1 JSONSchemaProps, the subset CRDs may use. */
export interface JSONSchemaProps {
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: unknown;
  example?: unknown;
  enum?: unknown[];
  maximum?: number;
  minimum?: number;
  exclusiveMaximum?: boolean;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  nullable?: boolean;
  $ref?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

/** One CEL rule (`x-kubernetes-validations` item). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/**
 * Remembers which TypeScript line produced each schema node, so the
 * structural check can point at the source instead of at YAML.
 */
export class SourceMap {
  private readonly locations = new WeakMap<object, { file: string; line: number }>();

  set(schema: JSONSchemaProps, file: string, line: number): JSONSchemaProps {
    if (!this.locations.has(schema)) this.locations.set(schema, { file, line });
    return schema;
  }

  get(schema: JSONSchemaProps): { file: string; line: number } | undefined {
    return this.locations.get(schema);
  }
}

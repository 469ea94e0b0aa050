import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ProblemList } from '../problems.js';
import type { JSONSchemaProps, SourceMap } from './schema-types.js';

const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;
/** Keys a value-validation subtree (inside a junctor) may not set. */
const FORBIDDEN_IN_JUNCTOR = ['description', 'type', 'default', 'additionalProperties', 'nullable'] as const;

// ajv-formats ships as CommonJS with a default export property.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

/**
 * Checks a generated openAPIV3Schema against the apiextensions v1 structural
 * rules (the same ones kube-apiserver enforces) and reports each violation
 * at the TypeScript line that produced the offending node.
 */
export function checkStructural(
  root: JSONSchemaProps,
  sources: SourceMap,
  fallback: { file: string; line: number },
  problems: ProblemList,
): void {
  const report = (node: JSONSchemaProps, trail: JSONSchemaProps[], path: string, message: string): void => {
    let where = sources.get(node);
    for (let i = trail.length - 1; !where && i >= 0; i--) where = sources.get(trail[i]!);
    const at = where ?? fallback;
    problems.add(at.file, at.line, `${path || '<root>'}: ${message}`);
  };
  const ajv = new Ajv({ strict: false, allErrors: false, logger: false, validateFormats: true });
  addFormats(ajv);

  const walk = (
    node: JSONSchemaProps,
    path: string,
    trail: JSONSchemaProps[],
    inJunctor: boolean,
    intOrStringJunctor: boolean,
  ): void => {
    const here = [...trail, node];
    if (node.$ref !== undefined) report(node, trail, path, '$ref is not allowed in CRD schemas; inline the type');
    if (node.uniqueItems)
      report(node, trail, path, 'uniqueItems is forbidden in structural schemas; use +listType=set');
    if (node.properties && node.additionalProperties !== undefined)
      report(
        node,
        trail,
        path,
        'properties and additionalProperties cannot be used together; use an interface for fixed fields or Record<string, T> for a map',
      );
    if (inJunctor) {
      for (const key of FORBIDDEN_IN_JUNCTOR) {
        if (node[key] === undefined) continue;
        if (key === 'type' && intOrStringJunctor && (node.type === 'integer' || node.type === 'string')) continue;
        report(
          node,
          trail,
          path,
          `${key} is not allowed inside allOf/anyOf/oneOf/not; move it to the enclosing schema`,
        );
      }
    } else {
      const exempt = node['x-kubernetes-int-or-string'] || node['x-kubernetes-preserve-unknown-fields'];
      if (!node.type && !exempt)
        report(
          node,
          trail,
          path,
          'every schema node needs a type (only int-or-string and preserve-unknown-fields nodes may omit it)',
        );
      if (node.type === 'array' && !node.items) report(node, trail, path, 'arrays need an items schema');
      if (node['x-kubernetes-int-or-string'] && node.type)
        report(node, trail, path, 'x-kubernetes-int-or-string nodes must not set type');
    }
    if (node['x-kubernetes-embedded-resource']) {
      if (node.type !== 'object') report(node, trail, path, 'x-kubernetes-embedded-resource needs type: object');
      if (!node.properties && !node['x-kubernetes-preserve-unknown-fields'])
        report(
          node,
          trail,
          path,
          'x-kubernetes-embedded-resource needs properties or x-kubernetes-preserve-unknown-fields',
        );
    }
    const listType = node['x-kubernetes-list-type'];
    if (listType === 'map') {
      const item = node.items;
      if (!item || item.type !== 'object') report(node, trail, path, 'listType=map needs object items');
      for (const key of node['x-kubernetes-list-map-keys'] ?? []) {
        const prop = item?.properties?.[key];
        if (!prop) report(node, trail, path, `listMapKey ${key} is not a field of the list items`);
        else if (!(item?.required ?? []).includes(key) && prop.default === undefined)
          report(node, trail, path, `listMapKey ${key} must be a required field of the items or have a default`);
        else if (prop.type && !['string', 'integer', 'boolean'].includes(prop.type))
          report(node, trail, path, `listMapKey ${key} must be a scalar field`);
      }
    }
    if (
      listType === 'set' &&
      node.items &&
      !['string', 'integer', 'number', 'boolean'].includes(node.items.type ?? '') &&
      !node.items['x-kubernetes-int-or-string']
    ) {
      report(node, trail, path, 'listType=set needs scalar items; use listType=map with a key for objects');
    }
    if (node.default !== undefined) {
      if (inJunctor) report(node, trail, path, 'default is not allowed inside allOf/anyOf/oneOf/not');
      const problem = defaultProblem(ajv, node);
      if (problem)
        report(
          node,
          trail,
          path,
          `default ${JSON.stringify(node.default)} does not match the field's schema (${problem}); fix the default or the type`,
        );
    }
    for (const [name, child] of Object.entries(node.properties ?? {}))
      walk(child, `${path}.${name}`, here, inJunctor, false);
    if (node.items) walk(node.items, `${path}[*]`, here, inJunctor, false);
    if (typeof node.additionalProperties === 'object')
      walk(node.additionalProperties, `${path}[*]`, here, inJunctor, false);
    for (const junctor of JUNCTORS) {
      for (const [i, child] of (node[junctor] ?? []).entries()) {
        walk(child, `${path}.${junctor}[${i}]`, here, true, Boolean(node['x-kubernetes-int-or-string']));
        checkJunctorFieldsDeclared(child, node, (message) => report(child, here, `${path}.${junctor}[${i}]`, message));
      }
    }
    if (node.not) walk(node.not, `${path}.not`, here, true, false);
  };

  if (root.type !== 'object') report(root, [], '', 'the root schema must be type: object');
  if (root.nullable) report(root, [], '', 'the root schema cannot be nullable');
  const metadata = root.properties?.['metadata'];
  if (metadata) {
    if (metadata.type !== 'object') report(metadata, [root], '.metadata', 'metadata must be type: object');
    const extra = Object.keys(metadata.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName');
    if (extra.length > 0)
      report(
        metadata,
        [root],
        '.metadata',
        `metadata may only constrain name and generateName, not ${extra.join(', ')}`,
      );
    if (metadata.additionalProperties !== undefined || metadata.default !== undefined)
      report(metadata, [root], '.metadata', 'metadata may not set additionalProperties or default');
  }
  walk(root, '', [], false, false);
}

/** Fields a junctor branch constrains must also be declared on the enclosing schema. */
function checkJunctorFieldsDeclared(
  branch: JSONSchemaProps,
  outer: JSONSchemaProps,
  report: (message: string) => void,
): void {
  for (const name of Object.keys(branch.properties ?? {})) {
    if (!outer.properties?.[name])
      report(`field ${name} is used inside a junctor but not declared in the enclosing properties`);
  }
}

/** Validates a node's default against the node itself, as the API server does. */
function defaultProblem(ajv: Ajv, node: JSONSchemaProps): string | undefined {
  const schema = toAjvSchema(node, true);
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    return `the schema cannot be compiled: ${(err as Error).message}`;
  }
  if (validate(node.default)) return undefined;
  const error = validate.errors?.[0];
  return error ? `${error.instancePath || 'value'} ${error.message ?? 'is invalid'}` : 'invalid';
}

/** Drops Kubernetes extensions and nested defaults so ajv checks only value rules. */
function toAjvSchema(node: JSONSchemaProps, top: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') || key === 'description' || key === 'example' || (key === 'default' && top))
      continue;
    if (key === 'nullable') continue;
    if (key === 'properties')
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JSONSchemaProps>).map(([k, v]) => [k, toAjvSchema(v, false)]),
      );
    else if (key === 'items' || key === 'not' || (key === 'additionalProperties' && typeof value === 'object'))
      out[key] = toAjvSchema(value as JSONSchemaProps, false);
    else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf')
      out[key] = (value as JSONSchemaProps[]).map((v) => toAjvSchema(v, false));
    else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'boolean') {
      // OpenAPI 3.0 booleans become draft-07 numbers.
      const bound = key === 'exclusiveMinimum' ? node.minimum : node.maximum;
      if (value && bound !== undefined) out[key] = bound;
    } else out[key] = value;
  }
  if (node.nullable && typeof out['type'] === 'string') out['type'] = [out['type'], 'null'];
  if (node['x-kubernetes-int-or-string'] && top && !out['anyOf'])
    out['anyOf'] = [{ type: 'integer' }, { type: 'string' }];
  return out;
}

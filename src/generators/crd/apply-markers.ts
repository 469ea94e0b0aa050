import YAML from 'yaml';
import { markerValueText, type Marker, type RawValue } from '../markers/grammar.js';
import type { ProblemList } from '../problems.js';
import { intOrStringSchema } from './known-types.js';
import type { JSONSchemaProps, ValidationRule } from './schema-types.js';

/** The kind of value a schema node holds, for checking that markers fit it. */
function valueKind(schema: JSONSchemaProps): string {
  if (schema['x-kubernetes-int-or-string']) return 'int-or-string';
  return schema.type ?? 'untyped';
}

/**
 * Converts a marker's raw value (`+kubebuilder:default=3`) to JSON, using the
 * schema's type to decide: a bare `1.0` on a string field stays the string
 * "1.0", as controller-gen does; quoted text is always a string.
 */
export function valueForSchema(raw: RawValue, schema: JSONSchemaProps): unknown {
  if (raw.quoted) return raw.text;
  const kind = valueKind(schema);
  if (kind === 'string') return raw.text;
  try {
    return JSON.parse(raw.text);
  } catch {
    try {
      // controller-gen also accepts `{a: 1}` and bare words; YAML flow syntax reads both.
      return YAML.parse(raw.text) as unknown;
    } catch {
      return raw.text;
    }
  }
}

/**
 * Applies validation, topology, default and nullable markers to a schema node.
 * Returns the set of required/optional decisions the caller must apply to the
 * parent (`true` required, `false` optional, undefined not said).
 */
export function applySchemaMarkers(
  schema: JSONSchemaProps,
  markers: readonly Marker[],
  problems: ProblemList,
): { required?: boolean } {
  let required: boolean | undefined;
  const fail = (m: Marker, message: string): void => problems.add(m.file, m.line, `${m.source}: ${message}`);
  const need = (m: Marker, kinds: string[], what: string): boolean => {
    const kind = valueKind(schema);
    if (kinds.includes(kind)) return true;
    fail(
      m,
      `${what} applies to ${kinds.join(' or ')} fields, but this field is ${kind}; remove the marker or change the field's type`,
    );
    return false;
  };
  const numeric = ['integer', 'number'];
  for (const m of markers) {
    const name = m.definition.name;
    const value = m.value;
    switch (name) {
      case 'kubebuilder:validation:Minimum':
        if (need(m, numeric, 'Minimum')) schema.minimum = value as number;
        break;
      case 'kubebuilder:validation:Maximum':
        if (need(m, numeric, 'Maximum')) schema.maximum = value as number;
        break;
      case 'kubebuilder:validation:ExclusiveMinimum':
        if (need(m, numeric, 'ExclusiveMinimum')) schema.exclusiveMinimum = value as boolean;
        break;
      case 'kubebuilder:validation:ExclusiveMaximum':
        if (need(m, numeric, 'ExclusiveMaximum')) schema.exclusiveMaximum = value as boolean;
        break;
      case 'kubebuilder:validation:MultipleOf':
        if (need(m, numeric, 'MultipleOf')) {
          if ((value as number) <= 0) fail(m, 'MultipleOf must be greater than 0');
          else schema.multipleOf = value as number;
        }
        break;
      case 'kubebuilder:validation:MinLength':
        if (need(m, ['string', 'int-or-string'], 'MinLength')) schema.minLength = nonNegative(m, fail);
        break;
      case 'kubebuilder:validation:MaxLength':
        if (need(m, ['string', 'int-or-string'], 'MaxLength')) schema.maxLength = nonNegative(m, fail);
        break;
      case 'kubebuilder:validation:Pattern':
        if (need(m, ['string', 'int-or-string'], 'Pattern')) {
          try {
            new RegExp(value as string, 'u');
            schema.pattern = value as string;
          } catch (err) {
            fail(
              m,
              `Pattern is not a valid regular expression (${(err as Error).message}); quote it with backticks if it contains commas`,
            );
          }
        }
        break;
      case 'kubebuilder:validation:MinItems':
        if (need(m, ['array'], 'MinItems')) schema.minItems = nonNegative(m, fail);
        break;
      case 'kubebuilder:validation:MaxItems':
        if (need(m, ['array'], 'MaxItems')) schema.maxItems = nonNegative(m, fail);
        break;
      case 'kubebuilder:validation:UniqueItems':
        if (value === true)
          fail(m, 'uniqueItems is forbidden in structural schemas (its cost is quadratic); use +listType=set instead');
        break;
      case 'kubebuilder:validation:MinProperties':
        if (need(m, ['object'], 'MinProperties')) schema.minProperties = nonNegative(m, fail);
        break;
      case 'kubebuilder:validation:MaxProperties':
        if (need(m, ['object'], 'MaxProperties')) schema.maxProperties = nonNegative(m, fail);
        break;
      case 'kubebuilder:validation:Enum': {
        const items = (value as RawValue[]).map((raw) => valueForSchema(raw, schema));
        if (items.length === 0) fail(m, 'Enum needs at least one value: write Enum=a;b;c');
        else schema.enum = items;
        break;
      }
      case 'kubebuilder:validation:Format':
        schema.format = value as string;
        break;
      case 'kubebuilder:validation:Type': {
        const t = value as string;
        if (!['string', 'integer', 'number', 'boolean', 'object', 'array'].includes(t)) {
          fail(m, `Type must be one of string, integer, number, boolean, object, array; found "${t}"`);
        } else {
          schema.type = t;
          delete schema.anyOf;
          delete schema['x-kubernetes-int-or-string'];
        }
        break;
      }
      case 'kubebuilder:validation:XValidation': {
        const rule: ValidationRule = { rule: m.args['rule'] as string };
        for (const key of ['message', 'messageExpression', 'reason', 'fieldPath'] as const) {
          if (typeof m.args[key] === 'string') rule[key] = m.args[key];
        }
        if (typeof m.args['optionalOldSelf'] === 'boolean') rule.optionalOldSelf = m.args['optionalOldSelf'];
        const celProblem = celSyntaxProblem(rule.rule);
        if (celProblem) {
          fail(m, `CEL rule ${JSON.stringify(rule.rule)} ${celProblem}`);
          break;
        }
        if (
          rule.reason &&
          !['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'].includes(
            rule.reason,
          )
        ) {
          fail(
            m,
            `reason must be FieldValueInvalid, FieldValueForbidden, FieldValueRequired or FieldValueDuplicate; found "${rule.reason}"`,
          );
          break;
        }
        (schema['x-kubernetes-validations'] ??= []).push(rule);
        break;
      }
      case 'kubebuilder:validation:XIntOrString': {
        const { anyOf, 'x-kubernetes-int-or-string': flag } = intOrStringSchema();
        delete schema.type;
        delete schema.format;
        schema.anyOf = anyOf;
        schema['x-kubernetes-int-or-string'] = flag;
        break;
      }
      case 'kubebuilder:validation:XPreserveUnknownFields':
      case 'kubebuilder:pruning:PreserveUnknownFields':
        schema['x-kubernetes-preserve-unknown-fields'] = true;
        break;
      case 'kubebuilder:validation:XEmbeddedResource':
      case 'kubebuilder:validation:EmbeddedResource':
        if (need(m, ['object'], 'XEmbeddedResource')) schema['x-kubernetes-embedded-resource'] = true;
        break;
      case 'kubebuilder:validation:Required':
      case 'required':
        required = true;
        break;
      case 'kubebuilder:validation:Optional':
      case 'optional':
        required = false;
        break;
      case 'nullable':
        schema.nullable = true;
        break;
      case 'kubebuilder:default':
      case 'default':
        schema.default = valueForSchema(value as RawValue, schema);
        break;
      case 'kubebuilder:example':
        schema.example = valueForSchema(value as RawValue, schema);
        break;
      case 'listType': {
        if (!need(m, ['array'], 'listType')) break;
        if (!['atomic', 'set', 'map'].includes(value as string))
          fail(m, `listType must be atomic, set or map; found "${markerValueText(value)}"`);
        else schema['x-kubernetes-list-type'] = value as string;
        break;
      }
      case 'listMapKey':
        if (need(m, ['array'], 'listMapKey')) (schema['x-kubernetes-list-map-keys'] ??= []).push(value as string);
        break;
      case 'mapType':
        if (!need(m, ['object'], 'mapType')) break;
        if (!['granular', 'atomic'].includes(value as string))
          fail(m, `mapType must be granular or atomic; found "${markerValueText(value)}"`);
        else schema['x-kubernetes-map-type'] = value as string;
        break;
      case 'structType':
        if (!need(m, ['object'], 'structType')) break;
        if (!['granular', 'atomic'].includes(value as string))
          fail(m, `structType must be granular or atomic; found "${markerValueText(value)}"`);
        else schema['x-kubernetes-map-type'] = value as string;
        break;
      default:
        // CRD-level and package markers are read by the CRD assembler.
        break;
    }
  }
  checkMarkerConsistency(schema, markers, problems);
  return { required };
}

function nonNegative(m: Marker, fail: (m: Marker, message: string) => void): number | undefined {
  const n = m.value as number;
  if (n < 0) {
    fail(m, 'the value must not be negative');
    return undefined;
  }
  return n;
}

/** Contradictions between markers on one node, reported at the first marker involved. */
function checkMarkerConsistency(schema: JSONSchemaProps, markers: readonly Marker[], problems: ProblemList): void {
  const at = (name: string): Marker | undefined => markers.find((m) => m.definition.name.endsWith(name));
  const report = (name: string, message: string): void => {
    const m = at(name) ?? markers[0];
    if (m) problems.add(m.file, m.line, `${m.source}: ${message}`);
  };
  if (schema.enum && schema.pattern !== undefined) {
    const re = safeRegExp(schema.pattern);
    const bad = re ? schema.enum.filter((e) => typeof e !== 'string' || !re.test(e)) : [];
    if (bad.length > 0)
      report(
        'Enum',
        `enum value ${JSON.stringify(bad[0])} does not match the pattern ${JSON.stringify(schema.pattern)}; no value could ever be valid, so fix the enum or the pattern`,
      );
  }
  if (schema.minimum !== undefined && schema.maximum !== undefined && schema.minimum > schema.maximum)
    report('Minimum', `Minimum ${schema.minimum} is greater than Maximum ${schema.maximum}`);
  if (schema.minLength !== undefined && schema.maxLength !== undefined && schema.minLength > schema.maxLength)
    report('MinLength', `MinLength ${schema.minLength} is greater than MaxLength ${schema.maxLength}`);
  if (schema.minItems !== undefined && schema.maxItems !== undefined && schema.minItems > schema.maxItems)
    report('MinItems', `MinItems ${schema.minItems} is greater than MaxItems ${schema.maxItems}`);
  if (schema['x-kubernetes-list-map-keys'] && schema['x-kubernetes-list-type'] !== 'map')
    report('listMapKey', 'listMapKey needs +listType=map on the same field');
  if (schema['x-kubernetes-list-type'] === 'map' && !schema['x-kubernetes-list-map-keys'])
    report('listType', 'listType=map needs at least one +listMapKey=<field> naming the key of the list items');
}

function safeRegExp(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

/**
 * A light syntax check of a CEL expression: non-empty, balanced brackets,
 * closed string literals. Type errors and unknown fields are left to the
 * API server, which compiles every rule when the CRD is applied.
 */
export function celSyntaxProblem(rule: string): string | undefined {
  if (rule.trim() === '') return 'is empty: write an expression such as self.size >= 0';
  const closers: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  for (let i = 0; i < rule.length; i++) {
    const c = rule[i]!;
    if (c === '"' || c === "'") {
      const triple = rule.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      let j = i + quote.length;
      let closed = false;
      while (j < rule.length) {
        if (rule[j] === '\\') {
          j += 2;
          continue;
        }
        if (rule.startsWith(quote, j)) {
          closed = true;
          break;
        }
        j++;
      }
      if (!closed) return `has an unterminated string literal starting at column ${i + 1}; close the ${quote} quote`;
      i = j + quote.length - 1;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') stack.push(c);
    else if (c in closers) {
      if (stack.pop() !== closers[c]) return `has an unbalanced "${c}" at column ${i + 1}`;
    }
  }
  if (stack.length > 0) return `has an unclosed "${stack[stack.length - 1]}"; add the matching closing bracket`;
  if (/(&&|\|\||[=!<>]=|[+\-*/%<>]|\?|:)\s*$/.test(rule.trim()))
    return 'ends with an operator; complete the expression';
  return undefined;
}

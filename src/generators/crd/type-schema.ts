// require, not import: as ESM, Node first scans typescript's 9 MB CommonJS file for module syntax (~0.25 s).
import ts = require('typescript');
import { readAnnotations, markerNamed, type Annotations } from '../markers/comments.js';
import type { Marker } from '../markers/grammar.js';
import type { ProblemList } from '../problems.js';
import { applySchemaMarkers } from './apply-markers.js';
import {
  CLIENT_NODE_MODULE,
  CLIENT_NODE_OPAQUE_OBJECTS,
  CLIENT_NODE_QUANTITY_FIELDS,
  SDK_KNOWN_TYPES,
  intOrStringSchema,
  isSdkModule,
  quantitySchema,
} from './known-types.js';
import type { JSONSchemaProps, SourceMap } from './schema-types.js';
import { UsageError } from '../../errors.js';

/**
 * The deepest nesting of types a CRD schema may have. Kubernetes' own types
 * (a Deployment's pod template) nest about 20 levels; 100 is generous and
 * keeps the recursive schema build and YAML writer far from the stack limit.
 */
export const MAX_TYPE_NESTING = 100;
const NUMBER_HINT =
  'a plain number has no integer format: use int32 or int64 from ts-operator-sdk, or float64 with --allow-dangerous-types';

/** Where a type reference points, after following imports. */
type Resolved =
  | { kind: 'sdk'; name: string }
  | { kind: 'clientNode'; name: string; declaration?: ts.Declaration }
  | { kind: 'local'; declaration: ts.Declaration; name: string }
  | { kind: 'global'; name: string }
  | { kind: 'unresolved'; name: string };

/** The client-node class and field being expanded, to look up formats and quantities. */
interface ClientNodeField {
  className: string;
  fieldName: string;
}

/** Everything one schema build needs; shared by all types of a run. */
export interface SchemaBuildOptions {
  checker: ts.TypeChecker;
  problems: ProblemList;
  sources: SourceMap;
  allowDangerousTypes: boolean;
  /** Turns an absolute file name into the path shown in errors. */
  displayPath: (fileName: string) => string;
  /** Package-level markers of the API version directory the type lives in. */
  packageMarkers: (fileName: string) => readonly Marker[];
  /**
   * client-node's runtime exports, for the numeric formats in each model's
   * attributeTypeMap; loaded only when API types embed client-node models.
   */
  clientNodeModels?: ClientNodeModels;
}

/** client-node model classes by name; only `attributeTypeMap` is read. */
export type ClientNodeModels = Readonly<
  Record<string, { attributeTypeMap?: ReadonlyArray<{ name: string; format: string }> } | undefined>
>;

/**
 * Turns TypeScript declarations into structural OpenAPI schemas, inlining
 * every referenced type (CRDs cannot use $ref) and rejecting recursion.
 */
export class TypeSchemaBuilder {
  private readonly expanding: ts.Declaration[] = [];
  /** How many type nodes deep the current expansion is. */
  private typeDepth = 0;

  constructor(private readonly options: SchemaBuildOptions) {}

  /** Schema of a root kind's interface, before CRD-specific adjustments. */
  objectSchema(declaration: ts.InterfaceDeclaration): JSONSchemaProps {
    return this.expandDeclaration(declaration, declaration.name.text);
  }

  /** Annotations of a declaration, with problems attributed to its file. */
  annotationsOf(node: ts.Node, target: 'field' | 'type'): Annotations {
    return readAnnotations(
      node,
      target,
      this.options.displayPath(node.getSourceFile().fileName),
      this.options.problems,
    );
  }

  private where(node: ts.Node): { file: string; line: number } {
    const sf = node.getSourceFile();
    return {
      file: this.options.displayPath(sf.fileName),
      line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1,
    };
  }

  private fail(node: ts.Node, message: string): JSONSchemaProps {
    const { file, line } = this.where(node);
    this.options.problems.add(file, line, message);
    // An untyped placeholder lets the build continue and report more problems.
    return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }

  private track(schema: JSONSchemaProps, node: ts.Node): JSONSchemaProps {
    const { file, line } = this.where(node);
    return this.options.sources.set(schema, file, line);
  }

  /** Schema for a written type, `field` set when expanding a client-node class member. */
  fromTypeNode(node: ts.TypeNode, field?: ClientNodeField): JSONSchemaProps {
    // Each level of nesting is a level of recursion here and in the YAML
    // writer; past the bound the stack runs out, so stop with the type's place.
    if (this.typeDepth >= MAX_TYPE_NESTING) {
      const { file, line } = this.where(node);
      throw new UsageError(
        `${file}:${line}: the API types nest more than ${MAX_TYPE_NESTING} levels deep here`,
        "flatten the types (Kubernetes' own types nest about 20 levels), or use RawExtension for free-form data",
      );
    }
    this.typeDepth++;
    try {
      return this.track(this.fromTypeNodeUntracked(node, field), node);
    } finally {
      this.typeDepth--;
    }
  }

  private fromTypeNodeUntracked(node: ts.TypeNode, field?: ClientNodeField): JSONSchemaProps {
    const quantity = field !== undefined && CLIENT_NODE_QUANTITY_FIELDS.has(`${field.className}.${field.fieldName}`);
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return quantity ? quantitySchema() : { type: 'string' };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: 'boolean' };
      case ts.SyntaxKind.NumberKeyword:
        return field ? this.clientNodeNumber(field) : this.fail(node, NUMBER_HINT);
      case ts.SyntaxKind.AnyKeyword:
        if (field) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
        return this.fail(
          node,
          '`any` has no schema: declare the shape with an interface, or use RawExtension from ts-operator-sdk for free-form JSON',
        );
      case ts.SyntaxKind.UnknownKeyword:
      case ts.SyntaxKind.ObjectKeyword:
        return this.fail(
          node,
          `\`${node.getText()}\` has no schema: declare the shape with an interface, or use RawExtension from ts-operator-sdk for free-form JSON`,
        );
      case ts.SyntaxKind.ArrayType:
        return { items: this.fromTypeNode((node as ts.ArrayTypeNode).elementType, field), type: 'array' };
      case ts.SyntaxKind.ParenthesizedType:
        return this.fromTypeNodeUntracked((node as ts.ParenthesizedTypeNode).type, field);
      case ts.SyntaxKind.TypeOperator: {
        const op = node as ts.TypeOperatorNode;
        if (op.operator === ts.SyntaxKind.ReadonlyKeyword) return this.fromTypeNodeUntracked(op.type, field);
        return this.fail(node, `type operator \`${node.getText()}\` is not supported in API types: write the type out`);
      }
      case ts.SyntaxKind.LiteralType: {
        const literal = (node as ts.LiteralTypeNode).literal;
        if (ts.isStringLiteral(literal)) return { enum: [literal.text], type: 'string' };
        return this.fail(
          node,
          `literal type \`${node.getText()}\` is not supported: use a string-literal union for enums`,
        );
      }
      case ts.SyntaxKind.UnionType:
        return this.fromUnion(node as ts.UnionTypeNode, field);
      case ts.SyntaxKind.TypeLiteral:
        return this.fromMembers(node, (node as ts.TypeLiteralNode).members, field ? field.className : undefined);
      case ts.SyntaxKind.TypeReference:
        return this.fromReference(node as ts.TypeReferenceNode, field, quantity);
      default:
        return this.fail(
          node,
          `type \`${node.getText()}\` cannot be expressed in a CRD schema: use string, boolean, int32/int64, arrays, Record<string, T>, string-literal unions or interfaces`,
        );
    }
  }

  private clientNodeNumber(field: ClientNodeField): JSONSchemaProps {
    const format = this.options.clientNodeModels?.[field.className]?.attributeTypeMap?.find(
      (a) => a.name === field.fieldName,
    )?.format;
    if (format === 'int32' || format === 'int64') return { format, type: 'integer' };
    return { format: 'double', type: 'number' };
  }

  private fromUnion(node: ts.UnionTypeNode, field?: ClientNodeField): JSONSchemaProps {
    let nullable = false;
    const rest: ts.TypeNode[] = [];
    for (const member of node.types) {
      if (ts.isLiteralTypeNode(member) && member.literal.kind === ts.SyntaxKind.NullKeyword) nullable = true;
      else if (member.kind !== ts.SyntaxKind.UndefinedKeyword) rest.push(member);
    }
    let schema: JSONSchemaProps;
    if (rest.length > 1 && rest.every((m) => ts.isLiteralTypeNode(m) && ts.isStringLiteral(m.literal))) {
      schema = { enum: rest.map((m) => ((m as ts.LiteralTypeNode).literal as ts.StringLiteral).text), type: 'string' };
    } else if (
      rest.length === 2 &&
      rest.every(
        (m) =>
          ts.isLiteralTypeNode(m) &&
          (m.literal.kind === ts.SyntaxKind.TrueKeyword || m.literal.kind === ts.SyntaxKind.FalseKeyword),
      )
    ) {
      schema = { type: 'boolean' };
    } else if (rest.length === 1) {
      schema = { ...this.fromTypeNode(rest[0]!, field) };
    } else {
      return this.fail(
        node,
        `union \`${node.getText()}\` cannot be expressed in a structural schema: use a string-literal union, \`T | null\`, IntOrString, or an interface with optional fields`,
      );
    }
    if (nullable) schema.nullable = true;
    return schema;
  }

  private fromReference(
    node: ts.TypeReferenceNode,
    field: ClientNodeField | undefined,
    quantity: boolean,
  ): JSONSchemaProps {
    const resolved = this.resolve(node.typeName);
    const args = node.typeArguments ?? [];
    if (resolved.kind === 'global' || resolved.kind === 'unresolved') {
      switch (resolved.name) {
        case 'Array':
        case 'ReadonlyArray':
          if (args.length === 1) return { items: this.fromTypeNode(args[0]!, field), type: 'array' };
          break;
        case 'Record':
          if (args.length === 2) {
            if (args[0]!.kind !== ts.SyntaxKind.StringKeyword)
              return this.fail(node, 'Record keys must be `string`: JSON object keys are strings');
            return { additionalProperties: this.fromTypeNode(args[1]!, field), type: 'object' };
          }
          break;
        case 'Date':
          return { format: 'date-time', type: 'string' };
      }
      if (resolved.kind === 'unresolved') {
        return this.fail(
          node,
          `cannot resolve type \`${resolved.name}\`: import it from ts-operator-sdk, @kubernetes/client-node or a file under apis/`,
        );
      }
      return this.fail(
        node,
        `built-in type \`${node.getText()}\` is not supported in API types: write the shape out as an interface`,
      );
    }
    if (resolved.kind === 'sdk' || resolved.kind === 'clientNode') {
      // Names both modules give: ts-operator-sdk/api re-declares client-node's KubernetesObject and re-exports its V1ObjectMeta.
      if (resolved.name === 'KubernetesObject')
        return this.fail(
          node,
          'KubernetesObject cannot be embedded in a schema: declare the embedded fields, or use RawExtension',
        );
      if (CLIENT_NODE_OPAQUE_OBJECTS.has(resolved.name)) return { type: 'object' };
    }
    if (resolved.kind === 'sdk') {
      if (resolved.name === 'float64') {
        if (this.options.allowDangerousTypes) return { type: 'number' };
        return this.fail(
          node,
          'float64 fields are rejected because floats do not round-trip across languages; pass --allow-dangerous-types to allow them, or use int32/int64 or a Quantity',
        );
      }
      const known = SDK_KNOWN_TYPES[resolved.name];
      if (known) return known();
      return this.fail(
        node,
        `\`${resolved.name}\` from ts-operator-sdk is not an API type: use int32, int64, float64, Time, MicroTime, Duration, Quantity, IntOrString, RawExtension or Condition`,
      );
    }
    if (resolved.kind === 'clientNode') {
      if (resolved.name === 'IntOrString') return quantity ? quantitySchema() : intOrStringSchema();
      if (!resolved.declaration)
        return this.fail(node, `cannot find the declaration of \`${resolved.name}\` in @kubernetes/client-node`);
      if (args.length > 0) return this.fail(node, `generic type \`${node.getText()}\` is not supported in API types`);
      return this.expandDeclaration(resolved.declaration, resolved.name, node);
    }
    if (args.length > 0)
      return this.fail(
        node,
        `generic type \`${node.getText()}\` is not supported in API types: declare a concrete interface`,
      );
    return this.expandDeclaration(resolved.declaration, resolved.name, node);
  }

  /** Follows imports to the declaration a type name means. */
  private resolve(typeName: ts.EntityName): Resolved {
    const { checker } = this.options;
    const name = ts.isIdentifier(typeName) ? typeName.text : typeName.right.text;
    let symbol = checker.getSymbolAtLocation(typeName);
    if (!symbol) return { kind: 'unresolved', name };
    if (symbol.flags & ts.SymbolFlags.Alias) {
      const importDecl = symbol.declarations?.[0];
      if (importDecl && ts.isImportSpecifier(importDecl)) {
        const moduleName = (importDecl.parent.parent.parent.moduleSpecifier as ts.StringLiteral).text;
        const imported = (importDecl.propertyName ?? importDecl.name).text;
        // Decided by the import, so API files work even before the SDK's .d.ts files exist.
        if (isSdkModule(moduleName)) return { kind: 'sdk', name: imported };
        if (moduleName === CLIENT_NODE_MODULE) {
          const target = checker.getAliasedSymbol(symbol);
          return { kind: 'clientNode', name: imported, declaration: target.declarations?.[0] };
        }
      }
      symbol = checker.getAliasedSymbol(symbol);
    }
    const declaration = symbol.declarations?.[0];
    if (!declaration) return { kind: 'unresolved', name };
    const file = declaration.getSourceFile().fileName.replace(/\\/g, '/');
    if (/\/runtime\/api\/types\.(d\.)?ts$/.test(file)) return { kind: 'sdk', name: symbol.name };
    if (file.includes('/@kubernetes/client-node/')) return { kind: 'clientNode', name: symbol.name, declaration };
    if (declaration.getSourceFile().hasNoDefaultLib || /\/typescript\/lib\/lib\.[^/]*\.d\.ts$/.test(file))
      return { kind: 'global', name: symbol.name };
    return { kind: 'local', declaration, name: symbol.name };
  }

  /** Inlines an interface, alias, enum or client-node class, guarding against recursion. */
  private expandDeclaration(declaration: ts.Declaration, name: string, usedAt?: ts.Node): JSONSchemaProps {
    if (this.expanding.includes(declaration)) {
      const chain = [...this.expanding.slice(this.expanding.indexOf(declaration)), declaration]
        .map(declarationName)
        .join(' -> ');
      return this.fail(
        usedAt ?? declaration,
        `recursive type ${chain}: CRD schemas cannot use $ref, so break the cycle (for example with RawExtension) or flatten the type`,
      );
    }
    this.expanding.push(declaration);
    try {
      return this.track(this.expandUntracked(declaration, name, usedAt), declaration);
    } finally {
      this.expanding.pop();
    }
  }

  private expandUntracked(declaration: ts.Declaration, name: string, usedAt?: ts.Node): JSONSchemaProps {
    const isClientNode = declaration.getSourceFile().fileName.replace(/\\/g, '/').includes('/@kubernetes/client-node/');
    if (ts.isInterfaceDeclaration(declaration)) {
      if (declaration.typeParameters?.length)
        return this.fail(usedAt ?? declaration, `generic interface ${name} is not supported in API types`);
      const annotations = this.annotationsOf(declaration, 'type');
      const type = this.options.checker.getDeclaredTypeOfSymbol(
        this.options.checker.getSymbolAtLocation(declaration.name)!,
      );
      const schema = this.fromProperties(
        declaration,
        this.options.checker.getPropertiesOfType(type),
        declaration.members,
        annotations.markers,
      );
      if (annotations.description) schema.description = annotations.description;
      applySchemaMarkers(schema, annotations.markers, this.options.problems);
      return schema;
    }
    if (ts.isTypeAliasDeclaration(declaration)) {
      if (declaration.typeParameters?.length)
        return this.fail(usedAt ?? declaration, `generic type alias ${name} is not supported in API types`);
      const annotations = isClientNode ? { description: '', markers: [] } : this.annotationsOf(declaration, 'type');
      const schema = { ...this.fromTypeNode(declaration.type) };
      if (annotations.description) schema.description = annotations.description;
      applySchemaMarkers(schema, annotations.markers, this.options.problems);
      return schema;
    }
    if (ts.isEnumDeclaration(declaration)) {
      const values: string[] = [];
      for (const member of declaration.members) {
        const init = member.initializer;
        if (!init || !ts.isStringLiteral(init))
          return this.fail(
            member,
            `enum member ${member.name.getText()} needs a string value: only string enums map to a CRD enum`,
          );
        values.push(init.text);
      }
      const annotations = this.annotationsOf(declaration, 'type');
      const schema: JSONSchemaProps = { enum: values, type: 'string' };
      if (annotations.description) schema.description = annotations.description;
      applySchemaMarkers(schema, annotations.markers, this.options.problems);
      return schema;
    }
    if (ts.isClassDeclaration(declaration) && isClientNode) {
      const className = declaration.name?.text ?? name;
      const description = jsDocText(declaration);
      const members = declaration.members.filter(
        (m) => ts.isPropertyDeclaration(m) && !m.modifiers?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword),
      );
      const schema = this.fromMembers(declaration, members, className);
      if (description) schema.description = description;
      return schema;
    }
    return this.fail(
      usedAt ?? declaration,
      `${name} is a ${ts.SyntaxKind[declaration.kind]}, which API types cannot use: declare it as an interface or type alias`,
    );
  }

  /** Object schema from a type literal or client-node class members. */
  private fromMembers(
    owner: ts.Node,
    members: readonly ts.Node[],
    clientNodeClass: string | undefined,
  ): JSONSchemaProps {
    const properties: Record<string, JSONSchemaProps> = {};
    const required: string[] = [];
    let additional: JSONSchemaProps | undefined;
    for (const member of members) {
      if (ts.isIndexSignatureDeclaration(member)) {
        const key = member.parameters[0]?.type;
        if (!key || key.kind !== ts.SyntaxKind.StringKeyword)
          return this.fail(member, 'index signature keys must be `string`');
        additional = this.fromTypeNode(
          member.type,
          clientNodeClass ? { className: clientNodeClass, fieldName: ownerFieldName(owner) } : undefined,
        );
        continue;
      }
      if (!ts.isPropertySignature(member) && !ts.isPropertyDeclaration(member)) {
        if (clientNodeClass) continue;
        return this.fail(
          member,
          'API types may only declare properties: methods and call signatures have no JSON form',
        );
      }
      const field = this.fieldSchema(member, clientNodeClass, undefined);
      if (!field) continue;
      properties[field.name] = field.schema;
      if (field.required) required.push(field.name);
    }
    if (additional && Object.keys(properties).length > 0)
      return this.fail(
        owner,
        'a type cannot mix named properties and an index signature: structural schemas forbid properties together with additionalProperties',
      );
    if (additional) return { additionalProperties: additional, type: 'object' };
    const schema: JSONSchemaProps = { properties, type: 'object' };
    if (required.length > 0) schema.required = required.sort();
    return schema;
  }

  /** Object schema from an interface's properties, including inherited ones. */
  private fromProperties(
    owner: ts.InterfaceDeclaration,
    symbols: ts.Symbol[],
    ownMembers: ts.NodeArray<ts.TypeElement>,
    typeMarkers: readonly Marker[],
  ): JSONSchemaProps {
    const index = ownMembers.find(ts.isIndexSignatureDeclaration);
    if (index) {
      if (symbols.length > 0)
        return this.fail(
          owner,
          'a type cannot mix named properties and an index signature: structural schemas forbid properties together with additionalProperties',
        );
      return this.fromMembers(owner, [index], undefined);
    }
    const defaultRequired =
      requiredDefault(typeMarkers) ?? requiredDefault(this.options.packageMarkers(owner.getSourceFile().fileName));
    const properties: Record<string, JSONSchemaProps> = {};
    const required: string[] = [];
    for (const symbol of symbols) {
      const declaration = symbol.declarations?.[0];
      if (!declaration || (!ts.isPropertySignature(declaration) && !ts.isPropertyDeclaration(declaration))) {
        if (declaration)
          this.fail(
            declaration,
            'API types may only declare properties: methods and call signatures have no JSON form',
          );
        continue;
      }
      const field = this.fieldSchema(declaration, undefined, defaultRequired);
      if (!field) continue;
      properties[field.name] = field.schema;
      if (field.required) required.push(field.name);
    }
    const schema: JSONSchemaProps = { properties, type: 'object' };
    if (required.length > 0) schema.required = required.sort();
    return schema;
  }

  private fieldSchema(
    member: ts.PropertySignature | ts.PropertyDeclaration,
    clientNodeClass: string | undefined,
    defaultRequired: boolean | undefined,
  ): { name: string; schema: JSONSchemaProps; required: boolean } | undefined {
    const name = propertyName(member.name);
    if (name === undefined) {
      this.fail(member, 'computed property names are not supported in API types');
      return undefined;
    }
    if (!member.type) {
      this.fail(member, `field ${name} needs a type annotation`);
      return undefined;
    }
    const fromClientNode =
      clientNodeClass !== undefined ||
      member.getSourceFile().fileName.replace(/\\/g, '/').includes('/@kubernetes/client-node/');
    const className =
      clientNodeClass ??
      (fromClientNode
        ? ((member.parent as ts.ClassLikeDeclaration | ts.InterfaceDeclaration).name?.text ?? '')
        : undefined);
    const annotations = fromClientNode
      ? { description: jsDocText(member), markers: [] as Marker[] }
      : this.annotationsOf(member, 'field');
    const schema = {
      ...this.fromTypeNode(member.type, fromClientNode ? { className: className!, fieldName: name } : undefined),
    };
    this.track(schema, member);
    if (annotations.description) schema.description = annotations.description;
    const decision = applySchemaMarkers(schema, annotations.markers, this.options.problems);
    const optional = member.questionToken !== undefined;
    const required = decision.required ?? (optional ? false : (defaultRequired ?? true));
    return { name, schema, required };
  }
}

function requiredDefault(markers: readonly Marker[]): boolean | undefined {
  if (markerNamed(markers, 'kubebuilder:validation:Optional')) return false;
  if (markerNamed(markers, 'kubebuilder:validation:Required')) return true;
  return undefined;
}

function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isPrivateIdentifier(name))
    return name.text;
  return undefined;
}

function ownerFieldName(owner: ts.Node): string {
  const parent = owner.parent;
  if (parent && (ts.isPropertyDeclaration(parent) || ts.isPropertySignature(parent)))
    return propertyName(parent.name) ?? '';
  return '';
}

function declarationName(declaration: ts.Declaration): string {
  const name = (declaration as ts.NamedDeclaration).name;
  return name && ts.isIdentifier(name) ? name.text : '?';
}

/**
 * The JSDoc text directly above a client-node declaration. Read from the raw
 * comment because programs are parsed without JSDoc (it triples parse time).
 * client-node copies the Go docs with escaped quotes; undo the escaping.
 */
function jsDocText(node: ts.Node): string {
  const text = node.getSourceFile().getFullText();
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  const doc = [...ranges].reverse().find((r) => text.startsWith('/**', r.pos));
  if (!doc) return '';
  return text
    .slice(doc.pos + 3, doc.end - 2)
    .split('\n')
    .map((l) => l.replace(/^\s*\*\s?/, '').trim())
    .filter((l) => l !== '')
    .join('\n')
    .replace(/\\(['"])/g, '$1')
    .trim();
}

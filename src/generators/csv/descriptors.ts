import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
// require, not import: as ESM, Node first scans typescript's 9 MB CommonJS file for module syntax (~0.25 s).
import ts = require('typescript');
import { markerNamed, readAnnotations } from '../markers/comments.js';
import type { Marker, MarkerValue, RawValue } from '../markers/grammar.js';
import { ProblemList } from '../problems.js';
import type { ApiResource } from '../crd/crd.js';
import { pluralize } from '../../scaffold/names.js';
import { spacedWords } from './display-names.js';
import { byteOrder } from '../../byte-order.js';

export { spacedWords };

/** The marker operator-sdk reads for CSV UI metadata, on API types and their fields. */
export const CSV_MARKER = 'operator-sdk:csv:customresourcedefinitions';

/** One spec or status descriptor of an owned CRD, as the CSV stores it. */
export interface CsvDescriptor {
  displayName: string;
  description?: string;
  path: string;
  'x-descriptors'?: string[];
}

/** A Kubernetes resource an owned CRD creates, as the CSV lists it (`resources={{Kind,version,name}}`). */
export interface CsvOwnedResource {
  kind: string;
  name: string;
  version: string;
}

/** One `spec.customresourcedefinitions.owned[]` entry. */
export interface OwnedCrdDescription {
  name: string;
  version: string;
  kind: string;
  displayName: string;
  description?: string;
  resources?: CsvOwnedResource[];
  specDescriptors?: CsvDescriptor[];
  statusDescriptors?: CsvDescriptor[];
}

interface OrderedDescriptor {
  order: number;
  descriptor: CsvDescriptor;
}

/**
 * Reads the owned-CRD descriptions of the project's APIs from their
 * TypeScript types: the kind's doc comment and type-level marker give the
 * display name, description and resources; fields under spec and status
 * carrying `+operator-sdk:csv:customresourcedefinitions:type=spec|status`
 * become descriptors. Kinds whose types are missing are left out (the base
 * CSV still lists them without UI metadata). Marker problems are thrown as
 * a UsageError listing `file:line: message`.
 */
export function readOwnedCrdDescriptions(projectDir: string, resources: readonly ApiResource[]): OwnedCrdDescription[] {
  const problems = new ProblemList();
  const dirs = [...new Set(resources.map((r) => r.path))].sort();
  const rootNames = dirs.flatMap((dir) => typeFiles(path.join(projectDir, dir)));
  const program = createTypesProgram(rootNames);
  const checker = program.getTypeChecker();
  const display = (fileName: string): string => path.relative(projectDir, fileName).split(path.sep).join('/');
  const owned: OwnedCrdDescription[] = [];
  for (const resource of resources) {
    const dir = path.resolve(projectDir, resource.path);
    const declaration = program
      .getSourceFiles()
      .filter((sf) => !sf.isDeclarationFile && path.dirname(path.resolve(sf.fileName)) === dir)
      .flatMap((sf) => sf.statements)
      .find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === resource.kind);
    const group = resource.group ? `${resource.group}.${resource.domain}` : resource.domain;
    const entry: OwnedCrdDescription = {
      name: `${resource.plural ?? pluralize(resource.kind)}.${group}`,
      version: resource.version,
      kind: resource.kind,
      displayName: spacedWords(resource.kind),
    };
    if (!declaration) {
      owned.push(entry);
      continue;
    }
    const file = display(declaration.getSourceFile().fileName);
    const annotations = readAnnotations(declaration, 'type', file, problems);
    if (annotations.description) entry.description = annotations.description;
    const typeMarker = markerNamed(annotations.markers, CSV_MARKER);
    if (typeMarker) {
      if (typeof typeMarker.args['displayName'] === 'string') entry.displayName = typeMarker.args['displayName'];
      const raw = typeMarker.args['resources'];
      if (raw !== undefined) entry.resources = parseResources(raw, typeMarker, problems);
    }
    for (const section of ['spec', 'status'] as const) {
      const member = declaration.members.find((m) => m.name && ts.isIdentifier(m.name) && m.name.text === section);
      if (!member || !ts.isPropertySignature(member)) continue;
      const found: OrderedDescriptor[] = [];
      collectDescriptors(checker.getTypeAtLocation(member), section, '', new Set(), {
        checker,
        display,
        problems,
        found,
      });
      if (found.length > 0)
        entry[section === 'spec' ? 'specDescriptors' : 'statusDescriptors'] = sortDescriptors(found);
    }
    owned.push(entry);
  }
  problems.throwIfAny();
  return owned.sort(
    (a, b) => byteOrder(a.name, b.name) || byteOrder(a.version, b.version) || byteOrder(a.kind, b.kind),
  );
}

interface WalkContext {
  checker: ts.TypeChecker;
  display: (fileName: string) => string;
  problems: ProblemList;
  found: OrderedDescriptor[];
}

/** Walks the fields of a spec or status type (and nested project types) for descriptor markers. */
function collectDescriptors(
  type: ts.Type,
  section: 'spec' | 'status',
  prefix: string,
  visiting: Set<ts.Type>,
  context: WalkContext,
): void {
  const target = context.checker.getNonNullableType(type);
  if (visiting.has(target)) return;
  const declarations = target.getSymbol()?.getDeclarations() ?? [];
  // Only the project's own interfaces: library types (Condition, Quantity) carry no CSV markers.
  if (
    !declarations.some(
      (d) => (ts.isInterfaceDeclaration(d) || ts.isTypeLiteralNode(d)) && !d.getSourceFile().isDeclarationFile,
    )
  )
    return;
  visiting.add(target);
  for (const property of target.getProperties()) {
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    if (!declaration || !ts.isPropertySignature(declaration) || declaration.getSourceFile().isDeclarationFile) continue;
    const fieldPath = prefix ? `${prefix}.${property.name}` : property.name;
    const file = context.display(declaration.getSourceFile().fileName);
    const annotations = readAnnotations(declaration, 'field', file, context.problems);
    const marker = markerNamed(annotations.markers, CSV_MARKER);
    if (marker) {
      const kind = marker.args['type'];
      if (kind !== 'spec' && kind !== 'status') {
        context.problems.add(
          file,
          marker.line,
          `+${CSV_MARKER} on field ${fieldPath} needs type=spec or type=status: write +${CSV_MARKER}:type=${section}`,
        );
      } else if (kind === section) {
        const descriptor: CsvDescriptor = {
          displayName:
            typeof marker.args['displayName'] === 'string' ? marker.args['displayName'] : spacedWords(property.name),
          path: fieldPath,
        };
        if (annotations.description) descriptor.description = annotations.description;
        const xDescriptors = marker.args['xDescriptors'];
        if (Array.isArray(xDescriptors) && xDescriptors.length > 0)
          descriptor['x-descriptors'] = xDescriptors.map((x) => x.text);
        context.found.push({ order: typeof marker.args['order'] === 'number' ? marker.args['order'] : 0, descriptor });
      }
    }
    collectDescriptors(
      context.checker.getTypeOfSymbolAtLocation(property, declaration),
      section,
      fieldPath,
      visiting,
      context,
    );
  }
  visiting.delete(target);
}

/** By `order`, then path, so output does not depend on declaration order across files. */
function sortDescriptors(found: OrderedDescriptor[]): CsvDescriptor[] {
  return [...found]
    .sort((a, b) => a.order - b.order || byteOrder(a.descriptor.path, b.descriptor.path))
    .map((f) => f.descriptor);
}

/** Parses `{{Deployment,v1,memcached-deployment},{Pod,v1,""}}`. */
function parseResources(raw: MarkerValue, marker: Marker, problems: ProblemList): CsvOwnedResource[] {
  const text = (raw as RawValue).text.trim();
  const inner = /^\{(.*)\}$/s.exec(text)?.[1]?.trim() ?? '';
  const groups = [...inner.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]!);
  const leftover = inner.replace(/\{[^{}]*\}/g, '').replace(/[\s,]/g, '');
  if (groups.length === 0 || leftover !== '') {
    problems.add(
      marker.file,
      marker.line,
      `+${CSV_MARKER} resources must look like {{Kind,version,name},...}, found ${text}: write resources={{Deployment,v1,my-deployment}}`,
    );
    return [];
  }
  const resources: CsvOwnedResource[] = [];
  for (const group of groups) {
    const parts = group.split(',').map((p) => p.trim().replace(/^"(.*)"$/, '$1'));
    if (parts.length !== 3 || !parts[0] || !parts[1]) {
      problems.add(
        marker.file,
        marker.line,
        `+${CSV_MARKER} resource {${group}} needs three parts: write {Kind,version,name}, e.g. {Deployment,v1,my-deployment}`,
      );
      continue;
    }
    resources.push({ kind: parts[0], name: parts[2]!, version: parts[1] });
  }
  return resources;
}

function typeFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
    .sort()
    .map((f) => path.join(dir, f));
}

/**
 * A program over the API files only: module imports (client-node,
 * ts-operator-sdk) are left unresolved because descriptors live on the
 * project's own interfaces, and resolving client-node costs seconds.
 *
 * No lib files either: the walk descends only into the project's own
 * interfaces and type literals, and a type from the lib (Array, Partial,
 * Record, Date) is skipped as a declaration-file type with the lib and as an
 * unresolved type without it, so the descriptors are the same. Parsing and
 * binding lib.es2023's 60-odd files was most of the command's time (~0.8 s
 * of ~1.2 s on the bench's project; the two API files alone take ~50 ms).
 */
function createTypesProgram(rootNames: string[]): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noLib: true,
    types: [],
    noEmit: true,
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  // Descriptions and markers are read from raw comments (markers/comments.ts), so the parser can skip JSDoc, most of the lib files' parse time.
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseNone;
  host.resolveModuleNameLiterals = (
    literals,
    containingFile,
    redirectedReference,
    compilerOptions,
    containingSourceFile,
  ) =>
    literals.map((literal) =>
      literal.text.startsWith('.')
        ? ts.resolveModuleName(
            literal.text,
            containingFile,
            compilerOptions,
            host,
            undefined,
            redirectedReference,
            ts.getModeForUsageLocation(containingSourceFile, literal, compilerOptions),
          )
        : { resolvedModule: undefined },
    );
  return ts.createProgram({ rootNames, options, host });
}

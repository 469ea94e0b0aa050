import path from 'node:path';
// require, not import: as ESM, Node first scans typescript's 9 MB CommonJS file for module syntax (~0.25 s).
import ts = require('typescript');
import { markerNamed, markersNamed, readAnnotations } from '../markers/comments.js';
import { markerValueText, type Marker, type RawValue } from '../markers/grammar.js';
import type { ProblemList } from '../problems.js';
import { API_VERSION_DESCRIPTION, KIND_DESCRIPTION, isRecognisedModule } from './known-types.js';
import { pluralize } from '../../scaffold/names.js';
import { isDns1123Label } from '../../validation/names.js';
import { SourceMap, type JSONSchemaProps } from './schema-types.js';
import { checkStructural } from './structural.js';
import { checkDefineKind, type NameSource } from './define-kind-check.js';
import { TypeSchemaBuilder, type ClientNodeModels } from './type-schema.js';
import { byteOrder } from '../../byte-order.js';

/** One API (group, version, kind) of the project, as PROJECT lists it. */
export interface ApiResource {
  group: string;
  domain: string;
  version: string;
  kind: string;
  plural?: string;
  /** Directory of the version's types, relative to the project (`apis/v1`). */
  path: string;
  namespaced: boolean;
}

/** A generated CRD: its object and the file it belongs in. */
export interface GeneratedCrd {
  fileName: string;
  crd: Record<string, unknown>;
}

/** Everything the CRD builder needs from the run. */
export interface CrdBuildContext {
  projectDir: string;
  program: ts.Program;
  problems: ProblemList;
  allowDangerousTypes: boolean;
  generatorVersion: string;
  clientNodeModels?: ClientNodeModels;
}

const PRINT_COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];

interface BuiltVersion {
  resource: ApiResource;
  declaration: ts.InterfaceDeclaration;
  markers: Marker[];
  schema: JSONSchemaProps;
  where: { file: string; line: number };
}

/**
 * Builds one CRD per group+kind, with one version per API version that
 * declares the kind. Problems go to `context.problems`; the result is only
 * meaningful when none were recorded.
 */
export function buildCrds(resources: readonly ApiResource[], context: CrdBuildContext): GeneratedCrd[] {
  const { program, problems, projectDir } = context;
  const checker = program.getTypeChecker();
  const displayPath = (fileName: string): string => {
    const rel = path.relative(projectDir, fileName);
    return rel.startsWith('..') ? fileName : rel.split(path.sep).join('/');
  };
  const filesIn = (dir: string): ts.SourceFile[] => {
    const abs = path.resolve(projectDir, dir);
    return program
      .getSourceFiles()
      .filter((sf) => path.dirname(path.resolve(sf.fileName)) === abs && !sf.isDeclarationFile);
  };
  const packageMarkerCache = new Map<string, Marker[]>();
  const packageMarkers = (fileName: string): Marker[] => {
    const dir = path.dirname(path.resolve(fileName));
    let markers = packageMarkerCache.get(dir);
    if (!markers) {
      markers = [];
      for (const sf of program
        .getSourceFiles()
        .filter((f) => path.dirname(path.resolve(f.fileName)) === dir && !f.isDeclarationFile)) {
        for (const statement of sf.statements) {
          if (isTypeStatement(statement)) continue;
          markers.push(...readAnnotations(statement, 'package', displayPath(sf.fileName), problems).markers);
        }
      }
      packageMarkerCache.set(dir, markers);
    }
    return markers;
  };
  const sources = new SourceMap();
  const builder = new TypeSchemaBuilder({
    checker,
    problems,
    sources,
    allowDangerousTypes: context.allowDangerousTypes,
    displayPath,
    packageMarkers,
    clientNodeModels: context.clientNodeModels,
  });

  // Every marker in every API file is checked, even on types no kind uses, so typos never pass silently.
  const apiDirs = [...new Set(resources.map((r) => r.path))].sort();
  for (const dir of apiDirs) {
    for (const sf of filesIn(dir)) {
      packageMarkers(sf.fileName);
      for (const statement of sf.statements) {
        if (!isTypeStatement(statement)) continue;
        builder.annotationsOf(statement, 'type');
        if (ts.isInterfaceDeclaration(statement))
          for (const member of statement.members) builder.annotationsOf(member, 'field');
      }
    }
  }

  const byCrd = new Map<string, BuiltVersion[]>();
  for (const resource of [...resources].sort((a, b) => byteOrder(a.version, b.version))) {
    const files = filesIn(resource.path);
    const expectedFile = `${resource.path}/${resource.kind.toLowerCase()}_types.ts`;
    if (files.length === 0) {
      problems.add(
        expectedFile,
        1,
        `no TypeScript files found in ${resource.path} for ${resource.kind}: create ${expectedFile} (ts-operator-sdk create api does)`,
      );
      continue;
    }
    const declaration = files
      .flatMap((sf) => sf.statements)
      .find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === resource.kind);
    if (!declaration) {
      problems.add(
        expectedFile,
        1,
        `no exported interface ${resource.kind} in ${resource.path}: declare \`export interface ${resource.kind} extends KubernetesObject { ... }\``,
      );
      continue;
    }
    const annotations = builder.annotationsOf(declaration, 'type');
    const sf = declaration.getSourceFile();
    const where = {
      file: displayPath(sf.fileName),
      line: sf.getLineAndCharacterOfPosition(declaration.getStart(sf)).line + 1,
    };
    if (
      markerNamed(annotations.markers, 'kubebuilder:skipversion') ||
      markerNamed(packageMarkers(sf.fileName), 'kubebuilder:skipversion')
    )
      continue;
    const schema = builder.objectSchema(declaration);
    const props = schema.properties ?? {};
    // `extends KubernetesObject` gives the kind apiVersion, kind and metadata (Go's embedded TypeMeta and
    // ObjectMeta), but neither the SDK nor @kubernetes/client-node is usually resolved here (see
    // createApiProgram), so they are added by name, as the scaffolded types leave them to the base interface.
    if (extendsKubernetesObject(declaration)) {
      for (const inherited of ['apiVersion', 'kind', 'metadata'])
        props[inherited] ??= { type: inherited === 'metadata' ? 'object' : 'string' };
      schema.properties = props;
    }
    if (!props['spec'])
      problems.add(
        where.file,
        where.line,
        `${resource.kind} has no spec field: add \`spec?: ${resource.kind}Spec\` with the desired state`,
      );
    if (!props['metadata'])
      problems.add(
        where.file,
        where.line,
        `${resource.kind} has no metadata field: extend \`KubernetesObject\` (from ts-operator-sdk/api), or add \`metadata?: V1ObjectMeta\``,
      );
    else props['metadata'] = sources.set({ type: 'object' }, where.file, where.line);
    if (props['apiVersion']) props['apiVersion'] = { description: API_VERSION_DESCRIPTION, type: 'string' };
    if (props['kind']) props['kind'] = { description: KIND_DESCRIPTION, type: 'string' };
    const fullGroup = resource.group ? `${resource.group}.${resource.domain}` : resource.domain;
    const groupName = markerNamed(packageMarkers(sf.fileName), 'groupName');
    if (groupName && groupName.value !== fullGroup) {
      problems.add(
        groupName.file,
        groupName.line,
        `+groupName=${markerValueText(groupName.value)} does not match the API group ${fullGroup} that PROJECT declares for ${resource.kind} ${resource.version}: make them agree`,
      );
    }
    const key = `${fullGroup}/${resource.kind}`;
    byCrd.set(key, [...(byCrd.get(key) ?? []), { resource, declaration, markers: annotations.markers, schema, where }]);
    checkStructural(schema, sources, where, problems);
  }

  const crds: GeneratedCrd[] = [];
  for (const [key, versions] of [...byCrd.entries()].sort(([a], [b]) => byteOrder(a, b))) {
    const crd = assembleCrd(key.split('/')[0]!, versions, context, problems);
    if (!crd) continue;
    crds.push(crd);
    for (const v of versions)
      checkDefineKind(
        filesIn(v.resource.path),
        { kind: v.resource.kind, version: v.resource.version, ...crdNameSources(crd) },
        displayPath,
        problems,
      );
  }
  return crds;
}

function isTypeStatement(statement: ts.Statement): boolean {
  return (
    ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) ||
    ts.isEnumDeclaration(statement) ||
    ts.isClassDeclaration(statement)
  );
}

/** The plural and scope of a CRD and where each came from, for {@link checkDefineKind}. */
function crdNameSources(crd: GeneratedCrd): {
  plural: string;
  pluralFrom: NameSource;
  namespaced: boolean;
  namespacedFrom: NameSource;
} {
  const spec = crd.crd['spec'] as { names: { plural: string }; scope: string };
  const sources = nameSources.get(crd) ?? { plural: { project: true }, scope: { project: true } };
  return {
    plural: spec.names.plural,
    pluralFrom: sources.plural,
    namespaced: spec.scope === 'Namespaced',
    namespacedFrom: sources.scope,
  };
}

/** Where each assembled CRD's plural and scope came from (a marker, or PROJECT). */
const nameSources = new WeakMap<GeneratedCrd, { plural: NameSource; scope: NameSource }>();

function assembleCrd(
  group: string,
  versions: BuiltVersion[],
  context: CrdBuildContext,
  problems: ProblemList,
): GeneratedCrd | undefined {
  const first = versions[0]!;
  const kind = first.resource.kind;
  const fail = (v: BuiltVersion, m: Marker | undefined, message: string): void =>
    problems.add(m?.file ?? v.where.file, m?.line ?? v.where.line, message);

  const marked = versions.filter((v) => markerNamed(v.markers, 'kubebuilder:storageversion'));
  let storage: BuiltVersion | undefined = versions.length === 1 ? first : marked[0];
  if (versions.length > 1 && marked.length !== 1) {
    const names = versions.map((v) => v.resource.version).join(', ');
    if (marked.length === 0)
      fail(
        first,
        undefined,
        `${kind} has versions ${names} but none is marked +kubebuilder:storageversion: mark exactly one`,
      );
    else
      for (const v of marked)
        fail(
          v,
          markerNamed(v.markers, 'kubebuilder:storageversion'),
          `${kind} has more than one storage version (${marked.map((m) => m.resource.version).join(', ')}): keep +kubebuilder:storageversion on exactly one`,
        );
    storage = undefined;
  }

  const names: Record<string, unknown> = {
    kind,
    listKind: `${kind}List`,
    plural: first.resource.plural ?? pluralize(kind),
    singular: kind.toLowerCase(),
  };
  let scope = first.resource.namespaced ? 'Namespaced' : 'Cluster';
  const sources: { plural: NameSource; scope: NameSource } = { plural: { project: true }, scope: { project: true } };
  const annotations: Record<string, string> = {};
  const labels: Record<string, string> = {};
  for (const v of storage ? [storage, ...versions.filter((x) => x !== storage)] : versions) {
    const resourceMarker = markerNamed(v.markers, 'kubebuilder:resource');
    if (resourceMarker && v === (storage ?? first)) {
      const a = resourceMarker.args;
      if (typeof a['path'] === 'string') {
        // The plural names the CRD and its file in config/crd/bases, so it must be what the API server accepts.
        if (!isDns1123Label(a['path']))
          fail(
            v,
            resourceMarker,
            `${resourceMarker.source}: path must be a lowercase resource name (a DNS-1123 label: lowercase letters, digits and '-'), found "${a['path']}"`,
          );
        else {
          names['plural'] = a['path'];
          sources.plural = {
            marker: `+kubebuilder:resource:path=${a['path']}`,
            file: resourceMarker.file,
            line: resourceMarker.line,
          };
        }
      }
      if (typeof a['singular'] === 'string') names['singular'] = a['singular'];
      if (Array.isArray(a['shortName'])) names['shortNames'] = a['shortName'].map((r) => r.text);
      if (Array.isArray(a['categories'])) names['categories'] = a['categories'].map((r) => r.text);
      if (typeof a['scope'] === 'string') {
        if (a['scope'] !== 'Namespaced' && a['scope'] !== 'Cluster')
          fail(
            v,
            resourceMarker,
            `${resourceMarker.source}: scope must be Namespaced or Cluster, found "${a['scope']}"`,
          );
        else {
          scope = a['scope'];
          sources.scope = {
            marker: `+kubebuilder:resource:scope=${scope}`,
            file: resourceMarker.file,
            line: resourceMarker.line,
          };
        }
      }
    }
    const metadataMarker = markerNamed(v.markers, 'kubebuilder:metadata');
    if (metadataMarker) {
      for (const [argName, into] of [
        ['annotations', annotations],
        ['labels', labels],
      ] as const) {
        for (const pair of (metadataMarker.args[argName] as RawValue[] | undefined) ?? []) {
          const eq = pair.text.indexOf('=');
          if (eq <= 0)
            fail(
              v,
              metadataMarker,
              `${metadataMarker.source}: ${argName} entries must be key=value, found "${pair.text}"`,
            );
          else into[pair.text.slice(0, eq)] = pair.text.slice(eq + 1);
        }
      }
    }
  }

  const versionEntries = versions
    .map((v) => versionEntry(v, v === storage, fail))
    .sort((a, b) => byteOrder(String(a['name']), String(b['name'])));
  if (!versionEntries.some((e) => e['served']))
    fail(first, undefined, `every version of ${kind} is marked +kubebuilder:unservedversion: serve at least one`);

  const plural = String(names['plural']);
  const metadata: Record<string, unknown> = {
    annotations: { ...annotations, 'ts-operator-sdk.io/generator-version': context.generatorVersion },
    name: `${plural}.${group}`,
  };
  if (Object.keys(labels).length > 0) metadata['labels'] = labels;
  const generated: GeneratedCrd = {
    fileName: `config/crd/bases/${group}_${plural}.yaml`,
    crd: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata,
      spec: { group, names, scope, versions: versionEntries },
    },
  };
  nameSources.set(generated, sources);
  return generated;
}

function versionEntry(
  v: BuiltVersion,
  storage: boolean,
  fail: (v: BuiltVersion, m: Marker | undefined, message: string) => void,
): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: v.resource.version,
    schema: { openAPIV3Schema: v.schema },
    served: !markerNamed(v.markers, 'kubebuilder:unservedversion'),
    storage,
  };
  const subresources: Record<string, unknown> = {};
  if (markerNamed(v.markers, 'kubebuilder:subresource:status')) {
    subresources['status'] = {};
    if (!v.schema.properties?.['status'])
      fail(
        v,
        markerNamed(v.markers, 'kubebuilder:subresource:status'),
        `+kubebuilder:subresource:status needs a status field on ${v.resource.kind}: add \`status?: ${v.resource.kind}Status\``,
      );
  }
  const scale = markerNamed(v.markers, 'kubebuilder:subresource:scale');
  if (scale) {
    const s: Record<string, unknown> = {
      specReplicasPath: scale.args['specpath'],
      statusReplicasPath: scale.args['statuspath'],
    };
    if (scale.args['selectorpath'] !== undefined) s['labelSelectorPath'] = scale.args['selectorpath'];
    for (const p of Object.values(s))
      if (!String(p).startsWith('.'))
        fail(
          v,
          scale,
          `${scale.source}: paths must be JSON paths starting with "." (for example .spec.replicas), found "${String(p)}"`,
        );
    subresources['scale'] = s;
  }
  if (Object.keys(subresources).length > 0) entry['subresources'] = subresources;
  const columns = markersNamed(v.markers, 'kubebuilder:printcolumn').map((m) => {
    const column: Record<string, unknown> = {
      jsonPath: m.args['JSONPath'],
      name: m.args['name'],
      type: m.args['type'],
    };
    if (!PRINT_COLUMN_TYPES.includes(markerValueText(m.args['type'])))
      fail(
        v,
        m,
        `${m.source}: type must be one of ${PRINT_COLUMN_TYPES.join(', ')}, found "${markerValueText(m.args['type'])}"`,
      );
    if (!markerValueText(m.args['JSONPath']).startsWith('.'))
      fail(v, m, `${m.source}: JSONPath must start with "." (for example .spec.size)`);
    for (const key of ['description', 'format', 'priority'] as const)
      if (m.args[key] !== undefined) column[key] = m.args[key];
    return column;
  });
  if (columns.length > 0) entry['additionalPrinterColumns'] = columns;
  const deprecated = markerNamed(v.markers, 'kubebuilder:deprecatedversion');
  if (deprecated) {
    entry['deprecated'] = true;
    if (typeof deprecated.args['warning'] === 'string') entry['deprecationWarning'] = deprecated.args['warning'];
  }
  return entry;
}

/** Whether the interface extends `KubernetesObject` imported from ts-operator-sdk/api or @kubernetes/client-node (under any local name). */
function extendsKubernetesObject(declaration: ts.InterfaceDeclaration): boolean {
  const locals = new Set<string>();
  for (const statement of declaration.getSourceFile().statements) {
    if (
      !ts.isImportDeclaration(statement) ||
      !ts.isStringLiteral(statement.moduleSpecifier) ||
      !isRecognisedModule(statement.moduleSpecifier.text)
    )
      continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements)
      if ((element.propertyName ?? element.name).text === 'KubernetesObject') locals.add(element.name.text);
  }
  return (declaration.heritageClauses ?? []).some((clause) =>
    clause.types.some((type) => ts.isIdentifier(type.expression) && locals.has(type.expression.text)),
  );
}

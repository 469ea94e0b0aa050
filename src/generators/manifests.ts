import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
// require, not import: as ESM, Node first scans typescript's 9 MB CommonJS file for module syntax (~0.25 s).
import ts = require('typescript');
import { buildCrds, type ApiResource } from './crd/crd.js';
import { CLIENT_NODE_MODULE, isRecognisedModule } from './crd/known-types.js';
import type { ClientNodeModels } from './crd/type-schema.js';
import { ScaffoldMarkers } from '../scaffold/markers.js';
import { packageInfo } from '../scaffold/package-info.js';
import { ProblemList } from './problems.js';
import { buildRoles, readRbacMarkers } from './rbac/rbac.js';
import { renderDocuments } from './render-yaml.js';
import { buildWebhookConfigurations, readProjectWebhookMarkers, WEBHOOK_MANIFEST_PATH } from './webhook/webhook.js';
import type { Marker } from './markers/grammar.js';

export type { ApiResource } from './crd/crd.js';

/** What `generate manifests` reads: the project and the APIs its PROJECT file lists. */
export interface ManifestInputs {
  projectDir: string;
  domain: string;
  multigroup: boolean;
  resources: ApiResource[];
  /** Allow float64 fields, like controller-gen's crd:allowDangerousTypes. */
  allowDangerousTypes?: boolean;
}

/** One file to write, relative to the project directory. */
export interface GeneratedFile {
  path: string;
  content: string;
}

/**
 * The scaffold marker below which `config/crd/kustomization.yaml` lists CRDs:
 * the one `create api` inserts at, so both writers of that file agree.
 */
export const CRD_KUSTOMIZE_MARKER = ScaffoldMarkers.crdResources;

/** Directories scanned for `+kubebuilder:rbac` markers. */
const CONTROLLER_DIRS = ['controllers', 'internal/controller'];

/**
 * Reads the project's API types and controllers and returns every manifest
 * to write: CRDs, config/rbac/role.yaml, config/webhook/manifests.yaml (when
 * there are webhook markers) and the updated CRD kustomization.
 * Throws a UsageError listing every problem (`file:line: message`) and
 * returns nothing in that case, so callers never write a partial set.
 */
export async function generateManifests(inputs: ManifestInputs): Promise<GeneratedFile[]> {
  const projectDir = path.resolve(inputs.projectDir);
  const problems = new ProblemList();
  const resources = inputs.resources.map((r) => ({ ...r, domain: r.domain || inputs.domain }));
  const rootNames = apiRootFiles(projectDir, [...new Set(resources.map((r) => r.path))]);
  const embedsModels = rootNames.some(embedsClientNodeModels);
  const program = createApiProgram(rootNames, embedsModels);
  for (const diagnostic of program.getSyntacticDiagnostics()) {
    const sf = diagnostic.file;
    const line = sf && diagnostic.start !== undefined ? sf.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 1;
    problems.add(
      sf ? path.relative(projectDir, sf.fileName) : '<unknown>',
      line,
      ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '),
    );
  }
  problems.throwIfAny();

  const clientNodeModels = embedsModels
    ? ((await import('@kubernetes/client-node')) as unknown as ClientNodeModels)
    : undefined;
  const crds = buildCrds(resources, {
    projectDir,
    program,
    problems,
    allowDangerousTypes: inputs.allowDangerousTypes ?? false,
    generatorVersion: packageInfo.version,
    clientNodeModels,
  });
  const rbacMarkers = readControllerMarkers(projectDir, problems);
  const roles = buildRoles(rbacMarkers, problems);
  const webhookConfigurations = buildWebhookConfigurations(readProjectWebhookMarkers(projectDir, problems), problems);
  problems.throwIfAny();

  const files: GeneratedFile[] = crds.map((c) => ({ path: c.fileName, content: renderDocuments([c.crd]) }));
  // Two writers: init scaffolds this file from templates/init/config/rbac/role.yaml.hbs
  // (a placeholder); from here on it is this generator's (templates/README.md).
  if (roles.length > 0) files.push({ path: 'config/rbac/role.yaml', content: renderDocuments(roles) });
  // Like controller-gen, no webhook markers means no manifest (and an existing one is left as it is).
  if (webhookConfigurations.length > 0)
    files.push({ path: WEBHOOK_MANIFEST_PATH, content: renderDocuments(webhookConfigurations) });
  const kustomizationPath = path.join(projectDir, 'config/crd/kustomization.yaml');
  const existing = existsSync(kustomizationPath) ? readFileSync(kustomizationPath, 'utf8') : undefined;
  // Two writers: create api scaffolds this file and adds a line at its marker;
  // here the list of CRD bases is brought in step (templates/README.md).
  files.push({
    path: 'config/crd/kustomization.yaml',
    content: updateCrdKustomization(
      existing,
      crds.map((c) => c.fileName.replace(/^config\/crd\//, '')),
    ),
  });
  return files;
}

/** client-node names that never need the runtime models: they map to fixed schemas. */
const CLIENT_NODE_FIXED = new Set(['KubernetesObject', 'V1ObjectMeta', 'V1ListMeta']);

/**
 * True when an API file imports a client-node model to expand. Decided from
 * the file's syntax alone, before any program exists: when no file does, the
 * program need not load client-node's declarations at all.
 */
function embedsClientNodeModels(file: string): boolean {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2023, false);
  return source.statements.some((s) => {
    if (!ts.isImportDeclaration(s) || (s.moduleSpecifier as ts.StringLiteral).text !== CLIENT_NODE_MODULE) return false;
    const bindings = s.importClause?.namedBindings;
    if (!bindings || ts.isNamespaceImport(bindings)) return true;
    return bindings.elements.some((e) => !CLIENT_NODE_FIXED.has((e.propertyName ?? e.name).text));
  });
}

/** The API type files: every .ts file directly in each API directory. */
function apiRootFiles(projectDir: string, apiDirs: string[]): string[] {
  return apiDirs.flatMap((dir) => {
    const abs = path.join(projectDir, dir);
    if (!existsSync(abs)) return [];
    return readdirSync(abs)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
      .sort()
      .map((f) => path.join(abs, f));
  });
}

/**
 * Parsed declaration files of node_modules and the TypeScript lib, shared by
 * every run in this process (watch mode, tests, benchmarks); keyed by path and
 * invalidated by modification time.
 */
const declarationCache = new Map<string, { mtimeMs: number; sourceFile: ts.SourceFile }>();

/** One program over all API directories, reused for every type (building it is the slow part). */
function createApiProgram(rootNames: string[], resolveDependencies: boolean): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowJs: false,
  };
  const host = ts.createCompilerHost(options);
  // Descriptions and markers are read from raw comments, so the parser can skip JSDoc (a large share of parse time).
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseNone;
  // Types from the SDK (root and subpaths) and client-node are recognised by
  // their import alone (TypeSchemaBuilder.resolve). Resolving those modules
  // pulls in hundreds of declaration files (client-node's root: thousands),
  // most of the generator's run time, so they are resolved only when an API
  // embeds a client-node model that must be expanded.
  if (!resolveDependencies) {
    host.resolveModuleNameLiterals = (
      literals,
      containingFile,
      redirectedReference,
      compilerOptions,
      containingSourceFile,
    ) =>
      literals.map((literal) =>
        isRecognisedModule(literal.text)
          ? { resolvedModule: undefined }
          : ts.resolveModuleName(
              literal.text,
              containingFile,
              compilerOptions,
              host,
              undefined,
              redirectedReference,
              ts.getModeForUsageLocation(containingSourceFile, literal, compilerOptions),
            ),
      );
  }
  const readSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (!fileName.endsWith('.d.ts')) return readSourceFile(fileName, languageVersion, onError, shouldCreate);
    let mtimeMs: number;
    try {
      mtimeMs = statSync(fileName).mtimeMs;
    } catch {
      return readSourceFile(fileName, languageVersion, onError, shouldCreate);
    }
    const cached = declarationCache.get(fileName);
    if (cached && cached.mtimeMs === mtimeMs) return cached.sourceFile;
    const sourceFile = readSourceFile(fileName, languageVersion, onError, shouldCreate);
    if (sourceFile) declarationCache.set(fileName, { mtimeMs, sourceFile });
    return sourceFile;
  };
  return ts.createProgram({ rootNames, options, host });
}

function readControllerMarkers(projectDir: string, problems: ProblemList): Marker[] {
  const markers: Marker[] = [];
  for (const dir of CONTROLLER_DIRS) {
    for (const file of listTsFiles(path.join(projectDir, dir))) {
      const display = path.relative(projectDir, file).split(path.sep).join('/');
      markers.push(...readRbacMarkers(readFileSync(file, 'utf8'), display, problems));
    }
  }
  return markers;
}

function listTsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/**
 * Lists every generated CRD under `resources:` in config/crd/kustomization.yaml,
 * above the scaffold marker, keeping the user's other entries and content.
 */
export function updateCrdKustomization(existing: string | undefined, bases: string[]): string {
  const wanted = [...bases].sort();
  if (existing === undefined) {
    return [
      '# This kustomization.yaml is not intended to be run by itself,',
      '# since it depends on service name and namespace that are out of this kit',
      '# It should be run by config/default',
      'resources:',
      ...wanted.map((b) => `- ${b}`),
      CRD_KUSTOMIZE_MARKER,
      '',
    ].join('\n');
  }
  const lines = existing.split('\n');
  let start = lines.findIndex((l) => /^resources:\s*$/.test(l));
  if (start < 0) {
    const markerAt = lines.findIndex((l) => l.trim() === CRD_KUSTOMIZE_MARKER);
    if (markerAt >= 0) {
      lines.splice(markerAt, 0, 'resources:');
      start = markerAt;
    } else {
      lines.push('resources:', CRD_KUSTOMIZE_MARKER);
      start = lines.length - 2;
    }
  }
  let end = start + 1;
  const present = new Set<string>();
  while (end < lines.length && (/^\s*-\s/.test(lines[end]!) || /^\s*#/.test(lines[end]!))) {
    const item = /^\s*-\s+(.*?)\s*$/.exec(lines[end]!);
    if (item) present.add(item[1]!);
    if (lines[end]!.trim() === CRD_KUSTOMIZE_MARKER) break;
    end++;
  }
  const missing = wanted.filter((b) => !present.has(b)).map((b) => `- ${b}`);
  const markerLine = lines.slice(start + 1, end + 1).findIndex((l) => l.trim() === CRD_KUSTOMIZE_MARKER);
  const insertAt = markerLine >= 0 ? start + 1 + markerLine : end;
  lines.splice(insertAt, 0, ...missing);
  if (markerLine < 0) lines.splice(insertAt + missing.length, 0, CRD_KUSTOMIZE_MARKER);
  return lines.join('\n');
}

import { resolve } from 'node:path';
import { UsageError } from '../../errors.js';
import { scaffoldFiles } from '../../scaffold/files.js';
import { applyInserters, uncommentLine } from '../../scaffold/inserter.js';
import { assertOurLayout, readProject, writeProject, type ProjectConfig } from '../../scaffold/project.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';
import { apiFiles, apiInserters, type CreateApiOptions } from './api-scaffold.js';
import { resolveApi, type ResolvedApi } from './resolve-api.js';

/** `ts-operator-sdk create api`: adds an API (types) and/or its controller. */
export async function createApi(options: CreateApiOptions, io: CommandIO): Promise<void> {
  const tree = new VirtualTree(resolve(options.directory));
  const project = readProject(tree);
  assertOurLayout(project);
  if (options.timeout !== undefined && options.fromCluster === undefined) {
    throw new UsageError(
      '--timeout is for reading a CRD from the cluster, and needs --from-cluster',
      'leave out --timeout, or pass --from-cluster <crd-name>',
    );
  }
  if (options.externalApiPath !== undefined) {
    const { createExternalApi } = await import('./external-api.js');
    return createExternalApi(tree, project, { ...options, externalApiPath: options.externalApiPath }, io);
  }
  const api = await resolveApi(options, { project, tree, io, interactive: options.interactive });
  scaffoldApi(tree, api);
  recordApi(tree, project, api);
  await finishTree(tree, io, api.dryRun, apiReport(api));
}

/** Writes the API's files and inserts its lines into the files that exist, from the resolved value only. */
function scaffoldApi(tree: VirtualTree, api: ResolvedApi): void {
  scaffoldFiles(tree, apiFiles(api.names, api), api.names);
  applyInserters(tree, apiInserters(api.names, api, api.reconciler));
  if (api.resource) uncommentLine(tree, 'config/default/kustomization.yaml', '- ../crd');
}

/** Stages PROJECT with the API's entry, in place of the one it replaces. */
function recordApi(tree: VirtualTree, project: ProjectConfig, api: ResolvedApi): void {
  const resources = project.resources ?? [];
  project.resources = api.replaces
    ? resources.map((item) => (item === api.replaces ? api.record : item))
    : [...resources, api.record];
  writeProject(tree, project);
}

/** What `create api` tells the user once the files are written. */
function apiReport(api: ResolvedApi): string[] {
  const report: string[] = [];
  if (api.resource)
    report.push('Next: implement your new API and generate the manifests (e.g. CRDs, CRs) with:\n$ make manifests');
  if (api.resource && api.otherVersions.length > 0) {
    const versions = [...api.otherVersions, api.names.version].sort();
    report.push(
      `Note: ${api.names.kind} now has ${versions.length} versions (${versions.join(', ')}): mark exactly one of them with \`+kubebuilder:storageversion\` in its ${api.names.kind} type's comment before running \`make manifests\`.`,
    );
  }
  return report;
}

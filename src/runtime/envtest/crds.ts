import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { isNotFound } from '../api/errors.js';
import type { RestClient } from '../transport/rest.js';

/** controller-runtime's CRDInstallOptions defaults: poll every 100 ms for up to 10 s. */
export const DEFAULT_CRD_INSTALL_TIMEOUT_MS = 10_000;
const CRD_POLL_INTERVAL_MS = 100;
const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
const CRD_API_VERSION = 'apiextensions.k8s.io/v1';
const CRD_COLLECTION = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The parts of a v1 CustomResourceDefinition that installing and waiting need. */
interface CrdShape {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; resourceVersion?: string };
  spec?: { group?: string; names?: { plural?: string }; versions?: Array<{ name?: string; served?: boolean }> };
  status?: { conditions?: Array<{ type?: string; status?: string }> };
}

/**
 * Reads every CRD from the given files and directories (non-recursive, as
 * envtest does; YAML may hold several documents). Documents of other kinds
 * are ignored. A missing path is an error only if `errorIfPathMissing`.
 */
export async function readCRDs(paths: string[], errorIfPathMissing: boolean): Promise<object[]> {
  const files = await manifestFiles(paths, (path) =>
    errorIfPathMissing
      ? new Error(
          `envtest: CRD path ${path} does not exist: fix crdDirectoryPaths, or leave errorIfCRDPathMissing off to ignore it`,
        )
      : undefined,
  );
  const crds: object[] = [];
  for (const file of files) crds.push(...(await crdsInFile(file)));
  return crds;
}

/**
 * The manifest files under `paths`: a file as given, a directory's YAML and
 * JSON files (non-recursive, sorted, as envtest reads them). A missing path is
 * skipped unless `missing(path)` returns the error to throw.
 */
export async function manifestFiles(paths: string[], missing: (path: string) => Error | undefined): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    try {
      const info = await stat(path);
      if (!info.isDirectory()) files.push(path);
      else
        files.push(
          ...(await readdir(path))
            .filter((name) => MANIFEST_EXTENSIONS.has(extname(name)))
            .sort()
            .map((name) => join(path, name)),
        );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const error = missing(path);
      if (error) throw error;
    }
  }
  return files;
}

async function crdsInFile(file: string): Promise<object[]> {
  const text = await readFile(file, 'utf8');
  const found: object[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0)
      throw new Error(`envtest: ${file} is not valid YAML: ${document.errors[0]?.message}`);
    const value = document.toJS() as CrdShape | null;
    if (value && typeof value === 'object' && value.kind === 'CustomResourceDefinition') found.push(value);
  }
  return found;
}

/**
 * Creates each CRD, or updates it if it already exists, then waits until
 * every one is Established and each served version is listed by discovery,
 * so a custom resource can be created the moment this returns.
 */
export async function installCRDs(
  client: RestClient,
  crds: object[],
  timeoutMs = DEFAULT_CRD_INSTALL_TIMEOUT_MS,
): Promise<object[]> {
  const installed: object[] = [];
  for (const crd of crds) installed.push(await createOrUpdate(client, validated(crd)));
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds as CrdShape[]) await waitUntilServed(client, crd, deadline, timeoutMs);
  return installed;
}

function validated(crd: object): CrdShape {
  const shape = crd as CrdShape;
  const name = shape.metadata?.name ?? '(unnamed)';
  if (shape.kind !== 'CustomResourceDefinition' || shape.apiVersion !== CRD_API_VERSION) {
    throw new Error(
      `envtest: ${name} is not an ${CRD_API_VERSION} CustomResourceDefinition (got ${shape.apiVersion}/${shape.kind}): pass only v1 CRDs`,
    );
  }
  if (!shape.metadata?.name || !shape.spec?.group || !shape.spec.names?.plural || !shape.spec.versions?.length) {
    throw new Error(
      `envtest: CRD ${name} lacks metadata.name, spec.group, spec.names.plural or spec.versions: regenerate it`,
    );
  }
  return shape;
}

async function createOrUpdate(client: RestClient, crd: CrdShape): Promise<object> {
  const path = `${CRD_COLLECTION}/${crd.metadata?.name}`;
  let existing: CrdShape | undefined;
  try {
    existing = await client.request<CrdShape>('GET', path);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!existing) return client.request<object>('POST', CRD_COLLECTION, { body: crd });
  const update = { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } };
  return client.request<object>('PUT', path, { body: update });
}

async function waitUntilServed(client: RestClient, crd: CrdShape, deadline: number, timeoutMs: number): Promise<void> {
  const name = crd.metadata?.name ?? '';
  const plural = crd.spec?.names?.plural ?? '';
  const servedVersions = (crd.spec?.versions ?? [])
    .filter((version) => version.served !== false)
    .map((version) => version.name ?? '');
  let missing = 'Established condition';
  while (Date.now() < deadline) {
    missing = await firstMissing(client, name, crd.spec?.group ?? '', plural, servedVersions);
    if (!missing) return;
    await sleep(CRD_POLL_INTERVAL_MS);
  }
  throw new Error(`envtest: CRD ${name} not ready within ${timeoutMs} ms: still waiting for ${missing}`);
}

async function firstMissing(
  client: RestClient,
  name: string,
  group: string,
  plural: string,
  versions: string[],
): Promise<string> {
  const current = await client.request<CrdShape>('GET', `${CRD_COLLECTION}/${name}`);
  const established = current.status?.conditions?.some(
    (condition) => condition.type === 'Established' && condition.status === 'True',
  );
  if (!established) return 'Established condition';
  for (const version of versions) {
    try {
      const discovery = await client.request<{ resources?: Array<{ name?: string }> }>(
        'GET',
        `/apis/${group}/${version}`,
      );
      if (!discovery.resources?.some((resource) => resource.name === plural))
        return `discovery of ${plural}.${group}/${version}`;
    } catch (err) {
      if (isNotFound(err)) return `discovery of ${group}/${version}`;
      throw err;
    }
  }
  return '';
}

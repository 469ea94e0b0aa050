/**
 * OLM's release manifests: crds.yaml (the CRDs) and olm.yaml (namespaces,
 * RBAC, the olm-operator and catalog-operator Deployments, the packageserver
 * CSV...), downloaded for a version from OLM's GitHub releases as
 * operator-sdk's `olm install` does.
 */
import { parseAllDocuments } from 'yaml';
import { UsageError } from '../../errors.js';
import { CommandTimeoutError, formatDuration } from '../../cluster/connection.js';
import type { ClusterObject } from '../../cluster/session.js';

/** operator-sdk v1.42's default `olm install --version`. */
export const DEFAULT_OLM_VERSION = '0.28.0';
/** Replaces OLM's GitHub release download URL (tests serve the manifests from loopback; a mirror works too). */
export const OLM_BASE_URL_VARIABLE = 'TS_OPERATOR_SDK_OLM_BASE_URL';
const GITHUB_RELEASES = 'https://github.com/operator-framework/operator-lifecycle-manager/releases';
/** The bound on one download, however much of --timeout is left: the files are about 1 MB. */
const DOWNLOAD_TIMEOUT_MS = 60_000;

/** The two manifest files of one OLM version, parsed. */
export interface OlmManifests {
  version: string;
  crds: ClusterObject[];
  resources: ClusterObject[];
}

/** The URL of one of a version's manifest files: `<base>/v<version>/<file>` (`<base>/latest/<file>` for latest). */
export function manifestUrl(
  version: string,
  file: 'crds.yaml' | 'olm.yaml',
  env: NodeJS.ProcessEnv = process.env,
): string {
  const override = env[OLM_BASE_URL_VARIABLE];
  const tag = version === 'latest' ? 'latest' : `v${version.replace(/^v/, '')}`;
  if (override) return `${override.replace(/\/+$/, '')}/${tag}/${file}`;
  return version === 'latest'
    ? `${GITHUB_RELEASES}/latest/download/${file}`
    : `${GITHUB_RELEASES}/download/${tag}/${file}`;
}

/** Refuses a --version that is not an OLM release version (before anything is fetched). */
export function checkOlmVersion(version: string): void {
  if (version !== 'latest' && !/^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new UsageError(
      `--version ${version} is not an OLM version`,
      'pass a release version such as 0.28.0, or latest',
    );
  }
}

/**
 * Downloads and parses crds.yaml and olm.yaml, within the command's time
 * (`signal` aborts with the reason the time ran out); a version that does not
 * exist is a UsageError.
 */
export async function fetchOlmManifests(version: string, signal: AbortSignal): Promise<OlmManifests> {
  checkOlmVersion(version);
  const [crds, resources] = await Promise.all([
    fetchObjects(manifestUrl(version, 'crds.yaml'), signal),
    fetchObjects(manifestUrl(version, 'olm.yaml'), signal),
  ]);
  return { version: version.replace(/^v/, ''), crds, resources };
}

async function fetchObjects(url: string, signal: AbortSignal): Promise<ClusterObject[]> {
  let response: globalThis.Response;
  let text: string;
  try {
    response = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)]) });
    text = await response.text();
  } catch (err) {
    if (signal.aborted)
      throw new UsageError(
        `downloading ${url} did not finish within the --timeout${signal.reason instanceof CommandTimeoutError ? ` of ${formatDuration(signal.reason.timeoutMs)}` : ''}`,
        `pass a longer --timeout, or serve crds.yaml and olm.yaml nearer and set ${OLM_BASE_URL_VARIABLE}`,
        { cause: err },
      );
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new UsageError(
      `cannot download OLM manifests from ${url} (${cause})`,
      `check the network, or serve crds.yaml and olm.yaml yourself and set ${OLM_BASE_URL_VARIABLE}`,
      { cause: err },
    );
  }
  if (response.status === 404)
    throw new UsageError(
      `OLM has no release manifest at ${url} (HTTP 404)`,
      'pass an existing OLM release to --version, e.g. 0.28.0',
    );
  if (!response.ok)
    throw new UsageError(
      `downloading ${url} failed with HTTP ${response.status}`,
      'try again later, or pass another --version',
    );
  const objects: ClusterObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0)
      throw new UsageError(
        `${url} is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`,
        `check ${OLM_BASE_URL_VARIABLE} or --version`,
      );
    const value = doc.toJS() as ClusterObject | null;
    if (value && typeof value === 'object' && value.kind) objects.push(value);
  }
  if (objects.length === 0)
    throw new UsageError(`${url} holds no Kubernetes objects`, `check ${OLM_BASE_URL_VARIABLE} or --version`);
  return objects;
}

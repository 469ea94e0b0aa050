/**
 * `olm install`, `olm status` and `olm uninstall`: OLM v0 from its release
 * manifests, as operator-sdk's `olm` commands do it. Install applies the CRDs,
 * waits for them to be Established, applies the rest, and waits for the
 * olm-operator and catalog-operator Deployments and the packageserver CSV;
 * if anything fails or the timeout passes, it deletes what it created.
 */
import type { CommandIO } from '../../cli/io.js';
import { UsageError } from '../../errors.js';
import { formatDuration } from '../../cluster/connection.js';
import { deleteAll } from '../../cluster/deletion.js';
import { describePod, diagnose, DIAGNOSIS_BUDGET_MS } from '../../cluster/diagnosis.js';
import { describeObject, KubeSession, OLM_V1ALPHA1, type ClusterObject } from '../../cluster/session.js';
import { checkOlmVersion, DEFAULT_OLM_VERSION, fetchOlmManifests, type OlmManifests } from './manifests.js';

/** The CSV through which OLM serves its package API; its phase says whether OLM works. */
const PACKAGESERVER_CSV = 'packageserver';
export const DEFAULT_OLM_NAMESPACE = 'olm';
/**
 * How long a failed install may take to delete what it created, after
 * --timeout: CRD deletion waits for the API server's finalizer, which can take
 * a minute on a busy server. A server that stops answering ends it at once.
 */
const CLEANUP_BUDGET_MS = 180_000;

/** Options shared by the three commands. */
export interface OlmOptions {
  kubeconfig?: string;
  /** OLM release; `undefined` for status/uninstall means: the installed one. */
  version?: string;
  timeoutMs: number;
  olmNamespace: string;
  io: CommandIO;
}

/** Installs OLM; throws a UsageError (after removing what it created) when it cannot. */
export async function olmInstall(options: OlmOptions): Promise<void> {
  const { io } = options;
  const version = options.version ?? DEFAULT_OLM_VERSION;
  checkOlmVersion(version);
  // The cluster first: a download is no use when the cluster cannot take it.
  const session = await KubeSession.connect(options);
  const created: ClusterObject[] = [];
  try {
    const manifests = await fetchOlmManifests(version, session.signal);
    for (const crd of manifests.crds) {
      if (await session.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd.metadata!.name!)) {
        throw new UsageError(
          `OLM is already installed: CustomResourceDefinition ${crd.metadata!.name} exists`,
          'run `ts-operator-sdk olm status` to see it, or `ts-operator-sdk olm uninstall` before installing another version',
        );
      }
    }
    io.progress(
      `Installing OLM version ${manifests.version}: ${manifests.crds.length} CRDs, ${manifests.resources.length} resources`,
    );
    for (const crd of manifests.crds) created.push(await createLogged(session, crd, io));
    for (const crd of manifests.crds) {
      const established = await session.pollUntil(async () =>
        conditionTrue(
          await session.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd.metadata!.name!),
          'Established',
        )
          ? true
          : undefined,
      );
      if (!established)
        throw timeoutError(options, `CustomResourceDefinition ${crd.metadata!.name} was not Established`);
    }
    session.mapper.reset();
    for (const obj of manifests.resources) created.push(await createLogged(session, obj, io));
    for (const deployment of manifests.resources.filter((obj) => obj.kind === 'Deployment')) {
      io.progress(
        `Waiting for Deployment ${deployment.metadata!.namespace}/${deployment.metadata!.name} to be available`,
      );
      const ready = await session.pollUntil(async () =>
        deploymentAvailable(
          await session.get('apps/v1', 'Deployment', deployment.metadata!.name!, deployment.metadata!.namespace),
        )
          ? true
          : undefined,
      );
      if (!ready) throw timeoutError(options, await diagnose(session, () => deploymentBlocker(session, deployment)));
    }
    const csv = manifests.resources.find((obj) => obj.kind === 'ClusterServiceVersion');
    if (csv) {
      io.progress(`Waiting for ClusterServiceVersion ${csv.metadata!.namespace}/${csv.metadata!.name} to succeed`);
      const succeeded = await session.pollUntil(async () => {
        const current = await session.get(
          OLM_V1ALPHA1,
          'ClusterServiceVersion',
          csv.metadata!.name!,
          csv.metadata!.namespace,
        );
        if (current?.status?.phase === 'Failed')
          throw new UsageError(
            `ClusterServiceVersion ${csv.metadata!.name} failed: ${current.status.reason ?? ''} ${current.status.message ?? ''}`.trim(),
            'see `kubectl -n olm logs deploy/olm-operator`, then run `ts-operator-sdk olm install` again',
          );
        return current?.status?.phase === 'Succeeded' ? true : undefined;
      });
      if (!succeeded) {
        session.overtime(DIAGNOSIS_BUDGET_MS);
        const current = await session.get(
          OLM_V1ALPHA1,
          'ClusterServiceVersion',
          csv.metadata!.name!,
          csv.metadata!.namespace,
        );
        // The CSV waits on its own Deployments: say what their pods are doing.
        let pods = '';
        const install = current?.spec?.install as { spec?: { deployments?: { name: string }[] } } | undefined;
        for (const spec of install?.spec?.deployments ?? []) {
          const deployment = {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: spec.name, namespace: csv.metadata!.namespace },
          };
          if (!deploymentAvailable(await session.get('apps/v1', 'Deployment', spec.name, csv.metadata!.namespace)))
            pods = `; ${await deploymentBlocker(session, deployment)}`;
        }
        throw timeoutError(
          options,
          `ClusterServiceVersion ${csv.metadata!.name} is in phase ${current?.status?.phase || 'none (olm-operator never handled it)'}${current?.status?.message ? ` (${current.status.message})` : ''}${pods}`,
        );
      }
    }
    io.progress(`Successfully installed OLM version "${manifests.version}"`);
    io.out('');
    await printStatusTable(session, manifests, io);
  } catch (err) {
    if (created.length > 0) {
      io.progress(`Installing OLM failed; deleting the ${created.length} resources it created`);
      // Its own budget, not what is left of --timeout (see CLEANUP_BUDGET_MS).
      session.overtime(CLEANUP_BUDGET_MS);
      const left = await deleteAll(session, created, io).catch(() => created);
      if (left.length > 0)
        io.progress(
          `still not deleted: ${left.map(describeObject).join(', ')}; delete them with kubectl before installing again`,
        );
    }
    throw session.failure(err, 'installing OLM');
  } finally {
    await session.close();
  }
}

/** Prints the resource table of the installed OLM; a UsageError when OLM is not installed. */
export async function olmStatus(options: OlmOptions): Promise<void> {
  if (options.version !== undefined) checkOlmVersion(options.version);
  const session = await KubeSession.connect(options);
  try {
    const version = options.version ?? (await installedVersion(session, options.olmNamespace));
    const manifests = await fetchOlmManifests(version, session.signal);
    options.io.progress(`Fetching CRDs for version "${manifests.version}"`);
    const healthy = await printStatusTable(session, manifests, options.io, options.olmNamespace);
    if (!healthy)
      throw new UsageError(
        `OLM ${manifests.version} is not healthy: some of its resources are missing or not ready (see the table)`,
        'run `ts-operator-sdk olm uninstall`, then `ts-operator-sdk olm install`',
      );
    options.io.progress(`Successfully got OLM status for version "${manifests.version}"`);
  } catch (err) {
    throw session.failure(err, 'reading the OLM status');
  } finally {
    await session.close();
  }
}

/** Deletes every resource of the installed OLM version, CRDs last, and waits until they are gone. */
export async function olmUninstall(options: OlmOptions): Promise<void> {
  if (options.version !== undefined) checkOlmVersion(options.version);
  const session = await KubeSession.connect(options);
  try {
    const version = options.version ?? (await installedVersion(session, options.olmNamespace));
    const manifests = await fetchOlmManifests(version, session.signal);
    options.io.progress(`Uninstalling OLM version "${manifests.version}"`);
    const left = await deleteAll(session, [...manifests.crds, ...manifests.resources], options.io);
    if (left.length > 0)
      throw timeoutError(
        options,
        `${left.length} resources were not deleted yet (${left.slice(0, 3).map(describeObject).join(', ')})`,
      );
    options.io.progress(`Successfully uninstalled OLM version "${manifests.version}"`);
  } catch (err) {
    throw session.failure(err, 'uninstalling OLM');
  } finally {
    await session.close();
  }
}

/** The version of the installed OLM, read from its packageserver CSV. */
async function installedVersion(session: KubeSession, namespace: string): Promise<string> {
  const csv = await session.get(OLM_V1ALPHA1, 'ClusterServiceVersion', PACKAGESERVER_CSV, namespace);
  // OLM's release manifests label the CSV with the release version and give it the same spec.version.
  const version = (csv?.metadata?.labels?.['olm.version'] ?? csv?.spec?.version)?.replace(/^v/, '');
  if (!version) {
    const served = await session.serves(OLM_V1ALPHA1, 'ClusterServiceVersion');
    throw new UsageError(
      served
        ? `no existing OLM installation found: ClusterServiceVersion ${namespace}/${PACKAGESERVER_CSV} does not exist`
        : "no existing OLM installation found: the cluster does not serve OLM's ClusterServiceVersion kind",
      served
        ? 'pass --olm-namespace if OLM runs in another namespace, or --version to name the installed version'
        : 'run `ts-operator-sdk olm install`',
    );
  }
  return version;
}

async function createLogged(session: KubeSession, obj: ClusterObject, io: CommandIO): Promise<ClusterObject> {
  io.debug(`creating ${describeObject(obj)}`);
  await session.create(obj);
  return obj;
}

function conditionTrue(obj: ClusterObject | undefined, type: string): boolean {
  return ((obj?.status?.conditions ?? []) as { type: string; status: string }[]).some(
    (c) => c.type === type && c.status === 'True',
  );
}

function deploymentAvailable(obj: ClusterObject | undefined): boolean {
  if (!obj) return false;
  const wanted = obj.spec?.replicas ?? 1;
  return conditionTrue(obj, 'Available') && (obj.status?.availableReplicas ?? 0) >= wanted;
}

/** Why a Deployment is not available: its pods' states, or that it has no pods at all. */
export async function deploymentBlocker(session: KubeSession, deployment: ClusterObject): Promise<string> {
  const name = `Deployment ${deployment.metadata!.namespace}/${deployment.metadata!.name}`;
  const current = await session.get(
    'apps/v1',
    'Deployment',
    deployment.metadata!.name!,
    deployment.metadata!.namespace,
  );
  const labels = (current?.spec?.selector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels ?? {};
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const pods = await session.list('v1', 'Pod', deployment.metadata!.namespace, selector || undefined);
  const available = `${current?.status?.availableReplicas ?? 0} of ${current?.spec?.replicas ?? 1} replicas available`;
  if (pods.length === 0)
    return `${name} has ${available} and no pods (no controller created them: is kube-controller-manager running?)`;
  return `${name} has ${available}; ${describePod(pods[0]!)}`;
}

function timeoutError(options: OlmOptions, blocker: string): UsageError {
  return new UsageError(
    `timed out after ${formatDuration(options.timeoutMs)} waiting for OLM: ${blocker}`,
    'fix what blocks it (see kubectl -n olm get pods,events), or pass a longer --timeout',
  );
}

/**
 * Prints operator-sdk's table, NAME NAMESPACE KIND STATUS, one row per
 * manifest object; returns whether every row is healthy.
 */
async function printStatusTable(
  session: KubeSession,
  manifests: OlmManifests,
  io: CommandIO,
  olmNamespace?: string,
): Promise<boolean> {
  const rows: string[][] = [['NAME', 'NAMESPACE', 'KIND', 'STATUS']];
  let healthy = true;
  for (const obj of [...manifests.crds, ...manifests.resources]) {
    const namespace = obj.metadata?.namespace ?? '';
    const current = await session.get(
      obj.apiVersion!,
      obj.kind!,
      obj.metadata!.name!,
      obj.metadata?.namespace ?? (olmNamespace && obj.kind === 'ClusterServiceVersion' ? olmNamespace : undefined),
    );
    let status: string;
    if (!current) status = 'Failed: resource not found';
    else if (obj.kind === 'ClusterServiceVersion') status = current.status?.phase ?? 'Unknown';
    else if (obj.kind === 'Deployment') status = deploymentAvailable(current) ? 'Installed' : 'Not available';
    else if (obj.kind === 'CustomResourceDefinition')
      status = conditionTrue(current, 'Established') ? 'Installed' : 'Not established';
    else status = 'Installed';
    if (status !== 'Installed' && status !== 'Succeeded') healthy = false;
    rows.push([obj.metadata!.name!, namespace, obj.kind!, status]);
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows)
    io.out(row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]! + 4))).join(''));
  return healthy;
}

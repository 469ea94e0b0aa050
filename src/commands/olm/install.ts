/**
 * `olm install`, `olm status` and `olm uninstall`: OLM v0 from its release
 * manifests, as operator-sdk's `olm` commands do it. Install applies the CRDs,
 * waits for them to be Established, applies the rest, and waits for the
 * olm-operator and catalog-operator Deployments and the packageserver CSV;
 * if anything fails or the timeout passes, it deletes what it created.
 */
import type { CommandIO } from '../../cli/io.js';
import { UsageError } from '../../errors.js';
import type { Condition } from '../../runtime/apitypes.js';
import { findStatusCondition } from '../../runtime/conditions.js';
import { formatDuration } from './connection.js';
import { describeObject, isUnanswered, KubeSession, OLM_V1ALPHA1, type KubeObject } from './kube.js';
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
/** Time granted after --timeout ran out to ask the cluster what blocked the command, for its message. */
export const DIAGNOSIS_BUDGET_MS = 15_000;

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
  const created: KubeObject[] = [];
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
        for (const spec of (current?.spec?.install?.spec?.deployments ?? []) as { name: string }[]) {
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
  const version = (csv?.metadata?.labels?.['olm.version'] ?? (csv?.spec?.version as string | undefined))?.replace(
    /^v/,
    '',
  );
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

async function createLogged(session: KubeSession, obj: KubeObject, io: CommandIO): Promise<KubeObject> {
  io.debug(`creating ${describeObject(obj)}`);
  await session.create(obj);
  return obj;
}

/**
 * Deletes objects in reverse order (the CSV before its Deployments, the
 * namespaces last, CRDs after the objects that use them) and waits until
 * each is gone or the session's time runs out; returns the ones still there.
 * A server that does not answer ends it with that error.
 *
 * OLM's own objects (CSVs, CatalogSources, Subscriptions) go first, while
 * olm-operator still runs to remove their finalizers; any that still hold a
 * finalizer after OLM_FINALIZER_WAIT_MS get it stripped, since nothing else
 * would ever remove it once OLM is gone.
 */
export async function deleteAll(
  session: KubeSession,
  objects: readonly KubeObject[],
  io: CommandIO,
): Promise<KubeObject[]> {
  const order = [...objects].reverse().sort((a, b) => rank(a) - rank(b));
  const olmOwned = order.filter(isOlmKind);
  if (olmOwned.length > 0) {
    await deleteAndWait(session, olmOwned, io, Date.now() + OLM_FINALIZER_WAIT_MS);
    for (const obj of olmOwned) {
      const current = await session
        .get(obj.apiVersion!, obj.kind!, obj.metadata!.name!, obj.metadata?.namespace)
        .catch(() => undefined);
      if (current?.metadata?.finalizers?.length) {
        io.progress(`removing the finalizers of ${describeObject(obj)}, which OLM did not process`);
        await session.mergePatch(obj, { metadata: { finalizers: null } }).catch(() => undefined);
      }
    }
  }
  return deleteAndWait(session, order, io);
}

/** How long OLM gets to finalize its own objects before their finalizers are removed. */
const OLM_FINALIZER_WAIT_MS = 60_000;

function isOlmKind(obj: KubeObject): boolean {
  return (obj.apiVersion ?? '').startsWith('operators.coreos.com/');
}

async function deleteAndWait(
  session: KubeSession,
  order: readonly KubeObject[],
  io: CommandIO,
  until?: number,
): Promise<KubeObject[]> {
  for (const obj of order) await requestDeletion(session, obj, io);
  let left = [...order];
  const lastNudge = new Map<KubeObject, number>();
  await session.pollUntil(async () => {
    const still: KubeObject[] = [];
    for (const obj of left) {
      const { state, current } = await deletionState(session, obj);
      if (state === 'gone') continue;
      still.push(obj);
      // A DELETE that failed (a busy server's timeout or 5xx) must not leave the object for good: ask again.
      if (state === 'present') {
        await requestDeletion(session, obj, io);
        continue;
      }
      const failure = failedCrdCleanup(current);
      if (failure && Date.now() - (lastNudge.get(obj) ?? 0) >= CRD_NUDGE_INTERVAL_MS) {
        lastNudge.set(obj, Date.now());
        await nudgeCrdFinalizer(session, obj, failure, io);
      }
    }
    left = still;
    return left.length === 0 ? true : undefined;
  }, until);
  return left;
}

/** Sends the DELETE; a refusal is reported and left to the caller's next look, a server that does not answer ends the deletion. */
async function requestDeletion(session: KubeSession, obj: KubeObject, io: CommandIO): Promise<void> {
  try {
    if (await session.delete(obj)) io.debug(`deleted ${describeObject(obj)}`);
  } catch (err) {
    if (isUnanswered(err)) throw err;
    io.progress(`could not delete ${describeObject(obj)}: ${(err as Error).message.split('\n')[0]}`);
  }
}

/**
 * `gone`, `deleting` (it has a deletionTimestamp: finalizers are running), or
 * `present`, with the object as read. A Namespace counts as gone once it is
 * Terminating, since the namespace controller finishes it and waiting for that
 * can take minutes. An error reading it counts as `deleting`: look again, but
 * do not re-delete.
 */
async function deletionState(
  session: KubeSession,
  obj: KubeObject,
): Promise<{ state: 'gone' | 'deleting' | 'present'; current?: KubeObject }> {
  try {
    const current = await session.get(obj.apiVersion!, obj.kind!, obj.metadata!.name!, obj.metadata?.namespace);
    if (current === undefined) return { state: 'gone' };
    if (!current.metadata?.deletionTimestamp) return { state: 'present', current };
    return { state: obj.kind === 'Namespace' ? 'gone' : 'deleting', current };
  } catch {
    return { state: 'deleting' };
  }
}

/** How often a CRD whose cleanup failed is nudged (see nudgeCrdFinalizer). */
const CRD_NUDGE_INTERVAL_MS = 5_000;

/**
 * The CRD's Terminating condition when the API server's CRD finalizer failed
 * its last attempt to remove the CRD's instances, else undefined. Right after a CRD nobody has read is deleted, its instance
 * storage is still initializing; the finalizer fails with "storage is
 * (re)initializing" and retries with an exponential backoff that, measured on
 * kube-apiserver v1.36, had grown past 4 minutes before the storage was ready.
 */
function failedCrdCleanup(current: KubeObject | undefined): Condition | undefined {
  if (current?.kind !== 'CustomResourceDefinition') return undefined;
  const terminating = findStatusCondition(current.status?.conditions as Condition[] | undefined, 'Terminating');
  return terminating?.status === 'True' &&
    (terminating.reason === 'InstanceDeletionFailed' || terminating.reason === 'InstanceDeletionCheck')
    ? terminating
    : undefined;
}

/**
 * Touches an annotation on a terminating CRD. The finalizer queues the CRD
 * again on any change other than its own Terminating condition, which skips
 * the backoff: it retries now, when the storage is likely ready.
 */
async function nudgeCrdFinalizer(
  session: KubeSession,
  obj: KubeObject,
  failure: Condition,
  io: CommandIO,
): Promise<void> {
  io.progress(
    `the API server's cleanup of ${describeObject(obj)} failed (${failure.message || 'no message'}); asking it to retry now`,
  );
  await session
    .mergePatch(obj, { metadata: { annotations: { 'ts-operator-sdk.io/cleanup-retry': new Date().toISOString() } } })
    .catch(() => undefined);
}

/** Namespaces go last, CRDs just before them, so objects in them are deleted first. */
function rank(obj: KubeObject): number {
  return obj.kind === 'Namespace' ? 2 : obj.kind === 'CustomResourceDefinition' ? 1 : 0;
}

function conditionTrue(obj: KubeObject | undefined, type: string): boolean {
  return ((obj?.status?.conditions ?? []) as { type: string; status: string }[]).some(
    (c) => c.type === type && c.status === 'True',
  );
}

function deploymentAvailable(obj: KubeObject | undefined): boolean {
  if (!obj) return false;
  const wanted = (obj.spec?.replicas as number | undefined) ?? 1;
  return conditionTrue(obj, 'Available') && ((obj.status?.availableReplicas as number | undefined) ?? 0) >= wanted;
}

/** Why a Deployment is not available: its pods' states, or that it has no pods at all. */
export async function deploymentBlocker(session: KubeSession, deployment: KubeObject): Promise<string> {
  const name = `Deployment ${deployment.metadata!.namespace}/${deployment.metadata!.name}`;
  const current = await session.get(
    'apps/v1',
    'Deployment',
    deployment.metadata!.name!,
    deployment.metadata!.namespace,
  );
  const labels = (current?.spec?.selector?.matchLabels ?? {}) as Record<string, string>;
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const pods = await session.list('v1', 'Pod', deployment.metadata!.namespace, selector || undefined);
  const available = `${current?.status?.availableReplicas ?? 0} of ${current?.spec?.replicas ?? 1} replicas available`;
  if (pods.length === 0)
    return `${name} has ${available} and no pods (no controller created them: is kube-controller-manager running?)`;
  return `${name} has ${available}; ${describePod(pods[0]!)}`;
}

/** The state of a pod that holds things up: its phase, and the first waiting container or unmet condition. */
export function describePod(pod: KubeObject): string {
  const status = pod.status ?? {};
  const waiting = (
    (status.containerStatuses ?? []) as { name: string; state?: { waiting?: { reason?: string; message?: string } } }[]
  ).find((c) => c.state?.waiting);
  if (waiting)
    return `pod ${pod.metadata!.name} container ${waiting.name} is waiting: ${waiting.state!.waiting!.reason ?? ''}${waiting.state!.waiting!.message ? ` (${waiting.state!.waiting!.message})` : ''}`;
  const unmet = (
    (status.conditions ?? []) as { type: string; status: string; reason?: string; message?: string }[]
  ).find((c) => c.status !== 'True');
  if (unmet)
    return `pod ${pod.metadata!.name} is ${status.phase ?? 'Pending'}: ${unmet.type}=${unmet.status}${unmet.reason ? ` ${unmet.reason}` : ''}${unmet.message ? ` (${unmet.message})` : ''}`;
  if (!pod.spec?.nodeName)
    return `pod ${pod.metadata!.name} is ${status.phase ?? 'Pending'} and was never scheduled to a node (is a scheduler and a node running?)`;
  return `pod ${pod.metadata!.name} is ${status.phase ?? 'Pending'}`;
}

function timeoutError(options: OlmOptions, blocker: string): UsageError {
  return new UsageError(
    `timed out after ${formatDuration(options.timeoutMs)} waiting for OLM: ${blocker}`,
    'fix what blocks it (see kubectl -n olm get pods,events), or pass a longer --timeout',
  );
}

/**
 * What blocked a wait that ran out of time, asked of the cluster in a short
 * overtime (DIAGNOSIS_BUDGET_MS) since the command's own time is used up.
 */
export async function diagnose(session: KubeSession, describe: () => Promise<string>): Promise<string> {
  session.overtime(DIAGNOSIS_BUDGET_MS);
  return describe();
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
    else if (obj.kind === 'ClusterServiceVersion') status = (current.status?.phase as string | undefined) ?? 'Unknown';
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

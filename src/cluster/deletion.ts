/**
 * Deleting what a cluster command created or was asked to remove, and
 * waiting until it is gone: OLM's objects before OLM is gone, CRDs whose
 * cleanup the API server's finalizer failed nudged to retry, a failed DELETE
 * sent again.
 */
import type { Condition } from '../runtime/api/types.js';
import { findStatusCondition } from '../runtime/api/conditions.js';
import { describeObject, isUnanswered, type ClusterObject, type KubeSession } from './session.js';

/** Where a deletion reports what it does (a command's CommandIO is one). */
export interface ProgressLog {
  /** A line the user sees. */
  progress(line: string): void;
  /** A line shown with --verbose. */
  debug(line: string): void;
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
  objects: readonly ClusterObject[],
  log: ProgressLog,
): Promise<ClusterObject[]> {
  const order = [...objects].reverse().sort((a, b) => rank(a) - rank(b));
  const olmOwned = order.filter(isOlmKind);
  if (olmOwned.length > 0) {
    await deleteAndWait(session, olmOwned, log, Date.now() + OLM_FINALIZER_WAIT_MS);
    for (const obj of olmOwned) {
      const current = await session
        .get(obj.apiVersion!, obj.kind!, obj.metadata!.name!, obj.metadata?.namespace)
        .catch(() => undefined);
      if (current?.metadata?.finalizers?.length) {
        log.progress(`removing the finalizers of ${describeObject(obj)}, which OLM did not process`);
        await session.mergePatch(obj, { metadata: { finalizers: null } }).catch(() => undefined);
      }
    }
  }
  return deleteAndWait(session, order, log);
}

/** How long OLM gets to finalize its own objects before their finalizers are removed. */
const OLM_FINALIZER_WAIT_MS = 60_000;

function isOlmKind(obj: ClusterObject): boolean {
  return (obj.apiVersion ?? '').startsWith('operators.coreos.com/');
}

async function deleteAndWait(
  session: KubeSession,
  order: readonly ClusterObject[],
  log: ProgressLog,
  until?: number,
): Promise<ClusterObject[]> {
  for (const obj of order) await requestDeletion(session, obj, log);
  let left = [...order];
  const lastNudge = new Map<ClusterObject, number>();
  await session.pollUntil(async () => {
    const still: ClusterObject[] = [];
    for (const obj of left) {
      const { state, current } = await deletionState(session, obj);
      if (state === 'gone') continue;
      still.push(obj);
      // A DELETE that failed (a busy server's timeout or 5xx) must not leave the object for good: ask again.
      if (state === 'present') {
        await requestDeletion(session, obj, log);
        continue;
      }
      const failure = failedCrdCleanup(current);
      if (failure && Date.now() - (lastNudge.get(obj) ?? 0) >= CRD_NUDGE_INTERVAL_MS) {
        lastNudge.set(obj, Date.now());
        await nudgeCrdFinalizer(session, obj, failure, log);
      }
    }
    left = still;
    return left.length === 0 ? true : undefined;
  }, until);
  return left;
}

/** Sends the DELETE; a refusal is reported and left to the caller's next look, a server that does not answer ends the deletion. */
async function requestDeletion(session: KubeSession, obj: ClusterObject, log: ProgressLog): Promise<void> {
  try {
    if (await session.delete(obj)) log.debug(`deleted ${describeObject(obj)}`);
  } catch (err) {
    if (isUnanswered(err)) throw err;
    log.progress(`could not delete ${describeObject(obj)}: ${(err as Error).message.split('\n')[0]}`);
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
  obj: ClusterObject,
): Promise<{ state: 'gone' | 'deleting' | 'present'; current?: ClusterObject }> {
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
function failedCrdCleanup(current: ClusterObject | undefined): Condition | undefined {
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
  obj: ClusterObject,
  failure: Condition,
  log: ProgressLog,
): Promise<void> {
  log.progress(
    `the API server's cleanup of ${describeObject(obj)} failed (${failure.message || 'no message'}); asking it to retry now`,
  );
  await session
    .mergePatch(obj, { metadata: { annotations: { 'ts-operator-sdk.io/cleanup-retry': new Date().toISOString() } } })
    .catch(() => undefined);
}

/** Namespaces go last, CRDs just before them, so objects in them are deleted first. */
function rank(obj: ClusterObject): number {
  return obj.kind === 'Namespace' ? 2 : obj.kind === 'CustomResourceDefinition' ? 1 : 0;
}

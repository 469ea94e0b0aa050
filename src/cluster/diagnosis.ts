/**
 * What a cluster command says when a wait runs out of time: what blocked it,
 * asked of the cluster in a short overtime, and the state of a pod that holds
 * things up.
 */
import type { ClusterObject, KubeSession } from './session.js';

/** Time granted after --timeout ran out to ask the cluster what blocked the command, for its message. */
export const DIAGNOSIS_BUDGET_MS = 15_000;

/** The state of a pod that holds things up: its phase, and the first waiting container or unmet condition. */
export function describePod(pod: ClusterObject): string {
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

/**
 * What blocked a wait that ran out of time, asked of the cluster in a short
 * overtime (DIAGNOSIS_BUDGET_MS) since the command's own time is used up.
 */
export async function diagnose(session: KubeSession, describe: () => Promise<string>): Promise<string> {
  session.overtime(DIAGNOSIS_BUDGET_MS);
  return describe();
}

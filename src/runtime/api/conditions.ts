/**
 * Helpers for `status.conditions` (apimachinery's meta.SetStatusCondition
 * and friends). They edit the array in place, so callers pass the object's
 * own `status.conditions` and then write the status.
 */
import type { Condition, Time } from './types.js';

/** A condition to set; lastTransitionTime is filled in when the status changes and it is left out. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'message'> & {
  lastTransitionTime?: Time;
  message?: string;
};

/** Where "now" comes from; tests pass a fixed clock. */
export interface ConditionClock {
  now(): Date;
}

const systemClock: ConditionClock = { now: () => new Date() };

/** metav1.Time form: RFC 3339 in UTC with whole seconds, as the API server stores it. */
export function toKubernetesTime(date: Date): Time {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Adds the condition or updates the one of the same type. lastTransitionTime
 * moves only when the condition is new or its status changes, so it keeps
 * saying when the status last flipped; reason, message and
 * observedGeneration are always updated. Returns whether anything changed,
 * so the caller can skip a no-op status write.
 */
export function setStatusCondition(
  conditions: Condition[],
  newCondition: ConditionInput,
  clock: ConditionClock = systemClock,
): boolean {
  const existing = conditions.find((condition) => condition.type === newCondition.type);
  const message = newCondition.message ?? '';
  if (!existing) {
    conditions.push({
      type: newCondition.type,
      status: newCondition.status,
      ...(newCondition.observedGeneration !== undefined ? { observedGeneration: newCondition.observedGeneration } : {}),
      lastTransitionTime: newCondition.lastTransitionTime || toKubernetesTime(clock.now()),
      reason: newCondition.reason,
      message,
    });
    return true;
  }
  let changed = false;
  if (existing.status !== newCondition.status) {
    existing.status = newCondition.status;
    existing.lastTransitionTime = newCondition.lastTransitionTime || toKubernetesTime(clock.now());
    changed = true;
  }
  if (existing.reason !== newCondition.reason) {
    existing.reason = newCondition.reason;
    changed = true;
  }
  if (existing.message !== message) {
    existing.message = message;
    changed = true;
  }
  if (existing.observedGeneration !== newCondition.observedGeneration) {
    if (newCondition.observedGeneration === undefined) delete existing.observedGeneration;
    else existing.observedGeneration = newCondition.observedGeneration;
    changed = true;
  }
  return changed;
}

/** Removes the condition of this type; returns whether one was there. */
export function removeStatusCondition(conditions: Condition[], conditionType: string): boolean {
  const index = conditions.findIndex((condition) => condition.type === conditionType);
  if (index < 0) return false;
  conditions.splice(index, 1);
  return true;
}

/** The condition of this type, if present. */
export function findStatusCondition(
  conditions: readonly Condition[] | undefined,
  conditionType: string,
): Condition | undefined {
  return conditions?.find((condition) => condition.type === conditionType);
}

/** Whether the condition is present with status True. */
export function isStatusConditionTrue(conditions: readonly Condition[] | undefined, conditionType: string): boolean {
  return isStatusConditionPresentAndEqual(conditions, conditionType, 'True');
}

/** Whether the condition is present with status False. */
export function isStatusConditionFalse(conditions: readonly Condition[] | undefined, conditionType: string): boolean {
  return isStatusConditionPresentAndEqual(conditions, conditionType, 'False');
}

/** Whether the condition is present with exactly this status. */
export function isStatusConditionPresentAndEqual(
  conditions: readonly Condition[] | undefined,
  conditionType: string,
  status: Condition['status'],
): boolean {
  return findStatusCondition(conditions, conditionType)?.status === status;
}

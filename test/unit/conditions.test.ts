import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setStatusCondition, type Condition } from '../../src/runtime/index.js';
import {
  findStatusCondition,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  isStatusConditionTrue,
  removeStatusCondition,
  toKubernetesTime,
  type ConditionClock,
} from '../../src/runtime/api/index.js';

/** A clock the test moves by hand. */
function manualClock(start: string): ConditionClock & { advance(seconds: number): void } {
  let now = new Date(start);
  return {
    now: () => now,
    advance(seconds: number) {
      now = new Date(now.getTime() + seconds * 1000);
    },
  };
}

describe('setStatusCondition', () => {
  it('adds a new condition with lastTransitionTime from the clock, in whole seconds', () => {
    const clock = manualClock('2026-01-02T03:04:05.678Z');
    const conditions: Condition[] = [];
    const changed = setStatusCondition(
      conditions,
      { type: 'Available', status: 'True', reason: 'Ready', message: 'all good', observedGeneration: 3 },
      clock,
    );
    assert.equal(changed, true);
    assert.deepEqual(conditions, [
      {
        type: 'Available',
        status: 'True',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-02T03:04:05Z',
        reason: 'Ready',
        message: 'all good',
      },
    ]);
  });

  it('keeps lastTransitionTime when only reason, message and observedGeneration change', () => {
    const clock = manualClock('2026-01-02T03:04:05Z');
    const conditions: Condition[] = [];
    setStatusCondition(
      conditions,
      { type: 'Available', status: 'True', reason: 'Ready', message: 'one', observedGeneration: 1 },
      clock,
    );
    clock.advance(60);
    const changed = setStatusCondition(
      conditions,
      { type: 'Available', status: 'True', reason: 'StillReady', message: 'two', observedGeneration: 2 },
      clock,
    );
    assert.equal(changed, true);
    assert.equal(conditions.length, 1);
    assert.deepEqual(conditions[0], {
      type: 'Available',
      status: 'True',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-02T03:04:05Z',
      reason: 'StillReady',
      message: 'two',
    });
  });

  it('moves lastTransitionTime to now when the status changes', () => {
    const clock = manualClock('2026-01-02T03:04:05Z');
    const conditions: Condition[] = [];
    setStatusCondition(
      conditions,
      { type: 'Available', status: 'Unknown', reason: 'Reconciling', message: 'starting' },
      clock,
    );
    clock.advance(90);
    assert.equal(
      setStatusCondition(
        conditions,
        { type: 'Available', status: 'False', reason: 'Failed', message: 'no pods' },
        clock,
      ),
      true,
    );
    assert.equal(conditions[0]!.lastTransitionTime, '2026-01-02T03:05:35Z');
    assert.equal(conditions[0]!.status, 'False');
  });

  it('uses an explicit lastTransitionTime when the status changes', () => {
    const conditions: Condition[] = [
      { type: 'Ready', status: 'False', lastTransitionTime: '2020-01-01T00:00:00Z', reason: 'A', message: '' },
    ];
    setStatusCondition(conditions, {
      type: 'Ready',
      status: 'True',
      reason: 'A',
      lastTransitionTime: '2021-06-01T00:00:00Z',
    });
    assert.equal(conditions[0]!.lastTransitionTime, '2021-06-01T00:00:00Z');
  });

  it('reports no change when setting an identical condition, and leaves the array alone', () => {
    const clock = manualClock('2026-01-02T03:04:05Z');
    const conditions: Condition[] = [];
    setStatusCondition(
      conditions,
      { type: 'Available', status: 'True', reason: 'Ready', message: 'm', observedGeneration: 4 },
      clock,
    );
    const snapshot = structuredClone(conditions);
    clock.advance(3600);
    assert.equal(
      setStatusCondition(
        conditions,
        { type: 'Available', status: 'True', reason: 'Ready', message: 'm', observedGeneration: 4 },
        clock,
      ),
      false,
    );
    assert.deepEqual(conditions, snapshot);
  });

  it('treats a missing message as empty and keeps other conditions in order', () => {
    const conditions: Condition[] = [];
    setStatusCondition(conditions, { type: 'A', status: 'True', reason: 'R' });
    setStatusCondition(conditions, { type: 'B', status: 'False', reason: 'R' });
    assert.equal(setStatusCondition(conditions, { type: 'A', status: 'True', reason: 'R', message: '' }), false);
    assert.deepEqual(
      conditions.map((c) => [c.type, c.message]),
      [
        ['A', ''],
        ['B', ''],
      ],
    );
  });
});

describe('condition queries and removal', () => {
  const conditions = (): Condition[] => [
    { type: 'Available', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'R', message: '' },
    { type: 'Degraded', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'R', message: '' },
    { type: 'Progressing', status: 'Unknown', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'R', message: '' },
  ];

  it('finds conditions by type', () => {
    assert.equal(findStatusCondition(conditions(), 'Degraded')?.status, 'False');
    assert.equal(findStatusCondition(conditions(), 'Missing'), undefined);
    assert.equal(findStatusCondition(undefined, 'Available'), undefined);
  });

  it('answers True/False/PresentAndEqual only for present conditions', () => {
    const list = conditions();
    assert.equal(isStatusConditionTrue(list, 'Available'), true);
    assert.equal(isStatusConditionTrue(list, 'Degraded'), false);
    assert.equal(isStatusConditionFalse(list, 'Degraded'), true);
    assert.equal(isStatusConditionFalse(list, 'Progressing'), false);
    assert.equal(isStatusConditionTrue(list, 'Missing'), false);
    assert.equal(isStatusConditionFalse(list, 'Missing'), false);
    assert.equal(isStatusConditionPresentAndEqual(list, 'Progressing', 'Unknown'), true);
    assert.equal(isStatusConditionPresentAndEqual(list, 'Missing', 'Unknown'), false);
    assert.equal(isStatusConditionTrue(undefined, 'Available'), false);
  });

  it('removes a condition in place and says whether it was there', () => {
    const list = conditions();
    assert.equal(removeStatusCondition(list, 'Degraded'), true);
    assert.deepEqual(
      list.map((c) => c.type),
      ['Available', 'Progressing'],
    );
    assert.equal(removeStatusCondition(list, 'Degraded'), false);
    assert.equal(list.length, 2);
  });
});

describe('toKubernetesTime', () => {
  it('drops fractional seconds', () => {
    assert.equal(toKubernetesTime(new Date('2026-03-04T05:06:07.999Z')), '2026-03-04T05:06:07Z');
  });
});

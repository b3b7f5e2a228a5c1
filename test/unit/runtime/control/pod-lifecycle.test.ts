// Pod lifecycle decisions of the workloads with hooks (control/pod-lifecycle.ts): state transitions and the not-ready mark.
import { describe, expect, it } from 'vitest';
import {
  kruisePodReadyWith,
  missingGateForNotReady,
  nextLifecycleState,
  notReadyChange,
} from '../../../../src/runtime/control/pod-lifecycle.js';
import type { Lifecycle } from '../../../../src/runtime/control/workload-pods.js';
import { OLD, NEW, type PodOpts, pod } from './workload-pod-fixtures.js';

describe('lifecycle transitions', () => {
  const ipu = { labelsHandler: { 'ipu-hold': 'true' }, markPodNotReady: true };
  it.each([
    ['PreparingNormal, no hook, scheduled', { state: 'PreparingNormal' }, undefined, true, 'Normal'],
    ['PreparingNormal, no hook, unscheduled', { state: 'PreparingNormal', node: null }, undefined, true, undefined],
    [
      'PreparingNormal, preNormal finalizer missing',
      { state: 'PreparingNormal' },
      { preNormal: { finalizersHandler: ['f'] } },
      true,
      undefined,
    ],
    [
      'PreparingNormal, preNormal finalizer present',
      { state: 'PreparingNormal', finalizers: ['f'] },
      { preNormal: { finalizersHandler: ['f'] } },
      true,
      'Normal',
    ],
    [
      'PreparingNormal, preNormal label present',
      { state: 'PreparingNormal', labels: { x: 'y' } },
      { preNormal: { labelsHandler: { x: 'y' } } },
      true,
      'Normal',
    ],
    ['Updating, not complete', { state: 'Updating', rev: NEW }, { inPlaceUpdate: ipu }, false, undefined],
    ['Updating, complete, hook not re-added', { state: 'Updating', rev: NEW }, { inPlaceUpdate: ipu }, true, 'Updated'],
    [
      'Updating, complete, hook re-added',
      { state: 'Updating', rev: NEW, labels: { 'ipu-hold': 'true' } },
      { inPlaceUpdate: ipu },
      true,
      'Normal',
    ],
    ['Updating, complete, no lifecycle', { state: 'Updating', rev: NEW }, undefined, true, 'Normal'],
    ['Updated, hook back', { state: 'Updated', rev: NEW, labels: { 'ipu-hold': 'true' } }, { inPlaceUpdate: ipu }, true, 'Normal'],
    ['Updated, hook not back', { state: 'Updated', rev: NEW }, { inPlaceUpdate: ipu }, true, undefined],
    ['PreparingUpdate at update revision (rollback)', { state: 'PreparingUpdate', rev: NEW }, { inPlaceUpdate: ipu }, true, 'Updated'],
    ['PreparingUpdate at old revision', { state: 'PreparingUpdate', rev: OLD }, { inPlaceUpdate: ipu }, true, undefined],
    ['Normal stays', { state: 'Normal' }, undefined, true, undefined],
  ] as const)('%s → %s', (_n, o, lc, done, want) => {
    expect(
      nextLifecycleState({
        pod: pod('x', o as PodOpts),
        lifecycle: lc as Lifecycle | undefined,
        updateRevision: NEW,
        inPlaceCompleted: done,
      }),
    ).toBe(want);
  });

  it('not-ready marks: added on PreparingDelete/PreparingUpdate, cleared on Updated AND on a direct step to Normal', () => {
    const lc: Lifecycle = { preDelete: { markPodNotReady: true, labelsHandler: { a: 'b' } }, inPlaceUpdate: ipu };
    expect(notReadyChange('PreparingDelete', lc)).toEqual({ key: 'preDeleteHook', present: true });
    expect(notReadyChange('PreparingUpdate', lc)).toEqual({ key: 'preUpdateHook', present: true });
    expect(notReadyChange('Updated', lc)).toEqual({ key: 'preUpdateHook', present: false });
    expect(notReadyChange('Normal', lc)).toEqual({ key: 'preUpdateHook', present: false });
    expect(notReadyChange('PreparingDelete', { preDelete: { labelsHandler: { a: 'b' } } })).toBeUndefined();
  });

  it("KruisePodReady keeps other writers' keys and turns True only when none is left", () => {
    const crrKey = JSON.stringify([{ userAgent: 'ContainerRecreateRequest', key: 'ns/crr' }]);
    const p = pod('x', { gates: ['KruisePodReady'], conditions: [{ type: 'KruisePodReady', status: 'False', message: crrKey }] });
    const added = kruisePodReadyWith(p, 'preDeleteHook', true, 'now')!;
    expect(added.status).toBe('False');
    expect(JSON.parse(added.message!)).toEqual([
      { userAgent: 'ContainerRecreateRequest', key: 'ns/crr' },
      { userAgent: 'Lifecycle', key: 'preDeleteHook' },
    ]);
    const mine = pod('y', {
      conditions: [
        { type: 'KruisePodReady', status: 'False', message: JSON.stringify([{ userAgent: 'Lifecycle', key: 'preUpdateHook' }]) },
      ],
    });
    expect(kruisePodReadyWith(mine, 'preUpdateHook', false, 'now')).toMatchObject({ status: 'True' });
    expect(
      kruisePodReadyWith(pod('z', { conditions: [{ type: 'KruisePodReady', status: 'True' }] }), 'preUpdateHook', false, 'now'),
    ).toBeUndefined();
  });

  it('markPodNotReady without the KruisePodReady gate is reported', () => {
    expect(missingGateForNotReady(pod('x'), { present: true })).toBe(true);
    expect(missingGateForNotReady(pod('x', { gates: ['KruisePodReady'] }), { present: true })).toBe(false);
    expect(missingGateForNotReady(pod('x'), undefined)).toBe(false);
  });
});

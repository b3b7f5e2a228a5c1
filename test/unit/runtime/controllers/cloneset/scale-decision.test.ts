// CloneSet Scale decisions (scale-decision.ts): int-or-percent, the diffs, the Scale step.
import { describe, expect, it } from 'vitest';
import {
  calculateDiffs,
  partitionReplicas,
  planScale,
  scaledValue,
  deleteStep,
} from '../../../../../src/runtime/controllers/cloneset/scale-decision.js';
import type { Lifecycle } from '../../../../../src/runtime/control/workload-pods.js';
import { NEW, type PodOpts, pod, diffInput, many } from './fixtures.js';

describe('int-or-percent and partition', () => {
  it.each([
    [3, 10, true, 3],
    ['20%', 5, true, 1],
    ['20%', 4, true, 1],
    ['20%', 4, false, 0],
    ['50%', 5, false, 2],
    [undefined, 5, true, 7],
  ] as const)('scaledValue(%s of %s, up=%s) = %s', (v, total, up, want) => {
    expect(scaledValue(v, total, up, 7)).toBe(want);
  });
  it('rejects garbage with a message saying what is expected', () => {
    expect(() => scaledValue('abc', 5, true, 0)).toThrow(/integer or a percentage/);
  });
  it.each([
    [undefined, 5, 0],
    [2, 5, 2],
    [9, 5, 5],
    ['40%', 5, 2],
    ['90%', 5, 4], // rounds to 5 = replicas but is below 100%: replicas−1
    ['100%', 5, 5],
    ['90%', 1, 1],
  ] as const)('partition %s of %s = %s', (p, r, want) => {
    expect(partitionReplicas(p, r)).toBe(want);
  });
});

describe('calculateDiffs', () => {
  it('scale up from zero: all new revision, unlimited by default', () => {
    const d = calculateDiffs(diffInput([], { currentRevision: NEW }));
    expect(d).toMatchObject({ scaleUpNum: 5, scaleUpLimit: 5, scaleUpNumOldRevision: 0, scaleDownNum: 0, updateNum: 0 });
  });
  it('scaleStrategy.maxUnavailable limits creation by unavailable pods', () => {
    const d = calculateDiffs(
      diffInput([pod('a', { ready: false })], { currentRevision: NEW, updateRevision: NEW, scaleMaxUnavailable: 2 }),
    );
    expect(d).toMatchObject({ scaleUpNum: 4, scaleUpLimit: 1 });
  });
  it('partition keeps old-revision pods when scaling up', () => {
    const d = calculateDiffs(diffInput([pod('a')], { partition: 3 }));
    expect(d).toMatchObject({ scaleUpNum: 4, scaleUpNumOldRevision: 2 });
  });
  it('scale down 5 → 2 with a ready budget of U + extra', () => {
    const d = calculateDiffs(diffInput(many(5, { rev: NEW }), { replicas: 2, currentRevision: NEW }));
    // U = ceil(20% of 2) = 1; budget = 1 + 5 − 2 − 0
    expect(d).toMatchObject({ scaleDownNum: 3, deleteReadyLimit: 4 });
  });
  it('update: partition 2 of 5 → 3 to update, maxUnavailable 1', () => {
    const d = calculateDiffs(diffInput(many(5), { partition: 2, maxUnavailable: 1 }));
    expect(d).toMatchObject({ updateNum: 3, updateMaxUnavailable: 1, scaleUpNum: 0, scaleDownNum: 0 });
  });
  it('raising partition does not roll back without CloneSetPartitionRollback', () => {
    const pods = [...many(4, { rev: NEW }, 'n'), pod('o')];
    expect(calculateDiffs(diffInput(pods, { partition: 3 })).updateNum).toBe(0);
    expect(calculateDiffs(diffInput(pods, { partition: 3, partitionRollback: true })).updateNum).toBe(-2);
  });
  it('maxSurge: update uses surge pods of the new revision', () => {
    const d = calculateDiffs(diffInput(many(5), { maxSurge: 1, maxUnavailable: 0 }));
    expect(d).toMatchObject({ useSurge: 1, scaleUpNum: 1, scaleUpNumOldRevision: 0, updateNum: 5 });
  });
  it('paused turns surge off', () => {
    expect(calculateDiffs(diffInput(many(5), { maxSurge: 1, paused: true })).useSurge).toBe(0);
  });
  it('PreparingDelete pods count toward replicas unless excluded', () => {
    const pods = [...many(4, { rev: NEW }), pod('d', { rev: NEW, state: 'PreparingDelete' })];
    expect(calculateDiffs(diffInput(pods, { currentRevision: NEW })).scaleUpNum).toBe(0);
    expect(calculateDiffs(diffInput(pods, { currentRevision: NEW, excludePreparingDelete: true })).scaleUpNum).toBe(1);
  });
});

describe('planScale', () => {
  const l: Lifecycle = { preDelete: { labelsHandler: { hold: 'true' } } };
  it('creates pods, old revision first', () => {
    expect(planScale(diffInput([pod('a')], { partition: 3 }))).toEqual({ action: 'create', count: 4, oldRevisionCount: 2, wanted: 4 });
  });
  it('takes PreparingDelete pods back on scale-up before creating', () => {
    const d = pod('d', { rev: NEW, state: 'PreparingDelete' });
    const plan = planScale({ ...diffInput([...many(2, { rev: NEW }), d], { currentRevision: NEW }), lifecycle: l });
    expect(plan).toEqual({ action: 'undelete', pods: [d] });
  });
  it('no take-back when a hook marks pods not ready', () => {
    const d = pod('d', { rev: NEW, state: 'PreparingDelete', labels: { hold: 'true' } });
    const plan = planScale({
      ...diffInput([...many(2, { rev: NEW }), d], { currentRevision: NEW }),
      lifecycle: { preDelete: { labelsHandler: { hold: 'true' }, markPodNotReady: true } },
    });
    expect(plan).toMatchObject({ action: 'create', count: 2 });
  });
  it('scale-in picks not-ready, unscheduled and newest first', () => {
    const pods = [
      pod('old-ready', { rev: NEW, created: '2026-01-01T00:00:00Z' }),
      pod('new-ready', { rev: NEW, created: '2026-01-01T00:05:00Z' }),
      pod('not-ready', { rev: NEW, ready: false }),
      pod('unscheduled', { rev: NEW, node: null, phase: 'Pending', ready: false }),
      pod('mid', { rev: NEW, created: '2026-01-01T00:03:00Z' }),
    ];
    const plan = planScale(diffInput(pods, { replicas: 2, currentRevision: NEW }));
    expect(plan.action === 'delete' && plan.pods.map((p) => p.metadata.name)).toEqual(['unscheduled', 'not-ready', 'new-ready']);
  });
  it('podsToDelete first; no scale-in while they are pending', () => {
    const pods = many(5, { rev: NEW });
    const plan = planScale(diffInput(pods, { replicas: 4, currentRevision: NEW, podsToDelete: new Set(['p3']) }));
    expect(plan).toMatchObject({ action: 'delete', reason: 'specified' });
    expect(plan.action === 'delete' && plan.pods.map((p) => p.metadata.name)).toEqual(['p3']);
  });
  it('specified ready pods beyond the budget wait', () => {
    const pods = many(5, { rev: NEW });
    const plan = planScale(
      diffInput(pods, { replicas: 5, currentRevision: NEW, maxUnavailable: 1, podsToDelete: new Set(['p1', 'p2', 'p3']) }),
    );
    // Without surge nothing is created first: one ready pod goes (budget = U 1 + 5 − 5 − 0), the most
    // co-located one (all share a node), then its replacement comes.
    expect(plan.action === 'delete' && plan.pods.map((p) => p.metadata.name)).toEqual(['p3']);
    const after = [...pods.filter((p) => p.metadata.name !== 'p3'), pod('r0', { rev: NEW, ready: false })];
    const p2 = planScale(diffInput(after, { replicas: 5, currentRevision: NEW, maxUnavailable: 1, podsToDelete: new Set(['p1', 'p2']) }));
    // The new pod is unavailable: budget 1 + 5 − 5 − 1 = 0, so no ready pod is deleted.
    expect(p2).toEqual({ action: 'none' });
  });
  it('a PreparingDelete pod released by its hook is deleted', () => {
    const released = pod('d', { rev: NEW, state: 'PreparingDelete' });
    const plan = planScale({ ...diffInput([...many(2, { rev: NEW }), released], { replicas: 2, currentRevision: NEW }), lifecycle: l });
    expect(plan).toEqual({ action: 'delete', pods: [released], reason: 'preparing-delete' });
  });
  it.each([
    ['no hook', undefined, {}, 'delete'],
    ['hooked, Normal', l, { labels: { hold: 'true' }, state: 'Normal' }, 'prepare'],
    ['hooked, PreparingDelete', l, { labels: { hold: 'true' }, state: 'PreparingDelete' }, 'wait'],
    ['released, PreparingDelete', l, { state: 'PreparingDelete' }, 'delete'],
  ] as const)('deleteStep: %s → %s', (_n, lc, o, want) => {
    expect(deleteStep(pod('x', o as PodOpts), lc)).toBe(want);
  });
});

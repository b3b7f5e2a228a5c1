// CloneSet status decisions (status-decision.ts): counts, failure conditions, the Progressing condition.
import { describe, expect, it } from 'vitest';
import {
  progressingCondition,
  statusCounts,
  syncConditions,
  type CloneSetConditionLike,
  type ProgressInput,
} from '../../../../../src/runtime/controllers/cloneset/status-decision.js';
import { NOW, OLD, NEW, pod } from './fixtures.js';

describe('status', () => {
  it('ready ignores lifecycle, available needs Normal, updated counts the update revision', () => {
    const pods = [
      pod('a', { rev: NEW, state: 'Normal' }),
      pod('b', { rev: NEW, state: 'PreparingNormal' }),
      pod('c', { rev: OLD, state: 'Normal', ready: false }),
    ];
    expect(statusCounts(pods, NEW, 3, 1, 0, NOW)).toEqual({
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 1,
      updatedReplicas: 2,
      updatedReadyReplicas: 2,
      updatedAvailableReplicas: 1,
      expectedUpdatedReplicas: 2,
    });
  });
  it('FailedScale/FailedUpdate are set on failure and cleared once resolved', () => {
    const set = syncConditions([], { scale: 'quota exceeded' }, 't1');
    expect(set).toEqual([{ type: 'FailedScale', status: 'True', message: 'quota exceeded', lastTransitionTime: 't1' }]);
    expect(syncConditions(set, { scale: 'again' }, 't2')[0]!.lastTransitionTime).toBe('t1');
    expect(syncConditions(set, {}, 't3')).toEqual([]);
  });
});

describe('Progressing condition (progressDeadlineSeconds)', () => {
  const T0 = '2026-01-01T00:00:00Z';
  const at = (s: number) => Date.parse(T0) + s * 1000;
  const iso = (s: number) => new Date(at(s)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const cond = (status: string, reason: string, sec: number, message = 'm'): CloneSetConditionLike => ({
    type: 'Progressing',
    status,
    reason,
    message,
    lastUpdateTime: iso(sec),
    lastTransitionTime: iso(sec),
  });
  // [replicas, updated, updatedAvailable, expectedUpdated, current, update]
  const st = (r: number, u: number, ua: number, eu: number, cur = '1', upd = '1'): ProgressInput['status'] => ({
    replicas: r,
    updatedReplicas: u,
    updatedAvailableReplicas: ua,
    expectedUpdatedReplicas: eu,
    currentRevision: cur,
    updateRevision: upd,
  });
  const base = { progressDeadlineSeconds: 10, specReplicas: 2, paused: false, conditions: [] as CloneSetConditionLike[] };
  const cases: Array<{
    name: string;
    input: Partial<ProgressInput> & { status: ProgressInput['status'] };
    now: number;
    want: { status: string; reason: string; message: string; lastUpdateTime: string } | undefined;
    requeueMs?: number;
  }> = [
    {
      name: 'no deadline: removed',
      input: { progressDeadlineSeconds: undefined, status: st(2, 2, 2, 2), conditions: [cond('True', 'CloneSetAvailable', 0)] },
      now: at(5),
      want: undefined,
    },
    {
      name: 'MaxInt32: removed',
      input: { progressDeadlineSeconds: 2147483647, status: st(2, 0, 0, 2), conditions: [cond('True', 'CloneSetUpdated', 0)] },
      now: at(5),
      want: undefined,
    },
    {
      name: 'first round of a rollout: progressing, requeued at the deadline plus one second',
      input: { status: st(2, 0, 0, 2, '1', '2') },
      now: at(3),
      want: { status: 'True', reason: 'CloneSetUpdated', message: 'CloneSet is progressing', lastUpdateTime: iso(3) },
      requeueMs: 11_000,
    },
    {
      name: 'still progressing: the condition and its clock are kept',
      input: { status: st(2, 1, 1, 2, '1', '2'), conditions: [cond('True', 'CloneSetUpdated', 0, 'CloneSet is progressing')] },
      now: at(4),
      want: { status: 'True', reason: 'CloneSetUpdated', message: 'CloneSet is progressing', lastUpdateTime: iso(0) },
      requeueMs: 7_000,
    },
    {
      name: 'less than a second left: requeued at the deadline',
      input: { status: st(2, 1, 1, 2, '1', '2'), conditions: [cond('True', 'CloneSetUpdated', 0)] },
      now: at(9.5),
      want: { status: 'True', reason: 'CloneSetUpdated', message: 'm', lastUpdateTime: iso(0) },
      requeueMs: 500,
    },
    {
      name: 'deadline passed: exceeded (False), names the update revision',
      input: { status: st(2, 1, 0, 2, '1', 'cs-2'), conditions: [cond('True', 'CloneSetUpdated', 0)] },
      now: at(11),
      want: {
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'CloneSet revision cs-2 has timed out progressing',
        lastUpdateTime: iso(11),
      },
    },
    {
      name: 'exactly at the deadline: not yet exceeded',
      input: { status: st(2, 1, 0, 2, '1', '2'), conditions: [cond('True', 'CloneSetUpdated', 0)] },
      now: at(10),
      want: { status: 'True', reason: 'CloneSetUpdated', message: 'm', lastUpdateTime: iso(0) },
      requeueMs: 1,
    },
    {
      name: 'exceeded stays exceeded while progressing (even with progress)',
      input: { status: st(2, 2, 1, 2, '1', '2'), conditions: [cond('False', 'ProgressDeadlineExceeded', 11, 'x')] },
      now: at(12),
      want: { status: 'False', reason: 'ProgressDeadlineExceeded', message: 'x', lastUpdateTime: iso(11) },
    },
    {
      name: 'exceeded, then available',
      input: { status: st(2, 2, 2, 2, '2', '2'), conditions: [cond('False', 'ProgressDeadlineExceeded', 11)] },
      now: at(30),
      want: { status: 'True', reason: 'CloneSetAvailable', message: 'CloneSet is available', lastUpdateTime: iso(30) },
    },
    {
      name: 'available needs currentRevision = updateRevision',
      input: { status: st(2, 2, 2, 2, '1', '2'), conditions: [cond('True', 'CloneSetUpdated', 0)] },
      now: at(1),
      want: { status: 'True', reason: 'CloneSetUpdated', message: 'm', lastUpdateTime: iso(0) },
      requeueMs: 10_000,
    },
    {
      name: 'paused before available',
      input: { paused: true, status: st(2, 0, 0, 2, '1', '2'), conditions: [cond('True', 'CloneSetUpdated', 0)] },
      now: at(20),
      want: { status: 'True', reason: 'CloneSetPaused', message: 'CloneSet is paused', lastUpdateTime: iso(20) },
    },
    {
      name: 'paused but available: available wins',
      input: { paused: true, status: st(2, 2, 2, 2) },
      now: at(1),
      want: { status: 'True', reason: 'CloneSetAvailable', message: 'CloneSet is available', lastUpdateTime: iso(1) },
    },
    {
      name: 'partition reached: partition available',
      input: { status: st(2, 1, 1, 1, '1', '2'), conditions: [cond('True', 'CloneSetUpdated', 0)] },
      now: at(20),
      want: {
        status: 'True',
        reason: 'ProgressPartitionAvailable',
        message: 'CloneSet has been paused due to partition ready',
        lastUpdateTime: iso(20),
      },
    },
    {
      name: 'partition not yet reached: progressing',
      input: { status: st(2, 1, 0, 1, '1', '2') },
      now: at(0),
      want: { status: 'True', reason: 'CloneSetUpdated', message: 'CloneSet is progressing', lastUpdateTime: iso(0) },
      requeueMs: 11_000,
    },
    {
      name: 'resumed after a short pause: progressing again, from now',
      input: { status: st(2, 0, 0, 2, '1', '2'), conditions: [cond('True', 'CloneSetPaused', 0)] },
      now: at(5),
      want: { status: 'True', reason: 'CloneSetUpdated', message: 'CloneSet is progressing', lastUpdateTime: iso(5) },
      requeueMs: 11_000,
    },
    {
      // Upstream measures from the previous condition's lastUpdateTime: a rollout long after the last one settled.
      name: 'new revision long after available: exceeded at once (upstream)',
      input: { status: st(2, 0, 0, 2, '1', '2'), conditions: [cond('True', 'CloneSetAvailable', 0)] },
      now: at(60),
      want: {
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'CloneSet revision 2 has timed out progressing',
        lastUpdateTime: iso(60),
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = progressingCondition({ ...base, ...c.input }, c.now);
      const got = r.conditions.find((x) => x.type === 'Progressing');
      if (!c.want) expect(got).toBeUndefined();
      else expect(got).toMatchObject(c.want);
      expect(r.requeueAfterMs).toBe(c.requeueMs);
    });
  }
  it('keeps lastTransitionTime when only the reason changes, and the other conditions in place', () => {
    const failed = { type: 'FailedUpdate', status: 'True', message: 'x' };
    const r = progressingCondition({ ...base, status: st(2, 2, 2, 2), conditions: [cond('True', 'CloneSetUpdated', 0), failed] }, at(4));
    expect(r.conditions).toEqual([
      {
        type: 'Progressing',
        status: 'True',
        reason: 'CloneSetAvailable',
        message: 'CloneSet is available',
        lastUpdateTime: iso(4),
        lastTransitionTime: iso(0),
      },
      failed,
    ]);
  });
  it('an unchanged condition is returned as the same object (no status write)', () => {
    const c0 = cond('True', 'CloneSetAvailable', 0);
    expect(progressingCondition({ ...base, status: st(2, 2, 2, 2), conditions: [c0] }, at(100)).conditions[0]).toBe(c0);
  });
});

import { describe, expect, it } from 'vitest';
import { computeStatus, statusChanged } from '../../../../../src/runtime/controllers/daemonset/status-decision.js';
import { NOW, ds, pod } from './fixtures.js';

describe('Advanced DaemonSet status', () => {
  it('counts per node as upstream, with the hash as v1beta1 names it', () => {
    const byNode = new Map([
      ['a', [pod('a', 'new')]],
      ['b', [pod('b', 'old', { ready: false })]],
      ['c', []],
      ['x', [pod('x', 'new')]],
    ]);
    const s = computeStatus({ ds: ds(), desired: ['a', 'b', 'c'], byNode, hash: 'new', collisionCount: 0, nowMs: NOW });
    expect(s).toEqual({
      observedGeneration: 3,
      desiredNumberScheduled: 3,
      currentNumberScheduled: 2,
      numberMisscheduled: 1,
      numberReady: 1,
      numberAvailable: 1,
      numberUnavailable: 2,
      updatedNumberScheduled: 1,
      updateRevision: 'new',
    });
    // The cache (v1alpha1) never shows updateRevision: the one written last is remembered instead.
    const { updateRevision: _u, ...cached } = s;
    expect(statusChanged(cached, s, 'new')).toBe(false);
    expect(statusChanged(cached, s, undefined)).toBe(true);
    expect(statusChanged(cached, { ...s, numberReady: 2 }, 'new')).toBe(true);
  });

  it('a ready pod a preNormal or inPlaceUpdate hook holds is not available (as on a CloneSet); PreparingDelete counts by readiness', () => {
    const byNode = new Map([
      ['a', [pod('a', 'new', { state: 'PreparingNormal' })]],
      ['b', [pod('b', 'old', { state: 'PreparingUpdate' })]],
      ['c', [pod('c', 'new', { state: 'Updated' })]],
      ['d', [pod('d', 'old', { state: 'PreparingDelete' })]],
      ['e', [pod('e', 'new', { state: 'Normal' })]],
    ]);
    const s = computeStatus({ ds: ds(), desired: ['a', 'b', 'c', 'd', 'e'], byNode, hash: 'new', collisionCount: 0, nowMs: NOW });
    expect(s).toMatchObject({ numberReady: 5, numberAvailable: 2, numberUnavailable: 3 });
  });

  it('a pod ready for less than minReadySeconds is ready but not available', () => {
    const p = pod('a', 'new');
    p.status!.conditions![0]!.lastTransitionTime = new Date(NOW - 2000).toISOString();
    const s = computeStatus({
      ds: ds({ minReadySeconds: 10 }),
      desired: ['a'],
      byNode: new Map([['a', [p]]]),
      hash: 'new',
      collisionCount: 2,
      nowMs: NOW,
    });
    expect(s).toMatchObject({ numberReady: 1, numberAvailable: 0, numberUnavailable: 1, collisionCount: 2 });
  });
});

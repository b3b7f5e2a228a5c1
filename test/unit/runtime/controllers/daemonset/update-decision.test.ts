import { describe, expect, it } from 'vitest';
import {
  nodesToUpdate,
  planUpdate,
  replaceAction,
  updateBudget,
} from '../../../../../src/runtime/controllers/daemonset/update-decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import type { DaemonSetObject } from '../../../../../src/runtime/controllers/daemonset/placement-decision.js';
import { NOW, ds, pod } from './fixtures.js';

type RU = NonNullable<NonNullable<DaemonSetObject['spec']['updateStrategy']>['rollingUpdate']>;
const rolling = (ru: RU) => ds({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } });

function input(d: DaemonSetObject, pods: Record<string, Pod[]>, labels: Record<string, Record<string, string>> = {}) {
  return {
    ds: d,
    byNode: new Map(Object.entries(pods)),
    nodeLabels: new Map(Object.entries(labels)),
    hash: 'new',
    desired: Object.keys(pods).length,
    nowMs: NOW,
  };
}
const names = (ps: readonly Pod[]) => ps.map((p) => p.metadata.name);

describe('Advanced DaemonSet rolling update', () => {
  it.each([
    [{}, 10, { maxSurge: 0, maxUnavailable: 1 }],
    [{ maxUnavailable: '25%' }, 10, { maxSurge: 0, maxUnavailable: 3 }],
    [{ maxUnavailable: 0, maxSurge: '10%' }, 10, { maxSurge: 1, maxUnavailable: 0 }],
    [{ maxUnavailable: 0, maxSurge: 0 }, 10, { maxSurge: 0, maxUnavailable: 1 }],
    [{ rollingUpdateType: 'InPlaceIfPossible', maxSurge: 2, maxUnavailable: 2 }, 10, { maxSurge: 0, maxUnavailable: 2 }],
  ] as const)('budget of %j over %i nodes', (ru, desired, want) => {
    expect(updateBudget(rolling(ru as RU), desired)).toEqual(want);
  });

  it('replaces up to maxUnavailable available old pods, from the last node name down', () => {
    const pods = { a: [pod('a', 'old')], b: [pod('b', 'old')], c: [pod('c', 'old')] };
    const plan = planUpdate(input(rolling({ maxUnavailable: 1 }), pods));
    expect(names(plan.replace)).toEqual(names(pods.c));
  });

  it('an unavailable old pod is replaced at once, beyond maxUnavailable', () => {
    const pods = { a: [pod('a', 'old', { ready: false })], b: [pod('b', 'old')], c: [pod('c', 'old')] };
    const plan = planUpdate(input(rolling({ maxUnavailable: 1 }), pods));
    expect(names(plan.replace)).toEqual([...names(pods.a), ...names(pods.c)]);
  });

  it('a node whose new pod is not yet available uses the budget up', () => {
    const pods = { a: [pod('a', 'old')], b: [pod('b', 'new', { ready: false })] };
    expect(planUpdate(input(rolling({ maxUnavailable: 1 }), pods)).replace).toEqual([]);
  });

  it('a pod held in PreparingDelete counts as going', () => {
    const pods = { a: [pod('a', 'old')], b: [pod('b', 'old', { state: 'PreparingDelete' })] };
    expect(planUpdate(input(rolling({ maxUnavailable: 1 }), pods)).replace).toEqual([]);
  });

  it('partition keeps that many nodes at the old revision (updated nodes count first)', () => {
    const pods = { a: [pod('a', 'old')], b: [pod('b', 'old')], c: [pod('c', 'new')], d: [pod('d', 'old')] };
    expect(nodesToUpdate(input(rolling({ maxUnavailable: 4, partition: 2 }), pods))).toEqual(['c', 'd']);
    expect(nodesToUpdate(input(rolling({ maxUnavailable: 4, partition: '50%' }), pods))).toEqual(['c', 'd']);
    expect(nodesToUpdate(input(rolling({ maxUnavailable: 4, partition: 4 }), pods))).toEqual([]);
  });

  it('selector limits the rollout to the nodes it matches', () => {
    const pods = { a: [pod('a', 'old')], b: [pod('b', 'old')], c: [pod('c', 'old')] };
    const labels = { a: { pool: 'canary' }, b: {}, c: { pool: 'canary' } };
    const plan = planUpdate(input(rolling({ maxUnavailable: 5, selector: { matchLabels: { pool: 'canary' } } }), pods, labels));
    expect(names(plan.replace)).toEqual([...names(pods.c), ...names(pods.a)]);
  });

  it('maxSurge: a new pod beside the old one, the old one retired once the new is available', () => {
    const waiting = { a: [pod('a', 'old')], b: [pod('b', 'old')] };
    const first = planUpdate(input(rolling({ maxUnavailable: 0, maxSurge: 1 }), waiting));
    expect(first.surgeOn).toEqual(['b']);
    const oldB = pod('b', 'old');
    const surged = { a: [pod('a', 'old')], b: [oldB, pod('b', 'new', { ready: false })] };
    expect(planUpdate(input(rolling({ maxUnavailable: 0, maxSurge: 1 }), surged))).toMatchObject({ surgeOn: [], retire: [] });
    const ready = { a: [pod('a', 'old')], b: [oldB, pod('b', 'new')] };
    const next = planUpdate(input(rolling({ maxUnavailable: 0, maxSurge: 1 }), ready));
    expect(names(next.retire)).toEqual(names([oldB]));
    expect(next.surgeOn).toEqual(['a']);
  });

  it.each([
    ['cannot be in place', false, undefined, {}, 'delete'],
    ['no hook', true, undefined, {}, 'in-place'],
    [
      'hook holds a Normal pod',
      true,
      { inPlaceUpdate: { labelsHandler: { hold: 'true' } } },
      { labels: { hold: 'true' }, state: 'Normal' },
      'prepare-update',
    ],
    ['hook not holding', true, { inPlaceUpdate: { labelsHandler: { hold: 'true' } } }, { state: 'Normal' }, 'in-place'],
    [
      'still held in PreparingUpdate',
      true,
      { inPlaceUpdate: { labelsHandler: { hold: 'true' } } },
      { labels: { hold: 'true' }, state: 'PreparingUpdate' },
      'wait',
    ],
    ['released in PreparingUpdate', true, { inPlaceUpdate: { labelsHandler: { hold: 'true' } } }, { state: 'PreparingUpdate' }, 'in-place'],
    ['Updated pod with the hook', true, { inPlaceUpdate: { labelsHandler: { hold: 'true' } } }, { state: 'Updated' }, 'prepare-update'],
    ['PreparingDelete', true, undefined, { state: 'PreparingDelete' }, 'wait'],
  ] as const)('replace action: %s', (_w, can, lifecycle, o, want) => {
    expect(replaceAction(pod('a', 'old', o), can, lifecycle as never)).toBe(want);
  });
});

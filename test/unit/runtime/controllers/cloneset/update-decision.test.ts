// CloneSet Update decisions (update-decision.ts; in-place state and completion from control/inplace-update.ts): the update plan and order.
import { describe, expect, it } from 'vitest';
import { calculateDiffs, type DiffInput } from '../../../../../src/runtime/controllers/cloneset/scale-decision.js';
import { inPlaceCompleted, inPlaceState, shouldMarkInPlaceReady } from '../../../../../src/runtime/control/inplace-update.js';
import type { Lifecycle } from '../../../../../src/runtime/control/workload-pods.js';
import { planUpdate, sortForUpdate, type UpdateInput } from '../../../../../src/runtime/controllers/cloneset/update-decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { NOW, OLD, NEW, type PodOpts, pod, diffInput, many } from './fixtures.js';

describe('in-place completion', () => {
  const state = (last: Record<string, { imageID?: string; containerID?: string }>) => ({
    'apps.kruise.io/inplace-update-state': JSON.stringify({ revision: NEW, updateTimestamp: 't', lastContainerStatuses: last }),
  });
  const withStatus = (p: Pod, s: { imageID: string; image: string; containerID: string }) => {
    p.status!.containerStatuses = [{ name: 'app', ...s }];
    return p;
  };
  it.each([
    ['no state', undefined, { imageID: 'sha:a', image: 'app:1', containerID: 'c1' }, true],
    [
      'image ID unchanged, same container',
      { app: { imageID: 'sha:a', containerID: 'c1' } },
      { imageID: 'sha:a', image: 'app:1', containerID: 'c1' },
      false,
    ],
    ['image ID changed', { app: { imageID: 'sha:a', containerID: 'c1' } }, { imageID: 'sha:b', image: 'app:2', containerID: 'c2' }, true],
    // Re-tag to the same digest: the image ID stays and status may keep the old tag; the new container ID completes it.
    [
      'same digest re-tag, container recreated',
      { app: { imageID: 'sha:a', containerID: 'c1' } },
      { imageID: 'sha:a', image: 'app:1', containerID: 'c2' },
      true,
    ],
    [
      'upstream-written state (no container ID), status image = spec',
      { app: { imageID: 'sha:a' } },
      { imageID: 'sha:a', image: 'app:2', containerID: 'c1' },
      true,
    ],
  ] as const)('%s → %s', (_n, last, s, want) => {
    const p = withStatus(pod('x', last ? { annotations: state(last) } : {}), s);
    expect(inPlaceCompleted(p)).toBe(want);
  });
  it("state records the changed containers' image and container IDs and one batch of them, as upstream's does", () => {
    const p = withStatus(pod('x'), { imageID: 'sha:a', image: 'app:1', containerID: 'c1' });
    expect(inPlaceState(p, NEW, { app: 'app:2' }, 'T')).toEqual({
      revision: NEW,
      updateTimestamp: 'T',
      lastContainerStatuses: { app: { imageID: 'sha:a', containerID: 'c1' } },
      updateImages: true,
      containerBatchesRecord: [{ timestamp: 'T', containers: ['app'] }],
    });
    // Metadata only: no image fields.
    expect(inPlaceState(p, NEW, {}, 'T')).toEqual({ revision: NEW, updateTimestamp: 'T', lastContainerStatuses: {} });
  });
  it('pending grace annotation is never complete', () => {
    expect(inPlaceCompleted(pod('x', { annotations: { 'apps.kruise.io/inplace-update-grace': '{}' } }))).toBe(false);
  });
  it('InPlaceUpdateReady is set True on gated pods with nothing pending', () => {
    expect(shouldMarkInPlaceReady(pod('x', { gates: ['InPlaceUpdateReady'] }))).toBe(true);
    expect(shouldMarkInPlaceReady(pod('x'))).toBe(false);
    expect(
      shouldMarkInPlaceReady(pod('x', { gates: ['InPlaceUpdateReady'], conditions: [{ type: 'InPlaceUpdateReady', status: 'True' }] })),
    ).toBe(false);
  });
});

describe('planUpdate', () => {
  const base = (pods: Pod[], o: Partial<UpdateInput> = {}, d: Partial<DiffInput> = {}): UpdateInput => ({
    pods,
    diffs: calculateDiffs(diffInput(pods, d)),
    updateRevision: NEW,
    currentRevision: OLD,
    type: 'InPlaceIfPossible',
    minReadySeconds: 0,
    canInPlace: () => true,
    nowMs: NOW,
    ...o,
  });
  it('partition 2 of 5, maxUnavailable 1: one pod at a time, in place', () => {
    const plan = planUpdate(base(many(5, { state: 'Normal' }), {}, { partition: 2, maxUnavailable: 1 }));
    expect(plan.map((u) => u.action)).toEqual(['in-place']);
  });
  it('an unavailable pod at the target revision uses up maxUnavailable', () => {
    const pods = [pod('n', { rev: NEW, ready: false }), ...many(4, { state: 'Normal' })];
    expect(planUpdate(base(pods, {}, { partition: 2, maxUnavailable: 1 }))).toEqual([]);
  });
  it('paused and OnDelete update nothing', () => {
    expect(planUpdate(base(many(5), { paused: true }))).toEqual([]);
    expect(planUpdate(base(many(5), { type: 'OnDelete' }))).toEqual([]);
  });
  it('ReCreate marks pods for deletion; InPlaceOnly errors when not in-placeable', () => {
    expect(planUpdate(base(many(5), { type: 'ReCreate' }, { maxUnavailable: 2 })).map((u) => u.action)).toEqual(['recreate', 'recreate']);
    expect(planUpdate(base(many(5), { type: 'InPlaceOnly', canInPlace: () => false }, { maxUnavailable: 1 }))[0]!.action).toBe('error');
    expect(planUpdate(base(many(5), { type: 'InPlaceIfPossible', canInPlace: () => false }, { maxUnavailable: 1 }))[0]!.action).toBe(
      'recreate',
    );
  });
  it('inPlaceUpdate hook: Normal → prepare; held → wait; released → in place; Updated → prepare with handlers re-added', () => {
    const lifecycle: Lifecycle = { inPlaceUpdate: { labelsHandler: { h: 'y' } } };
    const mk = (o: PodOpts) => planUpdate(base([pod('a', o)], { lifecycle }, { replicas: 1, maxUnavailable: 1 }))[0];
    expect(mk({ state: 'Normal', labels: { h: 'y' } })).toMatchObject({ action: 'prepare-update', readdHandlers: false });
    expect(mk({ state: 'PreparingUpdate', labels: { h: 'y' } })).toMatchObject({ action: 'wait' });
    expect(mk({ state: 'PreparingUpdate' })).toMatchObject({ action: 'in-place' });
    expect(mk({ state: 'Updated' })).toMatchObject({ action: 'prepare-update', readdHandlers: true });
  });
  it('priorityStrategy weight orders the candidates; PreparingUpdate pods go first', () => {
    const pods = [pod('a', { state: 'Normal' }), pod('b', { state: 'Normal', labels: { tier: 'canary' } })];
    const plan = planUpdate(
      base(
        pods,
        { priority: { weightPriority: [{ weight: 10, matchSelector: { matchLabels: { tier: 'canary' } } }] } },
        { replicas: 2, maxUnavailable: 1 },
      ),
    );
    expect(plan.map((u) => u.pod.metadata.name)).toEqual(['b']);
  });
});

describe('update order (priorityStrategy, scatterStrategy)', () => {
  const names = (ps: Pod[]) => ps.map((p) => p.metadata.name);
  it.each([
    [
      'orderPriority: first key present, higher trailing integer first, pods without the key last',
      [pod('none'), pod('o1', { labels: { order: 'v1' } }), pod('o5', { labels: { order: 'v5' } }), pod('p2', { labels: { prio: '2' } })],
      { orderPriority: [{ orderedKey: 'order' }, { orderedKey: 'prio' }] },
      ['o5', 'o1', 'p2', 'none'],
    ],
    [
      'weightPriority: sum of matching weights, higher first, stable otherwise',
      [pod('a'), pod('b', { labels: { x: '1' } }), pod('c', { labels: { x: '1', y: '1' } })],
      {
        weightPriority: [
          { weight: 5, matchSelector: { matchLabels: { x: '1' } } },
          { weight: 1, matchSelector: { matchLabels: { y: '1' } } },
        ],
      },
      ['c', 'b', 'a'],
    ],
  ] as const)('%s', (_n, pods, priority, want) => {
    expect(names(sortForUpdate(pods as unknown as Pod[], { priority: priority as never, nowMs: NOW }))).toEqual(want);
  });
  it('scatterStrategy spreads the pods of a term evenly through the order', () => {
    const pods = ['a', 'b', 'c']
      .map((n) => pod(n, { labels: { zone: 'x' } }))
      .concat(['d', 'e', 'f'].map((n) => pod(n, { labels: { zone: 'y' } })));
    expect(names(sortForUpdate(pods, { scatter: [{ key: 'zone', value: 'x' }], nowMs: NOW }))).toEqual(['a', 'd', 'b', 'e', 'c', 'f']);
    // One matching pod (or none of the others) leaves the order alone.
    expect(names(sortForUpdate(pods.slice(2), { scatter: [{ key: 'zone', value: 'x' }], nowMs: NOW }))).toEqual(['c', 'd', 'e', 'f']);
  });
  it('PreparingUpdate pods go first whatever the priority', () => {
    const pods = [pod('hi', { labels: { order: '9' } }), pod('prep', { state: 'PreparingUpdate' })];
    expect(names(sortForUpdate(pods, { priority: { orderPriority: [{ orderedKey: 'order' }] }, nowMs: NOW }))).toEqual(['prep', 'hi']);
  });
});

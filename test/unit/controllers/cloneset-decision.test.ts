import { describe, expect, it } from 'vitest';
import {
  calculateDiffs,
  deleteStep,
  inPlaceCompleted,
  inPlaceState,
  kruisePodReadyWith,
  missingGateForNotReady,
  nextLifecycleState,
  notReadyChange,
  partitionReplicas,
  planScale,
  planUpdate,
  progressingCondition,
  scaledValue,
  selectorString,
  shouldMarkInPlaceReady,
  sortForUpdate,
  statusCounts,
  syncConditions,
  type CloneSetConditionLike,
  type DiffInput,
  type ProgressInput,
  type UpdateInput,
} from '../../../src/runtime/controllers/cloneset/decision.js';
import { isAllHooked, isHooked, isPodAvailable, sortForScaleIn, type Lifecycle } from '../../../src/runtime/controllers/cloneset/pods.js';
import {
  fnv1,
  inPlaceSpec,
  planUpdateRevision,
  revisionHash,
  revisionsToTruncate,
  safeEncode,
  type Revision,
} from '../../../src/runtime/controllers/cloneset/revision.js';
import type { Pod } from '../../../src/runtime/core/types.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const OLD = 'cs-old1';
const NEW = 'cs-new2';

interface PodOpts {
  rev?: string;
  state?: string;
  ready?: boolean;
  phase?: string;
  node?: string | null;
  labels?: Record<string, string>;
  finalizers?: string[];
  created?: string;
  readySince?: string;
  gates?: string[];
  conditions?: Array<{ type: string; status: string; message?: string }>;
  annotations?: Record<string, string>;
}

function pod(name: string, o: PodOpts = {}): Pod {
  const ready = o.ready ?? true;
  return {
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      labels: { 'controller-revision-hash': o.rev ?? OLD, ...(o.state ? { 'lifecycle.apps.kruise.io/state': o.state } : {}), ...o.labels },
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      ...(o.node === null ? {} : { nodeName: o.node ?? 'n1' }),
      containers: [{ name: 'app', image: 'app:2' }],
      readinessGates: (o.gates ?? []).map((conditionType) => ({ conditionType })),
    },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: o.readySince ?? '2026-01-01T00:01:00Z' },
        ...(o.conditions ?? []),
      ],
    },
  };
}

function diffInput(pods: Pod[], o: Partial<DiffInput> = {}): DiffInput {
  return {
    replicas: 5,
    minReadySeconds: 0,
    pods,
    updateRevision: NEW,
    currentRevision: OLD,
    podsToDelete: new Set(),
    excludePreparingDelete: false,
    nowMs: NOW,
    ...o,
  };
}

const many = (n: number, o: PodOpts = {}, prefix = 'p') => Array.from({ length: n }, (_, i) => pod(`${prefix}${i}`, o));

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

describe('lifecycle hooks', () => {
  const hook = { labelsHandler: { a: '1', b: '2' }, finalizersHandler: ['f1', 'f2'] };
  it.each([
    [{}, [], false, false],
    [{ a: '1' }, [], true, false],
    [{ a: 'x' }, [], false, false],
    [{ a: '1', b: '2' }, ['f1'], true, false],
    [{ a: '1', b: '2' }, ['f1', 'f2'], true, true],
    [{}, ['f2'], true, false],
  ])('labels %j finalizers %j: hooked %s, all-hooked %s', (labels, fins, hooked, all) => {
    const p = pod('x', { labels, finalizers: fins });
    expect(isHooked(hook, p)).toBe(hooked);
    expect(isAllHooked(hook, p)).toBe(all);
  });
  it('nil hook: neither; empty hook: all-hooked', () => {
    const p = pod('x');
    expect(isHooked(undefined, p)).toBe(false);
    expect(isAllHooked(undefined, p)).toBe(false);
    expect(isAllHooked({}, p)).toBe(true);
  });
});

describe('availability', () => {
  it.each([
    ['Normal ready', { state: 'Normal' }, 0, true],
    ['no state ready', {}, 0, true],
    ['PreparingNormal ready', { state: 'PreparingNormal' }, 0, false],
    ['Updated ready', { state: 'Updated' }, 0, false],
    ['not ready', { ready: false }, 0, false],
    ['Pending', { phase: 'Pending' }, 0, false],
    ['ready 9 min, minReady 600s', {}, 600, false],
    ['ready 9 min, minReady 60s', {}, 60, true],
    ['InPlaceUpdateReady False', { conditions: [{ type: 'InPlaceUpdateReady', status: 'False' }] }, 0, false],
  ] as const)('%s → %s', (_n, o, m, want) => {
    expect(isPodAvailable(pod('x', o as PodOpts), m, NOW)).toBe(want);
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

describe('scale-in order', () => {
  it('co-located pods go before lone ones; lower deletion cost first', () => {
    const a = pod('a', { node: 'n1', created: '2026-01-01T00:00:00Z' });
    const b = pod('b', { node: 'n1', created: '2026-01-01T00:01:00Z' });
    const c = pod('c', { node: 'n2', created: '2026-01-01T00:02:00Z' });
    expect(sortForScaleIn([a, b, c], 0, NOW).map((p) => p.metadata.name)).toEqual(['b', 'c', 'a']);
    const cheap = pod('cheap', { node: 'n3', annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-5' } });
    expect(sortForScaleIn([c, cheap], 0, NOW)[0]!.metadata.name).toBe('cheap');
  });
});

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

describe('revisions', () => {
  it('FNV-1 32 matches the reference vector and SafeEncode uses the k8s alphabet', () => {
    // FNV-1 32 of "a" is 0x050c5d7e.
    expect(fnv1(Buffer.from('a'))).toBe(0x050c5d7e);
    expect(safeEncode('0123')).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{4}$/);
  });
  it('hash depends on the template and the collision count, not on key order', () => {
    const t1 = { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };
    const t2 = { spec: { containers: [{ image: 'i:1', name: 'c' }] }, metadata: { labels: { a: 'b' } } };
    expect(revisionHash({ t: t1 }, 0)).toBe(revisionHash({ t: t2 }, 0));
    expect(revisionHash({ t: t1 }, 0)).not.toBe(revisionHash({ t: t1 }, 1));
  });
  const rev = (name: string, n: number, img: string): Revision => ({
    metadata: { name },
    revision: n,
    data: { spec: { template: { img } } },
  });
  it('update revision: reuse the newest equal, bump an older equal, else create', () => {
    const r1 = rev('r1', 1, 'a');
    const r2 = rev('r2', 2, 'b');
    expect(planUpdateRevision([r1, r2], rev('x', 0, 'b'))).toMatchObject({ action: 'reuse', revision: r2 });
    expect(planUpdateRevision([r1, r2], rev('x', 0, 'a'))).toMatchObject({ action: 'bump', revision: r1, to: 3 });
    expect(planUpdateRevision([r1, r2], rev('x', 0, 'c'))).toMatchObject({ action: 'create', revision: { revision: 3 } });
  });
  it('history keeps current, update and pod revisions and at most `limit` others', () => {
    const all = [1, 2, 3, 4, 5].map((n) => rev(`r${n}`, n, String(n)));
    expect(revisionsToTruncate(all, new Set(['r5', 'r4']), new Set(['r1']), 1).map((r) => r.metadata.name)).toEqual(['r2']);
  });
  it('in place: only images and metadata may change', () => {
    const a = {
      metadata: { labels: { x: '1' } },
      spec: {
        containers: [
          { name: 'c', image: 'i:1' },
          { name: 'd', image: 'j:1' },
        ],
      },
    };
    const b = {
      metadata: { labels: { x: '2' } },
      spec: {
        containers: [
          { name: 'c', image: 'i:2' },
          { name: 'd', image: 'j:1' },
        ],
      },
    };
    expect(inPlaceSpec(a, b)).toEqual({ containerImages: { c: 'i:2' }, labels: { x: '2' }, annotations: {} });
    const env = {
      ...b,
      spec: {
        containers: [
          { name: 'c', image: 'i:2', env: [{ name: 'E', value: '1' }] },
          { name: 'd', image: 'j:1' },
        ],
      },
    };
    expect(inPlaceSpec(a, env)).toBeUndefined();
    expect(inPlaceSpec(a, { ...b, spec: { containers: [{ name: 'c', image: 'i:2' }] } })).toBeUndefined();
  });
});

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
  it('selector string as the scale subresource reports it', () => {
    expect(selectorString({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'c', operator: 'In', values: ['y', 'x'] }] })).toBe(
      'a=1,b=2,c in (x,y)',
    );
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

import { describe, expect, it } from 'vitest';
import type { ContainerRecreateRequest } from '../../../../../src/api/kinds/containerrecreaterequest.js';
import { sidecarTerminationCrrName } from '../../../../../src/contracts/names.js';
import {
  afterKill,
  currentStates,
  decidePodCrrs,
  sortForPick,
  stopTimeoutSeconds,
  type ContainerRecreateState,
  type ObservedContainer,
  type PodView,
} from '../../../../../src/runtime/daemon/crr/decision.js';

const T0 = Date.parse('2026-11-22T10:00:00Z');
const iso = (msFromT0: number): string => new Date(T0 + msFromT0).toISOString();

type CrrOpts = {
  name?: string;
  created?: number;
  containers?: string[];
  strategy?: ContainerRecreateRequest['spec']['strategy'];
  phase?: ContainerRecreateRequest['status'] extends infer S ? (S extends { phase: infer P } ? P : never) : never;
  states?: ContainerRecreateState[];
  completed?: number;
  deadline?: number;
  ttl?: number;
  annotations?: Record<string, string>;
  ctx?: boolean;
};

function crr(p: CrrOpts = {}): ContainerRecreateRequest {
  const containers = (p.containers ?? ['app']).map((name) => ({
    name,
    ...(p.ctx === false ? {} : { statusContext: { containerID: `containerd://${name}-0`, restartCount: 0 } }),
  }));
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: {
      name: p.name ?? 'r1',
      namespace: 'ns',
      creationTimestamp: iso(p.created ?? 0),
      labels: { 'crr.apps.kruise.io/pod-uid': 'uid-1' },
      annotations: p.annotations,
    },
    spec: {
      podName: 'pod',
      containers,
      strategy: p.strategy ?? {},
      ...(p.deadline !== undefined ? { activeDeadlineSeconds: p.deadline } : {}),
      ...(p.ttl !== undefined ? { ttlSecondsAfterFinished: p.ttl } : {}),
    },
    ...(p.phase || p.states || p.completed !== undefined
      ? {
          status: {
            phase: p.phase ?? 'Recreating',
            ...(p.states ? { containerRecreateStates: p.states } : {}),
            ...(p.completed !== undefined ? { completionTime: iso(p.completed) } : {}),
          },
        }
      : {}),
  } as ContainerRecreateRequest;
}

/** A container as CRI shows it: `gen` 0 = the instance the CRR was made for, 1 = restarted. */
function seen(name: string, opts: { gen?: number; exited?: boolean; startedAt?: number } = {}): ObservedContainer {
  const gen = opts.gen ?? 0;
  return {
    name,
    containerID: `containerd://${name}-${gen}`,
    running: !opts.exited,
    exited: !!opts.exited,
    startedAtMs: T0 + (opts.startedAt ?? (gen === 0 ? -60_000 : 1_000)),
    restartCount: gen,
  };
}

function pod(ready: Record<string, { gen: number; ready: boolean }> = {}, extra: Partial<PodView> = {}): PodView {
  return {
    uid: 'uid-1',
    phase: 'Running',
    deleting: false,
    hasKruiseReadinessGate: false,
    containers: new Map(Object.entries(ready).map(([n, v]) => [n, { containerID: `containerd://${n}-${v.gen}`, ready: v.ready }])),
    ...extra,
  } as PodView;
}

const observe = (...cs: ObservedContainer[]) => new Map(cs.map((c) => [c.name, c]));

describe('currentStates (per-container phase from what the node shows)', () => {
  const cases: Array<{
    title: string;
    crr: ContainerRecreateRequest;
    observed: ObservedContainer[];
    pod?: PodView;
    now?: number;
    want: Partial<ContainerRecreateState>;
  }> = [
    {
      title: 'container missing on node -> Pending with message',
      crr: crr(),
      observed: [],
      want: { phase: 'Pending', message: 'not found container on Node' },
    },
    { title: 'same instance running -> Pending (to be killed)', crr: crr(), observed: [seen('app')], want: { phase: 'Pending' } },
    {
      title: 'exited -> Recreating (kubelet restarts it)',
      crr: crr(),
      observed: [seen('app', { exited: true })],
      want: { phase: 'Recreating' },
    },
    {
      title: 'new instance not yet ready -> Recreating',
      crr: crr(),
      observed: [seen('app', { gen: 1 })],
      pod: pod({ app: { gen: 1, ready: false } }),
      now: T0 + 5000,
      want: { phase: 'Recreating' },
    },
    {
      title: 'new instance ready -> Succeeded',
      crr: crr(),
      observed: [seen('app', { gen: 1 })],
      pod: pod({ app: { gen: 1, ready: true } }),
      now: T0 + 5000,
      want: { phase: 'Succeeded' },
    },
    {
      title: 'pod status still reports the old instance -> Recreating',
      crr: crr(),
      observed: [seen('app', { gen: 1 })],
      pod: pod({ app: { gen: 0, ready: true } }),
      now: T0 + 5000,
      want: { phase: 'Recreating' },
    },
    {
      title: 'ready but younger than minStartedSeconds -> Recreating',
      crr: crr({ strategy: { minStartedSeconds: 10 } }),
      observed: [seen('app', { gen: 1 })],
      pod: pod({ app: { gen: 1, ready: true } }),
      now: T0 + 5000,
      want: { phase: 'Recreating' },
    },
    {
      title: 'ready and older than minStartedSeconds -> Succeeded',
      crr: crr({ strategy: { minStartedSeconds: 10 } }),
      observed: [seen('app', { gen: 1 })],
      pod: pod({ app: { gen: 1, ready: true } }),
      now: T0 + 12_000,
      want: { phase: 'Succeeded' },
    },
    {
      title: 'forceRecreate, restarted since but not killed by us -> Pending (kill anyway)',
      crr: crr({ strategy: { forceRecreate: true } }),
      observed: [seen('app', { gen: 1 })],
      pod: pod({ app: { gen: 1, ready: true } }),
      now: T0 + 5000,
      want: { phase: 'Pending', isKilled: false },
    },
    {
      title: 'forceRecreate after our kill -> tracks the restart like any other',
      crr: crr({ strategy: { forceRecreate: true }, states: [{ name: 'app', phase: 'Recreating', isKilled: true }] }),
      observed: [seen('app', { gen: 1 })],
      pod: pod({ app: { gen: 1, ready: true } }),
      now: T0 + 5000,
      want: { phase: 'Succeeded', isKilled: true },
    },
    {
      title: 'finished states are kept',
      crr: crr({ states: [{ name: 'app', phase: 'Failed', message: 'x' }] }),
      observed: [seen('app')],
      want: { phase: 'Failed', message: 'x' },
    },
    {
      title: 'started in the same second the CRR was created (second-granular timestamp) -> not a restart',
      crr: crr({ created: 0 }),
      observed: [{ ...seen('app'), startedAtMs: T0 + 400 }],
      want: { phase: 'Pending' },
    },
    {
      title: 'no statusContext: an instance started before the CRR is the old one -> Pending',
      crr: crr({ ctx: false }),
      observed: [seen('app', { gen: 3, startedAt: -5000 })],
      want: { phase: 'Pending' },
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const [state] = currentStates(c.crr, observe(...c.observed), c.pod ?? pod(), c.now ?? T0 + 1000);
      expect(state).toMatchObject({ name: 'app', ...c.want });
    });
  }
});

describe('decidePodCrrs (what to do next for a pod)', () => {
  const running = observe(seen('app'), seen('side'));
  it('picks one CRR per pod: the older new one runs, the younger is set Pending', () => {
    const d = decidePodCrrs({
      crrs: [crr({ name: 'b', created: 10 }), crr({ name: 'a', created: 0 })],
      pod: pod(),
      observed: running,
      nowMs: T0 + 20,
    });
    expect(d.actions).toEqual([
      { type: 'setPhase', crr: 'b', phase: 'Pending' },
      { type: 'setPhase', crr: 'a', phase: 'Recreating' },
    ]);
  });
  it('a Recreating CRR is preferred over an older Pending one', () => {
    expect(
      sortForPick([crr({ name: 'old', phase: 'Pending', created: 0 }), crr({ name: 'cur', phase: 'Recreating', created: 5 })]).map(
        (c) => c.metadata.name,
      ),
    ).toEqual(['cur', 'old']);
  });
  it('completes when the pod is gone or replaced (other uid)', () => {
    expect(decidePodCrrs({ crrs: [crr()], pod: null, observed: running, nowMs: T0 }).actions).toEqual([
      { type: 'complete', crr: 'r1', message: 'pod has gone' },
    ]);
    expect(decidePodCrrs({ crrs: [crr()], pod: pod({}, { uid: 'other' }), observed: running, nowMs: T0 }).actions).toEqual([
      { type: 'complete', crr: 'r1', message: 'pod has gone' },
    ]);
  });
  it('completes when the pod is no longer active', () => {
    expect(
      decidePodCrrs({ crrs: [crr({ phase: 'Recreating' })], pod: pod({}, { phase: 'Succeeded' }), observed: running, nowMs: T0 })
        .actions[0],
    ).toMatchObject({ type: 'complete', message: 'pod is not active (phase Succeeded)' });
  });
  it("the sidecar terminator's CRR of a finished pod still stops a sidecar that runs, and completes once none runs", () => {
    // The terminator marks a Job pod whose sidecars ignore their exit code Succeeded before it creates this CRR.
    const terminator = crr({ name: sidecarTerminationCrrName('uid-1'), containers: ['side'] });
    const finished = pod({}, { phase: 'Succeeded' });
    expect(decidePodCrrs({ crrs: [terminator], pod: finished, observed: running, nowMs: T0 }).actions).toEqual([
      { type: 'setPhase', crr: sidecarTerminationCrrName('uid-1'), phase: 'Recreating' },
    ]);
    const stopped = observe(seen('app', { exited: true }), seen('side', { exited: true }));
    expect(
      decidePodCrrs({
        crrs: [crr({ name: sidecarTerminationCrrName('uid-1'), containers: ['side'], phase: 'Recreating' })],
        pod: finished,
        observed: stopped,
        nowMs: T0,
      }).actions,
    ).toEqual([{ type: 'complete', crr: sidecarTerminationCrrName('uid-1'), message: 'pod is not active (phase Succeeded)' }]);
    // Another CRR of the finished pod, with a running container: nothing to do.
    expect(decidePodCrrs({ crrs: [crr({ containers: ['side'] })], pod: finished, observed: running, nowMs: T0 }).actions).toEqual([
      { type: 'complete', crr: 'r1', message: 'pod is not active (phase Succeeded)' },
    ]);
  });
  it('activeDeadlineSeconds: completes once passed, otherwise requeues for it', () => {
    const late = decidePodCrrs({ crrs: [crr({ phase: 'Recreating', deadline: 5 })], pod: pod(), observed: running, nowMs: T0 + 5000 });
    expect(late.actions).toEqual([{ type: 'complete', crr: 'r1', message: 'recreating has exceeded the activeDeadlineSeconds' }]);
    const early = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', deadline: 5, states: [{ name: 'app', phase: 'Recreating', isKilled: true }] })],
      pod: pod(),
      observed: observe(seen('app', { exited: true })),
      nowMs: T0 + 1000,
    });
    expect(early.requeueAfterMs).toBeLessThanOrEqual(1000);
  });
  it('first step is always phase Recreating', () => {
    expect(decidePodCrrs({ crrs: [crr()], pod: pod(), observed: running, nowMs: T0 }).actions).toEqual([
      { type: 'setPhase', crr: 'r1', phase: 'Recreating' },
    ]);
  });
  it('unreadyGracePeriodSeconds: acquire (setting the condition only with the readiness gate), then wait, then go on', () => {
    const s = { unreadyGracePeriodSeconds: 3 };
    expect(
      decidePodCrrs({
        crrs: [crr({ phase: 'Recreating', strategy: s })],
        pod: pod({}, { hasKruiseReadinessGate: true }),
        observed: running,
        nowMs: T0,
      }).actions,
    ).toEqual([{ type: 'acquireUnready', crr: 'r1', setPodCondition: true }]);
    expect(decidePodCrrs({ crrs: [crr({ phase: 'Recreating', strategy: s })], pod: pod(), observed: running, nowMs: T0 }).actions).toEqual([
      { type: 'acquireUnready', crr: 'r1', setPodCondition: false },
    ]);
    const acquired = { 'crr.apps.kruise.io/unready-acquired': iso(0) };
    const waiting = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', strategy: s, annotations: acquired })],
      pod: pod(),
      observed: running,
      nowMs: T0 + 1000,
    });
    expect(waiting.actions).toEqual([]);
    expect(waiting.requeueAfterMs).toBe(2100);
    const after = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', strategy: s, annotations: acquired })],
      pod: pod(),
      observed: running,
      nowMs: T0 + 3500,
    });
    expect(after.actions[0]).toMatchObject({ type: 'patchStates' });
    const bad = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', strategy: s, annotations: { 'crr.apps.kruise.io/unready-acquired': 'yesterday' } })],
      pod: pod(),
      observed: running,
      nowMs: T0,
    });
    expect(bad.actions).toEqual([{ type: 'complete', crr: 'r1', message: 'failed to parse unready time yesterday' }]);
  });
  it('writes changed states before acting on them', () => {
    const d = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', containers: ['app', 'side'] })],
      pod: pod(),
      observed: running,
      nowMs: T0 + 10,
    });
    expect(d.actions).toEqual([
      {
        type: 'patchStates',
        crr: 'r1',
        states: [
          { name: 'app', phase: 'Pending', isKilled: false },
          { name: 'side', phase: 'Pending', isKilled: false },
        ],
      },
    ]);
  });
  it('kills the first Pending container with its current container ID', () => {
    const states: ContainerRecreateState[] = [
      { name: 'app', phase: 'Pending', isKilled: false },
      { name: 'side', phase: 'Pending', isKilled: false },
    ];
    const d = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', containers: ['app', 'side'], states })],
      pod: pod(),
      observed: running,
      nowMs: T0 + 10,
    });
    expect(d.actions).toEqual([{ type: 'kill', crr: 'r1', container: 'app', containerID: 'containerd://app-0', index: 0, states }]);
  });
  it('unordered: a Recreating container does not block the next kill; ordered: it does', () => {
    const states: ContainerRecreateState[] = [
      { name: 'app', phase: 'Recreating', isKilled: true },
      { name: 'side', phase: 'Pending', isKilled: false },
    ];
    const obs = observe(seen('app', { exited: true }), seen('side'));
    const free = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', containers: ['app', 'side'], states })],
      pod: pod(),
      observed: obs,
      nowMs: T0 + 10,
    });
    expect(free.actions[0]).toMatchObject({ type: 'kill', container: 'side' });
    const ordered = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', containers: ['app', 'side'], states, strategy: { orderedRecreate: true } })],
      pod: pod(),
      observed: obs,
      nowMs: T0 + 10,
    });
    expect(ordered.actions).toEqual([]);
    expect(ordered.requeueAfterMs).toBeGreaterThan(0);
  });
  it('completes when every container Succeeded', () => {
    const states: ContainerRecreateState[] = [{ name: 'app', phase: 'Succeeded', isKilled: true }];
    expect(decidePodCrrs({ crrs: [crr({ phase: 'Recreating', states })], pod: pod(), observed: running, nowMs: T0 + 10 }).actions).toEqual([
      { type: 'complete', crr: 'r1', message: '' },
    ]);
  });
  it('failurePolicy: Fail completes at the first Failed container, Ignore goes on', () => {
    const states: ContainerRecreateState[] = [
      { name: 'app', phase: 'Failed', message: 'kill container error: x' },
      { name: 'side', phase: 'Pending', isKilled: false },
    ];
    const fail = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', containers: ['app', 'side'], states })],
      pod: pod(),
      observed: running,
      nowMs: T0 + 10,
    });
    expect(fail.actions).toEqual([{ type: 'complete', crr: 'r1', message: '' }]);
    const ignore = decidePodCrrs({
      crrs: [crr({ phase: 'Recreating', containers: ['app', 'side'], states, strategy: { failurePolicy: 'Ignore' } })],
      pod: pod(),
      observed: running,
      nowMs: T0 + 10,
    });
    expect(ignore.actions[0]).toMatchObject({ type: 'kill', container: 'side' });
  });
  it('ttlSecondsAfterFinished: deletes when due, requeues until then; releases readiness it took', () => {
    const finished = crr({ phase: 'Completed', completed: 0, ttl: 10, annotations: { 'crr.apps.kruise.io/unready-acquired': iso(0) } });
    const early = decidePodCrrs({
      crrs: [finished],
      pod: pod({}, { hasKruiseReadinessGate: true, kruiseReadyCondition: 'False' }),
      observed: running,
      nowMs: T0 + 4000,
    });
    expect(early.actions).toEqual([{ type: 'releaseUnready' }]);
    expect(early.requeueAfterMs).toBe(6000);
    expect(decidePodCrrs({ crrs: [finished], pod: pod(), observed: running, nowMs: T0 + 10_000 }).actions).toEqual([
      { type: 'delete', crr: 'r1' },
    ]);
  });
});

describe('afterKill and grace periods', () => {
  const states: ContainerRecreateState[] = [{ name: 'app', phase: 'Pending', isKilled: false }];
  it('success marks Recreating and isKilled', () =>
    expect(afterKill(states, 0, undefined)).toEqual([{ name: 'app', phase: 'Recreating', isKilled: true, message: undefined }]));
  it('failure marks Failed with the error', () =>
    expect(afterKill(states, 0, 'boom')).toEqual([
      { name: 'app', phase: 'Failed', isKilled: false, message: 'kill container error: boom' },
    ]));
  it.each([
    [undefined, 0, 30],
    [10, 0, 10],
    [10, 4500, 6],
    [10, 9500, 2],
    [0, 0, 2],
  ])('grace %s s with preStop %s ms -> stop timeout %s s', (grace, used, want) => expect(stopTimeoutSeconds(grace, used)).toBe(want));
});

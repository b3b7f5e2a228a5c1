import { describe, expect, it } from 'vitest';
import {
  budgetsOfWorkload,
  decideStatus,
  desiredAvailable,
  expectedReplicas,
  scaledValue,
  selectedPods,
} from '../../../../../src/runtime/controllers/podunavailablebudget/decision.js';
import type { PubObject } from '../../../../../src/runtime/control/pod-unavailable-budget.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';

const NOW = Date.parse('2026-01-01T00:01:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();

function pod(
  name: string,
  o: { ready?: boolean; labels?: Record<string, string>; annotations?: Record<string, string>; phase?: string; deleting?: boolean } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      labels: o.labels ?? { app: 'web' },
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.deleting ? { deletionTimestamp: ago(1) } : {}),
    },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      containerStatuses: [
        { name: 'app', imageID: 'sha256:a', containerID: 'c1', image: 'nginx:1.27', ready: true, restartCount: 0 } as never,
      ],
    },
  } as Pod;
}

const pub = (spec: PubObject['spec'], status?: PubObject['status'], annotations?: Record<string, string>): PubObject => ({
  metadata: { name: 'b', namespace: 'ns', generation: 2, ...(annotations ? { annotations } : {}) },
  spec,
  ...(status ? { status } : {}),
});

describe('scaledValue / desiredAvailable (upstream: percentages of the expected replicas, rounded up)', () => {
  it.each([
    [1, 10, 1],
    ['25%', 10, 3],
    ['25%', 4, 1],
    ['0%', 7, 0],
    ['100%', 7, 7],
    ['3', 10, 3],
  ] as const)('%s of %d is %d', (v, total, want) => expect(scaledValue(v, total)).toBe(want));
  it('refuses a value that is neither', () => expect(() => scaledValue('a lot', 3)).toThrow(/an integer or a percentage/));
  it.each([
    [{ maxUnavailable: 1 }, 4, 3],
    [{ maxUnavailable: '25%' }, 4, 3],
    [{ maxUnavailable: 10 }, 4, 0],
    [{ minAvailable: 2 }, 4, 2],
    [{ minAvailable: '50%' }, 5, 3],
    [{ maxUnavailable: 1, minAvailable: 4 }, 4, 3],
    [{}, 4, 0],
  ] as const)('%j of %d expected: desired %d', (spec, expected, want) => expect(desiredAvailable(spec, expected)).toBe(want));
});

describe('selectedPods and expectedReplicas', () => {
  it('selects active pods of the namespace; an empty selector selects nothing', () => {
    const pods = [pod('a'), pod('b', { labels: { app: 'other' } }), pod('c', { phase: 'Succeeded' }), pod('d', { deleting: true })];
    expect(selectedPods(pub({ selector: { matchLabels: { app: 'web' } } }), pods).map((p) => p.metadata.name)).toEqual(['a']);
    expect(selectedPods(pub({ selector: {} }), pods)).toEqual([]);
    expect(selectedPods(pub({}), pods)).toEqual([]);
  });
  it('sums the distinct live workloads; the annotation wins', () => {
    const scales = [{ uid: 'd1', replicas: 3 }, { uid: 'd1', replicas: 3 }, { uid: 's1', replicas: 2 }, undefined];
    expect(expectedReplicas(pub({}), scales)).toBe(5);
    expect(expectedReplicas(pub({}, undefined, { 'pub.kruise.io/protect-total-replicas': '9' }), scales)).toBe(9);
  });
});

describe('decideStatus', () => {
  it('counts ready, consistent pods not recorded; allowed never below 0', () => {
    const d = decideStatus({
      pub: pub({ maxUnavailable: 1 }),
      pods: [pod('a'), pod('b'), pod('c', { ready: false }), pod('d', { labels: { app: 'web', 'unavailable-pod.kruise.io/x': 'y' } })],
      expected: 4,
      nowMs: NOW,
    });
    expect(d.status).toEqual({
      observedGeneration: 2,
      disruptedPods: {},
      unavailablePods: {},
      unavailableAllowed: 0,
      currentAvailable: 2,
      desiredAvailable: 3,
      totalReplicas: 4,
    });
    expect(d.annotate).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps records within their windows (20 s disrupted, 10 s updated), drops expired ones, rechecks at the first expiry', () => {
    const status = {
      observedGeneration: 2,
      disruptedPods: { a: ago(5), b: ago(30), gone: ago(1) },
      unavailablePods: { c: ago(3), d: ago(15) },
      unavailableAllowed: 0,
      currentAvailable: 0,
      desiredAvailable: 0,
      totalReplicas: 0,
    };
    const d = decideStatus({
      pub: pub({ minAvailable: 1 }, status),
      pods: [pod('a'), pod('b'), pod('c'), pod('d')],
      expected: 4,
      nowMs: NOW,
    });
    expect(d.status?.disruptedPods).toEqual({ a: ago(5) });
    expect(d.status?.unavailablePods).toEqual({ c: ago(3) });
    expect(d.status?.currentAvailable).toBe(2);
    expect(d.status?.unavailableAllowed).toBe(1);
    expect(d.notDeleted).toEqual(['b']);
    expect(d.recheckAtMs).toBe(NOW + 7_000);
  });

  it('writes nothing when the status is current; pods already annotated are not annotated again', () => {
    const pods = [pod('a', { annotations: { 'kruise.io/related-pub': 'b' } })];
    const first = decideStatus({ pub: pub({ maxUnavailable: 0 }), pods, expected: 1, nowMs: NOW });
    const again = decideStatus({ pub: pub({ maxUnavailable: 0 }, first.status), pods, expected: 1, nowMs: NOW });
    expect(again.status).toBeUndefined();
    expect(again.annotate).toEqual([]);
  });

  it('a pod mid in-place update is not available until each recorded container has a new image or container ID', () => {
    const state = JSON.stringify({ lastContainerStatuses: { app: { imageID: 'sha256:a', containerID: 'c1' } } });
    const mid = pod('a', { annotations: { 'apps.kruise.io/inplace-update-state': state } });
    expect(decideStatus({ pub: pub({ maxUnavailable: 0 }), pods: [mid], expected: 1, nowMs: NOW }).status?.currentAvailable).toBe(0);
    const done = pod('a', { annotations: { 'apps.kruise.io/inplace-update-state': state } });
    (done.status!.containerStatuses![0] as unknown as { imageID: string }).imageID = 'sha256:b';
    expect(decideStatus({ pub: pub({ maxUnavailable: 0 }), pods: [done], expected: 1, nowMs: NOW }).status?.currentAvailable).toBe(1);
  });
});

describe('budgetsOfWorkload: the budgets a workload change (replicas, deletion) recounts', () => {
  const budget = (name: string, spec: PubObject['spec'], namespace = 'ns'): PubObject => ({ metadata: { name, namespace }, spec });
  const budgets = [
    budget('by-selector', { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 }),
    budget('by-expression', {
      selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] },
      maxUnavailable: 1,
    }),
    budget('other-app', { selector: { matchLabels: { app: 'db' } }, maxUnavailable: 1 }),
    budget('empty-selector', { selector: {}, maxUnavailable: 1 }),
    budget('target-deployment', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxUnavailable: 1 }),
    budget('target-cloneset', { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' }, maxUnavailable: 1 }),
    // A targetRef wins over the selector, as in the status.
    budget('target-other', {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'db' },
      selector: { matchLabels: { app: 'web' } },
    }),
    budget('elsewhere', { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 }, 'other'),
  ];
  const workload = (group: string, kind: string, name: string, labels: Record<string, string>) => ({
    group,
    kind,
    metadata: { name, namespace: 'ns' },
    spec: { replicas: 2, template: { metadata: { labels } } },
  });
  it.each([
    [
      'a Deployment of app=web',
      workload('apps', 'Deployment', 'web', { app: 'web' }),
      ['by-selector', 'by-expression', 'target-deployment'],
    ],
    [
      'a CloneSet of app=web',
      workload('apps.kruise.io', 'CloneSet', 'web', { app: 'web' }),
      ['by-selector', 'by-expression', 'target-cloneset'],
    ],
    ['a StatefulSet named like the CloneSet target', workload('apps', 'StatefulSet', 'web', { app: 'api' }), ['by-expression']],
    ['a Deployment of app=db named by a targetRef', workload('apps', 'Deployment', 'db', { app: 'db' }), ['other-app', 'target-other']],
    ['a workload without template labels', { group: 'apps', kind: 'Deployment', metadata: { name: 'x', namespace: 'ns' } }, []],
  ] as const)('%s → %s', (_t, w, want) => {
    expect(budgetsOfWorkload(budgets, w).map((b) => b.metadata.name)).toEqual(want);
  });
});

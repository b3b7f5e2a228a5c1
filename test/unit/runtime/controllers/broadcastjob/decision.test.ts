import { describe, expect, it } from 'vitest';
import { assignedNode, bindToNode, misfit } from '../../../../../src/runtime/control/node-placement.js';
import {
  classifyPods,
  decide,
  parallelismOf,
  podFor,
  statusChanged,
  type BroadcastJobObject,
} from '../../../../../src/runtime/controllers/broadcastjob/decision.js';
import type { Node, Pod } from '../../../../../src/runtime/core/types.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const START = '2026-01-01T00:00:00Z';

function job(spec: Partial<BroadcastJobObject['spec']> = {}, status?: BroadcastJobObject['status']): BroadcastJobObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'BroadcastJob',
    metadata: { name: 'bj', namespace: 'ns', uid: 'uid-1' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
      ...spec,
    },
    ...(status ? { status } : {}),
  } as BroadcastJobObject;
}

function node(name: string, extra: { labels?: Record<string, string>; taints?: unknown[]; unschedulable?: boolean } = {}): Node {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(extra.labels ?? {}) } },
    spec: { ...(extra.taints ? { taints: extra.taints } : {}), ...(extra.unschedulable ? { unschedulable: true } : {}) },
  };
}

function pod(
  name: string,
  nodeName: string,
  phase: string,
  extra: { restarts?: number; restartPolicy?: string; deleting?: boolean } = {},
): Pod {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...(extra.deleting ? { deletionTimestamp: START } : {}) },
    spec: {
      restartPolicy: extra.restartPolicy ?? 'Never',
      affinity: bindToNode(undefined, nodeName),
      containers: [{ name: 'main' }],
    },
    status: { phase, containerStatuses: [{ name: 'main', restartCount: extra.restarts ?? 0 }] },
  } as Pod;
}

const running = { startTime: START, phase: 'running', active: 0, succeeded: 0, failed: 0, desired: 0 };

describe('BroadcastJob decision: placement', () => {
  it.each([
    ['fits a plain node', {}, node('a'), undefined],
    ['nodeSelector mismatch', { nodeSelector: { disk: 'ssd' } }, node('a'), 'node label disk is not ssd'],
    ['nodeSelector match', { nodeSelector: { disk: 'ssd' } }, node('a', { labels: { disk: 'ssd' } }), undefined],
    [
      'required affinity In',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }],
            },
          },
        },
      },
      node('a', { labels: { zone: 'z2' } }),
      'required node affinity does not match',
    ],
    [
      'required affinity Gt',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['3'] }] }],
            },
          },
        },
      },
      node('a', { labels: { gen: '4' } }),
      undefined,
    ],
    [
      'NoSchedule taint untolerated',
      {},
      node('a', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] }),
      'untolerated taint k=v:NoSchedule',
    ],
    ['PreferNoSchedule taint ignored', {}, node('a', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }), undefined],
    [
      'taint tolerated by Exists',
      { tolerations: [{ key: 'k', operator: 'Exists' }] },
      node('a', { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] }),
      undefined,
    ],
    [
      'taint with another value',
      { tolerations: [{ key: 'k', operator: 'Equal', value: 'w', effect: 'NoSchedule' }] },
      node('a', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] }),
      'untolerated taint k=v:NoSchedule',
    ],
    ['cordoned node', {}, node('a', { unschedulable: true }), 'the node is cordoned'],
    [
      'cordon tolerated',
      { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] },
      node('a', { unschedulable: true }),
      undefined,
    ],
    ['nodeName elsewhere', { nodeName: 'b' }, node('a'), 'the pod names node b'],
  ])('%s', (_name, spec, n, want) => {
    expect(misfit(spec as never, n)).toBe(want);
  });

  it('binds a pod to its node by a metadata.name affinity, keeping the other affinities', () => {
    const aff = bindToNode({ podAntiAffinity: { x: 1 }, nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } }, 'n1');
    expect(aff).toEqual({
      podAntiAffinity: { x: 1 },
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [],
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
        },
      },
    });
    expect(assignedNode(pod('p', 'n1', 'Pending'))).toBe('n1');
  });

  it('builds the pod from the template: labels of the job, controller reference, generated name', () => {
    const p = podFor(job({ template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } }), 'n2');
    expect(p.metadata.generateName).toBe('bj-');
    expect(p.metadata.labels).toEqual({ app: 'x', 'broadcastjob-name': 'bj', 'broadcastjob-controller-uid': 'uid-1' });
    expect(p.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'BroadcastJob', name: 'bj', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
    ]);
    expect(assignedNode(p)).toBe('n2');
    expect(p.spec?.nodeName).toBeUndefined();
  });
});

describe('BroadcastJob decision: counting and parallelism', () => {
  it.each([
    [undefined, 10, 2 ** 31 - 1],
    [3, 10, 3],
    ['50%', 5, 3],
    ['100%', 4, 4],
    ['0%', 4, 0],
  ])('parallelism %s of %i desired is %i', (value, desired, want) => {
    expect(parallelismOf(value as never, desired)).toBe(want);
  });

  it('refuses a parallelism that is neither an integer nor a percentage', () => {
    expect(() => parallelismOf('half', 4)).toThrow(/neither an integer nor a percentage/);
  });

  it('classifies pods: OnFailure restarts beyond the limit are failures, pods being deleted are not counted', () => {
    const pods = [
      pod('a', 'n1', 'Running'),
      pod('b', 'n2', 'Succeeded'),
      pod('c', 'n3', 'Failed'),
      pod('d', 'n4', 'Running', { restartPolicy: 'OnFailure', restarts: 2 }),
      pod('e', 'n5', 'Running', { restartPolicy: 'OnFailure', restarts: 1 }),
      pod('f', 'n6', 'Running', { deleting: true }),
    ];
    const c = classifyPods(pods, 1);
    expect(c.active.map((p) => p.metadata.name)).toEqual(['a', 'e']);
    expect(c.failed.map((p) => p.metadata.name)).toEqual(['c', 'd']);
    expect(c.succeeded.map((p) => p.metadata.name)).toEqual(['b']);
  });
});

describe('BroadcastJob decision: reconcile', () => {
  it('a new job starts: startTime, running, a pod on every eligible node', () => {
    const d = decide({ job: job(), pods: [], nodes: [node('a'), node('b'), node('c', { unschedulable: true })], nowMs: NOW });
    expect(d.createOn).toEqual(['a', 'b']);
    expect(d.status).toMatchObject({ startTime: '2026-01-01T00:10:00Z', phase: 'running', desired: 2, active: 2, succeeded: 0, failed: 0 });
    expect(d.deleteJob).toBe(false);
  });

  it('parallelism limits the pods running at once', () => {
    const nodes = [node('a'), node('b'), node('c')];
    const first = decide({ job: job({ parallelism: 1 }, running), pods: [], nodes, nowMs: NOW });
    expect(first.createOn).toEqual(['a']);
    const busy = decide({ job: job({ parallelism: 1 }, running), pods: [pod('p1', 'a', 'Running')], nodes, nowMs: NOW });
    expect(busy.createOn).toEqual([]);
    const next = decide({ job: job({ parallelism: 1 }, running), pods: [pod('p1', 'a', 'Succeeded')], nodes, nowMs: NOW });
    expect(next.createOn).toEqual(['b']);
    expect(next.status).toMatchObject({ active: 1, succeeded: 1, desired: 3, phase: 'running' });
  });

  it('completes once every eligible node has a finished pod; the TTL sets the requeue', () => {
    const d = decide({
      job: job({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 5 } }, running),
      pods: [pod('p1', 'a', 'Succeeded'), pod('p2', 'b', 'Succeeded')],
      nodes: [node('a'), node('b')],
      nowMs: NOW,
    });
    expect(d.status?.phase).toBe('completed');
    expect(d.status?.completionTime).toBe('2026-01-01T00:10:00Z');
    expect(d.status?.conditions).toEqual([
      {
        type: 'Complete',
        status: 'True',
        reason: 'Complete',
        message: 'Job completed, 2 pods succeeded, 0 pods failed',
        lastProbeTime: '2026-01-01T00:10:00Z',
        lastTransitionTime: '2026-01-01T00:10:00Z',
      },
    ]);
    expect(d.requeueAfterMs).toBe(6000);
    expect(d.events.map((e) => e.reason)).toEqual(['JobComplete']);
  });

  it('a Never job never completes and keeps its pods', () => {
    const d = decide({
      job: job({ completionPolicy: { type: 'Never', activeDeadlineSeconds: 1 } }, running),
      pods: [pod('p1', 'a', 'Succeeded')],
      nodes: [node('a')],
      nowMs: NOW,
    });
    expect(d.status?.phase).toBe('running');
    expect(d.status?.conditions).toBeUndefined();
  });

  it('no eligible node: the job waits, it does not complete', () => {
    const d = decide({ job: job({}, running), pods: [], nodes: [node('a', { unschedulable: true })], nowMs: NOW });
    expect(d.status).toMatchObject({ phase: 'running', desired: 0 });
    expect(d.createOn).toEqual([]);
  });

  it('FailFast (the default): the first failed pod fails the job and deletes the active pods', () => {
    const active = pod('p2', 'b', 'Running');
    const d = decide({
      job: job({}, running),
      pods: [pod('p1', 'a', 'Running', { restartPolicy: 'OnFailure', restarts: 1 }), active],
      nodes: [node('a'), node('b'), node('c')],
      nowMs: NOW,
    });
    expect(d.deletePods).toEqual([active]);
    expect(d.createOn).toEqual([]);
    expect(d.status).toMatchObject({ phase: 'failed', failed: 2, active: 0 });
    expect(d.status?.conditions?.[0]).toMatchObject({ type: 'Failed', status: 'True', reason: 'Failed' });
    expect(d.events.map((e) => e.reason)).toEqual(['failed pod is found']);
  });

  it('Continue: a failed pod does not stop the job, which completes with it', () => {
    const d = decide({
      job: job({ failurePolicy: { type: 'Continue' } }, running),
      pods: [pod('p1', 'a', 'Failed'), pod('p2', 'b', 'Succeeded')],
      nodes: [node('a'), node('b')],
      nowMs: NOW,
    });
    expect(d.status).toMatchObject({ phase: 'completed', failed: 1, succeeded: 1 });
  });

  it('Pause: a failed pod pauses the job (event once), no new pods', () => {
    const spec = { failurePolicy: { type: 'Pause' as const } };
    const d = decide({ job: job(spec, running), pods: [pod('p1', 'a', 'Failed')], nodes: [node('a'), node('b')], nowMs: NOW });
    expect(d.status?.phase).toBe('paused');
    expect(d.createOn).toEqual([]);
    expect(d.events.map((e) => e.reason)).toEqual(['Paused']);
    const again = decide({
      job: job(spec, { ...running, phase: 'paused' }),
      pods: [pod('p1', 'a', 'Failed')],
      nodes: [node('a'), node('b')],
      nowMs: NOW,
    });
    expect(again.events.map((e) => e.reason)).toEqual(['Continue']);
    expect(again.status?.phase).toBe('paused');
  });

  it('paused: no pods are created; unpaused: the job goes on', () => {
    const paused = decide({ job: job({ paused: true }, running), pods: [], nodes: [node('a')], nowMs: NOW });
    expect(paused.createOn).toEqual([]);
    expect(paused.status?.phase).toBe('paused');
    const resumed = decide({ job: job({}, { ...running, phase: 'paused' }), pods: [], nodes: [node('a')], nowMs: NOW });
    expect(resumed.createOn).toEqual(['a']);
    expect(resumed.status?.phase).toBe('running');
  });

  it('activeDeadlineSeconds: requeued for the deadline, failed past it', () => {
    const before = decide({
      job: job({ completionPolicy: { activeDeadlineSeconds: 900 } }, running),
      pods: [pod('p1', 'a', 'Running')],
      nodes: [node('a')],
      nowMs: NOW,
    });
    expect(before.requeueAfterMs).toBe(300_000);
    const after = decide({
      job: job({ completionPolicy: { activeDeadlineSeconds: 60 } }, running),
      pods: [pod('p1', 'a', 'Running')],
      nodes: [node('a')],
      nowMs: NOW,
    });
    expect(after.status).toMatchObject({ phase: 'failed', failed: 1, active: 0 });
    expect(after.events[0]).toMatchObject({ reason: 'DeadlineExceeded', message: expect.stringContaining('Job ns/bj was active longer') });
    expect(after.deletePods.map((p) => p.metadata.name)).toEqual(['p1']);
  });

  it('a pod whose node stopped fitting is deleted and counted failed', () => {
    const p = { ...pod('p1', 'a', 'Running'), spec: { ...pod('p1', 'a', 'Running').spec!, nodeSelector: { disk: 'ssd' } } } as Pod;
    const d = decide({ job: job({}, running), pods: [p], nodes: [node('a')], nowMs: NOW });
    expect(d.deletePods).toEqual([p]);
    expect(d.status).toMatchObject({ failed: 1, active: 0, desired: 0 });
  });

  it('a finished job is deleted after its TTL, requeued before, left alone without one', () => {
    const done = {
      ...running,
      phase: 'completed',
      completionTime: '2026-01-01T00:09:58Z',
      conditions: [{ type: 'Complete', status: 'True' }],
    };
    expect(decide({ job: job({ completionPolicy: { ttlSecondsAfterFinished: 5 } }, done), pods: [], nodes: [], nowMs: NOW })).toMatchObject(
      {
        deleteJob: false,
        requeueAfterMs: 3000,
      },
    );
    expect(
      decide({ job: job({ completionPolicy: { ttlSecondsAfterFinished: 1 } }, done), pods: [], nodes: [], nowMs: NOW }).deleteJob,
    ).toBe(true);
    const none = decide({ job: job({}, done), pods: [], nodes: [node('a')], nowMs: NOW });
    expect(none).toMatchObject({ deleteJob: false, createOn: [] });
    expect(none.status).toBeUndefined();
  });

  it('two pods on one node are reported', () => {
    const d = decide({
      job: job({}, running),
      pods: [pod('p1', 'a', 'Running'), pod('p2', 'a', 'Running')],
      nodes: [node('a')],
      nowMs: NOW,
    });
    expect(d.events.map((e) => e.reason)).toContain('DuplicatePodCreatedOnSameNode');
  });

  it('statusChanged ignores probe times but not counts', () => {
    const s = { ...running, conditions: [{ type: 'Complete', status: 'True', lastProbeTime: START }] };
    expect(statusChanged(s, { ...s, conditions: [{ type: 'Complete', status: 'True', lastProbeTime: '2026-02-01T00:00:00Z' }] })).toBe(
      false,
    );
    expect(statusChanged(s, { ...s, active: 1 })).toBe(true);
    expect(statusChanged(undefined, running)).toBe(true);
  });
});

// Enhanced liveness, the manager's pure side: the NodePodProbe entries of a node's opted-in pods, what a pod looks
// like to its budget (failing on the current container, restarting until it is back), the restart request, and the
// waiting condition.
import { describe, expect, it } from 'vitest';
import {
  budgetMember,
  failingContainers,
  isRestarting,
  livenessCrr,
  livenessCrrView,
  nodeLivenessProbes,
  waitingCondition,
  type NodePodProbeObject,
} from '../../../../../src/runtime/controllers/enhancedliveness/decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';

const probe = { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1 };

function pod(name: string, o: { ready?: boolean; containerID?: string; startedAt?: string; node?: string } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      annotations: {
        'apps.kruise.io/using-enhanced-liveness': 'true',
        'apps.kruise.io/container-probe-context': JSON.stringify([{ name: 'app', livenessProbe: probe }]),
      },
    },
    spec: { nodeName: o.node ?? 'n1', containers: [{ name: 'app' }] },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      containerStatuses: [
        {
          name: 'app',
          containerID: o.containerID ?? 'containerd://c1',
          state: { running: { startedAt: o.startedAt ?? '2026-01-01T00:00:00Z' } },
        },
      ],
    },
  };
}

const npp = (podProbes: unknown[] = []): NodePodProbeObject =>
  ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodePodProbe',
    metadata: { name: 'n1', resourceVersion: '5' },
    spec: { podProbes },
  }) as NodePodProbeObject;

describe('nodeLivenessProbes', () => {
  it("adds an opted-in pod's moved probes, keeps a marker's probes of the same pod and other pods' entries", () => {
    const marker = { name: 'm#p', containerName: 'app', probe: { tcpSocket: { port: 80 } } };
    const other = { name: 'x', namespace: 'ns', uid: 'uid-x', IP: '10.0.0.9', probes: [marker] };
    const next = nodeLivenessProbes(npp([{ name: 'a', namespace: 'ns', uid: 'uid-a', IP: '', probes: [marker] }, other]), [
      pod('a'),
      pod('b'),
    ]);
    expect(next).toEqual([
      {
        name: 'a',
        namespace: 'ns',
        uid: 'uid-a',
        IP: '10.0.0.1',
        probes: [marker, { name: 'enhanced-liveness:app', containerName: 'app', probe }],
      },
      other,
      {
        name: 'b',
        namespace: 'ns',
        uid: 'uid-b',
        IP: '10.0.0.1',
        probes: [{ name: 'enhanced-liveness:app', containerName: 'app', probe }],
      },
    ]);
    expect(nodeLivenessProbes(npp(next), [pod('a'), pod('b')])).toBeUndefined();
  });

  it('drops the probes of a pod gone or finished, and its entry when nothing else is left', () => {
    const current = [
      {
        name: 'a',
        namespace: 'ns',
        uid: 'uid-a',
        IP: '10.0.0.1',
        probes: [{ name: 'enhanced-liveness:app', containerName: 'app', probe }],
      },
    ];
    expect(nodeLivenessProbes(npp(current), [])).toEqual([]);
    const done = pod('a');
    done.status!.phase = 'Succeeded';
    expect(nodeLivenessProbes(npp(current), [done])).toEqual([]);
  });
});

describe('what a pod is to its budget', () => {
  const status = (state: string, lastProbeTime: string) => ({
    name: 'a',
    namespace: 'ns',
    uid: 'uid-a',
    probeStates: [{ name: 'enhanced-liveness:app', state, lastProbeTime }],
  });

  it('fails only on a Failed result of the container now running', () => {
    expect(failingContainers(pod('a'), status('Failed', '2026-01-01T00:00:05Z') as never)).toEqual(['app']);
    expect(failingContainers(pod('a'), status('Succeeded', '2026-01-01T00:00:05Z') as never)).toEqual([]);
    // A result within the start's second (the kubelet truncates it) is the replaced container's "Non-running".
    expect(
      failingContainers(pod('a', { startedAt: '2026-01-01T00:00:05Z' }), status('Failed', '2026-01-01T00:00:05.700Z') as never),
    ).toEqual([]);
    expect(
      failingContainers(pod('a', { startedAt: '2026-01-01T00:00:05Z' }), status('Failed', '2026-01-01T00:00:06.100Z') as never),
    ).toEqual(['app']);
    // The replaced container's "Non-running" report, however late it was made, is no failure of the one running now.
    expect(
      failingContainers(pod('a'), {
        ...status('Failed', '2026-01-01T00:00:09Z'),
        probeStates: [
          {
            name: 'enhanced-liveness:app',
            state: 'Failed',
            message: 'Container(app) is Non-running',
            lastProbeTime: '2026-01-01T00:00:09Z',
          },
        ],
      } as never),
    ).toEqual([]);
    // A result from before the container started belongs to the one it replaced.
    expect(failingContainers(pod('a', { startedAt: '2026-01-01T00:00:10Z' }), status('Failed', '2026-01-01T00:00:05Z') as never)).toEqual(
      [],
    );
    const stopped = pod('a');
    stopped.status!.containerStatuses![0]!.state = { waiting: { reason: 'CrashLoopBackOff' } };
    expect(failingContainers(stopped, status('Failed', '2026-01-01T00:00:05Z') as never)).toEqual([]);
    // A marker's probe is not a liveness probe.
    expect(
      failingContainers(pod('a'), {
        ...status('Failed', '2026-01-01T00:00:05Z'),
        probeStates: [{ name: 'm#app', state: 'Failed', lastProbeTime: '2026-01-01T00:00:05Z' }],
      } as never),
    ).toEqual([]);
  });

  it('restarting from its request until it is available again on another container', () => {
    const crr = livenessCrrView(livenessCrr(pod('a'), 'app'))!;
    expect(crr).toEqual({ podUid: 'uid-a', container: 'app', fromContainerId: 'containerd://c1' });
    expect(isRestarting(pod('a'), [crr])).toBe(true);
    expect(isRestarting(pod('a', { containerID: 'containerd://c2', ready: false }), [crr])).toBe(true);
    expect(isRestarting(pod('a', { containerID: 'containerd://c2' }), [crr])).toBe(false);
    expect(isRestarting(pod('b'), [crr])).toBe(false);
    expect(budgetMember(pod('a'), status('Failed', '2026-01-01T00:00:05Z') as never, [crr])).toEqual({
      uid: 'uid-a',
      name: 'a',
      available: true,
      restarting: true,
      failing: ['app'],
    });
  });

  it('one request per failing container instance: the name follows the container id, owned by the pod', () => {
    const a = livenessCrr(pod('a'), 'app');
    expect(a.metadata.name).toMatch(/^a-liveness-[0-9a-f]{10}$/);
    expect(livenessCrr(pod('a'), 'app').metadata.name).toBe(a.metadata.name);
    expect(livenessCrr(pod('a', { containerID: 'containerd://c2' }), 'app').metadata.name).not.toBe(a.metadata.name);
    expect(a.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Pod', name: 'a', uid: 'uid-a', controller: true })]);
    expect(a.metadata.labels).toEqual({ 'kruise.cdk8s.io/liveness-restart': 'app' });
    expect(a).toMatchObject({ spec: { podName: 'a', containers: [{ name: 'app' }], strategy: { failurePolicy: 'Fail' } } });
    expect((a as unknown as { spec: { strategy: Record<string, unknown> } }).spec.strategy.forceRecreate).toBeUndefined();
    expect(livenessCrr(pod('x'.repeat(250)), 'app').metadata.name!.length).toBeLessThanOrEqual(253);
  });
});

describe('waitingCondition', () => {
  const now = '2026-01-01T00:01:00Z';
  it('True with the reason while waiting, unchanged when it says the same, False once nothing waits', () => {
    const p = pod('a');
    const c = waitingCondition(p, 'restart of container app waits: budget', now)!;
    expect(c).toEqual({
      type: 'kruise.cdk8s.io/LivenessRestartPending',
      status: 'True',
      reason: 'BudgetExhausted',
      message: 'restart of container app waits: budget',
      lastTransitionTime: now,
    });
    p.status!.conditions!.push(c);
    expect(waitingCondition(p, 'restart of container app waits: budget', now)).toBeUndefined();
    expect(waitingCondition(p, undefined, now)).toMatchObject({ status: 'False', reason: 'NotWaiting' });
    expect(waitingCondition(pod('b'), undefined, now)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { bareContainerId, newestByName, nsToMs } from '../../../../../src/runtime/daemon/crr/observe.js';
import { podView } from '../../../../../src/runtime/daemon/crr/reconcile.js';
import type { Container } from '../../../../../src/runtime/cri/types.js';

const c = (id: string, name: string, attempt: number, createdAt: string): Container => ({
  id,
  podSandboxId: 's',
  metadata: { name, attempt },
  image: null,
  imageRef: '',
  state: 'CONTAINER_RUNNING',
  createdAt,
  labels: { 'io.kubernetes.container.name': name },
  annotations: {},
});

describe('finding the kubelet container of a name', () => {
  it('takes the highest attempt, then the latest creation', () => {
    const got = newestByName([
      c('a0', 'app', 0, '100'),
      c('a2', 'app', 2, '50'),
      c('a1', 'app', 1, '300'),
      c('s0', 'side', 0, '1'),
      c('s0b', 'side', 0, '2'),
    ]);
    expect([...got].map(([n, x]) => [n, x.id])).toEqual([
      ['app', 'a2'],
      ['side', 's0b'],
    ]);
  });
  it('converts CRI nanoseconds and strips the runtime scheme', () => {
    expect(nsToMs('1795352430887356391')).toBe(1795352430887);
    expect(nsToMs('0')).toBe(0);
    expect(bareContainerId('containerd://abc')).toBe('abc');
    expect(bareContainerId('cri-o://abc')).toBe('abc');
  });
});

describe('podView', () => {
  it('reads uid, phase, readiness per container, the KruisePodReady gate and condition', () => {
    const v = podView({
      metadata: { uid: 'u', deletionTimestamp: '2026-01-01T00:00:00Z' },
      spec: { containers: [], readinessGates: [{ conditionType: 'KruisePodReady' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'KruisePodReady', status: 'False' }],
        containerStatuses: [{ name: 'app', containerID: 'containerd://x', ready: true }],
      },
    });
    expect(v).toMatchObject({ uid: 'u', phase: 'Running', deleting: true, hasKruiseReadinessGate: true, kruiseReadyCondition: 'False' });
    expect(v.containers.get('app')).toEqual({ containerID: 'containerd://x', ready: true });
  });
});

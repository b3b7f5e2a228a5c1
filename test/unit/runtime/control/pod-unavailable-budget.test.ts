import { describe, expect, it } from 'vitest';
import {
  budgetNameOf,
  judge,
  sidecarUpdateCompleted,
  type PubObject,
  type PubOperation,
} from '../../../../src/runtime/control/pod-unavailable-budget.js';
import type { Pod } from '../../../../src/runtime/core/types.js';

const NOW = '2026-01-01T00:00:00Z';
const REFUSED = 'podunavailablebudgets.policy.kruise.io "b" is forbidden: pub unavailable allowed is negative';

function pod(
  o: { name?: string; annotations?: Record<string, string>; labels?: Record<string, string>; ready?: boolean; inPlace?: boolean } = {},
): Pod {
  const annotations = { ...(o.annotations ?? { 'kruise.io/related-pub': 'b' }) };
  // An in-place update under way: the recorded container has neither a new image ID nor a new container ID yet.
  if (o.inPlace) {
    annotations['apps.kruise.io/inplace-update-state'] = JSON.stringify({
      revision: 'r2',
      lastContainerStatuses: { app: { imageID: 'sha256:a', containerID: 'containerd://1' } },
    });
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name ?? 'p', namespace: 'ns', annotations, labels: o.labels ?? {} },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      containerStatuses: [{ name: 'app', imageID: 'sha256:a', containerID: 'containerd://1' }],
    },
  } as Pod;
}

describe('budgetNameOf: the budget to ask before a pod is made unavailable', () => {
  it.each([
    ['covered and ready', pod(), 'b'],
    ['no annotation (the controller has not covered it yet)', pod({ annotations: {} }), undefined],
    ['opted out', pod({ annotations: { 'kruise.io/related-pub': 'b', 'pub.kruise.io/no-protect': 'true' } }), undefined],
    ['not ready (already unavailable)', pod({ ready: false }), undefined],
    ['marked unavailable by a label', pod({ labels: { 'unavailable-pod.kruise.io/drain': 'true' } }), undefined],
    ['mid in-place update (already unavailable)', pod({ inPlace: true }), undefined],
  ] as const)('%s → %s', (_t, p, want) => expect(budgetNameOf(p)).toBe(want));
});

describe('judge', () => {
  const status = (allowed: number, extra: Partial<NonNullable<PubObject['status']>> = {}) => ({
    unavailableAllowed: allowed,
    currentAvailable: 4,
    desiredAvailable: 3,
    totalReplicas: 4,
    ...extra,
  });
  const pub = (st?: PubObject['status'], annotations?: Record<string, string>): PubObject => ({
    metadata: { name: 'b', namespace: 'ns', ...(annotations ? { annotations } : {}) },
    ...(st ? { status: st } : {}),
  });

  it('spends one unit and records the pod: deletions and evictions as disrupted, updates as unavailable', () => {
    expect(judge(pub(status(2)), 'p', 'DELETE', NOW)).toEqual({
      allowed: true,
      spend: { ...status(1), disruptedPods: { p: NOW }, unavailablePods: {} },
    });
    expect(judge(pub(status(1)), 'p', 'UPDATE', NOW)).toEqual({
      allowed: true,
      spend: { ...status(0), disruptedPods: {}, unavailablePods: { p: NOW } },
    });
  });
  it.each([
    ['nothing left', pub(status(0)), 'EVICT', { allowed: false, message: REFUSED }],
    ['no status yet', pub(), 'DELETE', { allowed: true }],
    ['desired 0 (the workload is gone or scaled to 0)', pub(status(0, { desiredAvailable: 0 })), 'DELETE', { allowed: true }],
    ['already recorded as disrupted', pub(status(0, { disruptedPods: { p: NOW } })), 'DELETE', { allowed: true }],
    [
      'already recorded as unavailable (a controller asked first)',
      pub(status(0, { unavailablePods: { p: NOW } })),
      'UPDATE',
      { allowed: true },
    ],
    [
      'an operation the budget does not protect',
      pub(status(0), { 'kruise.io/pub-protect-operations': 'DELETE,EVICT' }),
      'UPDATE',
      { allowed: true },
    ],
    [
      'a protected operation named',
      pub(status(0), { 'kruise.io/pub-protect-operations': 'DELETE, EVICT' }),
      'EVICT',
      { allowed: false, message: REFUSED },
    ],
  ] as const)('%s', (_t, b, op, want) => expect(judge(b, 'p', op, NOW)).toEqual(want));
  it('refuses once the records are too many', () => {
    const many = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`p${i}`, NOW]));
    const j = judge(pub(status(5, { disruptedPods: many })), 'p', 'DELETE', NOW);
    expect(j).toMatchObject({ allowed: false, message: expect.stringMatching(/map too big/) });
  });

  it.each([
    ['in-place updates of 5 pods, 2 allowed', 2, 'UPDATE', ['p1', 'p2']],
    ['recreates of 5 pods, 1 allowed', 1, 'UPDATE', ['p1']],
    ['evictions of 5 pods, none allowed', 0, 'EVICT', []],
  ] as const)('askers in turn never overrun the budget: %s', (_t, allowed, op, want) => {
    // Each asker judges the status the previous one wrote (the conditional write makes a stale reader retry).
    let b = pub(status(allowed));
    const letGo: string[] = [];
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) {
      const j = judge(b, name, op as PubOperation, NOW);
      if (!j.allowed) continue;
      letGo.push(name);
      if (j.spend) b = { ...b, status: j.spend };
    }
    expect(letGo).toEqual(want);
    // A pod already let go asks again (the controller, then the webhook on its patch): free.
    for (const name of want) expect(judge(b, name, op as PubOperation, NOW)).toEqual({ allowed: true });
  });
});

describe('sidecarUpdateCompleted: a SidecarSet in-place sidecar update under way makes the pod inconsistent', () => {
  const SET = 'logs';
  function sidecarPod(o: {
    specImage: string;
    statusImage: string;
    imageID: string;
    recordedImageID?: string;
    injected?: boolean;
    raw?: string;
  }): Pod {
    const annotations: Record<string, string> = { 'kruise.io/sidecarset-injected-list': SET };
    if (o.raw !== undefined) annotations['kruise.io/sidecarset-inplace-update-state'] = o.raw;
    else if (o.recordedImageID !== undefined) {
      annotations['kruise.io/sidecarset-inplace-update-state'] = JSON.stringify({
        [SET]: { revision: 'r2', lastContainerStatuses: { logtail: { imageID: o.recordedImageID } } },
      });
    }
    return {
      metadata: { name: 'p', namespace: 'ns', annotations },
      spec: {
        containers: [
          { name: 'app', image: 'nginx:1.27' },
          { name: 'logtail', image: o.specImage, ...(o.injected === false ? {} : { env: [{ name: 'IS_INJECTED', value: 'true' }] }) },
        ],
      },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { name: 'app', image: 'nginx:1.27', imageID: 'sha256:app' },
          { name: 'logtail', image: o.statusImage, imageID: o.imageID },
        ],
      },
    } as Pod;
  }
  it.each([
    ['never updated in place (no state)', { specImage: 'logtail:1', statusImage: 'logtail:1', imageID: 'sha256:1' }, true],
    [
      'patched, the kubelet still runs the old container (Ready through its grace period)',
      { specImage: 'logtail:2', statusImage: 'logtail:1', imageID: 'sha256:1', recordedImageID: 'sha256:1' },
      false,
    ],
    [
      'restarted on the new image',
      { specImage: 'logtail:2', statusImage: 'logtail:2', imageID: 'sha256:2', recordedImageID: 'sha256:1' },
      true,
    ],
    [
      'the same image under the default registry prefix',
      { specImage: 'logtail:2', statusImage: 'docker.io/library/logtail:2', imageID: 'sha256:1', recordedImageID: 'sha256:1' },
      true,
    ],
    [
      'not a sidecar (no IS_INJECTED): left to the workload',
      { specImage: 'logtail:2', statusImage: 'logtail:1', imageID: 'sha256:1', recordedImageID: 'sha256:1', injected: false },
      true,
    ],
    [
      'a state that is not JSON (upstream: inconsistent)',
      { specImage: 'logtail:1', statusImage: 'logtail:1', imageID: 'sha256:1', raw: '{' },
      false,
    ],
  ] as const)('%s → %s', (_t, o, want) => {
    const p = sidecarPod(o);
    expect(sidecarUpdateCompleted(p)).toBe(want);
    // The budget sees the same: a pod mid sidecar update is not available, so taking it down costs nothing.
    expect(
      budgetNameOf({ ...p, metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, 'kruise.io/related-pub': 'b' } } }),
    ).toBe(want ? 'b' : undefined);
  });
});

import { describe, expect, it } from 'vitest';
import {
  budgetNameOf,
  classify,
  judge,
  updateMayDisrupt,
  type ReviewFacts,
} from '../../../../../src/runtime/webhooks/podunavailablebudget/decision.js';
import type { PubObject } from '../../../../../src/runtime/control/pod-unavailable-budget.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';

const NOW = '2026-01-01T00:00:00Z';
const REFUSED = 'podunavailablebudgets.policy.kruise.io "b" is forbidden: pub unavailable allowed is negative';

function pod(o: { annotations?: Record<string, string>; labels?: Record<string, string>; image?: string; ready?: boolean } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', annotations: o.annotations ?? { 'kruise.io/related-pub': 'b' }, labels: o.labels ?? {} },
    spec: { containers: [{ name: 'app', image: o.image ?? 'nginx:1.27' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  } as Pod;
}

const facts = (f: Partial<ReviewFacts>): ReviewFacts => ({ operation: 'DELETE', deleteGate: true, updateGate: true, ...f });

describe('classify', () => {
  it.each([
    ['DELETE of a pod', facts({ oldObject: pod() }), 'DELETE'],
    ['DELETE with the delete gate off', facts({ oldObject: pod(), deleteGate: false }), undefined],
    ['DELETE of a subresource', facts({ oldObject: pod(), subResource: 'status' }), undefined],
    ['eviction', facts({ operation: 'CREATE', subResource: 'eviction', name: 'p', namespace: 'ns' }), 'EVICT'],
    ['CREATE of a pod', facts({ operation: 'CREATE', object: pod() }), undefined],
    ['UPDATE changing the image', facts({ operation: 'UPDATE', oldObject: pod(), object: pod({ image: 'nginx:1.28' }) }), 'UPDATE'],
    [
      'UPDATE with the update gate off',
      facts({ operation: 'UPDATE', updateGate: false, oldObject: pod(), object: pod({ image: 'x' }) }),
      undefined,
    ],
    ['UPDATE of metadata only', facts({ operation: 'UPDATE', oldObject: pod(), object: pod({ labels: { a: 'b' } }) }), undefined],
    [
      'UPDATE adding an unavailable label',
      facts({ operation: 'UPDATE', oldObject: pod(), object: pod({ labels: { 'unavailable-pod.kruise.io/drain': 'true' } }) }),
      'UPDATE',
    ],
    [
      'UPDATE of a pod no budget covers',
      facts({ operation: 'UPDATE', oldObject: pod(), object: pod({ annotations: {}, image: 'x' }) }),
      undefined,
    ],
  ] as const)('%s → %s', (_t, f, want) => {
    const c = classify(f);
    expect(c.skip ? undefined : c.operation).toBe(want);
  });
  it('spec comparison ignores key order', () => {
    const a = pod();
    const b = pod();
    b.spec = JSON.parse(JSON.stringify({ containers: [{ image: 'nginx:1.27', name: 'app' }] }));
    expect(updateMayDisrupt(a, b)).toBe(false);
  });
});

describe('budgetNameOf', () => {
  it.each([
    ['covered and ready', pod(), 'b'],
    ['no annotation', pod({ annotations: {} }), undefined],
    ['opted out', pod({ annotations: { 'kruise.io/related-pub': 'b', 'pub.kruise.io/no-protect': 'true' } }), undefined],
    ['not ready (already unavailable)', pod({ ready: false }), undefined],
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
    ['desired 0', pub(status(0, { desiredAvailable: 0 })), 'DELETE', { allowed: true }],
    ['already recorded', pub(status(0, { disruptedPods: { p: NOW } })), 'DELETE', { allowed: true }],
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
});

import { describe, expect, it } from 'vitest';
import { classify, updateMayDisrupt, type ReviewFacts } from '../../../../../src/runtime/webhooks/podunavailablebudget/decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';

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

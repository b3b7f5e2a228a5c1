import { describe, expect, it } from 'vitest';
import { EXPECTATION_TIMEOUT_MS, Expectations } from '../../../src/runtime/controllers/cloneset/expectations.js';
import type { Pod } from '../../../src/runtime/core/types.js';

const pod = (name: string, o: { uid?: string; rv?: string; deleting?: boolean } = {}): Pod => ({
  metadata: { name, uid: o.uid ?? `${name}-uid`, resourceVersion: o.rv ?? '1', ...(o.deleting ? { deletionTimestamp: 't' } : {}) },
});

describe('CloneSet expectations', () => {
  it('a create is met once the pod is in the cache', () => {
    const e = new Expectations();
    e.expectCreate('ns/cs', 'cs-a');
    expect(e.scaleSatisfied('ns/cs', () => undefined).ok).toBe(false);
    expect(e.scaleSatisfied('ns/cs', (n) => (n === 'cs-a' ? pod('cs-a') : undefined)).ok).toBe(true);
    // Met expectations are dropped: the pod leaving the cache later does not block.
    expect(e.scaleSatisfied('ns/cs', () => undefined).ok).toBe(true);
  });
  it('a failed create is forgotten', () => {
    const e = new Expectations();
    e.expectCreate('ns/cs', 'cs-a');
    e.createFailed('ns/cs', 'cs-a');
    expect(e.scaleSatisfied('ns/cs', () => undefined).ok).toBe(true);
  });
  it('a delete is met once the pod is gone, being deleted, or replaced by another uid', () => {
    const e = new Expectations();
    e.expectDelete('ns/cs', 'cs-a', 'u1');
    expect(e.scaleSatisfied('ns/cs', () => pod('cs-a', { uid: 'u1' })).ok).toBe(false);
    expect(e.scaleSatisfied('ns/cs', () => pod('cs-a', { uid: 'u1', deleting: true })).ok).toBe(true);
    e.expectDelete('ns/cs', 'cs-b', 'u2');
    expect(e.scaleSatisfied('ns/cs', () => pod('cs-b', { uid: 'u3' })).ok).toBe(true);
  });
  it('unmet expectations time out and are reported as leaked', () => {
    let now = 0;
    const e = new Expectations(() => now);
    e.expectCreate('ns/cs', 'cs-a');
    now = EXPECTATION_TIMEOUT_MS + 1;
    expect(e.scaleSatisfied('ns/cs', () => undefined)).toEqual({ ok: true, leaked: 1 });
  });
  it('resource versions: the cache must reach what our write returned', () => {
    const e = new Expectations();
    e.wrote({ metadata: { uid: 'u', resourceVersion: '120' } });
    expect(e.upToDate(pod('a', { uid: 'u', rv: '119' }))).toBe(false);
    expect(e.upToDate(pod('a', { uid: 'u', rv: '120' }))).toBe(true);
    expect(e.upToDate(pod('a', { uid: 'u', rv: '100' }))).toBe(true);
  });
});

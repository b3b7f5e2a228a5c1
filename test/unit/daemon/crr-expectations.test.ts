import { describe, expect, it } from 'vitest';
import { ResourceVersionExpectations } from '../../../src/runtime/daemon/crr/reconcile.js';

const obj = (name: string, resourceVersion?: string) => ({ metadata: { namespace: 'ns', name, resourceVersion } });

describe('resource-version expectations of the CRR reconciler', () => {
  it('a cache older than our last write is not acted on; equal or newer satisfies it, once', () => {
    const e = new ResourceVersionExpectations();
    e.record(obj('a', '1000'));
    expect(e.satisfiedBy(obj('a', '999'))).toBe(false);
    expect(e.satisfiedBy(obj('a', '1000'))).toBe(true);
    // Satisfied expectations are dropped: an older copy later is not compared again.
    expect(e.satisfiedBy(obj('a', '5'))).toBe(true);
  });

  it('orders versions as integers, not strings', () => {
    const e = new ResourceVersionExpectations();
    e.record(obj('a', '10000'));
    expect(e.satisfiedBy(obj('a', '9999'))).toBe(false);
    expect(e.satisfiedBy(obj('a', '10001'))).toBe(true);
  });

  it('objects never written, versions that are not integers, and forgotten objects are not held against the cache', () => {
    const e = new ResourceVersionExpectations();
    expect(e.satisfiedBy(obj('never', '1'))).toBe(true);
    e.record(obj('b', 'abc'));
    expect(e.satisfiedBy(obj('b', '1'))).toBe(true);
    e.record(obj('c', '50'));
    e.forget(obj('c'));
    expect(e.satisfiedBy(obj('c', '1'))).toBe(true);
    e.record(obj('d', '50'));
    expect(e.satisfiedBy(obj('d', 'not-a-number'))).toBe(true);
  });
});

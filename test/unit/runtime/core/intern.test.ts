// The string table the informer caches share: values unchanged, one entry per distinct string it keeps, bounded,
// and safe on the shapes a hostile custom resource can take (deep nesting, frozen parts). What it saves is measured
// by bench/cache-memory.bench.ts, not here.
import { describe, expect, it } from 'vitest';
import { StringInterner } from '../../../../src/runtime/core/intern.js';

const pod = (name: string) => ({
  metadata: { name, namespace: 'team-payments', labels: { app: 'checkout-service' }, uid: `uid-of-${name}-0000000000` },
  spec: { nodeName: 'node-eu-west-1a-17', containers: [{ name: 'app', image: 'registry.example.io/checkout:1.2.3' }] },
  status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-28T10:00:00Z' }] },
});

describe('StringInterner', () => {
  it('leaves every value as it was', () => {
    const strings = new StringInterner();
    const original = pod('checkout-7d9f8c6b5-x2k4q');
    expect(strings.intern(structuredClone(original))).toEqual(original);
  });

  it('keeps one entry per distinct string longer than the parser shares, across objects', () => {
    const strings = new StringInterner();
    for (const name of ['checkout-7d9f8c6b5-aaaaa', 'checkout-7d9f8c6b5-bbbbb', 'checkout-7d9f8c6b5-ccccc']) strings.intern(pod(name));
    // Shared by all three: namespace, label value, node, image, timestamp. Per pod: name, uid. 'app', 'Ready',
    // 'True' are ten characters or fewer and left to the parser.
    expect(strings.size).toBe(5 + 3 * 2);
  });

  it('starts over when full, so unique values do not pile up', () => {
    const strings = new StringInterner({ maxEntries: 100 });
    for (let i = 0; i < 1000; i++) strings.intern({ uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}` });
    expect(strings.size).toBeLessThanOrEqual(100);
    expect(strings.size).toBeGreaterThan(0);
  });

  it('leaves strings longer than maxLength out of the table', () => {
    const strings = new StringInterner({ maxLength: 64 });
    const big = 'x'.repeat(65);
    expect(strings.intern({ annotation: big })).toEqual({ annotation: big });
    expect(strings.string(big)).toBe(big);
    expect(strings.size).toBe(0);
  });

  it('walks a 100,000-level nesting without exhausting the stack', () => {
    const strings = new StringInterner();
    let deep: Record<string, unknown> = { leaf: 'a value of some length' };
    for (let i = 0; i < 100_000; i++) deep = { next: deep, items: [i] };
    expect(() => strings.intern(deep)).not.toThrow();
    expect(strings.size).toBe(1);
  });

  it('skips frozen objects instead of throwing on them', () => {
    const strings = new StringInterner();
    const frozen = Object.freeze({ image: 'registry.example.io/frozen:1' });
    const value = { spec: frozen, other: 'registry.example.io/other:1' };
    expect(() => strings.intern(value)).not.toThrow();
    expect(value).toEqual({ spec: { image: 'registry.example.io/frozen:1' }, other: 'registry.example.io/other:1' });
    expect(strings.size).toBe(1);
  });

  it('returns a string given on its own', () => {
    const strings = new StringInterner();
    expect(strings.intern('registry.example.io/checkout:1.2.3')).toBe('registry.example.io/checkout:1.2.3');
    expect(strings.size).toBe(1);
  });
});

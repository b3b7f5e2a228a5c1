// CloneSet pod predicates: hooks and availability (control/workload-pods.ts), the scale-in order (pods.ts).
import { describe, expect, it } from 'vitest';
import { isAllHooked, isHooked, isPodAvailable } from '../../../../../src/runtime/control/workload-pods.js';
import { sortForScaleIn } from '../../../../../src/runtime/controllers/cloneset/pods.js';
import { NOW, type PodOpts, pod } from './fixtures.js';

describe('lifecycle hooks', () => {
  const hook = { labelsHandler: { a: '1', b: '2' }, finalizersHandler: ['f1', 'f2'] };
  it.each([
    [{}, [], false, false],
    [{ a: '1' }, [], true, false],
    [{ a: 'x' }, [], false, false],
    [{ a: '1', b: '2' }, ['f1'], true, false],
    [{ a: '1', b: '2' }, ['f1', 'f2'], true, true],
    [{}, ['f2'], true, false],
  ])('labels %j finalizers %j: hooked %s, all-hooked %s', (labels, fins, hooked, all) => {
    const p = pod('x', { labels, finalizers: fins });
    expect(isHooked(hook, p)).toBe(hooked);
    expect(isAllHooked(hook, p)).toBe(all);
  });
  it('nil hook: neither; empty hook: all-hooked', () => {
    const p = pod('x');
    expect(isHooked(undefined, p)).toBe(false);
    expect(isAllHooked(undefined, p)).toBe(false);
    expect(isAllHooked({}, p)).toBe(true);
  });
});

describe('availability', () => {
  it.each([
    ['Normal ready', { state: 'Normal' }, 0, true],
    ['no state ready', {}, 0, true],
    ['PreparingNormal ready', { state: 'PreparingNormal' }, 0, false],
    ['Updated ready', { state: 'Updated' }, 0, false],
    ['not ready', { ready: false }, 0, false],
    ['Pending', { phase: 'Pending' }, 0, false],
    ['ready 9 min, minReady 600s', {}, 600, false],
    ['ready 9 min, minReady 60s', {}, 60, true],
    ['InPlaceUpdateReady False', { conditions: [{ type: 'InPlaceUpdateReady', status: 'False' }] }, 0, false],
  ] as const)('%s → %s', (_n, o, m, want) => {
    expect(isPodAvailable(pod('x', o as PodOpts), m, NOW)).toBe(want);
  });
});

describe('scale-in order', () => {
  it('co-located pods go before lone ones; lower deletion cost first', () => {
    const a = pod('a', { node: 'n1', created: '2026-01-01T00:00:00Z' });
    const b = pod('b', { node: 'n1', created: '2026-01-01T00:01:00Z' });
    const c = pod('c', { node: 'n2', created: '2026-01-01T00:02:00Z' });
    expect(sortForScaleIn([a, b, c], 0, NOW).map((p) => p.metadata.name)).toEqual(['b', 'c', 'a']);
    const cheap = pod('cheap', { node: 'n3', annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-5' } });
    expect(sortForScaleIn([c, cheap], 0, NOW)[0]!.metadata.name).toBe('cheap');
  });
});

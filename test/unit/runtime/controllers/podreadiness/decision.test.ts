import { describe, expect, it } from 'vitest';
import { conditionsToInitialise } from '../../../../../src/runtime/controllers/podreadiness/decision.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';

function pod(gates: string[], conditions: Array<[string, string]>, extra: { phase?: string; deleting?: boolean } = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { containers: [{ name: 'app' }], readinessGates: gates.map((conditionType) => ({ conditionType })) },
    status: { phase: extra.phase ?? 'Pending', conditions: conditions.map(([type, status]) => ({ type, status })) },
  } as Pod;
}

describe('podreadiness decision', () => {
  it.each([
    ['both gates, no conditions', pod(['KruisePodReady', 'InPlaceUpdateReady'], []), ['KruisePodReady', 'InPlaceUpdateReady']],
    ['only the missing one', pod(['KruisePodReady', 'InPlaceUpdateReady'], [['KruisePodReady', 'True']]), ['InPlaceUpdateReady']],
    ['a False set by a hook is never overwritten', pod(['KruisePodReady'], [['KruisePodReady', 'False']]), []],
    ['in-place update in progress (False) is left alone', pod(['InPlaceUpdateReady'], [['InPlaceUpdateReady', 'False']]), []],
    ['a user gate is not ours', pod(['example.com/ready'], []), []],
    ['no gates', pod([], []), []],
    ['terminating pod', pod(['KruisePodReady'], [], { deleting: true }), []],
    ['finished pod', pod(['KruisePodReady'], [], { phase: 'Succeeded' }), []],
  ])('%s', (_n, p, want) => {
    expect(conditionsToInitialise(p)).toEqual(want);
  });
});

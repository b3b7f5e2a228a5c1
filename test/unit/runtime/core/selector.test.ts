// Label selectors as list calls and the scale subresource take them (src/runtime/core/selector.ts).
import { describe, expect, it } from 'vitest';
import { selectorString } from '../../../../src/runtime/core/selector.js';

describe('selectorString', () => {
  it.each([
    ['empty', {}, ''],
    ['labels sorted by key', { matchLabels: { b: '2', a: '1' } }, 'a=1,b=2'],
    [
      'labels and an In expression, values sorted',
      { matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'c', operator: 'In', values: ['y', 'x'] }] },
      'a=1,b=2,c in (x,y)',
    ],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['b', 'a'] }] }, 'tier notin (a,b)'],
    ['Exists', { matchExpressions: [{ key: 'canary', operator: 'Exists' }] }, 'canary'],
    ['DoesNotExist', { matchExpressions: [{ key: 'canary', operator: 'DoesNotExist' }] }, '!canary'],
    [
      'expressions sorted among labels by key',
      {
        matchLabels: { z: '1' },
        matchExpressions: [
          { key: 'm', operator: 'Exists' },
          { key: 'a', operator: 'In', values: ['v'] },
        ],
      },
      'a in (v),m,z=1',
    ],
  ] as const)('%s', (_name, sel, want) => {
    expect(selectorString(sel as Parameters<typeof selectorString>[0])).toBe(want);
  });
});

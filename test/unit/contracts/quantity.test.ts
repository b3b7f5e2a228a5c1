import { describe, expect, it } from 'vitest';
import { QUANTITY_SUFFIXES, quantityValue } from '../../../src/contracts/quantity.js';

describe('quantityValue', () => {
  it.each([
    ['0', 0],
    ['100m', 0.1],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['-2', -2],
    ['1Ki', 1024],
    ['512Mi', 512 * 2 ** 20],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['1Ei', 2 ** 60],
    ['1k', 1000],
    ['1G', 1e9],
    ['2E', 2e18],
    ['129e6', 129e6],
    ['1E3', 1000],
    ['5e-1', 0.5],
    [' 64Mi ', 64 * 2 ** 20],
  ])('%j is %d', (text, value) => {
    expect(quantityValue(text)).toBeCloseTo(value, 12);
  });

  it.each(['', 'Mi', '1K', '1mi', '1e', '1e3Mi', '1Mi1', '1 Mi', '--1', '1.2.3', '0x10', 'NaN', 'Infinity', '50%'])(
    '%j is not a quantity',
    (text) => {
      expect(quantityValue(text)).toBeUndefined();
    },
  );

  it('has every suffix the API server reads, and no other', () => {
    expect(Object.keys(QUANTITY_SUFFIXES).sort()).toEqual(['E', 'Ei', 'G', 'Gi', 'Ki', 'M', 'Mi', 'P', 'Pi', 'T', 'Ti', 'k', 'm'].sort());
  });
});

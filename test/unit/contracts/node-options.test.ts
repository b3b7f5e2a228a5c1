import { describe, expect, it } from 'vitest';
import { managerNodeOptions, quantityBytes } from '../../../src/contracts/index.js';

describe('quantityBytes', () => {
  it.each([
    ['512Mi', 512 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['1G', 1e9],
    ['500M', 5e8],
    ['129e6', 129e6],
    ['1E3', 1000],
    ['536870912', 536870912],
    ['64k', 64_000],
    ['.5Ki', 512],
    [' 2Ki ', 2048],
  ])('%s is %d bytes', (q, bytes) => {
    expect(quantityBytes(q)).toBe(bytes);
  });

  it.each(['', 'Mi', '512MB', '1 Gi', '-1Gi', 'lots', '1e', '0x10'])('refuses "%s" with the forms it takes', (q) => {
    expect(() => quantityBytes(q)).toThrow(/is not a Kubernetes quantity \(e\.g\. 512Mi, 1Gi, 1G, 129e6\)/);
  });
});

describe('managerNodeOptions', () => {
  it('gives V8 the memory limit less 384 MiB, never less than 128 MiB, and leaves the heap to V8 without a limit', () => {
    expect(managerNodeOptions('2Gi')).toBe('--max-semi-space-size=32 --max-old-space-size=1664');
    expect(managerNodeOptions('2G')).toBe('--max-semi-space-size=32 --max-old-space-size=1523');
    expect(managerNodeOptions('512Mi')).toBe('--max-semi-space-size=32 --max-old-space-size=128');
    expect(managerNodeOptions('100Mi')).toBe('--max-semi-space-size=32 --max-old-space-size=128');
    expect(managerNodeOptions(undefined)).toBe('--max-semi-space-size=32');
  });
});

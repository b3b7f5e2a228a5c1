import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../../../../src/runtime/daemon/crr/keyed-lock.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('KeyedLock', () => {
  it('runs holders of one key one at a time, in arrival order; other keys in parallel', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const holder = (key: string, name: string) =>
      lock.run(key, async () => {
        log.push(`${name}+`);
        await tick();
        log.push(`${name}-`);
      });
    await Promise.all([holder('a', 'a1'), holder('a', 'a2'), holder('b', 'b1'), holder('a', 'a3')]);
    expect(log.filter((e) => e.startsWith('a'))).toEqual(['a1+', 'a1-', 'a2+', 'a2-', 'a3+', 'a3-']);
    // b ran while a1 held its key.
    expect(log.indexOf('b1+')).toBeLessThan(log.indexOf('a1-'));
    expect(lock.busy('a') || lock.busy('b')).toBe(false);
  });

  it('passes a failure to its holder only and frees the key', async () => {
    const lock = new KeyedLock();
    const failed = lock.run('a', async () => {
      throw new Error('boom');
    });
    const next = lock.run('a', async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
    expect(lock.busy('a')).toBe(false);
  });
});

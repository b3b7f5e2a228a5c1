import { describe, expect, it } from 'vitest';
import { Backoff, exponentialDelay } from '../../../../src/runtime/core/backoff.js';
import { runWorkers, WorkQueue } from '../../../../src/runtime/core/queue.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('WorkQueue', () => {
  it('de-duplicates keys waiting in the queue', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.depth).toBe(0);
  });

  it('never hands a key being processed to a second worker; re-queues it once when done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const k = await q.get();
    expect(k).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.depth).toBe(0); // held back: 'a' is processing
    q.done('a');
    expect(q.depth).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(q.depth).toBe(0);
  });

  it('with many workers, concurrent processing of one key never happens and no update is lost', async () => {
    const q = new WorkQueue();
    const active = new Set<string>();
    let overlap = 0;
    const seen: Record<string, number> = {};
    const version: Record<string, number> = {};
    const processedVersion: Record<string, number> = {};
    const workers = runWorkers(
      q,
      8,
      async (key) => {
        if (active.has(key)) overlap++;
        active.add(key);
        const v = version[key] ?? 0;
        await sleep(Math.random() * 3);
        processedVersion[key] = v;
        seen[key] = (seen[key] ?? 0) + 1;
        active.delete(key);
      },
      () => undefined,
    );
    for (let i = 0; i < 400; i++) {
      const key = `k${i % 10}`;
      version[key] = i;
      q.add(key);
      if (i % 7 === 0) await sleep(1);
    }
    const caughtUp = () => Object.keys(version).every((key) => processedVersion[key] === version[key]);
    for (const until = Date.now() + 10_000; !caughtUp() && Date.now() < until;) await sleep(20);
    q.shutDown();
    await workers;
    expect(overlap).toBe(0);
    // Every key was processed after its last add (the dirty set guarantees a final pass).
    for (const key of Object.keys(version)) expect(processedVersion[key]).toBe(version[key]);
    // De-duplication: far fewer passes than adds.
    expect(Object.values(seen).reduce((a, b) => a + b, 0)).toBeLessThan(400);
  });

  it('retries failures with per-key exponential backoff and forgets on success', async () => {
    const q = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 1000, qps: 0 });
    const times: number[] = [];
    let failuresLeft = 4;
    const start = Date.now();
    const errors: number[] = [];
    const workers = runWorkers(
      q,
      2,
      async () => {
        times.push(Date.now() - start);
        if (failuresLeft-- > 0) throw new Error('boom');
      },
      (_k, _e, delay) => errors.push(delay),
    );
    q.add('x');
    // Wait for the fifth (successful) run rather than a fixed time: a loaded machine delays timers.
    for (const until = Date.now() + 10_000; times.length < 5 && Date.now() < until;) await sleep(20);
    await sleep(20);
    q.shutDown();
    await workers;
    expect(errors).toEqual([10, 20, 40, 80]);
    expect(times).toHaveLength(5);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    gaps.forEach((g, i) => expect(g).toBeGreaterThanOrEqual([10, 20, 40, 80][i]! - 2));
    expect(q.numRequeues('x')).toBe(0);
  });

  it('the token bucket delays retries beyond the burst', () => {
    const q = new WorkQueue({ baseDelayMs: 1, maxDelayMs: 1, qps: 10, burst: 3 });
    const delays = ['a', 'b', 'c', 'd', 'e'].map((k) => q.addRateLimited(k));
    expect(delays.slice(0, 3)).toEqual([1, 1, 1]);
    expect(delays[3]).toBeGreaterThanOrEqual(90);
    expect(delays[4]).toBeGreaterThan(delays[3]!);
    q.shutDown();
  });

  it('addAfter keeps the earliest pending time for a key', async () => {
    const q = new WorkQueue();
    q.addAfter('a', 200);
    q.addAfter('a', 20);
    q.addAfter('a', 500);
    await sleep(60);
    expect(q.depth).toBe(1);
    await sleep(250);
    expect(q.depth).toBe(1);
    q.shutDown();
  });

  it('requeueAfter from a handler is not counted as a failure', async () => {
    const q = new WorkQueue({ qps: 0 });
    let calls = 0;
    const w = runWorkers(
      q,
      1,
      async () => (++calls === 1 ? { requeueAfterMs: 30 } : undefined),
      () => {
        throw new Error('not an error');
      },
    );
    q.add('a');
    for (const until = Date.now() + 10_000; calls < 2 && Date.now() < until;) await sleep(10);
    // Long enough for a wrongly counted failure to show up as a third call.
    await sleep(60);
    q.shutDown();
    await w;
    expect(calls).toBe(2);
    expect(q.numRequeues('a')).toBe(0);
  });

  it('shutDown releases waiting workers', async () => {
    const q = new WorkQueue();
    const w = runWorkers(
      q,
      3,
      async () => undefined,
      () => undefined,
    );
    q.shutDown();
    await expect(w).resolves.toBeUndefined();
  });
});

describe('backoff', () => {
  it('exponentialDelay doubles per failure up to the cap', () => {
    expect([0, 1, 2, 3, 4, 10, 40].map((n) => exponentialDelay(n, 5, 1000))).toEqual([0, 5, 10, 20, 40, 1000, 1000]);
  });

  it('Backoff jitters within [cap/2, cap] and resets', () => {
    const b = new Backoff(100, 1000);
    const caps = [100, 200, 400, 800, 1000, 1000];
    for (const cap of caps) {
      const d = b.next();
      expect(d).toBeGreaterThanOrEqual(cap / 2);
      expect(d).toBeLessThanOrEqual(cap);
    }
    b.reset();
    expect(b.next()).toBeLessThanOrEqual(100);
  });
});

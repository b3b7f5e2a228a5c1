// When a watch is presumed on a dead connection (src/runtime/core/watch-liveness.ts), and what the informer
// does about it: readiness fails once the server's deadline has passed, the watch is replaced after the
// grace, readiness recovers when a new watch is accepted. Injected clock and a fake client.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Informer, type KubeClient, type KubeObject, type ResourceType } from '../../../../src/runtime/core/index.js';
import { pickWatchTimeoutSeconds, WATCH_LIVENESS, watchAbortAfterMs, watchVerdict } from '../../../../src/runtime/core/watch-liveness.js';

const CONFIGMAPS: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };

describe('watch liveness timing', () => {
  it('asks for a server timeout of 25–30 s, jittered', () => {
    expect(pickWatchTimeoutSeconds(WATCH_LIVENESS, () => 0)).toBe(25);
    expect(pickWatchTimeoutSeconds(WATCH_LIVENESS, () => 0.5)).toBe(27);
    expect(pickWatchTimeoutSeconds(WATCH_LIVENESS, () => 0.999999)).toBe(29);
    expect(pickWatchTimeoutSeconds({ ...WATCH_LIVENESS, minTimeoutSeconds: 30, maxTimeoutSeconds: 30 }, () => 0.7)).toBe(30);
  });

  it.each([
    [0, 'live'],
    [25_000, 'live'],
    [26_999, 'live'],
    [27_000, 'overdue'],
    [29_999, 'overdue'],
    [30_000, 'dead'],
    [300_000, 'dead'],
  ] as const)('a 25 s watch sent at t=1000 is %s ms later: %s', (elapsed, verdict) => {
    expect(watchVerdict(1000, 25, 1000 + elapsed)).toBe(verdict);
  });

  it('resets a watch its server timeout plus 5 s after it was sent: a dead one is noticed within 35 s', () => {
    expect(watchAbortAfterMs(25)).toBe(30_000);
    expect(watchAbortAfterMs(WATCH_LIVENESS.maxTimeoutSeconds)).toBe(35_000);
  });
});

interface FakeWatch {
  timeoutSeconds?: number;
  deadlineMs?: number;
  open(): void;
  done(err: unknown): void;
}

function fakeClient(): { client: KubeClient; watches: FakeWatch[] } {
  const watches: FakeWatch[] = [];
  const client = {
    list: () => Promise.resolve({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '10' }, items: [] }),
    watch: (
      _type: ResourceType,
      opts: { timeoutSeconds?: number; allowWatchBookmarks?: boolean },
      _onEvent: unknown,
      onDone: (err: unknown) => void,
      hooks: { onOpen?: () => void; deadlineMs?: number } = {},
    ) => {
      expect(opts.allowWatchBookmarks).toBe(true);
      watches.push({ timeoutSeconds: opts.timeoutSeconds, deadlineMs: hooks.deadlineMs, open: () => hooks.onOpen?.(), done: onDone });
      return Promise.resolve(new AbortController());
    },
  } as unknown as KubeClient;
  return { client, watches };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('informer on a dead watch connection', () => {
  it('fails readiness past the deadline, watches again when the client gives up, recovers once accepted', async () => {
    let now = 5_000;
    const { client, watches } = fakeClient();
    const inf = new Informer<KubeObject>(client, CONFIGMAPS, { logger: pino({ level: 'silent' }), now: () => now });
    inf.start();
    await inf.waitForSync();
    await settle();
    expect(watches).toHaveLength(1);
    const t = watches[0]!.timeoutSeconds!;
    expect(t).toBeGreaterThanOrEqual(25);
    expect(t).toBeLessThan(30);
    expect(watches[0]!.deadlineMs).toBe(t * 1000 + 5_000);
    watches[0]!.open();

    now += t * 1000 + 1_999;
    expect(inf.watchProblem()).toBeUndefined();
    now += 1;
    expect(inf.watchProblem()).toMatch(/watch of configmaps open 2s past its \d+s server timeout: connection presumed dead/);

    // The client resets it at the deadline: a TimeoutError. The informer watches again at once.
    now += 3_000;
    watches[0]!.done(new DOMException('watch inactive', 'TimeoutError'));
    await settle();
    expect(watches).toHaveLength(2);
    expect(inf.stats.deadWatches).toBe(1);
    expect(inf.watchProblem()).toMatch(/presumed dead, watching again/);
    watches[1]!.open();
    expect(inf.watchProblem()).toBeUndefined();
    inf.stop();
  });

  it('stays unready while the replacement watch is not accepted either', async () => {
    let now = 0;
    const { client, watches } = fakeClient();
    const inf = new Informer<KubeObject>(client, CONFIGMAPS, { logger: pino({ level: 'silent' }), now: () => now });
    inf.start();
    await inf.waitForSync();
    await settle();
    now += 40_000;
    watches[0]!.done(new DOMException('watch inactive', 'TimeoutError'));
    await settle();
    now += 1_000;
    expect(inf.watchProblem()).toMatch(/presumed dead/);
    now += 60_000;
    expect(inf.watchProblem()).toMatch(/presumed dead/);
    inf.stop();
    expect(inf.watchProblem()).toBeUndefined();
  });

  it('a clean close by the server on time is no problem: the next watch resumes from the last version', async () => {
    let now = 0;
    const { client, watches } = fakeClient();
    const inf = new Informer<KubeObject>(client, CONFIGMAPS, { logger: pino({ level: 'silent' }), now: () => now });
    inf.start();
    await inf.waitForSync();
    await settle();
    watches[0]!.open();
    now += watches[0]!.timeoutSeconds! * 1000;
    watches[0]!.done(null);
    await settle();
    expect(watches).toHaveLength(2);
    expect(inf.stats.deadWatches).toBe(0);
    expect(inf.stats.lists).toBe(1);
    expect(inf.watchProblem()).toBeUndefined();
    inf.stop();
  });
});

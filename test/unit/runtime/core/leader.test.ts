// The Lease elector (src/runtime/core/leader.ts) on an injected clock and an in-memory Lease API: renews keep
// a leader leading, a hanging renew is aborted after its share of the renew deadline and asked again, no successful renew within the deadline
// ends leadership and closes the write fence, a thawed process finds its fence closed before it can write,
// and a replica that lost the lease campaigns again as a standby.
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FencedError, KubeApiError, KubeClient, type RequestOptions } from '../../../../src/runtime/core/client.js';
import { LeaderElector, type ElectionClock, type LeaseClient } from '../../../../src/runtime/core/leader.js';
import { createLogger } from '../../../../src/runtime/core/log.js';
import type { Lease } from '../../../../src/runtime/core/types.js';
import { PODS } from '../../../../src/contracts/index.js';

const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
const RETRY_MS = 2_000;

/** Manual monotonic time: timers run only when the test advances the clock. */
class ManualClock implements ElectionClock {
  t = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  now = (): number => this.t;
  setTimer = (fn: () => void, ms: number): unknown => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  };
  clearTimer = (h: unknown): void => {
    this.timers.delete(h as number);
  };
  /** Runs every timer due within `ms`, in time order, letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const until = this.t + ms;
    for (;;) {
      await settle();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= until && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = until;
    await settle();
  }
  /** Time passes with no timer running: a process stopped with SIGSTOP. */
  freeze(ms: number): void {
    this.t += ms;
  }
}

const settle = () => new Promise<void>((r) => setImmediate(r));

type Mode = 'ok' | 'hang' | 'fail';

/** An in-memory Lease endpoint; `mode` decides how the next calls of one replica go. */
class LeaseServer {
  lease?: Lease;
  private rv = 0;
  calls: Array<{ who: string; verb: string; at: number; aborted?: number; fresh?: boolean }> = [];
  /** Calls held open (mode 'hang' or answered by hand). */
  held: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];

  constructor(private readonly clock: ManualClock) {}

  client(who: string, mode: () => Mode): LeaseClient {
    const call = <T>(verb: string, o: RequestOptions, fn: () => T): Promise<T> => {
      // As KubeClient does at the moment of writing: a refused call is never sent, so the server never sees it.
      if (o.maySend && !o.maySend()) return Promise.reject(new DOMException(`${verb}: its time ran out`, 'TimeoutError'));
      const signal = o.signal;
      const rec: { who: string; verb: string; at: number; aborted?: number; fresh?: boolean } = {
        who,
        verb,
        at: this.clock.now(),
        fresh: o.freshConnection,
      };
      this.calls.push(rec);
      const m = mode();
      if (m === 'fail') return Promise.reject(new Error('connection refused'));
      if (m === 'ok') {
        try {
          return Promise.resolve(fn());
        } catch (e) {
          return Promise.reject(e as Error);
        }
      }
      return new Promise<T>((resolve, reject) => {
        signal?.addEventListener('abort', () => {
          rec.aborted = this.clock.now();
          reject(signal.reason as Error);
        });
        this.held.push({ resolve: () => resolve(fn()), reject });
      });
    };
    const access = { apiGroup: 'coordination.k8s.io', resource: 'leases', verb: 'get' as const };
    return {
      get: (<T>(_t: unknown, _n: string, _ns?: string, o: RequestOptions = {}) =>
        call('get', o, () => {
          if (!this.lease) throw new KubeApiError(404, 'NotFound', 'not found', access);
          return structuredClone(this.lease) as unknown as T;
        })) as LeaseClient['get'],
      create: (<T>(_t: unknown, obj: Lease, _ns?: string, o: RequestOptions = {}) =>
        call('create', o, () => {
          if (this.lease) throw new KubeApiError(409, 'AlreadyExists', 'exists', access);
          this.lease = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
          return structuredClone(this.lease) as unknown as T;
        })) as LeaseClient['create'],
      update: (<T>(_t: unknown, obj: Lease, _sub?: string, o: RequestOptions = {}) =>
        call('update', o, () => {
          if (obj.metadata.resourceVersion !== this.lease?.metadata.resourceVersion)
            throw new KubeApiError(409, 'Conflict', 'conflict', access);
          this.lease = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
          return structuredClone(this.lease) as unknown as T;
        })) as LeaseClient['update'],
    };
  }

  holder(): string | null | undefined {
    return this.lease?.spec?.holderIdentity;
  }
}

function logs() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'debug',
    name: 'test',
    destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  });
  return { logger, lines };
}

function replica(server: LeaseServer, clock: ManualClock, id: string, mode: () => Mode = () => 'ok') {
  const { logger, lines } = logs();
  const events: Array<{ event: 'started' | 'stopped'; at: number }> = [];
  const elector = new LeaderElector(server.client(id, mode), {
    namespace: 'kruise-system',
    name: 'kruise-manager',
    identity: id,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryPeriodMs: RETRY_MS,
    logger,
    clock,
    onStartedLeading: () => events.push({ event: 'started', at: clock.now() }),
    onStoppedLeading: () => events.push({ event: 'stopped', at: clock.now() }),
  });
  return { elector, events, lines };
}

/** Replica 'a', leading from time 0, and the switch for how its next lease calls go. */
async function soleLeader() {
  const clock = new ManualClock();
  const server = new LeaseServer(clock);
  let mode: Mode = 'ok';
  const a = replica(server, clock, 'a', () => mode);
  a.elector.start();
  await clock.advance(0);
  return { clock, server, a, setMode: (m: Mode) => void (mode = m) };
}

/** A client fenced by the elector, as the manager builds it; its writes are refused before anything is sent. */
function fencedClient(elector: LeaderElector): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeClient(kc).fenced({ mayWrite: () => elector.mayWrite() });
}

describe('Lease leader election', () => {
  it('a leader whose renews succeed keeps leading, and its fence stays open', async () => {
    const clock = new ManualClock();
    const server = new LeaseServer(clock);
    const a = replica(server, clock, 'a');
    a.elector.start();
    await clock.advance(0);
    expect(a.elector.isLeader()).toBe(true);
    expect(server.holder()).toBe('a');
    for (let i = 0; i < 30; i++) {
      await clock.advance(RETRY_MS);
      expect(a.elector.mayWrite()).toBe(true);
    }
    expect(a.events).toEqual([{ event: 'started', at: 0 }]);
    expect(server.calls.filter((c) => c.verb === 'update').length).toBeGreaterThanOrEqual(29);
  });

  it('a renew that hangs is aborted after its share of the deadline, asked again at once, and leadership ends at the deadline', async () => {
    const { clock, server, a, setMode } = await soleLeader();
    await clock.advance(RETRY_MS); // renewed at 2 s
    const lastRenew = clock.now();
    setMode('hang');
    await clock.advance(RETRY_MS); // a renew is sent at 4 s and hangs
    const hung = server.calls.at(-1)!;
    expect(hung).toMatchObject({ who: 'a', verb: 'get', at: lastRenew + RETRY_MS });
    expect(a.elector.mayWrite()).toBe(true);
    await clock.advance(RENEW_DEADLINE_MS);
    // One attempt may take (deadline - retry) / 2; the second, sent at once, is bounded by the deadline.
    const attemptMs = (RENEW_DEADLINE_MS - RETRY_MS) / 2;
    const retried = server.calls.filter((c) => c.at > hung.at)[0]!;
    expect(hung.aborted).toBe(hung.at + attemptMs);
    expect(retried).toMatchObject({ verb: 'get', at: hung.at + attemptMs, fresh: true });
    expect(retried.aborted).toBe(lastRenew + RENEW_DEADLINE_MS);
    expect(a.events).toEqual([
      { event: 'started', at: 0 },
      { event: 'stopped', at: lastRenew + RENEW_DEADLINE_MS },
    ]);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.lines.find((l) => l.msg === 'lost leadership')).toMatchObject({ sinceLastRenewMs: RENEW_DEADLINE_MS });
  });

  it('one renew caught on a connection gone silent costs nothing: the next, on a fresh one, keeps the leadership', async () => {
    const { clock, server, a, setMode } = await soleLeader();
    setMode('hang');
    await clock.advance(RETRY_MS); // this renew never gets an answer
    setMode('ok');
    await clock.advance(RENEW_DEADLINE_MS * 3);
    expect(a.events).toEqual([{ event: 'started', at: 0 }]);
    expect(a.elector.mayWrite()).toBe(true);
    expect(server.calls.filter((c) => c.aborted !== undefined)).toHaveLength(1);
  });

  it('no successful renew within the renew deadline: leadership ends and the fence refuses writes', async () => {
    const { clock, a, setMode } = await soleLeader();
    const client = fencedClient(a.elector);
    setMode('fail');
    await clock.advance(RENEW_DEADLINE_MS - 1);
    expect(a.elector.mayWrite()).toBe(true);
    expect(a.events.map((e) => e.event)).toEqual(['started']);
    await clock.advance(1);
    expect(a.elector.mayWrite()).toBe(false);
    expect(a.events).toEqual([
      { event: 'started', at: 0 },
      { event: 'stopped', at: RENEW_DEADLINE_MS },
    ]);
    await expect(client.create(PODS, { metadata: { name: 'p', namespace: 'ns' } })).rejects.toBeInstanceOf(FencedError);
    await expect(client.delete(PODS, 'p', 'ns')).rejects.toBeInstanceOf(FencedError);
  });

  it('the fence closes with the clock, before any timer runs (a thawed process refuses its first write)', async () => {
    const clock = new ManualClock();
    const server = new LeaseServer(clock);
    const a = replica(server, clock, 'a');
    const client = fencedClient(a.elector);
    a.elector.start();
    await clock.advance(0);
    await clock.advance(RETRY_MS);
    clock.freeze(17_000); // SIGSTOP: no timer, no callback ran meanwhile
    const thawed = clock.now();
    expect(a.elector.mayWrite()).toBe(false);
    await expect(client.patch(PODS, 'p', 'ns', {}, 'application/merge-patch+json')).rejects.toBeInstanceOf(FencedError);
    await clock.advance(0);
    // The first thing its timers do is step down; nobody took the lease meanwhile, so it may then renew it.
    expect(a.events[1]).toEqual({ event: 'stopped', at: thawed });
  });

  it('a renew sent before a freeze and answered after it does not restore leadership, nor write the lease', async () => {
    const { clock, server, a, setMode } = await soleLeader();
    setMode('hang');
    await clock.advance(RETRY_MS); // the renew's get is in flight
    setMode('ok');
    clock.freeze(17_000);
    const thawed = clock.now();
    // After the thaw the answer is the first thing the process sees (before its timers).
    server.held.shift()!.resolve();
    await settle();
    expect(a.elector.mayWrite()).toBe(false);
    // The lease it read before the freeze is not written back: a standby may have taken it meanwhile.
    expect(server.calls.filter((c) => c.at >= thawed && c.verb !== 'get')).toEqual([]);
    await clock.advance(0);
    expect(a.events.map((e) => e.event)).toEqual(['started', 'stopped']);
  });

  it('a standby takes over only a lease left unrenewed for the lease duration', async () => {
    const clock = new ManualClock();
    const server = new LeaseServer(clock);
    let aMode: Mode = 'ok';
    const a = replica(server, clock, 'a', () => aMode);
    const b = replica(server, clock, 'b');
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await clock.advance(RETRY_MS * 5);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.leader()).toBe('a');
    aMode = 'hang'; // cut off
    const cut = clock.now();
    await clock.advance(LEASE_MS + 2 * RETRY_MS * 1.2);
    expect(a.events.map((e) => e.event)).toEqual(['started', 'stopped']);
    const aStopped = a.events[1]!.at;
    const bStarted = b.events[0]!.at;
    expect(server.holder()).toBe('b');
    // a's fence closed before b could lead.
    expect(aStopped).toBeLessThanOrEqual(cut + RENEW_DEADLINE_MS);
    expect(bStarted).toBeGreaterThanOrEqual(cut + LEASE_MS - RETRY_MS);
    expect(aStopped).toBeLessThan(bStarted);
  });

  it('a replica that lost the lease re-acquires it as a warm standby when the API server answers again', async () => {
    const { clock, a, setMode } = await soleLeader();
    setMode('fail');
    await clock.advance(RENEW_DEADLINE_MS + RETRY_MS);
    expect(a.elector.isLeader()).toBe(false);
    setMode('ok');
    await clock.advance(RETRY_MS * 1.2);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.mayWrite()).toBe(true);
    expect(a.events.map((e) => e.event)).toEqual(['started', 'stopped', 'started']);
  });

  it('a leader whose lease was taken steps down at its next renew', async () => {
    const clock = new ManualClock();
    const server = new LeaseServer(clock);
    const a = replica(server, clock, 'a');
    a.elector.start();
    await clock.advance(0);
    server.lease = { ...server.lease!, spec: { ...server.lease!.spec, holderIdentity: 'intruder' } };
    await clock.advance(RETRY_MS);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.lines.find((l) => l.msg === 'lost leadership')?.why).toBe('lease taken by intruder');
  });

  it('stop releases the lease so a standby takes over at once', async () => {
    const clock = new ManualClock();
    const server = new LeaseServer(clock);
    const a = replica(server, clock, 'a');
    a.elector.start();
    await clock.advance(0);
    await a.elector.stop();
    expect(server.holder()).toBeNull();
    expect(server.lease!.spec!.leaseDurationSeconds).toBe(1);
  });

  it('sends every lease call on a fresh connection (a pooled one may be silently dead)', async () => {
    const clock = new ManualClock();
    const server = new LeaseServer(clock);
    const a = replica(server, clock, 'a');
    const b = replica(server, clock, 'b');
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    for (let i = 0; i < 5; i++) await clock.advance(RETRY_MS);
    await a.elector.stop();
    await b.elector.stop();
    expect(new Set(server.calls.map((c) => c.verb))).toEqual(new Set(['get', 'create', 'update']));
    expect(server.calls.filter((c) => c.fresh !== true)).toEqual([]);
  });

  it('refuses timings client-go refuses', () => {
    const clock = new ManualClock();
    const server = new LeaseServer(clock);
    const base = { namespace: 'n', name: 'l', identity: 'a', logger: logs().logger, onStartedLeading() {}, onStoppedLeading() {} };
    expect(
      () =>
        new LeaderElector(
          server.client('a', () => 'ok'),
          { ...base, leaseDurationMs: 10, renewDeadlineMs: 10, retryPeriodMs: 1 },
        ),
    ).toThrow(/renewDeadline/);
    expect(
      () =>
        new LeaderElector(
          server.client('a', () => 'ok'),
          { ...base, leaseDurationMs: 15, renewDeadlineMs: 10, retryPeriodMs: 10 },
        ),
    ).toThrow(/retryPeriod/);
  });
});

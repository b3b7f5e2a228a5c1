// The admission server under a backlog of well-behaved requests, as the API server makes one when the
// webhook falls behind: one connection per outstanding review (HTTP/1.1), every request complete within the
// timeouts. None of them may be refused or cut off because the server itself is busy; only clients that
// are slow themselves are. Also the turn scheduler (ReviewTurns) on its own.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { LoopStalls, ReviewTurns } from '../../../../../src/runtime/core/webhook/limits.js';
import type { AdmissionHandler } from '../../../../../src/runtime/core/webhook/server.js';
import { post, rawConnect, review, startAdmissionServer, untilClosed, type RunningServer } from '../../../support/admission-server.js';

const run = promisify(execFile);
const PATH = '/busy';
const busyWait = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a handler that costs CPU, like a review of a large object on a starved core
  }
};

function busyHandler(ms: number, seen: string[]): AdmissionHandler {
  return {
    name: 'busy',
    path: PATH,
    type: 'validating',
    handle(req) {
      seen.push(req.uid);
      busyWait(ms);
      return Promise.resolve({ allowed: true });
    },
  };
}

const object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
const body = (uid: string) => JSON.stringify(review(object, { uid }));

/** `count` reviews at once, one connection each, from a client in another process; their HTTP statuses. */
async function concurrentPosts(server: RunningServer, count: number): Promise<Array<number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'backlog-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, server.ca);
  try {
    const script = fileURLToPath(new URL('../../../support/concurrent-posts.mjs', import.meta.url));
    const { stdout } = await run(process.execPath, [script, String(server.port), caFile, PATH, String(count)], { timeout: 60_000 });
    return JSON.parse(stdout) as Array<number | string>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let s: RunningServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe('a backlog of well-behaved requests', () => {
  it('answers every one of many concurrent connections although handling them all takes far longer than the timeouts', async () => {
    const seen: string[] = [];
    // 60 reviews of 50 ms each: 3 s of handler work against 1 s handshake/header and 1.5 s request timeouts.
    s = await startAdmissionServer([busyHandler(50, seen)], {
      handshakeTimeoutMs: 1000,
      headersTimeoutMs: 1000,
      requestTimeoutMs: 1500,
      timeoutCheckIntervalMs: 50,
    });
    expect(await concurrentPosts(s, 60)).toEqual(Array.from({ length: 60 }, () => 200));
    expect(seen).toHaveLength(60);
  });

  it('does not time out a request the client sent in time while the server itself stalled', async () => {
    s = await startAdmissionServer([busyHandler(0, [])], {
      handshakeTimeoutMs: 400,
      headersTimeoutMs: 400,
      requestTimeoutMs: 600,
      timeoutCheckIntervalMs: 50,
    });
    // The event loop stalls for 0.7 s right after the handshake, before it reads the request that the client
    // sent at once (a long GC, or a CPU-starved process): the request sits unread, through no fault of the client.
    let stalled = false;
    (s.server as unknown as { server: import('node:https').Server }).server.on('secureConnection', () => {
      if (stalled) return;
      stalled = true;
      busyWait(700);
    });
    expect(await concurrentPosts(s, 3)).toEqual([200, 200, 200]);
    expect(stalled).toBe(true);
  });

  it('keeps one keep-alive connection serving review after review (no new handshake per review)', async () => {
    s = await startAdmissionServer([busyHandler(0, [])]);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    agent.on('free', (sock) => sockets.add(sock));
    try {
      for (let i = 0; i < 5; i++) {
        const r = await post(s, PATH, body(`ka-${i}`), { agent });
        expect(r.status).toBe(200);
        expect(r.json.response.uid).toBe(`ka-${i}`);
      }
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('still cuts off a client that is slow itself while the server works through a backlog', async () => {
    const seen: string[] = [];
    s = await startAdmissionServer([busyHandler(20, seen)], {
      headersTimeoutMs: 300,
      requestTimeoutMs: 400,
      handshakeTimeoutMs: 300,
      timeoutCheckIntervalMs: 25,
    });
    const slow = await rawConnect(s);
    const closed = untilClosed(slow);
    slow.write(`POST ${PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"a":`);
    const backlog = concurrentPosts(s, 20);
    const answer = await closed;
    expect(answer === '' || /^HTTP\/1\.1 408/.test(answer)).toBe(true);
    expect(await backlog).toEqual(Array.from({ length: 20 }, () => 200));
  });

  it('does not handle a review whose client went away while it waited for its turn', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const holding: AdmissionHandler = {
      name: 'holding',
      path: PATH,
      type: 'validating',
      async handle(req) {
        seen.push(req.uid);
        if (req.uid === 'first') await held;
        return { allowed: true };
      },
    };
    s = await startAdmissionServer([holding], { maxConcurrentReviews: 1 });
    const turns = (s.server as unknown as { reviews: ReviewTurns }).reviews;
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(cond()).toBe(true);
    };
    // The first review holds the only turn; the second client sends a complete request, which waits, and
    // disconnects (as the API server does at its webhook timeout).
    const first = post(s, PATH, body('first'));
    await until(() => seen.includes('first'));
    const sock = await rawConnect(s);
    sock.on('error', () => undefined);
    const closed = new Promise((r) => sock.once('close', r));
    const text = body('gone');
    sock.write(
      `POST ${PATH} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
    await until(() => turns.waiting === 1);
    sock.destroy();
    await closed;
    await new Promise((r) => setTimeout(r, 50)); // the server sees the close
    release();
    expect((await first).status).toBe(200);
    const after = await post(s, PATH, body('after'));
    expect(after.status).toBe(200);
    expect(seen).toEqual(['first', 'after']);
  });
});

describe('ReviewTurns', () => {
  const tick = () => new Promise((r) => setImmediate(r));

  it('grants one turn per event-loop iteration, in arrival order, at most `limit` held', async () => {
    const turns = new ReviewTurns(2);
    const order: number[] = [];
    const held = [0, 1, 2, 3].map((i) => turns.acquire().then(() => order.push(i)));
    expect(order).toEqual([]); // never in the caller's own macrotask
    await tick();
    await tick();
    expect(order.length).toBeLessThanOrEqual(2);
    await Promise.all(held.slice(0, 2));
    expect(order).toEqual([0, 1]);
    expect(turns.active).toBe(2);
    expect(turns.waiting).toBe(2);
    for (let i = 0; i < 5; i++) await tick();
    expect(order).toEqual([0, 1]); // the limit holds
    turns.release();
    await held[2];
    expect(order).toEqual([0, 1, 2]);
    turns.release();
    turns.release();
    await held[3];
    expect(order).toEqual([0, 1, 2, 3]);
    turns.release();
    expect(turns.active).toBe(0);
  });

  it('hands a turn released within the slice to the next waiter at once, and one released past it at the next iteration', async () => {
    let clock = 0;
    const turns = new ReviewTurns(1, 4, () => clock);
    const order: string[] = [];
    const a = turns.acquire().then(() => order.push('a'));
    void turns.acquire().then(() => order.push('b'));
    const c = turns.acquire().then(() => order.push('c'));
    await a; // the slice starts with this iteration's first turn, at clock 0
    clock = 3;
    turns.release(); // within the slice: b's turn now, in this same macrotask
    await Promise.resolve();
    expect(order).toEqual(['a', 'b']);
    clock = 5;
    turns.release(); // past the slice: c waits for the next iteration
    await Promise.resolve();
    expect(order).toEqual(['a', 'b']);
    expect(turns.waiting).toBe(1);
    await c;
    expect(order).toEqual(['a', 'b', 'c']);
    turns.release();
    expect(turns.active).toBe(0);
  });

  it('lets I/O callbacks run between two turns', async () => {
    const turns = new ReviewTurns(8);
    const events: string[] = [];
    const a = turns.acquire().then(() => {
      events.push('turn a');
      // An I/O-phase callback queued by the first turn's holder runs before the second turn starts.
      setTimeout(() => events.push('timer'), 0);
      busyWait(5);
    });
    const b = turns.acquire().then(() => events.push('turn b'));
    await Promise.all([a, b]);
    await new Promise((r) => setTimeout(r, 5));
    expect(events).toEqual(['turn a', 'timer', 'turn b']);
  });
});

describe('LoopStalls', () => {
  it('counts only how late ticks came, within the window, up to the cap', () => {
    let now = 0;
    const stalls = new LoopStalls(100, 5000, 3000, () => now);
    for (let i = 0; i < 10; i++) {
      now += 100;
      stalls.tick();
    }
    expect(stalls.recent()).toBe(0);
    now += 1100; // a tick 1 s late
    stalls.tick();
    expect(stalls.recent()).toBe(1000);
    now += 600; // a stall in progress counts before its tick comes
    expect(stalls.recent()).toBe(1500);
    now += 5000; // far past the cap
    expect(stalls.recent()).toBe(3000);
    stalls.tick();
    for (let i = 0; i < 60; i++) {
      now += 100;
      stalls.tick();
    }
    expect(stalls.recent()).toBe(0); // out of the window
  });
});

// The e2e harness's TCP fault proxy (test/harness/fault-proxy.ts) in front of a loopback server that
// records what reaches it: each fault does what the e2e tests rely on.
import net, { type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy } from '../harness/fault-proxy.js';

let server: net.Server;
/** Per accepted connection: the bytes received and how it ended. */
const conns: Array<{ data: string; end?: 'fin' | 'reset' }> = [];

beforeAll(async () => {
  server = net.createServer({ allowHalfOpen: true }, (s) => {
    const c: { data: string; end?: 'fin' | 'reset' } = { data: '' };
    conns.push(c);
    s.on('data', (b: Buffer) => {
      c.data += b.toString();
      if (b.toString().includes('ping')) s.write('pong');
    });
    s.on('end', () => {
      c.end ??= 'fin';
      s.end();
    });
    s.on('error', (e: NodeJS.ErrnoException) => (c.end = e.code === 'ECONNRESET' ? 'reset' : c.end));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const target = () => `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !pred(); i++) await sleep(10);
  if (!pred()) throw new Error(`timed out waiting for ${what}`);
}

async function dial(proxy: FaultProxy): Promise<{ socket: Socket; got: () => string; error: () => string | undefined }> {
  const socket = net.connect({ host: '127.0.0.1', port: proxy.port });
  let got = '';
  let error: string | undefined;
  socket.on('data', (b: Buffer) => (got += b.toString()));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  return { socket, got: () => got, error: () => error };
}

describe('fault proxy', () => {
  it('refuses a target off loopback', async () => {
    await expect(FaultProxy.start('https://10.0.0.1:6443')).rejects.toThrow(/not a loopback address/);
  });

  it('passes bytes both ways', async () => {
    const proxy = await FaultProxy.start(target());
    const c = await dial(proxy);
    c.socket.write('ping-1');
    await until(() => c.got() === 'pong', 'the answer');
    c.socket.end();
    await proxy.close();
  });

  it('stall holds both ways and new connections; heal delivers what live connections sent', async () => {
    const proxy = await FaultProxy.start(target());
    const open = await dial(proxy);
    open.socket.write('ping-a');
    await until(() => open.got() === 'pong', 'the first answer');
    const before = conns.length;
    proxy.stall();
    open.socket.write('ping-b');
    const fresh = await dial(proxy);
    fresh.socket.write('ping-c');
    await sleep(200);
    expect(conns.length).toBe(before);
    expect(conns.at(-1)!.data).toBe('ping-a');
    expect(open.got()).toBe('pong');
    proxy.heal();
    await until(() => open.got() === 'pongpong' && fresh.got() === 'pong', 'both answers after the heal');
    expect(conns.at(-2)!.data).toBe('ping-aping-b');
    expect(conns.at(-1)!.data).toBe('ping-c');
    open.socket.end();
    fresh.socket.end();
    await proxy.close();
  });

  it('a client that resets during a stall loses what it sent and the server is reset; one that closes still delivers', async () => {
    const proxy = await FaultProxy.start(target());
    const resetting = await dial(proxy);
    const closing = await dial(proxy);
    resetting.socket.write('x');
    closing.socket.write('y');
    await until(() => conns.filter((c) => c.data === 'x' || c.data === 'y').length === 2, 'both connections at the server');
    const [rx, cy] = [conns.find((c) => c.data === 'x')!, conns.find((c) => c.data === 'y')!];
    proxy.stall();
    resetting.socket.write('never');
    closing.socket.write('late');
    await sleep(50);
    resetting.socket.resetAndDestroy();
    closing.socket.end();
    await until(() => proxy.stats.resetWhileHeld === 1, 'the reset seen by the proxy');
    proxy.heal();
    await until(() => rx.end === 'reset' && cy.end === 'fin', 'the server to see the reset and the FIN');
    expect(rx.data).toBe('x');
    expect(cy.data).toBe('ylate');
    expect(proxy.stats.droppedClientBytes).toBe('never'.length);
    await proxy.close();
  });

  it('reset resets open connections both ways', async () => {
    const proxy = await FaultProxy.start(target());
    const c = await dial(proxy);
    c.socket.write('r');
    await until(() => conns.at(-1)?.data === 'r', 'the bytes at the server');
    const srv = conns.at(-1)!;
    proxy.reset();
    await until(() => c.error() === 'ECONNRESET' && srv.end === 'reset', 'both sides reset');
    await proxy.close();
  });

  it('silenceExisting leaves open connections half-open and lets new ones pass', async () => {
    const proxy = await FaultProxy.start(target());
    const old = await dial(proxy);
    old.socket.write('ping-old');
    await until(() => old.got() === 'pong', 'the answer before');
    proxy.silenceExisting();
    old.socket.write('ping-lost');
    const fresh = await dial(proxy);
    fresh.socket.write('ping-new');
    await until(() => fresh.got() === 'pong', 'the new connection answered');
    await sleep(100);
    expect(old.got()).toBe('pong');
    expect(old.socket.destroyed).toBe(false);
    expect(conns.some((c) => c.data.includes('ping-lost'))).toBe(false);
    old.socket.destroy();
    fresh.socket.end();
    await proxy.close();
  });
});

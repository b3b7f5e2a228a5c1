// The node harness's bandwidth-limited proxy (test/cri-harness/throttle-proxy.ts) in front of a loopback server:
// every byte arrives in order, a transfer takes at least as long as the rate allows (a lower bound only, which a
// loaded machine cannot break), and it refuses what it cannot serve.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThrottleProxy } from '../cri-harness/throttle-proxy.js';

const PAYLOAD = randomBytes(256 * 1024);
let server: net.Server;
let received: Buffer = Buffer.alloc(0);

beforeAll(async () => {
  // Answers any request with the payload, and records what the client sent.
  server = net.createServer((s) => {
    s.once('data', (b: Buffer) => {
      received = b;
      s.end(PAYLOAD);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

function fetchThrough(proxy: ThrottleProxy): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect({ host: '127.0.0.1', port: proxy.port }, () => s.write('GET'));
    s.on('data', (b: Buffer) => chunks.push(b));
    s.on('end', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
  });
}

describe('ThrottleProxy', () => {
  it('passes every byte both ways, in order, no faster than the rate', async () => {
    const rate = 1024 * 1024;
    const proxy = await ThrottleProxy.start(`127.0.0.1:${(server.address() as net.AddressInfo).port}`, rate);
    try {
      const started = performance.now();
      const body = await fetchThrough(proxy);
      const ms = performance.now() - started;
      expect(received.toString()).toBe('GET');
      expect(body.equals(PAYLOAD)).toBe(true);
      expect(proxy.stats).toEqual({ connections: 1, bytesToClient: PAYLOAD.length });
      // The last chunk's pause comes after its delivery, so the bound is the payload less one chunk (64 KiB at most).
      expect(ms).toBeGreaterThanOrEqual(((PAYLOAD.length - 64 * 1024) / rate) * 1000);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a target off loopback and a rate that is not positive', async () => {
    await expect(ThrottleProxy.start('10.0.0.1:5000', 1000)).rejects.toThrow(/not a loopback host:port/);
    await expect(ThrottleProxy.start('127.0.0.1:5000', 0)).rejects.toThrow(/rate 0 is not positive/);
    await expect(ThrottleProxy.start('127.0.0.1:5000', Number.NaN)).rejects.toThrow(/not positive/);
  });
});

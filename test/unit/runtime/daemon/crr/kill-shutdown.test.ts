import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { CriClient } from '../../../../../src/runtime/cri/client.js';
import { killContainer } from '../../../../../src/runtime/daemon/crr/kill.js';

/** A CRI stand-in recording the calls; the container exits when `exitOn` says so. */
function cri(exitOn: { exec?: boolean; exitCode?: number } = {}) {
  const calls: string[] = [];
  let exited = false;
  const client = {
    execSync: async (_id: string, cmd: string[]) => {
      calls.push(`exec ${cmd.join(' ')}`);
      if (exitOn.exec) exited = true;
      return { exitCode: exitOn.exitCode ?? 0, stdout: Buffer.alloc(0), stderr: Buffer.from('refused') };
    },
    containerStatus: async () => ({ state: exited ? 'CONTAINER_EXITED' : 'CONTAINER_RUNNING' }),
    stopContainer: async (_id: string, t: number) => {
      calls.push(`stop ${t}`);
      exited = true;
    },
  };
  return { client: client as unknown as CriClient, calls, exit: () => (exited = true) };
}

const req = { containerId: 'c1', podContainer: { name: 'istio-proxy' }, gracePeriodSeconds: 2 };

describe('killContainer with a declared clean shutdown', () => {
  it('exec shutdown that stops the container: no SIGTERM', async () => {
    const c = cri({ exec: true });
    const out = await killContainer(c.client, {
      ...req,
      shutdown: { exec: { command: ['pilot-agent', 'request', 'POST', 'quitquitquit'] } },
    });
    expect(out.via).toBe('shutdown');
    expect(c.calls).toEqual(['exec pilot-agent request POST quitquitquit']);
  });

  it('exec shutdown that fails and leaves the container running: SIGTERM through StopContainer, with the reason', async () => {
    const c = cri({ exitCode: 7 });
    const out = await killContainer(c.client, { ...req, gracePeriodSeconds: 1, shutdown: { exec: { command: ['quit'] } } });
    expect(out.via).toBe('stop');
    expect(out.shutdownError).toMatch(/still running 1 s after its shutdown \(shutdown command exited 7: refused\)/);
    expect(c.calls).toEqual(['exec quit', 'stop 2']);
  });

  it('a shutdown whose reply is broken still counts when the container exits (it often exits before replying)', async () => {
    const c = cri({ exec: true, exitCode: 137 });
    const out = await killContainer(c.client, { ...req, shutdown: { exec: { command: ['quit'] } } });
    expect(out.via).toBe('shutdown');
    expect(c.calls).toEqual(['exec quit']);
  });

  it('an exec the runtime cannot run: SIGTERM at once', async () => {
    const c = cri();
    (c.client as unknown as { execSync: () => Promise<never> }).execSync = async () => {
      throw new Error('executable file not found');
    };
    const started = Date.now();
    const out = await killContainer(c.client, { ...req, shutdown: { exec: { command: ['quit'] } } });
    expect(out.shutdownError).toMatch(/shutdown command not run: executable file not found/);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(c.calls).toEqual(['stop 2']);
  });

  it('a shutdown the container ignores: SIGTERM after the bounded wait (never more than the grace period)', async () => {
    const c = cri();
    const started = Date.now();
    const out = await killContainer(c.client, { ...req, gracePeriodSeconds: 1, shutdown: { exec: { command: ['quit'] } } });
    expect(out.via).toBe('stop');
    expect(out.shutdownError).toMatch(/still running 1 s after its shutdown/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(c.calls.at(-1)).toMatch(/^stop /);
  });

  it('httpPost goes to the pod IP with POST; the container exiting after it means no SIGTERM', async () => {
    const c = cri();
    const seen: string[] = [];
    const server = createServer((rq, rs) => {
      seen.push(`${rq.method} ${rq.url}`);
      c.exit();
      rs.end('bye');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const out = await killContainer(c.client, { ...req, podIP: '127.0.0.1', shutdown: { httpPost: { port, path: '/quitquitquit' } } });
      expect(out.via).toBe('shutdown');
      expect(seen).toEqual(['POST /quitquitquit']);
      expect(c.calls).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('httpPost whose reply is not valid HTTP (the server exits while answering): counts when the container exits', async () => {
    const c = cri();
    const server = createNetServer((sock) => {
      c.exit();
      sock.end('HTTP/1.1 200 OK\nbad header line\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const out = await killContainer(c.client, { ...req, podIP: '127.0.0.1', shutdown: { httpPost: { port, path: '/quit' } } });
      expect(out.via).toBe('shutdown');
      expect(c.calls).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('httpPost to a port nothing listens on: tried again within the wait, then SIGTERM', async () => {
    const c = cri();
    const server = createNetServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    server.close();
    const started = Date.now();
    const out = await killContainer(c.client, {
      ...req,
      gracePeriodSeconds: 1,
      podIP: '127.0.0.1',
      shutdown: { httpPost: { port, path: '/quit' } },
    });
    expect(out.shutdownError).toMatch(/not delivered: ECONNREFUSED/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(c.calls).toEqual(['stop 2']);
  });

  it('httpPost to an endpoint that starts listening a moment later (a sidecar just started): it is reached, no SIGTERM', async () => {
    const c = cri();
    const probe = createNetServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const seen: string[] = [];
    const server = createServer((rq, rs) => {
      seen.push(`${rq.method} ${rq.url}`);
      c.exit();
      rs.end('bye');
    });
    setTimeout(() => server.listen(port, '127.0.0.1'), 500);
    try {
      const out = await killContainer(c.client, { ...req, podIP: '127.0.0.1', shutdown: { httpPost: { port, path: '/quit' } } });
      expect(out.via).toBe('shutdown');
      expect(seen).toEqual(['POST /quit']);
      expect(c.calls).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('httpPost refused and the container exits by itself meanwhile: no more attempts, the usual stop of an exited container', async () => {
    const c = cri();
    const server = createNetServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    server.close();
    setTimeout(() => c.exit(), 300);
    const started = Date.now();
    const out = await killContainer(c.client, { ...req, podIP: '127.0.0.1', shutdown: { httpPost: { port, path: '/quit' } } });
    expect(out.shutdownError).toMatch(/not delivered: ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('httpPost without a pod IP, or answered with an error: SIGTERM', async () => {
    const c = cri();
    const out = await killContainer(c.client, { ...req, shutdown: { httpPost: { port: 1, path: '/q' } } });
    expect(out.shutdownError).toMatch(/no IP/);
    expect(c.calls).toEqual(['stop 2']);
  });
});

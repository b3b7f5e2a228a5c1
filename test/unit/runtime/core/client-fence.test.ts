// The fenced client (src/runtime/core/client.ts) against a loopback HTTPS server: the fence is asked again at
// the moment a write would be written (after a new connection's handshake), a refused write never reaches
// the server, and aborting the term (or a call's own signal) resets the connection of requests in flight.
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedError, KubeClient } from '../../../../src/runtime/core/client.js';
import type { ApiAccess } from '../../../../src/contracts/index.js';
import { PODS } from '../../../../src/contracts/index.js';
import { createCertificateAuthority } from '../../../harness/pki.js';

let server: Server;
let kc: KubeConfig;
/** Requests the server received (method and path). */
const received: string[] = [];
/** How the server saw each client connection end. */
const endings: Array<'reset' | 'closed'> = [];

beforeAll(async () => {
  const ca = await createCertificateAuthority();
  const serving = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'], usage: 'server' });
  server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    // `hold` requests are never answered: the API server behind a partition.
    if (req.url?.includes('/hold')) return;
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"metadata":{"name":"x"}}'));
  });
  server.on('secureConnection', (s: Socket) => {
    let reset = false;
    s.on('error', (e: NodeJS.ErrnoException) => (reset ||= e.code === 'ECONNRESET'));
    s.on('close', () => endings.push(reset ? 'reset' : 'closed'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
        caData: Buffer.from(ca.cert).toString('base64'),
      },
    ],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' } });

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!pred()) throw new Error(`timed out waiting for ${what}`);
}

describe('fenced client', () => {
  it('asks the fence again when the write would leave: closed by then, nothing is sent', async () => {
    const answers = [true, false];
    const heard: ApiAccess[] = [];
    const client = new KubeClient(kc, { onAccess: (a) => heard.push(a) }).fenced({ mayWrite: () => answers.shift() ?? false });
    const before = received.length;
    await expect(client.create(PODS, pod('late'))).rejects.toBeInstanceOf(FencedError);
    expect(answers).toEqual([]);
    expect(received.length).toBe(before);
    // An access log lists what left the process: the refused write is not in it.
    expect(heard).toEqual([]);
  });

  it('an open fence lets the write through on a new connection and on a kept-alive one', async () => {
    let asked = 0;
    const heard: ApiAccess[] = [];
    const client = new KubeClient(kc, { onAccess: (a) => heard.push(a) }).fenced({
      mayWrite: () => {
        asked++;
        return true;
      },
    });
    await client.create(PODS, pod('a'));
    await client.create(PODS, pod('b'));
    expect(asked).toBe(4);
    expect(heard.map((a) => `${a.verb} ${a.resource}`)).toEqual(['create pods', 'create pods']);
    expect(received.filter((r) => r === 'POST /api/v1/namespaces/ns/pods')).toHaveLength(2);
  });

  it('the end of the term aborts writes and reads in flight and resets their connections', async () => {
    let term = new AbortController();
    const client = new KubeClient(kc).fenced({ mayWrite: () => true, signal: () => term.signal });
    const resets = endings.filter((e) => e === 'reset').length;
    const write = client.create(PODS, pod('hold'), 'hold');
    const read = client.get(PODS, 'x', 'hold');
    await until(() => received.filter((r) => r.includes('/namespaces/hold/')).length === 2, 'both requests at the server');
    term.abort(new Error('leadership lost'));
    await expect(write).rejects.toThrow('leadership lost');
    await expect(read).rejects.toThrow('leadership lost');
    await until(() => endings.filter((e) => e === 'reset').length === resets + 2, 'two connections reset');
    // Requests made with the ended term's signal fail at once, before anything is sent.
    const sent = received.length;
    await expect(client.get(PODS, 'x', 'ns')).rejects.toThrow('leadership lost');
    expect(received.length).toBe(sent);
    term = new AbortController();
    await expect(client.get(PODS, 'x', 'ns')).resolves.toMatchObject({ metadata: { name: 'x' } });
  });

  it('a call’s own maySend (a lease call’s deadline by the clock) is asked as it would leave: false, nothing is sent', async () => {
    const heard: ApiAccess[] = [];
    const client = new KubeClient(kc, { onAccess: (a) => heard.push(a) });
    const answers = [false];
    const before = received.length;
    // On a new connection: asked after the handshake, the moment a frozen-then-thawed process would write.
    await expect(
      client.update(PODS, pod('late') as never, undefined, { freshConnection: true, maySend: () => answers.shift() ?? true }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(answers).toEqual([]);
    expect(received.length).toBe(before);
    expect(heard).toEqual([]);
    await client.update(PODS, pod('in-time') as never, undefined, { freshConnection: true, maySend: () => true });
    expect(received.at(-1)).toBe('PUT /api/v1/namespaces/ns/pods/in-time');
  });

  it('a call’s own signal (a lease call’s deadline) aborts it the same way', async () => {
    const client = new KubeClient(kc);
    const resets = endings.filter((e) => e === 'reset').length;
    const signal = AbortSignal.timeout(200);
    await expect(client.update(PODS, pod('hold') as never, undefined, { signal })).rejects.toThrow();
    await until(() => endings.filter((e) => e === 'reset').length === resets + 1, 'the connection reset');
  });
});

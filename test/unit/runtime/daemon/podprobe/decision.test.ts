import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyThreshold,
  handlerChanged,
  httpOutcome,
  httpProbeRequest,
  nextStatus,
  probeTasks,
  probeTiming,
  truncateMessage,
  type HeldResult,
} from '../../../../../src/runtime/daemon/podprobe/decision.js';
import { runProbe, Slots } from '../../../../../src/runtime/daemon/podprobe/prober.js';
import type { NodePodProbe } from '../../../../../src/api/kinds/podprobemarker.js';
import type { CriClient } from '../../../../../src/runtime/cri/client.js';

const npp = (status?: NodePodProbe['status']): NodePodProbe => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'NodePodProbe',
  metadata: { name: 'n1' },
  spec: {
    podProbes: [
      {
        name: 'p',
        namespace: 'ns',
        uid: 'u1',
        IP: '10.0.0.1',
        probes: [
          { name: 'm#a', containerName: 'main', probe: { exec: { command: ['true'] } } },
          { name: 'm#b', containerName: 'main', probe: { tcpSocket: { port: 80 } } },
        ],
      },
    ],
  },
  ...(status ? { status } : {}),
});

const held = (name: string, state: HeldResult['state'], message = '', probedAt = '2026-01-01T00:00:10Z'): HeldResult => ({
  task: { podNamespace: 'ns', podName: 'p', podUid: 'u1', probeName: name },
  state,
  message,
  probedAt,
});

describe('probe tasks and timing', () => {
  it('one task per pod probe, keyed by pod uid and probe name', () => {
    expect(probeTasks(npp()).map((t) => [t.key, t.podIP, t.containerName])).toEqual([
      ['u1/m#a', '10.0.0.1', 'main'],
      ['u1/m#b', '10.0.0.1', 'main'],
    ]);
    expect(probeTasks(undefined)).toEqual([]);
  });
  it.each([
    [{}, { periodMs: 1000, timeoutMs: 1000, initialDelayMs: 1000, success: 1, failure: 1 }],
    [
      { periodSeconds: 5, timeoutSeconds: 2, initialDelaySeconds: 3, successThreshold: 2, failureThreshold: 3 },
      { periodMs: 5000, timeoutMs: 2000, initialDelayMs: 3000, success: 2, failure: 3 },
    ],
    [
      { periodSeconds: 0, failureThreshold: -1 },
      { periodMs: 1000, timeoutMs: 1000, initialDelayMs: 1000, success: 1, failure: 1 },
    ],
  ])('timing of %j (floors of 1 as upstream)', (p, want) => {
    expect(probeTiming(p)).toEqual(want);
  });
  it('a changed handler restarts the count, a changed period does not', () => {
    expect(handlerChanged({ exec: { command: ['a'] } }, { exec: { command: ['b'] } })).toBe(true);
    expect(handlerChanged({ exec: { command: ['a'] }, periodSeconds: 1 }, { exec: { command: ['a'] }, periodSeconds: 9 })).toBe(false);
  });
});

describe('applyThreshold', () => {
  const t = { success: 2, failure: 3 };
  it('reports only once a run of equal outcomes reaches its threshold', () => {
    let run = { run: 0 } as Parameters<typeof applyThreshold>[0];
    const reports: (string | undefined)[] = [];
    for (const o of ['Failed', 'Failed', 'Failed', 'Succeeded', 'Succeeded', 'Failed', 'Succeeded'] as const) {
      const r = applyThreshold(run, o, t);
      run = r.run;
      reports.push(r.report);
    }
    expect(reports).toEqual([undefined, undefined, 'Failed', undefined, 'Succeeded', undefined, undefined]);
  });
});

describe('httpProbeRequest', () => {
  it('targets the pod IP on the port, with the default headers', () => {
    const r = httpProbeRequest({ port: 8080, path: '/healthz?x=1' }, '10.0.0.1');
    expect('url' in r && r.url.href).toBe('http://10.0.0.1:8080/healthz?x=1');
    expect('headers' in r && r.headers).toEqual({ 'User-Agent': 'kube-probe', Accept: '*/*' });
  });
  it('keeps given headers and host, brackets an IPv6 address', () => {
    const r = httpProbeRequest(
      { port: 8443, scheme: 'HTTPS', host: 'fd00::1', httpHeaders: [{ name: 'accept', value: 'text/plain' }] },
      '10.0.0.1',
    );
    expect('url' in r && r.url.href).toBe('https://[fd00::1]:8443/');
    expect('headers' in r && r.headers).toEqual({ accept: 'text/plain', 'User-Agent': 'kube-probe' });
  });
  it.each([
    [{ port: 70000 }, '10.0.0.1', 'invalid port number: 70000'],
    [{ port: 'web' }, '10.0.0.1', 'invalid port number: web'],
    [{ port: 80, scheme: 'FTP' }, '10.0.0.1', 'httpGet scheme "FTP" is not HTTP or HTTPS'],
    [{ port: 80 }, '', 'the pod has no IP yet'],
  ])('refuses %j with a clear error', (h, ip, error) => {
    expect(httpProbeRequest(h as never, ip)).toEqual({ error });
  });
  it.each([
    [200, 'Succeeded'],
    [302, 'Succeeded'],
    [404, 'Failed'],
    [500, 'Failed'],
  ])('HTTP %i is %s', (code, want) => expect(httpOutcome(code)).toBe(want));
  it('bounds a message to 1 KiB', () => expect(truncateMessage('x'.repeat(5000))).toHaveLength(1024));
});

describe('nextStatus', () => {
  const now = '2026-01-01T00:01:00Z';
  const nowMs = Date.parse(now);
  it('writes each held result, with its transition time', () => {
    expect(nextStatus(npp(), [held('m#a', 'Succeeded', 'ok')], now, nowMs)).toEqual({
      podProbeStatuses: [
        {
          name: 'p',
          namespace: 'ns',
          uid: 'u1',
          probeStates: [{ name: 'm#a', state: 'Succeeded', lastProbeTime: '2026-01-01T00:00:10Z', lastTransitionTime: now, message: 'ok' }],
        },
      ],
    });
  });
  it('needs no write when nothing changed (a batch of equal results costs nothing)', () => {
    const cur = nextStatus(npp(), [held('m#a', 'Succeeded', 'ok')], now, nowMs)!;
    expect(nextStatus(npp(cur), [held('m#a', 'Succeeded', 'ok', '2026-01-01T00:00:50Z')], now, nowMs)).toBeUndefined();
  });
  it('moves lastTransitionTime only when the state changes; rewrites lastProbeTime after 10 minutes', () => {
    const cur = nextStatus(npp(), [held('m#a', 'Succeeded', 'ok')], '2026-01-01T00:00:10Z', nowMs)!;
    const flipped = nextStatus(npp(cur), [held('m#a', 'Failed', 'boom')], now, nowMs)!;
    expect(flipped.podProbeStatuses![0]!.probeStates![0]).toMatchObject({ state: 'Failed', lastTransitionTime: now, message: 'boom' });
    const later = nextStatus(npp(cur), [held('m#a', 'Succeeded', 'ok', '2026-01-01T00:10:20Z')], now, Date.parse('2026-01-01T00:10:20Z'))!;
    expect(later.podProbeStatuses![0]!.probeStates![0]).toMatchObject({
      lastProbeTime: '2026-01-01T00:10:20Z',
      lastTransitionTime: '2026-01-01T00:00:10Z',
    });
  });
  it('drops states of probes the spec no longer lists, and pods left with none', () => {
    const status = {
      podProbeStatuses: [
        { name: 'p', namespace: 'ns', uid: 'u1', probeStates: [{ name: 'm#gone', state: 'Failed' as const }] },
        { name: 'q', namespace: 'ns', uid: 'u9', probeStates: [{ name: 'm#a', state: 'Failed' as const }] },
      ],
    };
    expect(nextStatus(npp(status), [held('m#zzz', 'Succeeded')], now, nowMs)).toEqual({ podProbeStatuses: [] });
  });
});

describe('Slots', () => {
  it('never runs more than its bound at once', async () => {
    const slots = new Slots(3);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        slots.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 2));
          running--;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(slots.inUse).toBe(0);
  });
});

describe('runProbe against real sockets (http and tcp need no CRI)', () => {
  let server: Server;
  let port = 0;
  let closedPort = 0;
  const noCri = {} as CriClient;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.statusCode = req.url === '/ok' ? 200 : 503;
      res.end(req.url === '/ok' ? 'fine' : 'down');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    const tmp = createTcpServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', r));
    closedPort = (tmp.address() as AddressInfo).port;
    await new Promise<void>((r) => tmp.close(() => r()));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('http: 200 succeeds with the body as message, 503 fails', async () => {
    expect(await runProbe(noCri, { httpGet: { port, path: '/ok' } }, '127.0.0.1', '', 1000)).toEqual({
      state: 'Succeeded',
      message: 'fine',
    });
    expect(await runProbe(noCri, { httpGet: { port, path: '/bad' } }, '127.0.0.1', '', 1000)).toEqual({ state: 'Failed', message: 'down' });
  });
  it('tcp: an open port succeeds, a closed one fails with the reason', async () => {
    expect(await runProbe(noCri, { tcpSocket: { port } }, '127.0.0.1', '', 1000)).toEqual({ state: 'Succeeded', message: '' });
    const r = await runProbe(noCri, { tcpSocket: { port: closedPort } }, '127.0.0.1', '', 1000);
    expect(r.state).toBe('Failed');
    expect(r.message).toMatch(/ECONNREFUSED/);
  });
  it('a probe with no handler fails and says so', async () => {
    expect(await runProbe(noCri, {}, '127.0.0.1', '', 1000)).toEqual({
      state: 'Failed',
      message: 'the probe has no exec, httpGet or tcpSocket handler this runtime runs',
    });
  });
});

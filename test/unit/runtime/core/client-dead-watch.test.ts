// A watch on a half-open connection, through the harness's fault proxy on loopback: a TLS server that answers
// a watch and then holds it, the proxy silencing the connection once the watch is open. The client must give
// the watch up at its deadline (a TimeoutError, even though a silenced TLS socket delivers no stream events
// on abort) and close its idle keep-alive connections, which the same fault silenced.
import { createServer, type Server } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, type ResourceType } from '../../../../src/runtime/core/index.js';
import { createCA, issueServingCert } from '../../../../src/runtime/core/webhook/cert-issuer.js';
import { FaultProxy } from '../../../harness/fault-proxy.js';

const CONFIGMAPS: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };

let server: Server;
let proxy: FaultProxy;
let client: KubeClient;
let ca: string;

beforeAll(async () => {
  const bundle = await createCA(3_600_000);
  ca = bundle.caCert;
  const serving = await issueServingCert(bundle, ['127.0.0.1'], 3_600_000);
  server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    if (req.url?.includes('watch=true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('\n'); // and hold: the end the watch asked for never comes
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"ConfigMap","metadata":{"name":"x"}}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  proxy = await FaultProxy.start(`https://127.0.0.1:${(server.address() as { port: number }).port}`);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: proxy.url, caData: Buffer.from(ca).toString('base64') }],
    users: [{ name: 'u', token: 'test' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  client = new KubeClient(kc, { requestTimeoutMs: 5_000 });
});

afterAll(async () => {
  await proxy?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

describe('a watch on a silenced connection', () => {
  it('ends with a TimeoutError at its deadline, and the next request goes over a fresh connection', async () => {
    // Two keep-alive connections from before the fault: the watch takes one, the other stays idle.
    await Promise.all([client.get(CONFIGMAPS, 'x', 'default'), client.get(CONFIGMAPS, 'x', 'default')]);
    expect(proxy.stats.connections).toBe(2);
    const before = proxy.stats.connections;
    const started = performance.now();
    const result = await new Promise<{ err: unknown; ms: number }>((resolve) => {
      void client.watch(
        CONFIGMAPS,
        { namespace: 'default', timeoutSeconds: 1, allowWatchBookmarks: true },
        () => undefined,
        (err) => resolve({ err, ms: performance.now() - started }),
        { deadlineMs: 1_500, onOpen: () => proxy.silenceExisting() },
      );
    });
    expect((result.err as Error).name).toBe('TimeoutError');
    expect(result.ms).toBeGreaterThanOrEqual(1_400);
    expect(result.ms).toBeLessThan(3_000);
    // Had the silenced idle connection been kept, this would hang for the 5 s request timeout.
    const t = performance.now();
    await client.get(CONFIGMAPS, 'x', 'default');
    expect(performance.now() - t).toBeLessThan(2_000);
    expect(proxy.stats.connections).toBeGreaterThan(before);
  });
});

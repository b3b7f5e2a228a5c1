// Half-open connections on real parts: a `cdk8s-kruise controller` reaches the shared kube-apiserver through
// the harness's TCP fault proxy, which then silences every connection already open (bytes dropped both ways,
// nothing closed: a conntrack flush, a load-balancer or API-server failover) while new ones pass. The
// manager's watches must be noticed dead and replaced well within a minute: a Node created after the silence
// gets its NodeImage within 60 s (it took 298.5 s when only a 5-minute inactivity timer noticed), /readyz
// fails meanwhile and recovers. Traffic stays on loopback.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../src/api/registry.js';
import { LEADER_ELECTION_LEASE } from '../../src/contracts/index.js';
import { adminKubeConfig, createNamespace, createNode, FaultProxy, kubeconfigPath } from '../harness/index.js';
import { Informer, KubeClient, loadKubeConfig, type KubeObject, type ResourceType } from '../../src/runtime/core/index.js';
import { pino } from 'pino';
import { accessCoverage, accessLogs, ControllerProcess, installCrds } from './runtime/support.js';

const NI = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'nodeimages' } as const;
const RUN = Date.now().toString(36);
const nodes: string[] = [];
let core: CoreV1Api;
let custom: CustomObjectsApi;
let proxy: FaultProxy | undefined;
let ctl: ControllerProcess | undefined;
const runtimeNamespaces = new Set<string>();

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  await installCrds(KINDS);
});

afterAll(async () => {
  await ctl?.stop('SIGKILL');
  await proxy?.close();
  for (const name of nodes) {
    await core.deleteNode({ name }).catch(() => undefined);
    await custom.deleteClusterCustomObject({ ...NI, name }).catch(() => undefined);
  }
  const report = accessCoverage(accessLogs, runtimeNamespaces);
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

/** A manager (leader election with client-go's defaults, as installed) whose every connection goes through a fault proxy. */
async function startBehindProxy(runtimeNs: string): Promise<{ ctl: ControllerProcess; proxy: FaultProxy }> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  const cluster = kc.getCurrentCluster()!;
  const p = await FaultProxy.start(cluster.server);
  const proxied = new KubeConfig();
  proxied.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: p.url } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kruise-proxied-')), 'kubeconfig');
  writeFileSync(file, proxied.exportConfig());
  const c = await ControllerProcess.start(file, runtimeNs, [
    '--leader-elect',
    '--webhook-port',
    '0',
    '--feature-gates',
    'ImagePullJobGate=true',
  ]);
  return { ctl: c, proxy: p };
}

async function readyz(port: number): Promise<{ ok: boolean; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
  return { ok: res.status === 200, text: await res.text() };
}

async function nodeImageExists(name: string): Promise<boolean> {
  return custom.getClusterCustomObject({ ...NI, name }).then(
    () => true,
    () => false,
  );
}

/** Polls `cond` every `everyMs` until it holds (bounded by `timeoutMs`); the time it took, or undefined. */
async function timeUntil(cond: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<number | undefined> {
  const start = performance.now();
  for (let i = 0; performance.now() - start < timeoutMs && i < timeoutMs / everyMs + 10; i++) {
    if (await cond()) return performance.now() - start;
    await sleep(everyMs);
  }
  return undefined;
}

describe('dead (half-open) connections to the API server', () => {
  it('are noticed within a minute: the new Node gets its NodeImage, readiness fails meanwhile and recovers', async () => {
    const runtimeNs = await createNamespace('dead-conn');
    runtimeNamespaces.add(runtimeNs);
    ({ ctl, proxy } = await startBehindProxy(runtimeNs));
    const port = ctl.healthPort;

    // Working path first: a Node's NodeImage appears, and the manager is ready.
    const before = `dead-conn-a-${RUN}`;
    nodes.push(before);
    await createNode(before);
    expect(await timeUntil(() => nodeImageExists(before), 30_000), `NodeImage ${before} before the fault`).toBeDefined();
    expect(await timeUntil(async () => (await readyz(port)).ok, 30_000), 'ready before the fault').toBeDefined();

    proxy.silenceExisting();
    const silencedAt = performance.now();
    const after = `dead-conn-b-${RUN}`;
    nodes.push(after);
    await createNode(after);

    // Readiness is sampled all along, until it has been healthy again for a while after the NodeImage appeared.
    const samples: Array<{ at: number; ok: boolean; text: string }> = [];
    let sampling = true;
    const sampler = (async () => {
      for (let i = 0; sampling && i < 2_000; i++) {
        const r = await readyz(port).catch((err: Error) => ({ ok: false, text: `probe failed: ${err.message}` }));
        samples.push({ at: performance.now() - silencedAt, ...r });
        await sleep(200);
      }
    })();
    const appearedMs = await timeUntil(() => nodeImageExists(after), 90_000);
    // Every informer's watch is replaced within its server timeout plus the grace (35 s) of the silence.
    await sleep(Math.max(0, 40_000 - (performance.now() - silencedAt)));
    const healthyAgainMs = await timeUntil(async () => (await readyz(port)).ok, 20_000);
    sampling = false;
    await sampler;

    const unready = samples.filter((s) => !s.ok);
    const figures = {
      nodeImageAfterSilenceMs: appearedMs === undefined ? undefined : Math.round(appearedMs),
      firstUnreadyMs: unready[0] && Math.round(unready[0].at),
      lastUnreadyMs: unready.at(-1) && Math.round(unready.at(-1)!.at),
      unreadySamples: unready.length,
      samples: samples.length,
      deadWatchesLogged: ctl.logs.filter((l) => l.msg === 'watch connection presumed dead; watching again').length,
      leadershipLost: ctl.logs.filter((l) => l.msg === 'lost leadership').length,
      silencedBytes: proxy.stats.silencedBytes,
    };
    console.log(`[dead connections] ${JSON.stringify(figures)}\n${unready[0]?.text ?? ''}`);
    if (appearedMs === undefined || healthyAgainMs === undefined) {
      const warnings = ctl.logs.filter((l) => l.level >= 40).slice(-20);
      console.log(
        `exit ${String(ctl.exitCode)}; last unready: ${unready.at(-1)?.text ?? ''}\n${JSON.stringify(warnings, null, 1)}\n${ctl.stderr.join('').slice(-2000)}`,
      );
    }

    expect(appearedMs, `NodeImage ${after} after the silence`).toBeDefined();
    expect(appearedMs!).toBeLessThan(60_000);
    expect(unready.length, 'readiness failed while watches were dead').toBeGreaterThan(0);
    expect(unready[0]!.text).toContain('informers-watching failed');
    expect(unready[0]!.at).toBeLessThan(appearedMs! + 15_000);
    expect(healthyAgainMs, 'readiness recovers once the watches are replaced').toBeDefined();
    expect(figures.deadWatchesLogged).toBeGreaterThan(0);
  });
});

describe('the leader on silenced connections', () => {
  it('renews its Lease on fresh connections: it never loses leadership, the renewTime keeps moving', async () => {
    await ctl?.stop('SIGKILL');
    await proxy?.close();
    const runtimeNs = await createNamespace('dead-lease');
    runtimeNamespaces.add(runtimeNs);
    ({ ctl, proxy } = await startBehindProxy(runtimeNs));
    const leases = adminKubeConfig().makeApiClient(CoordinationV1Api);
    const renewTime = async () => {
      const l = await leases.readNamespacedLease({ name: LEADER_ELECTION_LEASE, namespace: runtimeNs }).catch(() => undefined);
      return l?.spec?.renewTime ? new Date(l.spec.renewTime).getTime() : 0;
    };
    const led = await timeUntil(async () => ctl!.logs.some((l) => l.msg === 'became leader'), 30_000);
    expect(led, 'the manager leads before the fault').toBeDefined();
    // Let the manager settle into its keep-alive connections (informers listed, renewals going).
    await sleep(6_000);

    // First the next new connection goes silent from its first byte: once settled, that is a lease call's (the
    // others ride the keep-alive pool), and it hangs. It must be abandoned in time for another attempt.
    const silencedAt = Date.now();
    proxy.silenceNextConnections(1);
    await sleep(10_000);
    // Then silence every connection open at the moment, three times 10 s apart (whatever the renewals last used is
    // caught idle or in flight), then watch two more renew deadlines (client-go's defaults: 15 s / 10 s / 2 s). Each
    // silence is 10 s after the one before: an attempt's 4 s and 6 s more for its retry on a fresh connection to
    // finish, since two consecutive hung calls are a loss the elector is right to take. With 6–7 s, two fresh-clone
    // runs with the tiers side by side on 2 cores lost the leadership once (two calls failed); alone it never did.
    for (let i = 0; i < 3; i++) {
      proxy.silenceExisting();
      await sleep(10_000);
    }
    await sleep(20_000);
    const lastRenew = await renewTime();
    const figures = {
      leadershipLost: ctl.logs.filter((l) => l.msg === 'lost leadership').length,
      leaseCallsFailed: ctl.logs.filter((l) => l.msg === 'leader election: lease call failed').length,
      lastRenewAfterFirstSilenceMs: lastRenew - silencedAt,
      silencedBytes: proxy.stats.silencedBytes,
    };
    console.log(`[dead connections, lease] ${JSON.stringify(figures)}`);
    expect(figures.leadershipLost).toBe(0);
    expect(figures.leaseCallsFailed, 'the lease call on the silent connection was abandoned').toBeGreaterThanOrEqual(1);
    // Renewed within the last renew period or two before the end (60 s after the first silence).
    expect(figures.lastRenewAfterFirstSilenceMs).toBeGreaterThan(54_000);
  });
});

describe('short server-side watch timeouts', () => {
  it('are ended by the API server on time with a bookmark first: the informer resumes, never relists', async () => {
    const CONFIGMAPS: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };
    const ns = await createNamespace('short-watch');
    const informer = new Informer<KubeObject>(new KubeClient(loadKubeConfig(kubeconfigPath())), CONFIGMAPS, {
      namespace: ns,
      logger: pino({ level: 'silent' }),
      // The production timing scaled down (25–30 s → 3–4 s); the server-side behaviour is the same.
      liveness: { minTimeoutSeconds: 3, maxTimeoutSeconds: 4, unreadyAfterMs: 1_000, abortAfterMs: 2_000 },
    });
    informer.start();
    try {
      await informer.waitForSync();
      const listed = BigInt(informer.lastSyncResourceVersion);
      // Writes elsewhere move the cluster's resourceVersion; nothing happens in the watched namespace, so only
      // bookmarks can bring the informer's version along.
      const elsewhere = await createNamespace('short-watch-other');
      const writer = new KubeClient(loadKubeConfig(kubeconfigPath()));
      for (let i = 0; i < 13; i++) {
        await writer.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `tick-${i}`, namespace: elsewhere } });
        await sleep(1_000);
      }
      expect(BigInt(informer.lastSyncResourceVersion)).toBeGreaterThan(listed);
      expect(informer.stats.watches).toBeGreaterThanOrEqual(3);
      expect(informer.stats.deadWatches).toBe(0);
      expect(informer.stats.watchErrors).toBe(0);
      expect(informer.stats.lists).toBe(1);
      expect(informer.watchProblem()).toBeUndefined();
    } finally {
      informer.stop();
    }
  });
});

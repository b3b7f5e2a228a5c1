// ContainerRecreateRequest execution on a real containerd: the daemon finds containers by the
// kubelet's CRI labels, runs preStop, stops them through CRI, tracks the kubelet's restart and
// completes the CRR. The test plays the kubelet (CRI + pods/status) and the CRR webhook (labels and
// statusContext), which other parts of the runtime own.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { CONTAINER_RECREATE_REQUESTS, PODS, isNotFound, type KubeObject, type Pod } from '../../src/runtime/core/index.js';
import type { Daemon } from '../../src/runtime/daemon/daemon.js';
import { startCriEnvironment, waitFor, type CriEnvironment } from '../cri-harness/index.js';
import { createNamespace } from '../harness/index.js';
import { FakeKubelet, adminClient, installCrds, startDaemon } from './daemon-support.js';

const NODE = `node-crr-${randomBytes(2).toString('hex')}`;
let env: CriEnvironment;
let daemon: Daemon;
let ns: string;
const kubelets: FakeKubelet[] = [];

beforeAll(async () => {
  env = await startCriEnvironment();
  await installCrds();
  ns = await createNamespace('daemon-crr');
  daemon = await startDaemon(NODE, env.containerd.socket);
});

afterAll(async () => {
  for (const k of kubelets) await k.stop().catch(() => undefined);
  await daemon?.stop();
  await env?.stop();
});

/** A container by name, or with the pod-level fields a test needs (e.g. its own lifecycle.preStop). */
type PodContainerSpec = string | { name: string; lifecycle?: unknown; ports?: unknown };

async function runPod(
  name: string,
  containers: PodContainerSpec[],
  extra: Partial<V1Pod['spec']> = {},
  hostDir?: string,
): Promise<FakeKubelet> {
  const client = adminClient();
  const pod = (await client.create(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Always',
      containers: containers.map((c) => ({
        ...(typeof c === 'string' ? { name: c } : c),
        image: env.images.busybox,
        ...(hostDir ? { volumeMounts: [{ name: 'shared', mountPath: '/shared' }] } : {}),
      })),
      ...(hostDir ? { volumes: [{ name: 'shared', hostPath: { path: hostDir } }] } : {}),
      ...extra,
    },
  } as KubeObject)) as unknown as V1Pod;
  const k = await FakeKubelet.start(env.cri, pod, join(env.dir, 'logs'), 200, hostDir ? { shared: hostDir } : {});
  kubelets.push(k);
  return k;
}

/** What the CRR webhook adds: node/pod labels, active, and each container's statusContext. */
async function createCrr(
  k: FakeKubelet,
  name: string,
  containers: Array<{ name: string; preStop?: unknown }>,
  extra: Record<string, unknown> = {},
  strategy: Record<string, unknown> = {},
): Promise<KubeObject> {
  const pod = await adminClient().get<Pod>(PODS, k.pod.metadata!.name!, ns);
  const statuses = new Map((pod.status?.containerStatuses ?? []).map((s) => [s.name, s]));
  return adminClient().create(CONTAINER_RECREATE_REQUESTS, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: {
      name,
      namespace: ns,
      labels: {
        'crr.apps.kruise.io/node-name': NODE,
        'crr.apps.kruise.io/pod-uid': pod.metadata.uid!,
        'crr.apps.kruise.io/pod-name': pod.metadata.name!,
        'crr.apps.kruise.io/active': 'true',
      },
    },
    spec: {
      podName: pod.metadata.name,
      containers: containers.map((c) => {
        const st = statuses.get(c.name);
        return { ...c, ...(st ? { statusContext: { containerID: st.containerID, restartCount: st.restartCount ?? 0 } } : {}) };
      }),
      strategy: { terminationGracePeriodSeconds: 5, ...strategy },
      ...extra,
    },
  });
}

interface CrrStatus {
  phase?: string;
  message?: string;
  completionTime?: string;
  containerRecreateStates?: Array<{ name: string; phase: string; isKilled?: boolean; message?: string }>;
}
type Crr = KubeObject & { status?: CrrStatus };

async function getCrr(name: string): Promise<Crr> {
  return adminClient().get<Crr>(CONTAINER_RECREATE_REQUESTS, name, ns);
}

async function waitCompleted(name: string, timeoutMs = 60_000): Promise<Crr> {
  let crr: Crr | undefined;
  await waitFor(
    `CRR ${name} Completed`,
    async () => {
      crr = await getCrr(name);
      return crr.status?.phase === 'Completed';
    },
    timeoutMs,
    200,
  );
  return crr!;
}

describe('daemon executes ContainerRecreateRequests through CRI', () => {
  it('stops the named container for real, the kubelet restarts it, and the CRR completes', async () => {
    const k = await runPod('web', ['main', 'side']);
    const oldSide = k.cri.containerIds.get('side')!;
    const oldMain = k.cri.containerIds.get('main')!;
    await createCrr(k, 'recreate-side', [{ name: 'side' }]);

    const crr = await waitCompleted('recreate-side');
    expect(crr.status).toMatchObject({ phase: 'Completed', message: '' });
    expect(crr.status?.completionTime).toBeTruthy();
    expect(crr.status?.containerRecreateStates).toEqual([{ name: 'side', phase: 'Succeeded', isKilled: true }]);
    // The daemon drops the active label in a second write after the status (a status write cannot change
    // labels), so wait for it rather than expect it in the same read as the phase.
    let labels: Record<string, string> | undefined;
    await waitFor(
      'active label removed from the completed CRR',
      async () => {
        labels = (await getCrr('recreate-side')).metadata.labels;
        return labels?.['crr.apps.kruise.io/active'] === undefined;
      },
      10_000,
      100,
    );
    expect(labels?.['crr.apps.kruise.io/active']).toBeUndefined();

    // CRI: the old sidecar instance exited (stopped by SIGTERM, trapped -> exit 0); main untouched.
    const old = await env.cri.containerStatus(oldSide);
    expect(old.state).toBe('CONTAINER_EXITED');
    expect(old.exitCode).toBe(0);
    expect(k.cri.containerIds.get('side')).not.toBe(oldSide);
    expect((await env.cri.containerStatus(k.cri.containerIds.get('side')!)).state).toBe('CONTAINER_RUNNING');
    expect(k.cri.containerIds.get('main')).toBe(oldMain);
    expect((await env.cri.containerStatus(oldMain)).state).toBe('CONTAINER_RUNNING');
    expect(k.errors).toEqual([]);
  });

  it('runs the preStop exec hook inside the container before stopping it', async () => {
    const hostDir = await mkdtemp(join(env.dir, 'shared-'));
    const preStop = { exec: { command: ['/bin/sh', '-c', 'cat /etc/passwd > /shared/prestop-marker'] } };
    const k = await runPod('hooked', [{ name: 'app', lifecycle: { preStop } }], {}, hostDir);
    const oldApp = k.cri.containerIds.get('app')!;
    // The hook sees the container's own environment and file system (the hostPath volume).
    await createCrr(k, 'with-prestop', [{ name: 'app', preStop }]);
    await waitCompleted('with-prestop');
    expect((await env.cri.containerStatus(oldApp)).state).toBe('CONTAINER_EXITED');
    // Only the test image's rootfs has this passwd: the hook ran inside the (still running) container.
    expect(await readFile(join(hostDir, 'prestop-marker'), 'utf8')).toBe('root:x:0:0:root:/:/bin/sh\n');
  });

  it('runs an httpGet preStop hook (with headers) before stopping', async () => {
    const hits: Array<{ path: string; header: string | undefined; at: number }> = [];
    const server = createServer((req, res) => {
      hits.push({ path: req.url ?? '', header: req.headers['x-drain'] as string | undefined, at: Date.now() });
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      // The pod's own hook names the host, headers and path: the daemon sends exactly that.
      const preStop = { httpGet: { host: '127.0.0.1', port, path: 'drain', httpHeaders: [{ name: 'X-Drain', value: 'yes' }] } };
      const k = await runPod('http-hooked', [{ name: 'app', lifecycle: { preStop } }]);
      const oldApp = k.cri.containerIds.get('app')!;
      await createCrr(k, 'http-prestop', [{ name: 'app', preStop }]);
      await waitCompleted('http-prestop');
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({ path: '/drain', header: 'yes' });
      const st = await env.cri.containerStatus(oldApp);
      expect(st.state).toBe('CONTAINER_EXITED');
      expect(Number(BigInt(st.finishedAt) / 1_000_000n)).toBeGreaterThanOrEqual(hits[0]!.at - 5);
    } finally {
      server.close();
    }
  });

  it('hostile: never runs a preStop the pod does not declare (exec or httpGet smuggled into the CRR)', async () => {
    // The webhook refuses these fields; this is the daemon's own defence for CRRs that bypassed it.
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const hostDir = await mkdtemp(join(env.dir, 'shared-'));
      const k = await runPod('no-hook', ['app', 'side'], {}, hostDir);
      const oldApp = k.cri.containerIds.get('app')!;
      const oldSide = k.cri.containerIds.get('side')!;
      await createCrr(k, 'smuggled', [
        { name: 'app', preStop: { exec: { command: ['/bin/sh', '-c', 'echo owned > /shared/foreign-marker'] } } },
        {
          name: 'side',
          preStop: { httpGet: { host: '127.0.0.1', port, path: '/steal', httpHeaders: [{ name: 'Authorization', value: 'x' }] } },
        },
      ]);
      await waitCompleted('smuggled');
      // Both containers were recreated, without the foreign hooks.
      expect((await env.cri.containerStatus(oldApp)).state).toBe('CONTAINER_EXITED');
      expect((await env.cri.containerStatus(oldSide)).state).toBe('CONTAINER_EXITED');
      await expect(readFile(join(hostDir, 'foreign-marker'), 'utf8')).rejects.toThrow(/ENOENT/);
      expect(hits).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('unreadyGracePeriodSeconds: takes the pod out of service (KruisePodReady=False), waits, kills, then gives readiness back', async () => {
    const k = await runPod('unready', ['app'], { readinessGates: [{ conditionType: 'KruisePodReady' }] });
    const oldApp = k.cri.containerIds.get('app')!;
    await createCrr(k, 'graceful', [{ name: 'app' }], {}, { unreadyGracePeriodSeconds: 2 });
    const kruisePodReady = async () =>
      (await adminClient().get<Pod>(PODS, 'unready', ns)).status?.conditions?.find((c) => c.type === 'KruisePodReady');
    const condition = async () => (await kruisePodReady())?.status;
    await waitFor('pod made not-ready for the CRR', async () => (await condition()) === 'False', 20_000, 50);
    // Upstream's message: the JSON list of the reasons the pod is held, this CRR's among them.
    expect((await kruisePodReady())?.message).toBe(JSON.stringify([{ userAgent: 'ContainerRecreateRequest', key: `${ns}/graceful` }]));
    // Out of service first, still running: the kill waits for the grace period.
    expect((await env.cri.containerStatus(oldApp)).state).toBe('CONTAINER_RUNNING');
    const crr = await waitCompleted('graceful');
    const acquired = Date.parse(crr.metadata.annotations!['crr.apps.kruise.io/unready-acquired']!);
    const finishedMs = Number(BigInt((await env.cri.containerStatus(oldApp)).finishedAt) / 1_000_000n);
    expect(finishedMs - acquired).toBeGreaterThanOrEqual(2000);
    expect(crr.status?.containerRecreateStates).toEqual([{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    await waitFor('readiness given back after the CRR', async () => (await condition()) === 'True', 20_000, 100);
    expect((await kruisePodReady())?.message).toBe('[]');
  });

  it('orderedRecreate recreates containers one after the other; both succeed', async () => {
    const k = await runPod('ordered', ['a', 'b']);
    const oldA = k.cri.containerIds.get('a')!;
    const oldB = k.cri.containerIds.get('b')!;
    await createCrr(k, 'ordered', [{ name: 'a' }, { name: 'b' }], {}, { orderedRecreate: true });
    const crr = await waitCompleted('ordered');
    expect(crr.status?.containerRecreateStates).toEqual([
      { name: 'a', phase: 'Succeeded', isKilled: true },
      { name: 'b', phase: 'Succeeded', isKilled: true },
    ]);
    const a = await env.cri.containerStatus(oldA);
    const b = await env.cri.containerStatus(oldB);
    // b is only stopped once a's new instance is up, so it finished strictly later.
    expect(BigInt(b.finishedAt)).toBeGreaterThan(BigInt(a.finishedAt));
  });

  it('handles one CRR per pod at a time: the second waits Pending, then runs', async () => {
    const k = await runPod('queued', ['app']);
    await createCrr(k, 'first', [{ name: 'app' }], {}, { minStartedSeconds: 2 });
    await createCrr(k, 'second', [{ name: 'app' }], {}, { forceRecreate: true });
    await waitFor('second CRR Pending while first runs', async () => (await getCrr('second')).status?.phase === 'Pending', 20_000, 100);
    expect((await getCrr('first')).status?.phase).toBe('Recreating');
    await waitCompleted('first');
    const second = await waitCompleted('second');
    expect(second.status?.containerRecreateStates).toEqual([{ name: 'app', phase: 'Succeeded', isKilled: true }]);
  });

  it('activeDeadlineSeconds ends a CRR that cannot progress (container not on the node)', async () => {
    const k = await runPod('deadline', ['app']);
    await createCrr(k, 'ghost', [{ name: 'ghost' }], { activeDeadlineSeconds: 3 });
    const crr = await waitCompleted('ghost', 20_000);
    expect(crr.status?.message).toBe('recreating has exceeded the activeDeadlineSeconds');
    expect(crr.status?.containerRecreateStates).toEqual([
      { name: 'ghost', phase: 'Pending', isKilled: false, message: 'not found container on Node' },
    ]);
  });

  it('activeDeadlineSeconds completes a CRR at its deadline while a long preStop still runs; the stop goes on', async () => {
    // The hook outlasts the deadline by far: upstream completes the CRR at the deadline and the container is still
    // recreated once the hook ends.
    const preStop = { exec: { command: ['/bin/sh', '-c', 'sleep 15'] } };
    const k = await runPod('slow-hook', [{ name: 'app', lifecycle: { preStop } }]);
    const oldApp = k.cri.containerIds.get('app')!;
    await createCrr(k, 'slow-hook', [{ name: 'app' }], { activeDeadlineSeconds: 3 }, { terminationGracePeriodSeconds: 30 });
    const crr = await waitCompleted('slow-hook', 20_000);
    expect(crr.status?.message).toBe('recreating has exceeded the activeDeadlineSeconds');
    // Completed at the deadline, not after the hook: the container it stops still runs (its hook has 12 s to go, so
    // no machine load turns this into a race; an 8 s hook and a 7 s clock on the completion did under load 50).
    expect((await env.cri.containerStatus(oldApp)).state).toBe('CONTAINER_RUNNING');
    // The active label goes in a second write after the status (see the first test), so wait for it.
    await waitFor(
      'active label removed from the CRR completed at its deadline',
      async () => (await getCrr('slow-hook')).metadata.labels?.['crr.apps.kruise.io/active'] === undefined,
      10_000,
      100,
    );
    await waitFor(
      'the stopped container exits once its hook ends',
      async () => (await env.cri.containerStatus(oldApp)).state === 'CONTAINER_EXITED',
      60_000,
      200,
    );
    // As upstream's daemon does, the kill that went on past the completion is recorded in the completed CRR's states.
    await waitFor(
      'the kill recorded in the completed CRR',
      async () => {
        const states = (await getCrr('slow-hook')).status?.containerRecreateStates ?? [];
        return states.length === 1 && states[0]!.name === 'app' && states[0]!.phase === 'Recreating' && states[0]!.isKilled === true;
      },
      10_000,
      100,
    );
    expect((await getCrr('slow-hook')).status?.phase).toBe('Completed');
  });

  it('ttlSecondsAfterFinished deletes the CRR after it completed', async () => {
    const k = await runPod('ttl', ['app']);
    // Long enough that the Completed state is seen before the TTL removes it, on a loaded machine too.
    await createCrr(k, 'short-lived', [{ name: 'app' }], { ttlSecondsAfterFinished: 5 });
    await waitCompleted('short-lived');
    await waitFor(
      'CRR deleted after TTL',
      async () => {
        try {
          await getCrr('short-lived');
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      15_000,
      200,
    );
  });

  it('survives containerd going away and coming back: a CRR made meanwhile completes', async () => {
    const k = await runPod('restart', ['app']);
    const oldApp = k.cri.containerIds.get('app')!;
    await env.containerd.stop();
    await waitFor('daemon notices CRI is down', () => !daemon.criUp, 10_000, 50);
    const ready = await fetch(`http://127.0.0.1:${daemon.ports.health}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain('cri failed');
    const metrics = await (await fetch(`http://127.0.0.1:${daemon.ports.health}/metrics`)).text();
    expect(metrics).toMatch(/^kruise_daemon_cri_up 0$/m);
    expect(metrics).toMatch(/^controller_runtime_reconcile_total\{controller="daemon-containerrecreaterequest",result="success"\} [1-9]/m);
    await createCrr(k, 'during-outage', [{ name: 'app' }]);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getCrr('during-outage')).status?.phase ?? 'Recreating').not.toBe('Completed');
    await env.containerd.start();
    await waitCompleted('during-outage', 90_000);
    expect((await env.cri.containerStatus(oldApp)).state).toBe('CONTAINER_EXITED');
    expect(daemon.criUp).toBe(true);
    expect((await fetch(`http://127.0.0.1:${daemon.ports.health}/readyz`)).status).toBe(200);
  });
});

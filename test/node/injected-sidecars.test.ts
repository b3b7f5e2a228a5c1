// Sidecars another webhook injects, on a real node with the runtime installed from dist/ and its image. A second,
// independent mutating webhook served by this test (standing in for a mesh injector, called after the runtime's pod
// webhook by name order) adds a long-running `mesh-proxy` to the pods labelled for it. The proxy is a busybox stand-in
// with an HTTP shutdown endpoint (busybox httpd, POST /cgi-bin/quitquitquit on :15020): on that request it logs and
// exits 0; on SIGTERM it logs and exits 143. The Job's author never wrote that container:
// - declared in kruise.cdk8s.io/terminate-sidecars with its HTTP shutdown, the Job completes once `app` is done, and
//   the proxy exited 0 through its endpoint (its log says so), after `app` (CRI exit timestamps);
// - not declared, it keeps the Job running past the test's (short) deadline;
// - with kruise.cdk8s.io/container-exit-priority-patterns on a plain pod, deleting the pod stops `app` before the
//   injected proxy (CRI exit timestamps).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CriClient } from '../../src/runtime/cri/client.js';
import { kubectl, registerWebhook, type RegisteredWebhook } from '../harness/index.js';
import {
  apply,
  batch,
  containerLog,
  core,
  installRuntime,
  jobCondition,
  jobPods,
  namespace,
  node,
  waitFor,
  waitForJobComplete,
} from './support.js';

const INJECT_LABEL = 'mesh.example.io/inject';
const SHUTDOWN = { httpPost: { port: 15020, path: '/cgi-bin/quitquitquit' } };
/** How long the undeclared Job is watched: past the declared Job's completion time many times over. */
const UNDECLARED_DEADLINE_MS = 20_000;

let cri: CriClient;
let injector: RegisteredWebhook;
/** Namespaces the injector acts in. */
const injected = new Set<string>();

/** The stand-in proxy: serves the shutdown endpoint, exits 0 when it is called and 143 on SIGTERM. */
function proxy(): Record<string, unknown> {
  const script = [
    'busybox mkdir -p /tmp/www/cgi-bin',
    `printf '#!/bin/sh\\ntouch /tmp/quit\\necho "Content-Type: text/plain"\\necho\\necho bye\\n' > /tmp/www/cgi-bin/quitquitquit`,
    'busybox chmod +x /tmp/www/cgi-bin/quitquitquit',
    'busybox httpd -p 15020 -h /tmp/www',
    `trap 'echo "proxy: SIGTERM"; exit 143' TERM`,
    'echo "proxy: up"',
    'while [ ! -f /tmp/quit ]; do sleep 1 & wait $!; done',
    'echo "proxy: shutdown endpoint called"',
  ].join('\n');
  return {
    name: 'mesh-proxy',
    image: node().images.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
  };
}

const app = (seconds: number) => ({
  name: 'app',
  image: node().images.busybox,
  imagePullPolicy: 'IfNotPresent',
  // `sleep & wait`: a shell runs its TERM trap only once a foreground command returns.
  command: ['sh', '-c', `trap 'exit 0' TERM; echo "app: working"; sleep ${seconds} & wait $!; echo "app: done"`],
  resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
});

function job(name: string, annotations: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { [INJECT_LABEL]: 'true' }, annotations },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 10, containers: [app(2)] },
      },
    },
  };
}

/** CRI exit time (ns since the epoch) and code of each of the pod's containers. */
async function criExits(pod: V1Pod): Promise<Map<string, { finishedAt: bigint; exitCode: number }>> {
  const out = new Map<string, { finishedAt: bigint; exitCode: number }>();
  for (const s of pod.status?.containerStatuses ?? []) {
    const st = await cri.containerStatus(s.containerID!.replace(/^[a-z]+:\/\//, ''));
    if (st.state === 'CONTAINER_EXITED') out.set(s.name, { finishedAt: BigInt(st.finishedAt), exitCode: st.exitCode });
  }
  return out;
}

/** The daemon's log lines (kubelet pod-log files) that name the namespace, for the report. */
function daemonLog(ns: string): string[] {
  const dirs = readdirSync(node().podLogsDir).filter((d) => d.startsWith('kruise-system_kruise-daemon-'));
  return dirs.flatMap((d) => {
    const dir = path.join(node().podLogsDir, d, 'daemon');
    return readdirSync(dir).flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.includes(ns))
        .map((l) => l.slice(0, 600)),
    );
  });
}

beforeAll(async () => {
  await installRuntime();
  cri = new CriClient(node().containerdSocket);
  injector = await registerWebhook({
    type: 'mutating',
    rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }],
    failurePolicy: 'Ignore',
    handler: (req) => {
      const pod = req.object as V1Pod;
      const wanted = injected.has(req.namespace ?? '') && pod.metadata?.labels?.[INJECT_LABEL] === 'true';
      if (!wanted || pod.spec!.containers.some((c) => c.name === 'mesh-proxy')) return { allowed: true };
      return { allowed: true, patch: [{ op: 'add', path: '/spec/containers/-', value: proxy() }] };
    },
  });
}, 900_000);

afterAll(async () => {
  await injector?.close();
  cri?.close();
});

describe('a sidecar injected by another webhook, on a real node', () => {
  // With ignoreExitCode the manager marks the pod Succeeded before its CRR exists; the daemon still stops the running
  // proxy through its declared shutdown, before the kubelet's own SIGTERM of a finished pod.
  for (const ignoreExitCode of [false, true]) {
    it(`declared with its HTTP shutdown (ignoreExitCode ${ignoreExitCode}): the Job completes, the proxy stopped through its endpoint after app`, async () => {
      const ns = await namespace('injected');
      injected.add(ns);
      const started = Date.now();
      await apply(ns, [
        job('declared', {
          'kruise.cdk8s.io/terminate-sidecars': JSON.stringify([{ name: 'mesh-proxy', ignoreExitCode, shutdown: SHUTDOWN }]),
        }),
      ]);
      await waitForJobComplete(ns, 'declared', 90_000);
      const completeMs = Date.now() - started;
      const [pod] = await jobPods(ns, 'declared');
      expect(pod!.spec!.containers.map((c) => c.name)).toEqual(['app', 'mesh-proxy']);
      // With ignoreExitCode the manager ends the pod while the proxy is being stopped: wait for its exit.
      let exits = new Map<string, { finishedAt: bigint; exitCode: number }>();
      await waitFor('both containers exited (CRI)', async () => (exits = await criExits(pod!)).size === 2, 30_000, 100);
      const appExit = exits.get('app')!;
      const proxyExit = exits.get('mesh-proxy')!;
      const log = containerLog(pod!, 'mesh-proxy').map((l) => l.line);
      console.log(
        `[injected-sidecars] ignoreExitCode ${ignoreExitCode}: Job Complete ${completeMs} ms after apply; proxy exited ` +
          `${Number(proxyExit.finishedAt - appExit.finishedAt) / 1e6} ms after app, code ${proxyExit.exitCode}; proxy log: ${log.join(' | ')}`,
      );
      for (const line of daemonLog(ns)) console.log(`[injected-sidecars] daemon: ${line}`);
      expect(appExit.exitCode).toBe(0);
      expect(proxyExit.exitCode).toBe(0);
      expect(log).toContain('proxy: shutdown endpoint called');
      expect(log).not.toContain('proxy: SIGTERM');
      expect(proxyExit.finishedAt > appExit.finishedAt).toBe(true);
    });
  }

  it('not declared: the injected proxy keeps the Job running past the deadline', async () => {
    const ns = await namespace('injected-undeclared');
    injected.add(ns);
    await apply(ns, [job('undeclared', {})]);
    let pod: V1Pod | undefined;
    await waitFor(
      'app done, proxy running',
      async () => {
        [pod] = await jobPods(ns, 'undeclared');
        const st = (n: string) => pod?.status?.containerStatuses?.find((c) => c.name === n)?.state;
        return st('app')?.terminated !== undefined && st('mesh-proxy')?.running !== undefined;
      },
      60_000,
      250,
    );
    await sleep(UNDECLARED_DEADLINE_MS);
    const j = await batch().readNamespacedJob({ name: 'undeclared', namespace: ns });
    const now = await core().readNamespacedPod({ name: pod!.metadata!.name!, namespace: ns });
    console.log(
      `[injected-sidecars] undeclared: after ${UNDECLARED_DEADLINE_MS} ms the Job is ${jobCondition(j, 'Complete') ? 'Complete' : 'still running'}`,
    );
    expect(jobCondition(j, 'Complete')).toBe(false);
    expect(now.status?.containerStatuses?.find((c) => c.name === 'mesh-proxy')?.state?.running).toBeDefined();
    await kubectl(['delete', 'job', '-n', ns, 'undeclared', '--wait=false']);
  });

  it('exit priority by pattern: deleting the pod stops app before the injected proxy (CRI exit times)', async () => {
    const ns = await namespace('injected-exitprio');
    injected.add(ns);
    await apply(ns, [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'web',
          labels: { [INJECT_LABEL]: 'true' },
          annotations: { 'kruise.cdk8s.io/container-exit-priority-patterns': JSON.stringify([{ name: 'mesh-proxy', priority: 1 }]) },
        },
        spec: { terminationGracePeriodSeconds: 20, containers: [app(3600)] },
      },
    ]);
    let pod: V1Pod | undefined;
    await waitFor(
      'both containers running',
      async () => {
        pod = await core().readNamespacedPod({ name: 'web', namespace: ns });
        return (pod.status?.containerStatuses ?? []).filter((c) => c.state?.running).length === 2;
      },
      60_000,
      250,
    );
    expect(pod!.metadata!.annotations!['kruise.io/container-exit-priority']).toBe('{"mesh-proxy":1}');
    await kubectl(['delete', 'pod', '-n', ns, 'web', '--wait=false']);
    let exits = new Map<string, { finishedAt: bigint; exitCode: number }>();
    await waitFor('both containers exited', async () => (exits = await criExits(pod!)).size === 2, 60_000, 100);
    const gapMs = Number(exits.get('mesh-proxy')!.finishedAt - exits.get('app')!.finishedAt) / 1e6;
    console.log(`[injected-sidecars] exit priority: mesh-proxy exited ${gapMs} ms after app`);
    expect(gapMs).toBeGreaterThan(0);
  });
});

// Container exit priority carried out by the runtime installed from dist/ and its image, on a real kubelet:
// the pod webhook wires the preStop hooks, the kubelet sends them to the host-network daemon, and the daemon
// holds each until the lower levels have exited (CRI). Exit order is read from CRI (ContainerStatus
// finishedAt, nanoseconds) and from a host file the containers append to; the kubelet alone stops them.
import { chmodSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/runtime/cri/client.js';
import { readExitPriorityHook } from '../../src/api/pod-contracts.js';
import { kubectl } from '../harness/index.js';
import { apply, core, installRuntime, jobPods, namespace, node, waitFor, waitForJobComplete } from './support.js';

let cri: CriClient;

beforeAll(async () => {
  await installRuntime();
  cri = new CriClient(node().containerdSocket);
}, 900_000);
afterAll(() => cri?.close());

function eventsDir(): string {
  const dir = mkdtempSync(path.join(node().dir, 'exitprio-'));
  chmodSync(dir, 0o777);
  return dir;
}

/** A container that appends `<name> term` to the events file on SIGTERM and exits `exitAfter` seconds later (or ignores it). */
function container(name: string, opts: { ignoreTerm?: boolean; preStop?: boolean } = {}): Record<string, unknown> {
  // /proc/uptime is the host's (not namespaced): the test compares it with its own reading at the delete.
  // Escaped: the trap's text is double-quoted, so an unescaped $(...) would run once, when the trap is set.
  const stamp = `echo ${name} \\$(cut -d' ' -f1 /proc/uptime) >> /events/times`;
  const onTerm = opts.ignoreTerm
    ? `${stamp}; echo '${name} term (ignored)' >> /events/log`
    : `${stamp}; echo '${name} term' >> /events/log; sleep 1; exit 0`;
  return {
    name,
    image: node().images.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', `trap "${onTerm}" TERM; echo up; while true; do sleep 1 & wait $!; done`],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
    securityContext: { runAsUser: 65534, runAsGroup: 65534 },
    volumeMounts: [{ name: 'events', mountPath: '/events' }],
    ...(opts.preStop
      ? { lifecycle: { preStop: { exec: { command: ['sh', '-c', `echo '${name} prestop' >> /events/log; sleep 1`] } } } }
      : {}),
  };
}

function podSpec(dir: string, containers: Record<string, unknown>[], grace = 30): Record<string, unknown> {
  return {
    terminationGracePeriodSeconds: grace,
    securityContext: { runAsUser: 65534, runAsGroup: 65534 },
    containers,
    volumes: [{ name: 'events', hostPath: { path: dir } }],
  };
}

const PRIORITY = { 'kruise.io/container-exit-priority': '{"log-agent":1,"envoy":2}' };

function deployment(name: string, dir: string, containers: Record<string, unknown>[], grace = 30): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name }, annotations: PRIORITY }, spec: podSpec(dir, containers, grace) },
    },
  };
}

async function runningPod(ns: string, app: string): Promise<V1Pod> {
  let found: V1Pod | undefined;
  await waitFor(
    `pod of ${app} running with every container ready`,
    async () => {
      const pods = (await core().listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items;
      found = pods.find((p) => p.status?.containerStatuses?.length === 3 && p.status.containerStatuses.every((c) => c.ready));
      return found !== undefined;
    },
    90_000,
    200,
  );
  return found!;
}

interface Exit {
  readonly name: string;
  /** ms after the delete call (ns precision from CRI). */
  readonly finishedMs: number;
  readonly exitCode: number;
}

/**
 * Deletes the pod and follows its containers over CRI until all have exited; returns each container's exit
 * time relative to the delete call, and when the pod object was gone.
 */
async function deleteAndFollow(pod: V1Pod, extra: string[] = []): Promise<{ exits: Exit[]; goneMs: number; uptimeAtDeleteMs: number }> {
  const ids = new Map(pod.status!.containerStatuses!.map((c) => [c.name, c.containerID!.replace(/^[a-z]+:\/\//, '')]));
  const uptimeAtDeleteMs = uptimeMs();
  const t0 = Date.now();
  const t0ns = BigInt(t0) * 1_000_000n;
  await kubectl(['delete', 'pod', '-n', pod.metadata!.namespace!, pod.metadata!.name!, '--wait=false', ...extra]);
  const exits = new Map<string, Exit>();
  let goneMs = -1;
  await waitFor(
    'every container exited and the pod gone',
    async () => {
      for (const [name, id] of ids) {
        if (exits.has(name)) continue;
        const st = await cri.containerStatus(id).catch(() => undefined);
        if (st?.state === 'CONTAINER_EXITED')
          exits.set(name, { name, finishedMs: Number(BigInt(st.finishedAt) - t0ns) / 1e6, exitCode: st.exitCode });
      }
      if (goneMs < 0) {
        const gone = await core()
          .readNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace! })
          .then(
            () => false,
            () => true,
          );
        if (gone) goneMs = Date.now() - t0;
      }
      return exits.size === ids.size && goneMs >= 0;
    },
    60_000,
    25,
  );
  return { exits: [...exits.values()].sort((a, b) => a.finishedMs - b.finishedMs), goneMs, uptimeAtDeleteMs };
}

/** When each container got SIGTERM, in ms after the delete call (10-ms resolution of /proc/uptime). */
function termTimes(dir: string, uptimeAtDeleteMs: number): Map<string, number> {
  return new Map(
    readFileSync(path.join(dir, 'times'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([name, up]) => [name!, Number(up) * 1000 - uptimeAtDeleteMs]),
  );
}

const uptimeMs = () => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;

/** The daemon's exit-priority log lines (from the kubelet's pod log files), for the report. */
function daemonLog(): string[] {
  const dirs = readdirSync(node().podLogsDir).filter((d) => d.startsWith('kruise-system_kruise-daemon-'));
  return dirs.flatMap((d) => {
    const dir = path.join(node().podLogsDir, d, 'daemon');
    return readdirSync(dir).flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.includes('exit-priority hook')),
    );
  });
}

function events(dir: string): string[] {
  return readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n');
}

describe('container exit priority on a real node (runtime from dist/ and its image)', () => {
  it('Deployment pod: kubectl delete stops app, then log-agent, then envoy (CRI exit times)', async () => {
    const ns = await namespace('exitprio');
    const dir = eventsDir();
    await apply(ns, [deployment('web', dir, [container('envoy'), container('app'), container('log-agent')])]);
    const pod = await runningPod(ns, 'web');
    // The webhook gave the prioritised containers the daemon hook; the main container keeps none.
    const preStop = (name: string) => pod.spec!.containers.find((c) => c.name === name)!.lifecycle?.preStop;
    expect(readExitPriorityHook(preStop('envoy'))).toMatchObject({ namespace: ns, container: 'envoy' });
    expect(readExitPriorityHook(preStop('log-agent'))).toMatchObject({ namespace: ns, container: 'log-agent' });
    expect(preStop('app')).toBeUndefined();

    const { exits, goneMs, uptimeAtDeleteMs } = await deleteAndFollow(pod);
    const term = termTimes(dir, uptimeAtDeleteMs);
    const at = (name: string) => exits.find((e) => e.name === name)!.finishedMs;
    console.log(
      `[exit-priority] delete → SIGTERM ${[...term].map(([n, t]) => `${n} ${t.toFixed(0)}`).join(', ')} ms; exits ` +
        `${exits.map((e) => `${e.name} ${e.finishedMs.toFixed(0)}`).join(', ')} ms; pod gone ${goneMs} ms; ordering overhead ` +
        `(SIGTERM of a level − exit of the level below): log-agent ${(term.get('log-agent')! - at('app')).toFixed(0)} ms, ` +
        `envoy ${(term.get('envoy')! - at('log-agent')).toFixed(0)} ms`,
    );
    console.log(daemonLog().join('\n'));
    expect(exits.map((e) => e.name)).toEqual(['app', 'log-agent', 'envoy']);
    expect(exits.every((e) => e.exitCode === 0)).toBe(true);
    // Each level got SIGTERM only after the one below exited: each takes 1 s to exit after its SIGTERM.
    expect(exits[1]!.finishedMs - exits[0]!.finishedMs).toBeGreaterThanOrEqual(1000);
    expect(exits[2]!.finishedMs - exits[1]!.finishedMs).toBeGreaterThanOrEqual(1000);
    expect(events(dir)).toEqual(['app term', 'log-agent term', 'envoy term']);
  });

  it("a container's own preStop still runs, after the lower levels exited, and the order holds", async () => {
    const ns = await namespace('exitprio-prestop');
    const dir = eventsDir();
    await apply(ns, [deployment('web', dir, [container('app'), container('log-agent', { preStop: true }), container('envoy')])]);
    const pod = await runningPod(ns, 'web');
    const { exits } = await deleteAndFollow(pod);
    console.log(`[exit-priority] with own preStop: ${exits.map((e) => `${e.name} ${e.finishedMs.toFixed(0)} ms`).join(', ')}`);
    expect(exits.map((e) => e.name)).toEqual(['app', 'log-agent', 'envoy']);
    expect(events(dir)).toEqual(['app term', 'log-agent prestop', 'log-agent term', 'envoy term']);
  });

  it('a grace period too short for the levels (delete --grace-period=4, app ignores SIGTERM): the pod is still gone within it', async () => {
    const ns = await namespace('exitprio-short');
    const dir = eventsDir();
    await apply(ns, [deployment('web', dir, [container('app', { ignoreTerm: true }), container('log-agent'), container('envoy')])]);
    const pod = await runningPod(ns, 'web');
    const { exits, goneMs, uptimeAtDeleteMs } = await deleteAndFollow(pod, ['--grace-period=4']);
    // The kubelet's grace-period clock starts when it begins stopping the pod: the app's (ignored) SIGTERM.
    const kubeletStart = termTimes(dir, uptimeAtDeleteMs).get('app')!;
    console.log(
      `[exit-priority] grace 4 s: kubelet began ${kubeletStart.toFixed(0)} ms after the delete; exits ` +
        `${exits.map((e) => `${e.name} +${(e.finishedMs - kubeletStart).toFixed(0)}`).join(', ')} ms after it; pod gone ${goneMs} ms after the delete`,
    );
    // log-agent's share ends at 4/3 s, envoy's at 2 s (the kubelet's 2-s minimum), app is killed at 4 s.
    expect(exits.map((e) => e.name)).toEqual(['log-agent', 'envoy', 'app']);
    expect(exits.find((e) => e.name === 'app')!.exitCode).toBe(137);
    // Every container is gone within the 4-s grace period of the kubelet's stop (10-ms clock resolution, 500 ms slack for the kubelet's own SIGKILL and exit report; the 2-s minimum the kubelet gives a container after a late hook would exceed it).
    expect(exits.at(-1)!.finishedMs - kubeletStart).toBeLessThan(4_000 + 500);
    expect(events(dir)).toEqual(['app term (ignored)', 'log-agent term', 'envoy term']);
  });

  it('Job whose main exits, with two prioritised sidecars: the terminator stops them in priority order and the Job completes', async () => {
    const ns = await namespace('exitprio-job');
    const dir = eventsDir();
    const sidecar = (name: string) => ({
      ...container(name),
      env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }],
    });
    const main = { ...container('main'), command: ['sh', '-c', 'sleep 2; echo main done >> /events/log'] };
    await apply(ns, [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'job' },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { annotations: PRIORITY },
            // envoy is declared first: the order comes from the priorities, not the spec.
            spec: { ...podSpec(dir, [sidecar('envoy'), main, sidecar('log-agent')]), restartPolicy: 'Never' },
          },
        },
      },
    ]);
    await waitForJobComplete(ns, 'job');
    const [pod] = await jobPods(ns, 'job');
    const finished = (name: string) =>
      Date.parse(pod!.status!.containerStatuses!.find((c) => c.name === name)!.state!.terminated!.finishedAt as unknown as string);
    expect(pod!.status?.phase).toBe('Succeeded');
    expect(events(dir)).toEqual(['main done', 'log-agent term', 'envoy term']);
    expect(finished('log-agent')).toBeLessThan(finished('envoy'));
    const crr = JSON.parse(
      await kubectl([
        'get',
        'containerrecreaterequests.apps.kruise.io',
        '-n',
        ns,
        `sidecar-termination-${pod!.metadata!.uid}`,
        '-o',
        'json',
      ]),
    );
    expect(crr.spec.containers.map((c: { name: string }) => c.name)).toEqual(['log-agent', 'envoy']);
  });

  it('the webhook refuses a pod whose annotation names a container it lacks, with the validate message', async () => {
    const ns = await namespace('exitprio-refuse');
    const bad = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bad', annotations: { 'kruise.io/container-exit-priority': '{"envoi":2}' } },
      spec: podSpec(eventsDir(), [container('app'), container('envoy')]),
    };
    await expect(apply(ns, [bad])).rejects.toThrow(/names container "envoi", which is not in the pod/);
  });
});

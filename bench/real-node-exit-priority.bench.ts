// Container exit priority on a real node (test/harness/real-node.ts), with the runtime installed from its
// image and dist/ like a user would. Three pods shapes, each container exiting 1 s after its SIGTERM:
//   priority  app, log-agent (1), envoy (2) with kruise.io/container-exit-priority: the runtime orders them
//   none      the same pod without the annotation: the kubelet stops all three at once (no ordering)
//   native    log-agent and envoy as native sidecars (Kubernetes >= 1.29 compile target): the kubelet orders them
// Per pod: pod delete -> each container's SIGTERM (the trap touches a host file: its mtime, ns), exit (CRI
// finishedAt) and -> pod gone (a watch in this process). Two overheads per level:
//   gap      = SIGTERM of a level − exit of the level below: the ordering overhead proper, beyond the containers'
//              own exit time (learning the exit + the kubelet's StopContainer + the runtime's kill);
//   exitStep = exit of a level − exit of the level below − 1 s (also counts the shell's own exit work).
// For the priority shape the daemon's log says when it answered each hook: gap = detect (exit below -> answer)
// + stop (answer -> SIGTERM: the daemon's own StopContainer on containerd >= 1.6.20, else the kubelet's).
// Pods are deleted `--concurrency` at a time, the shapes interleaved so all see the same machine load.
// Usage: npm run bench:real-node-exit-priority [-- --pods 20 --concurrency 4 --json]
import { chmodSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../src/runtime/cri/client.js';
import { KubeletLabels } from '../src/runtime/cri/types.js';
import { RealNode } from '../test/harness/real-node.js';
import { installRuntime } from '../test/harness/runtime-install.js';
import { DEFAULT_RUNTIME_NAMESPACE } from '../src/contracts/index.js';
import { loadDuringRun, recordBench } from './record.js';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const PODS = Number(values.pods);
const CONCURRENCY = Number(values.concurrency);

type Shape = 'priority' | 'none' | 'native';
const SHAPES: Shape[] = ['priority', 'none', 'native'];
interface Sample {
  readonly shape: Shape;
  readonly name: string;
  /** ms after the delete call: exit of app, log-agent, envoy. */
  readonly exits: readonly [number, number, number];
  /** ms after the delete call: SIGTERM of app, log-agent, envoy. */
  readonly terms: readonly [number, number, number];
  /** Wall-clock ms of the delete call. */
  readonly t0: number;
  readonly goneMs: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function podBody(shape: Shape, name: string, image: string, dir: string): V1Pod {
  const c = (n: string) => ({
    name: n,
    image,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', `trap "touch /events/${n}; sleep 1; exit 0" TERM; while true; do sleep 1 & wait $!; done`],
    resources: { requests: { cpu: '5m', memory: '8Mi' }, limits: { cpu: '200m', memory: '32Mi' } },
    volumeMounts: [{ name: 'events', mountPath: '/events' }],
  });
  const volumes = [{ name: 'events', hostPath: { path: dir } }];
  if (shape === 'native') {
    // Highest priority first: the kubelet stops native sidecars in reverse declaration order.
    return {
      metadata: { name },
      spec: {
        initContainers: [c('envoy'), c('log-agent')].map((x) => ({ ...x, restartPolicy: 'Always' })),
        containers: [c('app')],
        volumes,
      },
    };
  }
  return {
    metadata: {
      name,
      ...(shape === 'priority' ? { annotations: { 'kruise.io/container-exit-priority': '{"log-agent":1,"envoy":2}' } } : {}),
    },
    spec: { containers: [c('app'), c('log-agent'), c('envoy')], volumes },
  };
}

async function main(): Promise<void> {
  const node = await RealNode.start();
  try {
    const info = node.info();
    const install = await installRuntime(info);
    console.error(`[bench] runtime image ${install.imageMs} ms, rollout ${install.rolloutMs} ms`);
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const cri = new CriClient(info.containerdSocket);
    const ns = 'bench-exit';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    for (
      let i = 0;
      !(await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).then(
        () => true,
        () => false,
      ));
      i++
    ) {
      if (i > 300) throw new Error('no default ServiceAccount');
      await new Promise((r) => setTimeout(r, 100));
    }
    const goneAt = new Map<string, number>();
    const goneWaiters = new Map<string, () => void>();
    const watch = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/pods`,
      {},
      (type: string, pod: V1Pod) => {
        if (type !== 'DELETED') return;
        goneAt.set(pod.metadata!.name!, Date.now());
        goneWaiters.get(pod.metadata!.name!)?.();
      },
      () => undefined,
    );

    async function runOne(shape: Shape, index: number): Promise<Sample> {
      const name = `${shape}-${index}`;
      const dir = mkdtempSync(path.join(info.dir, 'bench-exit-'));
      chmodSync(dir, 0o777);
      await core.createNamespacedPod({ namespace: ns, body: podBody(shape, name, info.images.busybox, dir) });
      let pod: V1Pod;
      for (let i = 0; ; i++) {
        pod = await core.readNamespacedPod({ name, namespace: ns });
        const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
        if (statuses.length === 3 && statuses.every((s) => s.started && s.state?.running)) break;
        if (i > 1200) throw new Error(`${name} not running`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // Let every container reach its trap before the stop.
      await new Promise((r) => setTimeout(r, 500));
      const ids = new Map(
        [...(pod.status!.containerStatuses ?? []), ...(pod.status!.initContainerStatuses ?? [])].map((s) => [
          s.name,
          s.containerID!.replace(/^[a-z]+:\/\//, ''),
        ]),
      );
      const gone = new Promise<void>((resolve) => goneWaiters.set(name, resolve));
      const t0 = Date.now();
      await core.deleteNamespacedPod({ name, namespace: ns });
      // The kubelet removes a deleted pod's containers soon after they stop: read each exit while it is there.
      const finished = new Map<string, number>();
      const deadline = t0 + 120_000;
      while (finished.size < ids.size) {
        if (Date.now() > deadline) throw new Error(`${name}: containers not exited in 120 s`);
        for (const [c, id] of ids) {
          if (finished.has(c)) continue;
          const st = await cri.containerStatus(id).catch(() => undefined);
          if (st?.state === 'CONTAINER_EXITED') finished.set(c, Number(BigInt(st.finishedAt) / 1000n) / 1000 - t0);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      await Promise.race([gone, new Promise((_, reject) => setTimeout(() => reject(new Error(`${name} not gone in 120 s`)), 120_000))]);
      const term = (c: string) => Number(statSync(path.join(dir, c), { bigint: true }).mtimeNs / 1000n) / 1000 - t0;
      return {
        shape,
        name,
        t0,
        exits: [finished.get('app')!, finished.get('log-agent')!, finished.get('envoy')!],
        terms: [term('app'), term('log-agent'), term('envoy')],
        goneMs: goneAt.get(name)! - t0,
      };
    }

    for (const s of SHAPES) await runOne(s, -1); // warm-up, not counted
    const loadBefore = loadavg();
    const queue: Array<[Shape, number]> = [];
    for (let i = 0; i < PODS; i++) for (const s of SHAPES) queue.push([s, i]);
    const samples: Sample[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) samples.push(await runOne(...next));
      }),
    );
    watch.abort();
    const loadAfter = loadavg();

    // When the daemon answered each hook: its log file on this node (CRI names it), line "exit-priority hook released".
    const released = new Map<string, number>();
    let daemonLog = '';
    const daemons = await cri.listContainers({
      labelSelector: { [KubeletLabels.podNamespace]: DEFAULT_RUNTIME_NAMESPACE, [KubeletLabels.containerName]: 'daemon' },
    });
    for (const d of daemons) {
      const logPath = ((await cri.containerStatus(d.id)) as { logPath?: string }).logPath;
      // CRI log lines: "<time> <stream> <tag> <message>".
      if (logPath) daemonLog += readFileSync(logPath, 'utf8').replace(/^\S+ \S+ \S+ /gm, '');
    }
    cri.close();
    // When the daemon sent its own StopContainer for a released container (containerd), same keys.
    const stopSent = new Map<string, number>();
    for (const line of daemonLog.split('\n')) {
      if (line.includes('released container stopped by the daemon')) {
        try {
          const j = JSON.parse(line) as { pod?: string; container?: string; stopSentAt?: number };
          if (j.pod && j.container && typeof j.stopSentAt === 'number') stopSent.set(`${j.pod}/${j.container}`, j.stopSentAt);
        } catch {
          // not a JSON line
        }
        continue;
      }
      if (!line.includes('exit-priority hook released')) continue;
      try {
        const j = JSON.parse(line) as { pod?: string; container?: string; time?: number };
        if (j.pod && j.container && typeof j.time === 'number') released.set(`${j.pod}/${j.container}`, j.time);
      } catch {
        // not a JSON line
      }
    }

    const stat = (shape: Shape, f: (s: Sample) => number) => {
      const sorted = samples
        .filter((s) => s.shape === shape)
        .map(f)
        .sort((a, b) => a - b);
      return { p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)) };
    };
    const report = Object.fromEntries(
      SHAPES.map((shape) => [
        shape,
        {
          appExitMs: stat(shape, (s) => s.exits[0]),
          logAgentExitMs: stat(shape, (s) => s.exits[1]),
          envoyExitMs: stat(shape, (s) => s.exits[2]),
          podGoneMs: stat(shape, (s) => s.goneMs),
          overheadLevel1Ms: stat(shape, (s) => s.exits[1] - s.exits[0] - 1000),
          overheadLevel2Ms: stat(shape, (s) => s.exits[2] - s.exits[1] - 1000),
          gapLevel1Ms: stat(shape, (s) => s.terms[1] - s.exits[0]),
          gapLevel2Ms: stat(shape, (s) => s.terms[2] - s.exits[1]),
          ownExitMs: stat(shape, (s) => s.exits[0] - s.terms[0]),
        },
      ]),
    );
    // The priority gap split at the daemon's answer (samples whose answers were logged).
    const split = (level: 1 | 2) => {
      const withLog = samples.filter(
        (s) => s.shape === 'priority' && released.has(`${ns}/${s.name}/${level === 1 ? 'log-agent' : 'envoy'}`),
      );
      const at = (s: Sample) => released.get(`${ns}/${s.name}/${level === 1 ? 'log-agent' : 'envoy'}`)! - s.t0;
      const p = (f: (s: Sample) => number) => {
        const sorted = withLog.map(f).sort((a, b) => a - b);
        return sorted.length ? { p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)) } : undefined;
      };
      const key = (s: Sample) => `${ns}/${s.name}/${level === 1 ? 'log-agent' : 'envoy'}`;
      const sent = withLog.filter((s) => stopSent.has(key(s)));
      const q = (xs: number[]) => {
        const sorted = xs.sort((a, b) => a - b);
        return sorted.length ? { p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)) } : undefined;
      };
      return {
        samples: withLog.length,
        detectMs: p((s) => at(s) - s.exits[level - 1]),
        stopMs: p((s) => s.terms[level] - at(s)),
        // Split of `stop` where the daemon sent StopContainer itself: answer -> sent, sent -> SIGTERM.
        stoppedByDaemon: sent.length,
        answerToStopSentMs: q(sent.map((s) => stopSent.get(key(s))! - s.t0 - at(s))),
        stopSentToTermMs: q(sent.map((s) => s.terms[level] - (stopSent.get(key(s))! - s.t0))),
      };
    };
    const load = { before: loadBefore.map((x) => +x.toFixed(2)), after: loadAfter.map((x) => +x.toFixed(2)) };
    const out = { pods: PODS, concurrency: CONCURRENCY, load, ...report, prioritySplit: { level1: split(1), level2: split(2) } };
    {
      const p = report.priority!;
      const native = report.native!;
      await recordBench(
        'bench:real-node-exit-priority',
        [
          {
            measure: "real node: exit-priority overhead per level (log-agent / envoy) beyond the containers' own exit",
            figure: `p50 ${p.overheadLevel1Ms.p50} / ${p.overheadLevel2Ms.p50} ms, p99 ${p.overheadLevel1Ms.p99} / ${p.overheadLevel2Ms.p99} ms`,
            peer:
              `native sidecars p50 ${native.overheadLevel1Ms.p50} / ${native.overheadLevel2Ms.p50} ms, ` +
              `p99 ${native.overheadLevel1Ms.p99} / ${native.overheadLevel2Ms.p99} ms`,
          },
          {
            measure: 'real node: pod gone after delete, two levels of 1 s exits',
            figure: `p50 ${p.podGoneMs.p50} ms`,
            peer: `+${p.podGoneMs.p50 - report.none!.podGoneMs.p50} ms over the same pod without priorities (${report.none!.podGoneMs.p50} ms), 2 s of which are the levels' own exits`,
          },
        ],
        { conditions: loadDuringRun([load.before[0]!, load.after[0]!]) },
      );
    }
    if (values.json) console.log(JSON.stringify(out, null, 2));
    else {
      for (const shape of SHAPES) {
        const r = report[shape]!;
        console.log(
          `${shape.padEnd(9)} exits app/log-agent/envoy p50 ${r.appExitMs.p50}/${r.logAgentExitMs.p50}/${r.envoyExitMs.p50} ms, pod gone p50 ${r.podGoneMs.p50} p99 ${r.podGoneMs.p99} ms, ` +
            `overhead per level p50 ${r.overheadLevel1Ms.p50}/${r.overheadLevel2Ms.p50} ms p99 ${r.overheadLevel1Ms.p99}/${r.overheadLevel2Ms.p99} ms`,
        );
      }
      for (const shape of ['priority', 'native'] as const) {
        const r = report[shape]!;
        console.log(
          `${shape.padEnd(9)} gap (lower level exit -> SIGTERM) p50 ${r.gapLevel1Ms.p50}/${r.gapLevel2Ms.p50} ms p99 ${r.gapLevel1Ms.p99}/${r.gapLevel2Ms.p99} ms; own exit (SIGTERM -> exit) p50 ${r.ownExitMs.p50} ms`,
        );
      }
      console.log(
        `priority gap split (detect = exit below -> daemon answer; stop = answer (and the daemon's own StopContainer on containerd) -> SIGTERM): ${JSON.stringify(out.prioritySplit)}`,
      );
      console.log(`load average (1/5/15 min) before ${load.before.join(' ')}, after ${load.after.join(' ')}`);
      console.log(
        `priority vs native: envoy exit p50 ratio ${(report.priority!.envoyExitMs.p50 / report.native!.envoyExitMs.p50).toFixed(2)}; ` +
          `pod gone vs none: +${report.priority!.podGoneMs.p50 - report.none!.podGoneMs.p50} ms p50 (2 s of it are the two levels' own exits)`,
      );
    }
  } finally {
    await node.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

// Job sidecar termination on a real node (test/harness/real-node.ts: kubelet, controllers, kube-proxy
// on containerd), with the runtime installed from its image and dist/ like a user would.
//
//   (a) node-local the seed Job (main + sidecar marked KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT) with the runtime as
//                 shipped: our daemon sees the main container exit over CRI and stops the sidecar itself
//   (b) crr       the same Job with the daemon's node-local stop off (--node-local-sidecar-terminator=false): our
//                 controller sees the kubelet's status report, creates a CRR, our daemon executes it (upstream's path)
//   (c) native    the same Job compiled for Kubernetes 1.29: the sidecar is a native sidecar the kubelet stops
//                 itself (the baseline: the fastest a node can do it)
//   per Job:      main container exit (CRI finishedAt) -> the sidecar's SIGTERM: the CRI log time of the line its
//                 TERM trap prints (sidecarTerm), and the mtime of the host file the same trap appends to right after
//                 (sidecarHandler: no container log copy in between); its exit (CRI finishedAt); main exit -> Job
//                 Complete seen on a watch by this process (same clock)
//   trace         node-local only: the daemon's log of each stop gives when it learnt of the exit (containerd's
//                 task exit event, else CRI), started the stop's reconcile and sent StopContainer: main exit ->
//                 learnt -> reconcile -> stop sent -> the sidecar's TERM line
//   memory        RSS of kubelet and containerd, and of each runtime pod (its containers' cgroup rss)
// Two phases, (a)+(c) then (b)+(c) after the daemon's rollout with the flag; within a phase Jobs run `--concurrency`
// at a time, alternating, so both see the same machine load; (c) in each phase is that phase's baseline. The
// machine's load average is printed with the figures (other work shares the cores).
// Usage: npm run bench:real-node [-- --jobs 20 --concurrency 4 --json]
import { readFileSync, readdirSync, existsSync, mkdtempSync, cpSync, chmodSync, statSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { promisify } from 'node:util';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BatchV1Api, CoreV1Api, KubeConfig, Watch, type V1Job } from '@kubernetes/client-node';
import { CriClient } from '../src/runtime/cri/client.js';
import { findAssets } from '../test/harness/assets.js';
import { RealNode } from '../test/harness/real-node.js';
import { installRuntime } from '../test/harness/runtime-install.js';
import { seedJob } from '../test/node/jobs.js';
import { loadDuringRun, recordBench } from './record.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
    // Diagnosis: give the daemon a CPU limit (dist/ ships none; e.g. 200m, the earlier default) to see CFS throttling.
    'daemon-cpu-limit': { type: 'string', default: '' },
  },
});
const JOBS = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);

type Mode = 'node-local' | 'crr' | 'native-a' | 'native-b';
const MODES: readonly Mode[] = ['node-local', 'crr', 'native-a', 'native-b'];
interface Sample {
  readonly mode: Mode;
  readonly pod: string;
  readonly mainExitMs: number;
  readonly termAtMs: number;
  readonly handlerAtMs: number;
  readonly sidecarTermMs: number;
  /** Main exit -> the sidecar's TERM handler wrote its host file (no container log copy in between). */
  readonly sidecarHandlerMs: number;
  readonly sidecarStopMs: number;
  readonly jobCompleteMs: number;
}
type Metric = 'sidecarTermMs' | 'sidecarHandlerMs' | 'sidecarStopMs' | 'jobCompleteMs';
const METRICS: readonly Metric[] = ['sidecarTermMs', 'sidecarHandlerMs', 'sidecarStopMs', 'jobCompleteMs'];
const run = promisify(execFile);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const nsToMs = (ns: string) => Number(BigInt(ns) / 1000n) / 1000;

function rssKiBOfPid(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

function pidsByCmdline(needle: string, binary: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
        return path.basename(cmd[0] ?? '') === binary && cmd.some((a) => a.includes(needle));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** rss of a pod's cgroup (memory controller, cgroup v1: total_rss), in KiB. */
function podRssKiB(uid: string): number {
  for (const qos of ['', 'burstable/', 'besteffort/']) {
    const file = `/sys/fs/cgroup/memory/kubepods/${qos}pod${uid}/memory.stat`;
    if (!existsSync(file)) continue;
    const m = /^total_rss (\d+)$/m.exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  }
  return Number.NaN;
}

/** CFS throttling of a pod's cgroup (cgroup v1 cpu.stat): periods, throttled periods, throttled ms. */
function podThrottling(uid: string): { periods: number; throttled: number; throttledMs: number } {
  for (const qos of ['', 'burstable/', 'besteffort/']) {
    const file = `/sys/fs/cgroup/cpu/kubepods/${qos}pod${uid}/cpu.stat`;
    if (!existsSync(file)) continue;
    const stat = Object.fromEntries(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ') as [string, string]),
    );
    return { periods: Number(stat.nr_periods), throttled: Number(stat.nr_throttled), throttledMs: Number(stat.throttled_time) / 1e6 };
  }
  return { periods: Number.NaN, throttled: Number.NaN, throttledMs: Number.NaN };
}

interface StopTrace {
  /** What started the stop's look: the exit itself (at once, in the pod's turn) or the daemon's work queue. */
  readonly via?: 'exit' | 'queue';
  readonly exitedAt: Record<string, number>;
  readonly learntAt?: number;
  readonly reconcileAt: number;
  readonly stopSentAt: number;
}

/** The daemon's log of its node-local stops (every daemon pod of the run), by pod name. */
function daemonStopTraces(podLogsDir: string): Map<string, StopTrace> {
  const out = new Map<string, StopTrace>();
  for (const dir of readdirSync(podLogsDir).filter((d) => d.startsWith('kruise-system_kruise-daemon-'))) {
    const cdir = path.join(podLogsDir, dir, 'daemon');
    for (const f of existsSync(cdir) ? readdirSync(cdir) : []) {
      for (const raw of readFileSync(path.join(cdir, f), 'utf8').split('\n')) {
        const json = raw.slice(raw.indexOf('{'));
        if (!json.includes('"trace"')) continue;
        try {
          const line = JSON.parse(json) as { pod?: string; trace?: StopTrace };
          if (line.pod && line.trace) out.set(line.pod.split('/')[1]!, line.trace);
        } catch {
          // a line split by the log rotation
        }
      }
    }
  }
  return out;
}

/** Each step of the node-local path, from the daemon's trace and the bench's own times. */
function traceStats(samples: readonly Sample[], traces: ReadonlyMap<string, StopTrace>) {
  const steps: Record<string, number[]> = {
    exitToLearnt: [],
    learntToReconcile: [],
    reconcileToStopSent: [],
    stopSentToHandler: [],
    stopSentToTermLogLine: [],
  };
  // Stops that knew the main's exit from containerd's task exit event (else from CRI).
  let published = 0;
  let traced = 0;
  // Stops started by the exit itself rather than a turn of the work queue.
  let viaExit = 0;
  for (const s of samples) {
    const t = traces.get(s.pod);
    if (s.mode !== 'node-local' || !t) continue;
    traced++;
    if (t.exitedAt.main !== undefined) published++;
    if (t.via === 'exit') viaExit++;
    if (t.learntAt !== undefined) {
      steps.exitToLearnt!.push(t.learntAt - s.mainExitMs);
      steps.learntToReconcile!.push(t.reconcileAt - t.learntAt);
    }
    steps.reconcileToStopSent!.push(t.stopSentAt - t.reconcileAt);
    steps.stopSentToHandler!.push(s.handlerAtMs - t.stopSentAt);
    steps.stopSentToTermLogLine!.push(s.termAtMs - t.stopSentAt);
  }
  return {
    traced,
    mainExitFromContainerd: published,
    stopStartedByExit: viaExit,
    ...Object.fromEntries(
      Object.entries(steps).map(([k, xs]) => {
        const sorted = xs.filter(Number.isFinite).sort((a, b) => a - b);
        return [k, sorted.length ? [Math.round(percentile(sorted, 50)), Math.round(percentile(sorted, 99)), sorted.length] : []];
      }),
    ),
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const node = await RealNode.start();
  try {
    const info = node.info();
    console.error(`[bench] node ready in ${Date.now() - started} ms`);
    const install = await installRuntime(info);
    console.error(`[bench] runtime image ${install.imageMs} ms, rollout ${install.rolloutMs} ms`);
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const batch = kc.makeApiClient(BatchV1Api);
    const cri = new CriClient(info.containerdSocket);
    const ns = 'bench';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    for (let i = 0; ; i++) {
      if (
        await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).then(
          () => true,
          () => false,
        )
      )
        break;
      if (i > 300) throw new Error('no default ServiceAccount');
      await new Promise((r) => setTimeout(r, 100));
    }

    // Job Complete as seen on a watch, timestamped on arrival.
    const completedAt = new Map<string, number>();
    const waiters = new Map<string, () => void>();
    const watch = await new Watch(kc).watch(
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      {},
      (_type: string, job: V1Job) => {
        const name = job.metadata!.name!;
        if (!completedAt.has(name) && job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) {
          completedAt.set(name, Date.now());
          waiters.get(name)?.();
        }
      },
      () => undefined,
    );

    const kubectl = (...args: string[]) => run(findAssets().kubectl, ['--kubeconfig', info.kubeconfig, ...args]);
    // The time the kubelet's log copy of a container line was read (CRI log format: `<RFC 3339 ns> <stream> <tag> <line>`).
    const logLineMs = (pod: string, uid: string, container: string, line: string): number => {
      const dir = path.join(info.podLogsDir, `${ns}_${pod}_${uid}`, container);
      for (const f of existsSync(dir) ? readdirSync(dir) : []) {
        for (const raw of readFileSync(path.join(dir, f), 'utf8').split('\n')) {
          const [time, , , ...rest] = raw.split(' ');
          if (rest.join(' ') === line) return Date.parse(time!) + Number(/\.\d{3}(\d{0,6})/.exec(time!)?.[1]?.padEnd(6, '0') ?? 0) / 1e6;
        }
      }
      return Number.NaN;
    };

    async function runOne(mode: Mode, index: number): Promise<Sample> {
      const name = `${mode}-${index}`.replace(/^-/, 'w');
      const done = new Promise<void>((resolve) => waiters.set(name, resolve));
      const native = mode.startsWith('native');
      // The sidecar's TERM handler appends to a host file: its mtime is when the handler ran.
      const eventsDir = mkdtempSync(path.join(info.dir, 'bench-term-'));
      chmodSync(eventsDir, 0o777);
      const [job] = seedJob({ name, image: info.images.busybox, restartPolicy: 'Never', mainSeconds: 1, native, eventsDir });
      await batch.createNamespacedJob({ namespace: ns, body: job as V1Job });
      await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`${name} not Complete in 120 s`)), 120_000))]);
      const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` });
      const pod = pods.items[0]!;
      const uid = pod.metadata!.uid!;
      const containers = await cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': uid } });
      const finished = async (container: string) => {
        const c = containers.find((x) => x.metadata?.name === container);
        if (!c) throw new Error(`${name}: no CRI container ${container}`);
        return nsToMs((await cri.containerStatus(c.id)).finishedAt);
      };
      const mainExit = await finished('main');
      const term = logLineMs(pod.metadata!.name!, uid, 'sidecar', 'sidecar got TERM');
      const termFile = path.join(eventsDir, 'log');
      const handlerAt = existsSync(termFile) ? Number(statSync(termFile, { bigint: true }).mtimeNs / 1000n) / 1000 : Number.NaN;
      return {
        mode,
        pod: pod.metadata!.name!,
        mainExitMs: mainExit,
        termAtMs: term,
        handlerAtMs: handlerAt,
        sidecarTermMs: term - mainExit,
        sidecarHandlerMs: handlerAt - mainExit,
        sidecarStopMs: (await finished('sidecar')) - mainExit,
        jobCompleteMs: completedAt.get(name)! - mainExit,
      };
    }

    /** A JSON patch of the daemon's pod template, rolled out before the next phase. */
    async function patchDaemon(op: Record<string, unknown>): Promise<void> {
      await kubectl('patch', 'daemonset', '-n', 'kruise-system', 'kruise-daemon', '--type=json', '-p', JSON.stringify([op]));
      await kubectl('rollout', 'status', '-n', 'kruise-system', 'daemonset/kruise-daemon', '--timeout=300s');
    }

    if (values['daemon-cpu-limit']) {
      await patchDaemon({ op: 'add', path: '/spec/template/spec/containers/0/resources/limits/cpu', value: values['daemon-cpu-limit'] });
    }
    const daemonUid = async () =>
      (await core.listNamespacedPod({ namespace: 'kruise-system', labelSelector: 'control-plane=daemon' })).items[0]!.metadata!.uid!;
    const samples: Sample[] = [];
    const load: Record<string, number[]> = {};
    const throttling: Record<string, { periods: number; throttled: number; throttledMs: number }> = {};
    async function phase(label: string, modes: readonly [Mode, Mode]): Promise<void> {
      // Warm-up (first pulls, first stop): one of each, not counted.
      await runOne(modes[0], -1);
      await runOne(modes[1], -1);
      const queue: Array<[Mode, number]> = [];
      for (let i = 0; i < JOBS; i++) queue.push([modes[0], i], [modes[1], i]);
      const before = loadavg()[0]!;
      const uid = await daemonUid();
      const t0 = podThrottling(uid);
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) samples.push(await runOne(...next));
        }),
      );
      load[label] = [before, loadavg()[0]!];
      const t1 = podThrottling(uid);
      throttling[label] = {
        periods: t1.periods - t0.periods,
        throttled: t1.throttled - t0.throttled,
        throttledMs: t1.throttledMs - t0.throttledMs,
      };
    }

    await phase('node-local', ['node-local', 'native-a']);
    const traces = daemonStopTraces(info.podLogsDir);
    // The daemon's whole log, kept past the node's removal for a look at the slow stops.
    const keptLogs = mkdtempSync(path.join(tmpdir(), 'real-node-terminator-daemon-'));
    for (const d of readdirSync(info.podLogsDir).filter((x) => x.startsWith('kruise-system_kruise-daemon-')))
      cpSync(path.join(info.podLogsDir, d), path.join(keptLogs, d), { recursive: true });
    const slow = samples
      .filter((x) => x.mode === 'node-local')
      .sort((a, b) => b.sidecarTermMs - a.sidecarTermMs)
      .slice(0, 4)
      .map((x) => {
        const t = traces.get(x.pod);
        return {
          pod: x.pod,
          termMs: Math.round(x.sidecarTermMs),
          handlerMs: Math.round(x.sidecarHandlerMs),
          learnt: t?.learntAt !== undefined ? Math.round(t.learntAt - x.mainExitMs) : undefined,
          reconcile: t ? Math.round(t.reconcileAt - x.mainExitMs) : undefined,
          stopSent: t ? Math.round(t.stopSentAt - x.mainExitMs) : undefined,
        };
      });
    console.error(`[bench] slowest node-local stops (ms after main exit): ${JSON.stringify(slow)}; daemon log kept in ${keptLogs}`);
    // The CRR path: the daemon with its node-local stop off, rolled out; the manager's CRR does the work.
    await patchDaemon({ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--node-local-sidecar-terminator=false' });
    await phase('crr', ['crr', 'native-b']);
    watch.abort();

    const stats = (mode: Mode, key: Metric) => {
      const sorted = samples
        .filter((s) => s.mode === mode)
        .map((s) => s[key])
        .filter((x) => Number.isFinite(x))
        .sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: sorted.length };
    };
    const runtimePods = (await core.listNamespacedPod({ namespace: 'kruise-system' })).items.map((p) => ({
      pod: p.metadata!.name!,
      rssMiB: podRssKiB(p.metadata!.uid!) / 1024,
    }));
    const sum = (pids: number[]) => pids.reduce((n, pid) => n + rssKiBOfPid(pid), 0) / 1024;
    const report = {
      jobs: JOBS,
      concurrency: CONCURRENCY,
      loadAverage1m: load,
      daemonCpuLimit: values['daemon-cpu-limit'] || 'none (as shipped)',
      nodeLocalTrace: traceStats(samples, traces),
      daemonCpuThrottling: throttling,
      ...Object.fromEntries(METRICS.map((m) => [m, Object.fromEntries(MODES.map((mode) => [mode, stats(mode, m)]))])),
      rssMiB: {
        kubelet: sum(pidsByCmdline(info.dir, 'kubelet')),
        containerd: sum(pidsByCmdline(info.dir, 'containerd')),
        shims: sum(pidsByCmdline(info.dir, 'containerd-shim-runc-v2')),
        runtimePods,
      },
    } as unknown as Record<Metric, Record<Mode, { p50: number; p99: number; n: number }>> & Record<string, unknown>;
    cri.close();
    {
      const t = report.sidecarTermMs;
      const j = report.jobCompleteMs;
      const n = (x: number) => Math.round(x).toLocaleString('en-US');
      const r = (a: number, b: number) => (a / b).toFixed(3);
      await recordBench(
        'bench:real-node',
        [
          {
            measure: "real node: a Job's main container exits → its sidecar gets SIGTERM, node-local stop",
            figure: `p50 ${n(t['node-local'].p50)} ms, p99 ${n(t['node-local'].p99)} ms`,
            peer:
              `${r(t['node-local'].p50, t.crr.p50)}x / ${r(t['node-local'].p99, t.crr.p99)}x the CRR path (${n(t.crr.p50)} / ${n(t.crr.p99)} ms); ` +
              `native sidecars ${n(t['native-a'].p50)} / ${n(t['native-a'].p99)} ms`,
          },
          {
            measure: 'real node: main container exits → Job Complete',
            figure: `p50 ${n(j['node-local'].p50)} ms, p99 ${n(j['node-local'].p99)} ms`,
            peer:
              `${r(j['node-local'].p50, j.crr.p50)}x / ${r(j['node-local'].p99, j.crr.p99)}x the CRR path; ` +
              `native sidecars ${n(j['native-a'].p50)} / ${n(j['native-a'].p99)} ms`,
          },
        ],
        { conditions: loadDuringRun(Object.values(load).flat()) },
      );
    }
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
    } else {
      const f = (x: number) => x.toFixed(0).padStart(6);
      for (const key of METRICS) {
        const r = report[key];
        console.log(
          `${key.padEnd(14)} ` +
            MODES.map((m) => `${m} p50 ${f(r[m].p50)} p99 ${f(r[m].p99)}`).join(' | ') +
            ` ms | node-local/crr p50 ${(r['node-local'].p50 / r.crr.p50).toFixed(3)} p99 ${(r['node-local'].p99 / r.crr.p99).toFixed(3)}` +
            ` (n=${MODES.map((m) => r[m].n).join('+')})`,
        );
      }
      console.log(`load average (1 min) before/after each phase: ${JSON.stringify(load)}`);
      console.log(
        `daemon CPU limit ${values['daemon-cpu-limit'] || 'none (as shipped)'}; CFS throttling per phase: ${JSON.stringify(throttling)}`,
      );
      console.log(`node-local trace (ms, p50/p99/n): ${JSON.stringify(report.nodeLocalTrace)}`);
      const rss = report.rssMiB as { kubelet: number; containerd: number; shims: number };
      console.log(
        `RSS: kubelet ${rss.kubelet.toFixed(0)} MiB, containerd ${rss.containerd.toFixed(0)} MiB, shims ${rss.shims.toFixed(0)} MiB`,
      );
      for (const p of runtimePods) console.log(`RSS: ${p.pod} ${p.rssMiB.toFixed(1)} MiB`);
    }
  } finally {
    await node.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

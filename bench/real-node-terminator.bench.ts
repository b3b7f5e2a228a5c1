// Job sidecar termination on a real node (test/harness/real-node.ts: kubelet, controllers, kube-proxy
// on containerd), with the runtime installed from its image and dist/ like a user would.
//
//   (a) runtime   the seed Job (main + sidecar marked KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT): our
//                 controller sees the main container exit, creates a CRR, our daemon stops the sidecar
//   (b) native    the same Job compiled for Kubernetes 1.29: the sidecar is a native sidecar the kubelet
//                 stops itself (the baseline: the fastest a node can do it)
//   per Job:      main container exit (CRI finishedAt) -> sidecar stopped (CRI finishedAt of the sidecar)
//                 main container exit -> Job Complete seen on a watch by this process (same clock)
//   memory        RSS of kubelet and containerd, and of each runtime pod (its containers' cgroup rss)
// Jobs run `--concurrency` at a time, alternating (a) and (b) so both see the same machine load.
// Usage: npm run bench:real-node [-- --jobs 20 --concurrency 4 --json]
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BatchV1Api, CoreV1Api, KubeConfig, Watch, type V1Job } from '@kubernetes/client-node';
import { CriClient } from '../src/runtime/cri/client.js';
import { RealNode } from '../test/harness/real-node.js';
import { installRuntime } from '../test/harness/runtime-install.js';
import { seedJob } from '../test/node/jobs.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const JOBS = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);

type Mode = 'runtime' | 'native';
interface Sample {
  readonly mode: Mode;
  readonly sidecarStopMs: number;
  readonly jobCompleteMs: number;
}

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

    async function runOne(mode: Mode, index: number): Promise<Sample> {
      const name = `${mode}-${index}`;
      const done = new Promise<void>((resolve) => waiters.set(name, resolve));
      const [job] = seedJob({ name, image: info.images.busybox, restartPolicy: 'Never', mainSeconds: 1, native: mode === 'native' });
      await batch.createNamespacedJob({ namespace: ns, body: job as V1Job });
      await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`${name} not Complete in 120 s`)), 120_000))]);
      const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` });
      const uid = pods.items[0]!.metadata!.uid!;
      const containers = await cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': uid } });
      const finished = async (container: string) => {
        const c = containers.find((x) => x.metadata?.name === container);
        if (!c) throw new Error(`${name}: no CRI container ${container}`);
        return nsToMs((await cri.containerStatus(c.id)).finishedAt);
      };
      const mainExit = await finished('main');
      return { mode, sidecarStopMs: (await finished('sidecar')) - mainExit, jobCompleteMs: completedAt.get(name)! - mainExit };
    }

    // Warm-up (first pulls, first CRR): one of each, not counted.
    await runOne('runtime', -1);
    await runOne('native', -1);
    const queue: Array<[Mode, number]> = [];
    for (let i = 0; i < JOBS; i++) queue.push(['runtime', i], ['native', i]);
    const samples: Sample[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) samples.push(await runOne(...next));
      }),
    );
    watch.abort();

    const stats = (mode: Mode, key: 'sidecarStopMs' | 'jobCompleteMs') => {
      const sorted = samples
        .filter((s) => s.mode === mode)
        .map((s) => s[key])
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
      sidecarStop: { runtime: stats('runtime', 'sidecarStopMs'), native: stats('native', 'sidecarStopMs') },
      jobComplete: { runtime: stats('runtime', 'jobCompleteMs'), native: stats('native', 'jobCompleteMs') },
      rssMiB: {
        kubelet: sum(pidsByCmdline(info.dir, 'kubelet')),
        containerd: sum(pidsByCmdline(info.dir, 'containerd')),
        shims: sum(pidsByCmdline(info.dir, 'containerd-shim-runc-v2')),
        runtimePods,
      },
    };
    cri.close();
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
    } else {
      const f = (x: number) => x.toFixed(0).padStart(6);
      for (const key of ['sidecarStop', 'jobComplete'] as const) {
        const r = report[key];
        console.log(
          `${key.padEnd(12)} runtime p50 ${f(r.runtime.p50)} ms p99 ${f(r.runtime.p99)} ms | native p50 ${f(r.native.p50)} ms p99 ${f(r.native.p99)} ms | ` +
            `ratio p50 ${(r.runtime.p50 / r.native.p50).toFixed(2)} p99 ${(r.runtime.p99 / r.native.p99).toFixed(2)} (n=${r.runtime.n}+${r.native.n})`,
        );
      }
      console.log(
        `RSS: kubelet ${report.rssMiB.kubelet.toFixed(0)} MiB, containerd ${report.rssMiB.containerd.toFixed(0)} MiB, shims ${report.rssMiB.shims.toFixed(0)} MiB`,
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

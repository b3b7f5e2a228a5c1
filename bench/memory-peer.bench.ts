// Manager memory against the upstream peer, on one real kube-apiserver + etcd: our controller-manager as
// shipped (CLI bundle, MANAGER_NODE_OPTIONS, every gate of the bundled runtime on, our webhooks registered)
// vs upstream kruise-manager (every gate of those features on too), one at a time, alternating, at each
// level of pods in the cluster: realistic Job/Deployment-like pod specs with server-side managedFields, spread over
// `--nodes` Ready nodes, each pod Running with the status a kubelet writes (conditions, IPs, container states) — the
// shape of a real cluster, which a cache of spec-only pods understated (no node cache, no status fields).
// Per run: start, wait until ready, let it settle, then sample RSS (VmRSS and RssAnon) once a second; the
// figure is the max. Each manager starts once before the rounds (its first start issues its webhook
// certificates), so the rounds are restarts; that first start is reported on its own.
// Usage: npm run bench:memory-peer [-- --levels 0,10000,50000 --nodes 1000 --rounds 2 --settle 10 --concurrency 50
//        --out out/bench/memory-peer.json --json]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BUNDLED_RUNTIME_GATES } from '../src/contracts/features.js';
import { KubeClient, loadKubeConfig, NAMESPACES, NODES, PatchStrategy, PODS } from '../src/runtime/core/index.js';
import { bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, pinnedKruiseVersion } from '../test/harness/kruise-peer.js';
import { benchArgs, median, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import { jobPod, pool, runningStatus } from './support/job-pods.js';
import {
  bundleOurCli,
  startOurManager,
  startPeerPlane,
  startUpstreamManager,
  WEBHOOK_H2_OPTION,
  webhookProtocol,
  type Runner,
} from './support/peer-runners.js';

const args = benchArgs(
  { rounds: 2, settle: 10, samples: 5, concurrency: 50, nodes: 1000 },
  {
    levels: { type: 'string', default: '0,10000' },
    out: { type: 'string', default: path.join('out', 'bench', 'memory-peer.json') },
    ...WEBHOOK_H2_OPTION,
  },
);
bypassProxyForLoopback();
const levels = args.extra.levels.split(',').map(Number);
if (levels.some((l) => !Number.isInteger(l) || l < 0)) throw new Error(`--levels: "${args.extra.levels}" is not a list of pod counts`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (x: number) => Math.round(x * 10) / 10;
const MiB = 2 ** 20;
const log = (msg: string) => console.error(`[bench] ${msg}`);

/**
 * Anonymous resident memory (RssAnon): the process's own heap pages. VmRSS adds file-backed pages of the
 * binary, which flip by ~5 MiB between runs with the page cache, so both are reported.
 */
function rssAnonBytes(pid: number): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

type Variant = 'ours' | 'upstream';
const VARIANTS: Variant[] = ['ours', 'upstream'];
const OUR_GATES = Object.keys(BUNDLED_RUNTIME_GATES)
  .map((g) => `${g}=true`)
  .join(',');
// Upstream runs its default controllers (CloneSet, SidecarSet, ... are on by default) plus the gated ones ours carries out.
const UPSTREAM_GATES = 'SidecarTerminator=true,ImagePullJobGate=true';

const plane = await startPeerPlane(args.extra['webhook-h2']);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 60_000 });
let current: Runner | undefined;

async function measure(
  variant: Variant,
  cliMain: string,
): Promise<{ rssMiB: number; rssLastMiB: number; anonMiB: number; cpuSeconds: number; readyMs: number }> {
  const t0 = performance.now();
  current =
    variant === 'ours'
      ? await startOurManager(plane, cliMain, { featureGates: OUR_GATES })
      : await startUpstreamManager(plane, { featureGates: UPSTREAM_GATES });
  const readyMs = Math.round(performance.now() - t0);
  await sleep(args.settle * 1000);
  const samples: number[] = [];
  const anon: number[] = [];
  for (let i = 0; i < args.samples; i++) {
    samples.push(current.rssBytes());
    anon.push(rssAnonBytes(current.pid));
    await sleep(1000);
  }
  const cpuSeconds = current.cpuSeconds();
  await current.stop();
  current = undefined;
  return {
    rssMiB: r1(Math.max(...samples) / MiB),
    rssLastMiB: r1(samples.at(-1)! / MiB),
    anonMiB: r1(Math.max(...anon) / MiB),
    cpuSeconds,
    readyMs,
  };
}

try {
  await installKruisePeerCrds(plane);
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fill' } });
  // Ready nodes, as a kubelet registers them (no kubelet runs here: nothing else writes them).
  await pool(
    Array.from({ length: args.nodes }, (_, i) => `node-${i}`),
    args.concurrency,
    async (name) => {
      await client.create(NODES, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } },
        status: {
          capacity: { cpu: '32', memory: '128Gi', pods: '110' },
          allocatable: { cpu: '32', memory: '128Gi', pods: '110' },
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString() }],
        },
      });
    },
  );
  const cliMain = await bundleOurCli();
  // The first start of a manager on a cluster issues its webhook certificates; every later start (a restart,
  // an upgrade) finds them in its Secret. The rounds measure later starts; the first starts are reported
  // on their own (ours loads its X.509 builder only to issue, and keeps it until the next restart).
  const firstStart: Record<Variant, Awaited<ReturnType<typeof measure>>> = {
    ours: await measure('ours', cliMain),
    upstream: await measure('upstream', cliMain),
  };
  log(`first start (issues webhook certificates): ${JSON.stringify(firstStart)}`);
  let pods = 0;
  const loads: number[] = [loadavg()[0]!];
  const table: Array<{
    pods: number;
    medians: Record<Variant, number>;
    ratio: number;
    anonMedians: Record<Variant, number>;
    anonRatio: number;
    cpuMedians: Record<Variant, number>;
    cpuRatio: number;
    runs: Record<Variant, unknown[]>;
  }> = [];
  for (const level of [...levels].sort((a, b) => a - b)) {
    const t = performance.now();
    await pool(
      Array.from({ length: level - pods }, (_, i) => `pod-${pods + i}`),
      args.concurrency,
      async (name, i) => {
        const index = pods + i;
        const created = await client.create(PODS, jobPod(name, 'fill', args.nodes > 0 ? `node-${index % args.nodes}` : undefined, false));
        // A create's status is reset to Pending; the kubelet's status comes through the status subresource.
        await client.patch(PODS, name, 'fill', runningStatus(created, index), PatchStrategy.MergePatch, { subresource: 'status' });
      },
    );
    if (level > pods) log(`${level - pods} Running pods created in ${Math.round(performance.now() - t)} ms`);
    pods = level;
    const runs: Record<Variant, Awaited<ReturnType<typeof measure>>[]> = { ours: [], upstream: [] };
    for (let round = 0; round < args.rounds; round++) {
      for (const variant of round % 2 ? [...VARIANTS].reverse() : VARIANTS) {
        const m = await measure(variant, cliMain);
        runs[variant].push(m);
        loads.push(loadavg()[0]!);
        log(`${level} pods, round ${round + 1}, ${variant}: ${JSON.stringify(m)}`);
      }
    }
    const medians = { ours: r1(median(runs.ours.map((r) => r.rssMiB))), upstream: r1(median(runs.upstream.map((r) => r.rssMiB))) };
    const anonMedians = {
      ours: r1(median(runs.ours.map((r) => r.anonMiB))),
      upstream: r1(median(runs.upstream.map((r) => r.anonMiB))),
    };
    const cpuMedians = {
      ours: r1(median(runs.ours.map((r) => r.cpuSeconds))),
      upstream: r1(median(runs.upstream.map((r) => r.cpuSeconds))),
    };
    table.push({
      pods: level,
      medians,
      ratio: ratio(medians.ours, medians.upstream),
      anonMedians,
      anonRatio: ratio(anonMedians.ours, anonMedians.upstream),
      cpuMedians,
      cpuRatio: ratio(cpuMedians.ours, cpuMedians.upstream),
      runs,
    });
  }
  const result = {
    upstream: `kruise-manager ${pinnedKruiseVersion()} (--feature-gates=${UPSTREAM_GATES})`,
    ours: `cdk8s-kruise controller (--feature-gates=${OUR_GATES})`,
    rounds: args.rounds,
    firstStart,
    rssMiBByPods: table,
    webhookCalls: webhookProtocol(args.extra['webhook-h2']),
    loadAverage1m: loads.map((l) => Number(l.toFixed(2))),
    cores: cpus().length,
  };
  mkdirSync(path.dirname(args.extra.out), { recursive: true });
  writeFileSync(args.extra.out, JSON.stringify(result, null, 2) + '\n');
  await recordBench(
    'bench:memory-peer',
    [
      {
        measure: 'manager VmRSS (anonymous) on its first start, which issues the webhook certificates',
        figure: `${firstStart.ours.rssMiB} MiB (${firstStart.ours.anonMiB})`,
        peer: `${ratio(firstStart.ours.rssMiB, firstStart.upstream.rssMiB)}x upstream (anonymous ${ratio(firstStart.ours.anonMiB, firstStart.upstream.anonMiB)}x)`,
      },
      ...table.map((t) => ({
        measure: `manager VmRSS (anonymous) after a restart, ${t.pods.toLocaleString('en-US')} Running pods on ${args.nodes.toLocaleString('en-US')} nodes cached, every controller on`,
        figure: `${t.medians.ours} MiB (${t.anonMedians.ours})`,
        peer: `${t.ratio}x upstream (anonymous ${t.anonRatio}x)`,
      })),
      // What a restart costs: listing and caching the cluster, the first round of every controller.
      ...table.map((t) => ({
        measure: `manager CPU from a restart until ${args.settle + args.samples} s after ready, ${t.pods.toLocaleString('en-US')} Running pods on ${args.nodes.toLocaleString('en-US')} nodes`,
        figure: `${t.cpuMedians.ours} CPU s`,
        peer: `${t.cpuRatio}x upstream`,
      })),
    ],
    { conditions: loadDuringRun(result.loadAverage1m) },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(`Manager RSS (MiB, max of ${args.samples} samples after ${args.settle} s), median of ${args.rounds} alternating rounds`);
    console.log(`  ours: ${result.ours}\n  upstream: ${result.upstream}`);
    console.log(
      `${'pods cached'.padStart(12)}${'ours'.padStart(10)}${'upstream'.padStart(10)}${'ratio'.padStart(8)}   anonymous: ours, upstream, ratio`,
    );
    for (const row of table) {
      console.log(
        `${String(row.pods).padStart(12)}${String(row.medians.ours).padStart(10)}${String(row.medians.upstream).padStart(10)}${`${row.ratio}x`.padStart(8)}` +
          `${String(row.anonMedians.ours).padStart(10)}${String(row.anonMedians.upstream).padStart(10)}${`${row.anonRatio}x`.padStart(8)}`,
      );
    }
    const f = result.firstStart;
    console.log(
      `first start, empty cluster (issues the webhook certificates): ours ${f.ours.rssMiB} MiB (anonymous ${f.ours.anonMiB}), ` +
        `upstream ${f.upstream.rssMiB} MiB (anonymous ${f.upstream.anonMiB}), ${ratio(f.ours.rssMiB, f.upstream.rssMiB)}x`,
    );
    console.log(
      `webhook calls: ${result.webhookCalls}; load average (1 min) during the runs: ${result.loadAverage1m.join(', ')} on ${result.cores} cores; JSON: ${args.extra.out}`,
    );
  }
} finally {
  await current?.stop().catch(() => undefined);
  await plane.stop();
}

// Job Sidecar Terminator against the upstream peer, side by side on one real kube-apiserver + etcd:
// our controller-manager as shipped (the CLI bundle, V8 limits of the Deployment, our CRR webhooks
// registered as the install registers them) and upstream kruise-manager (test/harness/kruise-peer.ts,
// built by test/prepare.d/20-kruise-peer.sh) with its own webhooks, run one at a time, alternating, with
// the same pods. Both run on upstream's CRDs (ours must be API-compatible).
//
//   sequential  50 job pods one after another: "main container terminated" status write acknowledged ->
//               the CRR seen on a watch (p50, p99).
//   burst       1,000 job pods whose main containers terminate together (50 status writes in flight).
//   variants    ours; upstream tuned (--rest-config-qps/burst 1000, 50 sidecarterminator workers);
//               upstream at its defaults (QPS 30, burst 50, 3 workers; --no-defaults skips it).
//   process     RSS after start (with the 1,050 pods cached), RSS after the burst, CPU seconds of the run, and
//               the CPU seconds kube-apiserver and etcd spent in the same run (the manager's cost to the plane).
//   webhook     the API server's own view of the variant's CRR admission webhooks: seconds it waited on them
//               (apiserver_admission_webhook_admission_duration_seconds) per CRR, over the whole run.
//
// Every round creates the pods before the variant starts (its initial list caches them), then deletes
// them and its CRRs after it stops, so every variant starts from the same API server state.
// Usage: npm run bench:terminator-peer [-- --rounds 2 --pods 1000 --sequential 50 --concurrency 50
//        --no-defaults --variants ours,upstream-tuned --cpu-prof DIR --node-options=<V8 flags of ours> --webhook-h2
//        --out out/bench/terminator-peer.json --json]
//   --cpu-prof DIR writes a V8 CPU profile of each run of our manager into DIR (open it in Chrome DevTools or
//   summarise it with `tsx bench/support/cpu-profile.ts FILE`); profiling slows ours, so ratios of such a run
//   are not comparable.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import {
  CONTAINER_RECREATE_REQUESTS,
  Informer,
  KubeClient,
  loadKubeConfig,
  NAMESPACES,
  NODES,
  PatchStrategy,
  PODS,
  type KubeObject,
  type Pod,
} from '../src/runtime/core/index.js';
import { bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, kubectlOn, pinnedKruiseVersion } from '../test/harness/kruise-peer.js';
import { MANAGER_NODE_OPTIONS } from '../src/runtime/manager/manager.js';
import { benchArgs, median, percentile, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import { jobPod, pool, statusOf } from './support/job-pods.js';
import {
  bundleOurCli,
  procCpuSeconds,
  startOurManager,
  startPeerPlane,
  startUpstreamManager,
  WEBHOOK_H2_OPTION,
  webhookProtocol,
  type Runner,
} from './support/peer-runners.js';

const args = benchArgs(
  { rounds: 2, pods: 1000, sequential: 50, concurrency: 50 },
  {
    'no-defaults': { type: 'boolean', default: false },
    variants: { type: 'string' },
    'cpu-prof': { type: 'string' },
    // Node/V8 options of our manager instead of the Deployment's (MANAGER_NODE_OPTIONS), to try other limits;
    // a value starting with a dash needs the = form: --node-options=--max-semi-space-size=1.
    'node-options': { type: 'string' },
    out: { type: 'string', default: path.join('out', 'bench', 'terminator-peer.json') },
    ...WEBHOOK_H2_OPTION,
  },
);
bypassProxyForLoopback();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (x: number) => Math.round(x * 10) / 10;
const MiB = 2 ** 20;
const log = (msg: string) => console.error(`[bench] ${msg}`);

type Variant = 'ours' | 'upstream-tuned' | 'upstream-default';
const ALL_VARIANTS: Variant[] = ['ours', 'upstream-tuned', 'upstream-default'];
const VARIANTS: Variant[] = args.extra.variants
  ? args.extra.variants.split(',').map((v) => {
      if (!ALL_VARIANTS.includes(v as Variant))
        throw new Error(`--variants: unknown variant "${v}" (choose from ${ALL_VARIANTS.join(', ')})`);
      return v as Variant;
    })
  : args.extra['no-defaults']
    ? ['ours', 'upstream-tuned']
    : ALL_VARIANTS;
const cpuProfDir = args.extra['cpu-prof'] ? path.resolve(args.extra['cpu-prof']) : undefined;

const plane = await startPeerPlane(args.extra['webhook-h2']);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 60_000 });
const silent = pino({ level: 'silent' });
let current: Runner | undefined;
let cliMain = '';

interface RunResult {
  seqP50: number;
  seqP99: number;
  burstP50: number;
  burstP99: number;
  burstMakespanMs: number;
  rssStartMiB: number;
  rssAfterMiB: number;
  cpuSeconds: number;
  /** CPU seconds of kube-apiserver and etcd during the run: what the manager's traffic costs the control plane. */
  planeCpuSeconds: number;
  webhookMsPerCrr: number;
}

/** CPU seconds used so far by kube-apiserver and etcd together. */
function planeCpuSeconds(): number {
  const { etcd, apiserver } = plane.pids();
  let sum = 0;
  for (const pid of [etcd, apiserver]) if (pid !== undefined) sum += procCpuSeconds(pid);
  return sum;
}

/** Seconds the API server has spent waiting on ContainerRecreateRequest CREATE admission webhooks so far. */
async function crrWebhookSeconds(): Promise<number> {
  const text = await kubectlOn(plane, ['get', '--raw', '/metrics']);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_admission_webhook_admission_duration_seconds_sum{')) continue;
    if (!/name="[mv]containerrecreaterequest\./.test(line) || !line.includes('operation="CREATE"')) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function runOnce(variant: Variant, round: number): Promise<RunResult> {
  const ns = `r${round}-${variant}`;
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const seqNames = Array.from({ length: args.sequential }, (_, i) => `seq-${i}`);
  const burstNames = Array.from({ length: args.pods }, (_, i) => `job-${i}`);
  await pool([...seqNames, ...burstNames], args.concurrency, async (name) => {
    await client.create<Pod>(PODS, jobPod(name, ns, 'bench-node', true));
    await client.patch(PODS, name, ns, statusOf({ running: { startedAt: new Date().toISOString() } }), PatchStrategy.MergePatch, {
      subresource: 'status',
    });
  });

  const started = performance.now();
  current =
    variant === 'ours'
      ? await startOurManager(plane, cliMain, {
          featureGates: 'SidecarTerminator=true',
          nodeOptions: `${args.extra['node-options'] ?? MANAGER_NODE_OPTIONS}${cpuProfDir ? ` --cpu-prof --cpu-prof-dir=${cpuProfDir}` : ''}`,
        })
      : await startUpstreamManager(plane, {
          featureGates: 'SidecarTerminator=true',
          ...(variant === 'upstream-tuned' ? { qps: 1000, burst: 1000, args: ['--sidecarterminator-workers=50'] } : {}),
        });
  log(`${variant}: ready in ${Math.round(performance.now() - started)} ms (pid ${current.pid})`);
  // Upstream starts its controllers' workers ~2.4 s after /readyz; give every variant the same settle time.
  await sleep(4_000);
  const rssStart = current.rssBytes();
  const cpu0 = current.cpuSeconds();
  const planeCpu0 = planeCpuSeconds();
  const webhook0 = await crrWebhookSeconds();

  const crrSeen = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const observer = new Informer<KubeObject>(client, CONTAINER_RECREATE_REQUESTS, { namespace: ns, logger: silent });
  observer.addHandlers({
    add: (o) => {
      const podName = (o.spec as { podName?: string } | undefined)?.podName;
      if (!podName || crrSeen.has(podName)) return;
      crrSeen.set(podName, performance.now());
      waiters.get(podName)?.();
    },
  });
  observer.start();
  await observer.waitForSync();

  const terminate = (name: string) =>
    client.patch(
      PODS,
      name,
      ns,
      statusOf({ terminated: { exitCode: 0, reason: 'Completed', finishedAt: new Date().toISOString() } }),
      PatchStrategy.MergePatch,
      { subresource: 'status' },
    );
  const written = new Map<string, number>();
  const waitCrr = (name: string, timeoutMs: number) =>
    crrSeen.has(name)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`${variant}: no CRR for ${name} after ${timeoutMs} ms:\n${current!.logTail()}`)),
            timeoutMs,
          );
          waiters.set(name, () => {
            clearTimeout(timer);
            resolve();
          });
        });

  // Sequential: one pod at a time.
  for (const name of seqNames) {
    const seen = waitCrr(name, 30_000);
    await terminate(name);
    written.set(name, performance.now());
    await seen;
  }
  // Burst: every main container terminates together.
  const burstStart = performance.now();
  const all = Promise.all(burstNames.map((n) => waitCrr(n, 300_000)));
  await pool(burstNames, args.concurrency, async (name) => {
    await terminate(name);
    written.set(name, performance.now());
  });
  await all;
  const cpu = current.cpuSeconds() - cpu0;
  const planeCpu = planeCpuSeconds() - planeCpu0;
  const rssAfter = current.rssBytes();
  const webhookSeconds = (await crrWebhookSeconds()) - webhook0;
  observer.stop();

  const lat = (names: string[]) => names.map((n) => crrSeen.get(n)! - written.get(n)!);
  const seq = lat(seqNames);
  const burst = lat(burstNames);
  const result: RunResult = {
    seqP50: r1(percentile(seq, 0.5)),
    seqP99: r1(percentile(seq, 0.99)),
    burstP50: r1(percentile(burst, 0.5)),
    burstP99: r1(percentile(burst, 0.99)),
    burstMakespanMs: Math.round(Math.max(...burstNames.map((n) => crrSeen.get(n)!)) - burstStart),
    rssStartMiB: r1(rssStart / MiB),
    rssAfterMiB: r1(rssAfter / MiB),
    cpuSeconds: Number(cpu.toFixed(2)),
    planeCpuSeconds: Number(planeCpu.toFixed(2)),
    webhookMsPerCrr: r1((webhookSeconds * 1000) / (seqNames.length + burstNames.length)),
  };
  const crrs = (await client.list(CONTAINER_RECREATE_REQUESTS, { namespace: ns })).items.length;
  if (crrs !== seqNames.length + burstNames.length) throw new Error(`${variant}: expected one CRR per pod, found ${crrs}`);

  await current.stop();
  current = undefined;
  // Same starting state for the next variant: no pods or CRRs of this run left in any cache.
  await kubectlOn(plane, ['delete', 'containerrecreaterequests.apps.kruise.io', '--all', '-n', ns, '--wait=false']);
  await kubectlOn(plane, ['delete', 'pods', '--all', '-n', ns, '--grace-period=0', '--force', '--wait=false']);
  return result;
}

try {
  await installKruisePeerCrds(plane);
  await client.create(NODES, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'bench-node', labels: { 'kubernetes.io/hostname': 'bench-node' } },
  });
  cliMain = await bundleOurCli();

  const loads: number[][] = [loadavg()];
  const runs = Object.fromEntries(VARIANTS.map((v) => [v, [] as RunResult[]])) as Record<Variant, RunResult[]>;
  for (let round = 0; round < args.rounds; round++) {
    for (const variant of VARIANTS.map((_, k) => VARIANTS[(k + round) % VARIANTS.length]!)) {
      const r = await runOnce(variant, round);
      runs[variant].push(r);
      loads.push(loadavg());
      log(`round ${round + 1} ${variant}: ${JSON.stringify(r)}`);
    }
  }

  const keys = [
    'seqP50',
    'seqP99',
    'burstP50',
    'burstP99',
    'burstMakespanMs',
    'rssStartMiB',
    'rssAfterMiB',
    'cpuSeconds',
    'planeCpuSeconds',
    'webhookMsPerCrr',
  ] as const;
  const medians = Object.fromEntries(
    VARIANTS.map((v) => [v, Object.fromEntries(keys.map((k) => [k, r1(median(runs[v].map((r) => r[k])))]))]),
  ) as Record<Variant, Record<(typeof keys)[number], number>>;
  const ratios = Object.fromEntries(
    VARIANTS.filter((v) => v !== 'ours' && VARIANTS.includes('ours')).map((v) => [
      v,
      Object.fromEntries(keys.map((k) => [k, ratio(medians.ours[k], medians[v][k])])),
    ]),
  );
  const result = {
    upstream: `kruise-manager ${pinnedKruiseVersion()}`,
    pods: { sequential: args.sequential, burst: args.pods, concurrency: args.concurrency },
    rounds: args.rounds,
    medians,
    ratiosOursTo: ratios,
    runs,
    webhookCalls: webhookProtocol(args.extra['webhook-h2']),
    loadAverage1m: loads.map((l) => Number(l[0]!.toFixed(2))),
    cores: cpus().length,
  };
  mkdirSync(path.dirname(args.extra.out), { recursive: true });
  writeFileSync(args.extra.out, JSON.stringify(result, null, 2) + '\n');
  if (VARIANTS.includes('ours')) {
    const o = medians.ours;
    const vs = (...ks: (typeof keys)[number][]) =>
      Object.entries(ratios)
        .map(([v, r]) => `${ks.map((k) => `${r[k]}x`).join(' / ')} ${v}`)
        .join('; ') || '(no upstream variant in this run)';
    await recordBench(
      'bench:terminator-peer',
      [
        {
          measure: `Job sidecar termination as shipped, ${args.sequential} sequential pods: status write acknowledged → CRR seen`,
          figure: `p50 ${o.seqP50} ms, p99 ${o.seqP99} ms`,
          peer: vs('seqP50', 'seqP99'),
        },
        {
          measure: `the same, a ${args.pods}-pod burst: p50, p99, last CRR`,
          figure: `p50 ${o.burstP50} ms, p99 ${o.burstP99} ms, last CRR ${o.burstMakespanMs} ms`,
          peer: vs('burstP50', 'burstP99', 'burstMakespanMs'),
        },
        {
          measure: 'manager CPU over the run; webhook wait per CRR',
          figure: `${o.cpuSeconds} CPU s; ${o.webhookMsPerCrr} ms`,
          peer: vs('cpuSeconds', 'webhookMsPerCrr'),
        },
      ],
      { conditions: `${loadDuringRun(result.loadAverage1m)}; webhooks: ${result.webhookCalls}` },
    );
  }
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    const cols = [
      'variant',
      'seq p50 ms',
      'seq p99 ms',
      'burst p50 ms',
      'burst p99 ms',
      'burst all ms',
      'RSS start MiB',
      'RSS after MiB',
      'CPU s',
      'plane CPU s',
      'webhook ms/CRR',
    ];
    const row = (cells: (string | number)[]) => cells.map((c, i) => String(c).padStart(i ? 15 : 24)).join('');
    console.log(
      `Sidecar terminator vs upstream ${result.upstream}: ${args.sequential} sequential + ${args.pods} burst pods (${args.concurrency} writes in flight), median of ${args.rounds} alternating rounds`,
    );
    console.log(row(cols));
    for (const v of VARIANTS) console.log(row([v, ...keys.map((k) => medians[v][k])]));
    for (const [v, r] of Object.entries(ratios))
      console.log(row([`ours / ${v}`, ...keys.map((k) => `${(r as Record<string, number>)[k]}x`)]));
    console.log(
      `webhook calls: ${result.webhookCalls}; load average (1 min) during the runs: ${result.loadAverage1m.join(', ')} on ${result.cores} cores; JSON: ${args.extra.out}`,
    );
  }
} finally {
  await current?.stop().catch(() => undefined);
  await plane.stop();
}

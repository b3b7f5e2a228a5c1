// CloneSet scale-out and ReCreate rollout against the upstream peer and against a Deployment, on one real
// kube-apiserver + etcd, one controller at a time, rotating the order every round:
//   ours        our controller-manager as shipped (CLI bundle, MANAGER_NODE_OPTIONS, our webhooks registered);
//   upstream    kruise-manager (test/harness/kruise-peer.ts) at its defaults, with its own webhooks;
//   deployment  a Deployment handled by kube-controller-manager (deployment + replicaset controllers only),
//               the binary of the real-node harness.
// Phases, each timed from the write that starts it:
//   scale      0 → N replicas: until N pods exist (pods are created, never run: no kubelet);
//   recreate   a template change rolled out by recreating every pod (CloneSet ReCreate, maxUnavailable
//              100%; Deployment strategy Recreate): until N pods of the new template exist and none of the
//              old one is left.
// Per phase: wall time, API requests the API server served meanwhile (apiserver_request_total, every
// client: the bench itself adds 2 writes and its one watch), controller CPU seconds; per run the highest
// controller RSS sampled every 250 ms.
// Usage: npm run bench:cloneset-peer [-- --replicas 1000 --rounds 2 --out out/bench/cloneset-peer.json --json]
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import {
  CLONESETS,
  Informer,
  KubeClient,
  loadKubeConfig,
  NAMESPACES,
  PatchStrategy,
  PODS,
  type Pod,
  type ResourceType,
} from '../src/runtime/core/index.js';
import { bypassProxyForLoopback, freePort } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, kubectlOn, pinnedKruiseVersion } from '../test/harness/kruise-peer.js';
import { findNodeAssets } from '../test/harness/node-assets.js';
import { benchArgs, median, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import {
  apiRequestsServed,
  bundleOurCli,
  procCpuSeconds,
  procRssBytes,
  startOurManager,
  startPeerPlane,
  startUpstreamManager,
  WEBHOOK_H2_OPTION,
  webhookProtocol,
  type Runner,
} from './support/peer-runners.js';

const args = benchArgs(
  { replicas: 1000, rounds: 2, timeout: 600 },
  { out: { type: 'string', default: path.join('out', 'bench', 'cloneset-peer.json') }, ...WEBHOOK_H2_OPTION },
);
bypassProxyForLoopback();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (x: number) => Math.round(x * 10) / 10;
const MiB = 2 ** 20;
const log = (msg: string) => console.error(`[bench] ${msg}`);

type Variant = 'ours' | 'upstream' | 'deployment';
const DEPLOYMENTS: ResourceType = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true };
const VARIANTS: Variant[] = ['ours', 'upstream', 'deployment'];

const plane = await startPeerPlane(args.extra['webhook-h2']);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 120_000 });
const silent = pino({ level: 'silent' });
let current: Runner | undefined;
let cliMain = '';

/** kube-controller-manager with only the Deployment and ReplicaSet controllers, against the bench's plane. */
async function startKubeControllerManager(): Promise<Runner> {
  const assets = findNodeAssets();
  const dir = path.join(plane.dir, `kcm-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const out = openSync(path.join(dir, 'kcm.log'), 'a');
  const child: ChildProcess = spawn(
    assets.kubeControllerManager,
    [
      `--kubeconfig=${plane.kubeconfigPath}`,
      `--authentication-kubeconfig=${plane.kubeconfigPath}`,
      `--authorization-kubeconfig=${plane.kubeconfigPath}`,
      '--controllers=deployment,replicaset',
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      `--cert-dir=${path.join(dir, 'certs')}`,
    ],
    { stdio: ['ignore', out, out] },
  );
  closeSync(out);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const pid = child.pid!;
  // Its informers need a moment to sync; the settle time of every variant covers it.
  await sleep(500);
  if (child.exitCode !== null) throw new Error(`kube-controller-manager exited (${child.exitCode}); see ${dir}/kcm.log`);
  return {
    pid,
    rssBytes: () => procRssBytes(pid),
    cpuSeconds: () => procCpuSeconds(pid),
    logTail: () => '',
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
        await exited;
      }
    },
  };
}

function workload(variant: Variant, ns: string, version: string, replicas: number): Record<string, unknown> {
  const template = {
    metadata: { labels: { app: 'bench', version } },
    spec: {
      containers: [{ name: 'main', image: 'registry.example/app:1', env: [{ name: 'VERSION', value: version }] }],
      terminationGracePeriodSeconds: 1,
    },
  };
  const selector = { matchLabels: { app: 'bench' } };
  return variant === 'deployment'
    ? {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'bench', namespace: ns },
        spec: { replicas, selector, template, strategy: { type: 'Recreate' } },
      }
    : {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'bench', namespace: ns },
        spec: { replicas, selector, template, updateStrategy: { type: 'ReCreate', maxUnavailable: '100%' } },
      };
}

interface Phase {
  ms: number;
  requests: number;
  cpuSeconds: number;
}
interface RunResult {
  scale: Phase;
  recreate: Phase;
  rssMaxMiB: number;
}

async function runOnce(variant: Variant, round: number): Promise<RunResult> {
  const ns = `r${round}-${variant}`;
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const type = variant === 'deployment' ? DEPLOYMENTS : CLONESETS;
  current =
    variant === 'ours'
      ? await startOurManager(plane, cliMain, { featureGates: '' })
      : variant === 'upstream'
        ? await startUpstreamManager(plane, {})
        : await startKubeControllerManager();
  // Upstream starts its controllers' workers a few seconds after /readyz; every variant gets the same time.
  await sleep(4_000);
  let rssMax = current.rssBytes();
  const sampler = setInterval(() => {
    try {
      rssMax = Math.max(rssMax, current!.rssBytes());
    } catch {
      /* the process is stopping */
    }
  }, 250);

  // Live pods by template version, from a watch (the bench's one watch).
  const byVersion = new Map<string, Set<string>>();
  let wake = () => undefined as void;
  const track = (p: Pod, gone = false) => {
    const v = p.metadata.labels?.version ?? '';
    for (const [k, s] of byVersion) if (k !== v) s.delete(p.metadata.name!);
    if (!byVersion.has(v)) byVersion.set(v, new Set());
    if (gone) byVersion.get(v)!.delete(p.metadata.name!);
    else byVersion.get(v)!.add(p.metadata.name!);
    wake();
  };
  const observer = new Informer<Pod>(client, PODS, { namespace: ns, logger: silent });
  observer.addHandlers({ add: (p) => track(p), update: (p) => track(p), delete: (p) => track(p, true) });
  observer.start();
  await observer.waitForSync();
  const count = (v: string) => byVersion.get(v)?.size ?? 0;
  const until = async (what: string, done: () => boolean) => {
    const deadline = Date.now() + args.timeout * 1000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${variant}: ${what} not reached in ${args.timeout} s\n${current?.logTail() ?? ''}`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 1000);
      });
    }
  };
  const phase = async (what: string, start: () => Promise<unknown>, done: () => boolean): Promise<Phase> => {
    const req0 = await apiRequestsServed(plane);
    const cpu0 = current!.cpuSeconds();
    const t0 = performance.now();
    await start();
    await until(what, done);
    const ms = Math.round(performance.now() - t0);
    const cpuSeconds = Number((current!.cpuSeconds() - cpu0).toFixed(2));
    const requests = (await apiRequestsServed(plane)) - req0;
    return { ms, requests, cpuSeconds };
  };

  const N = args.replicas;
  const scale = await phase(
    `${N} pods`,
    () => client.create(type, workload(variant, ns, '1', N) as never),
    () => count('1') >= N,
  );
  log(`${variant}: scale ${JSON.stringify(scale)}`);
  const recreate = await phase(
    `${N} pods of the new template, none of the old`,
    () =>
      client.patch(
        type,
        'bench',
        ns,
        { spec: { template: (workload(variant, ns, '2', N).spec as { template: unknown }).template } },
        PatchStrategy.MergePatch,
      ),
    () => count('2') >= N && count('1') === 0,
  );
  log(`${variant}: recreate ${JSON.stringify(recreate)}`);
  clearInterval(sampler);
  observer.stop();
  const result: RunResult = { scale, recreate, rssMaxMiB: r1(rssMax / MiB) };

  await current.stop();
  current = undefined;
  // Same starting state for the next variant: nothing of this run left (no garbage collector runs here).
  await kubectlOn(plane, ['delete', variant === 'deployment' ? 'deployments,replicasets' : 'clonesets.apps.kruise.io', '--all', '-n', ns]);
  await kubectlOn(plane, ['delete', 'pods', '--all', '-n', ns, '--grace-period=0', '--force', '--wait=false']);
  return result;
}

try {
  await installKruisePeerCrds(plane);
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

  const figures = {
    'scale ms': (r: RunResult) => r.scale.ms,
    'scale requests': (r: RunResult) => r.scale.requests,
    'scale CPU s': (r: RunResult) => r.scale.cpuSeconds,
    'recreate ms': (r: RunResult) => r.recreate.ms,
    'recreate requests': (r: RunResult) => r.recreate.requests,
    'recreate CPU s': (r: RunResult) => r.recreate.cpuSeconds,
    'RSS max MiB': (r: RunResult) => r.rssMaxMiB,
  } as const;
  type Figure = keyof typeof figures;
  const names = Object.keys(figures) as Figure[];
  const medians = Object.fromEntries(
    VARIANTS.map((v) => [v, Object.fromEntries(names.map((k) => [k, r1(median(runs[v].map(figures[k])))]))]),
  ) as Record<Variant, Record<Figure, number>>;
  const ratios = Object.fromEntries(
    VARIANTS.filter((v) => v !== 'ours').map((v) => [v, Object.fromEntries(names.map((k) => [k, ratio(medians.ours[k], medians[v][k])]))]),
  ) as Record<string, Record<Figure, number>>;
  const result = {
    upstream: `kruise-manager ${pinnedKruiseVersion()}`,
    replicas: args.replicas,
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
  const o = medians.ours;
  const vs = (...ks: Figure[]) =>
    Object.entries(ratios)
      .map(([v, r]) => `${ks.map((k) => `${r[k]}x`).join(', ')} ${v}`)
      .join('; ');
  await recordBench(
    'bench:cloneset-peer',
    [
      {
        measure: `CloneSet 0 → ${args.replicas} pods: time, API requests, CPU`,
        figure: `${o['scale ms']} ms, ${o['scale requests']} requests, ${o['scale CPU s']} CPU s`,
        peer: vs('scale ms', 'scale requests', 'scale CPU s'),
      },
      {
        measure: `ReCreate rollout of the ${args.replicas} pods: time, API requests, CPU`,
        figure: `${o['recreate ms']} ms, ${o['recreate requests']} requests, ${o['recreate CPU s']} CPU s`,
        peer: vs('recreate ms', 'recreate requests', 'recreate CPU s'),
      },
      { measure: 'controller RSS, highest sample', figure: `${o['RSS max MiB']} MiB`, peer: vs('RSS max MiB') },
    ],
    { conditions: loadDuringRun(result.loadAverage1m) },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    const row = (cells: (string | number)[]) => cells.map((c, i) => String(c).padStart(i ? 18 : 24)).join('');
    console.log(
      `CloneSet 0 → ${args.replicas} and a ReCreate rollout vs upstream ${result.upstream} and a Deployment (kube-controller-manager), median of ${args.rounds} rotating rounds`,
    );
    console.log(row(['variant', ...names]));
    for (const v of VARIANTS) console.log(row([v, ...names.map((k) => medians[v][k])]));
    for (const [v, r] of Object.entries(ratios)) console.log(row([`ours / ${v}`, ...names.map((k) => `${r[k]}x`)]));
    console.log(
      `webhook calls: ${result.webhookCalls}; load average (1 min) during the runs: ${result.loadAverage1m.join(', ')} on ${result.cores} cores; JSON: ${args.extra.out}`,
    );
  }
} finally {
  await current?.stop().catch(() => undefined);
  await plane.stop();
}

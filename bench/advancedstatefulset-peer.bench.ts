// Advanced StatefulSet scale-up and in-place rollout against the upstream peer, on one real kube-apiserver + etcd,
// one controller at a time, rotating the order every round:
//   ours        our controller-manager as shipped (CLI bundle, MANAGER_NODE_OPTIONS, our webhooks registered);
//   upstream    kruise-manager (test/harness/kruise-peer.ts) at its defaults, with its own webhooks.
// No kubelet runs here: bench/support/stand-in-kubelet.ts writes what the kubelet would (Running, containers
// started with the spec's images, Ready from the readiness gates), the same for both variants.
// Phases, each timed from the write that starts it:
//   scale      an apps.kruise.io/v1beta1 StatefulSet, Parallel, InPlaceIfPossible, 0 → N replicas: until the set
//              reports N available pods;
//   in-place   an image change rolled out in place (maxUnavailable --max-unavailable, default 100%): until every
//              pod runs the new image with InPlaceUpdateReady and Ready True, and the set reports N updated and
//              available (the same UIDs: a pod recreated instead fails the run).
// Per phase: wall time, API requests the API server served meanwhile (apiserver_request_total, every client: the
// stand-in kubelet's status writes are in it, the same for both), controller CPU seconds; per run the highest
// controller RSS sampled every 250 ms.
// Usage: npm run bench:advancedstatefulset-peer [-- --replicas 1000 --rounds 1 --max-unavailable 100%
//        --out out/bench/advancedstatefulset-peer.json --json]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import {
  ADVANCED_STATEFULSETS,
  Informer,
  KubeClient,
  loadKubeConfig,
  NAMESPACES,
  PatchStrategy,
  PODS,
  type KubeObject,
  type Pod,
} from '../src/runtime/core/index.js';
import { bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, kubectlOn, pinnedKruiseVersion } from '../test/harness/kruise-peer.js';
import { benchArgs, median, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import {
  apiRequestsServed,
  bundleOurCli,
  startOurManager,
  startPeerPlane,
  startUpstreamManager,
  WEBHOOK_H2_OPTION,
  webhookProtocol,
  type Runner,
} from './support/peer-runners.js';
import { StandInKubelet } from './support/stand-in-kubelet.js';

const args = benchArgs(
  { replicas: 1000, rounds: 1, timeout: 900 },
  {
    'max-unavailable': { type: 'string', default: '100%' },
    out: { type: 'string', default: path.join('out', 'bench', 'advancedstatefulset-peer.json') },
    ...WEBHOOK_H2_OPTION,
  },
);
const maxUnavailable = /^\d+%$/.test(args.extra['max-unavailable']) ? args.extra['max-unavailable'] : Number(args.extra['max-unavailable']);
if (typeof maxUnavailable === 'number' && !(Number.isInteger(maxUnavailable) && maxUnavailable > 0)) {
  throw new Error(`--max-unavailable: "${args.extra['max-unavailable']}" is neither a positive count nor a percentage like 25%`);
}
if (!(Number.isInteger(args.replicas) && args.replicas > 0)) throw new Error(`--replicas: ${args.replicas} is not a positive count`);
bypassProxyForLoopback();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (x: number) => Math.round(x * 10) / 10;
const MiB = 2 ** 20;
const log = (msg: string) => console.error(`[bench] ${msg}`);

type Variant = 'ours' | 'upstream';
const VARIANTS: Variant[] = ['ours', 'upstream'];
const IMAGE = (v: number) => `registry.example/app:${v}`;

const plane = await startPeerPlane(args.extra['webhook-h2']);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 120_000 });
const silent = pino({ level: 'silent' });
let current: Runner | undefined;
let cliMain = '';

function statefulSet(ns: string, replicas: number): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'bench', namespace: ns },
    spec: {
      replicas,
      serviceName: 'bench',
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: 'bench' } },
      template: {
        metadata: { labels: { app: 'bench' } },
        spec: {
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
          containers: [{ name: 'main', image: IMAGE(1) }],
          terminationGracePeriodSeconds: 1,
        },
      },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable } },
    },
  };
}

interface Phase {
  ms: number;
  requests: number;
  cpuSeconds: number;
}
interface RunResult {
  scale: Phase;
  inPlace: Phase;
  rssMaxMiB: number;
  kubeletWrites: number;
}

const status = (o: KubeObject | undefined) =>
  ((o as { status?: Record<string, number> } | undefined)?.status ?? {}) as Record<string, number>;
const isTrue = (p: Pod, type: string) => p.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

async function runOnce(variant: Variant, round: number): Promise<RunResult> {
  const ns = `r${round}-${variant}`;
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  current = variant === 'ours' ? await startOurManager(plane, cliMain, { featureGates: '' }) : await startUpstreamManager(plane, {});
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
  const kubelet = new StandInKubelet(client, ns, silent);
  await kubelet.start();

  // The bench's watches: the pods and the set.
  let wake = () => undefined as void;
  const pods = new Informer<Pod>(client, PODS, { namespace: ns, logger: silent });
  const sets = new Informer<KubeObject>(client, ADVANCED_STATEFULSETS, { namespace: ns, logger: silent });
  for (const inf of [pods, sets] as Informer<KubeObject>[]) {
    inf.addHandlers({ add: () => wake(), update: () => wake(), delete: () => wake() });
    inf.start();
  }
  await pods.waitForSync();
  await sets.waitForSync();
  const until = async (what: string, done: () => boolean) => {
    const deadline = Date.now() + args.timeout * 1000;
    while (!done()) {
      if (Date.now() > deadline) {
        const st = JSON.stringify(status(sets.get(`${ns}/bench`)));
        throw new Error(`${variant}: ${what} not reached in ${args.timeout} s; status ${st}\n${current?.logTail() ?? ''}`);
      }
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
    `${N} available pods`,
    () => client.create(ADVANCED_STATEFULSETS, statefulSet(ns, N) as never),
    () => pods.list().length >= N && status(sets.get(`${ns}/bench`)).availableReplicas === N,
  );
  log(`${variant}: scale ${JSON.stringify(scale)}`);
  const uids = new Map(pods.list().map((p) => [p.metadata.name!, p.metadata.uid]));
  const updated = () => {
    const ps = pods.list();
    return (
      ps.length === N &&
      ps.every((p) => p.spec!.containers[0]!.image === IMAGE(2) && isTrue(p, 'InPlaceUpdateReady') && isTrue(p, 'Ready')) &&
      status(sets.get(`${ns}/bench`)).updatedReplicas === N &&
      status(sets.get(`${ns}/bench`)).availableReplicas === N
    );
  };
  const inPlace = await phase(
    `${N} pods updated in place and ready`,
    () =>
      client.patch(
        ADVANCED_STATEFULSETS,
        'bench',
        ns,
        { spec: { template: { spec: { containers: [{ name: 'main', image: IMAGE(2) }] } } } },
        PatchStrategy.MergePatch,
      ),
    updated,
  );
  const recreated = pods.list().filter((p) => uids.get(p.metadata.name!) !== p.metadata.uid);
  if (recreated.length > 0) throw new Error(`${variant}: ${recreated.length} pods were recreated instead of updated in place`);
  log(`${variant}: in-place ${JSON.stringify(inPlace)}`);
  clearInterval(sampler);
  pods.stop();
  sets.stop();
  kubelet.stop();
  const result: RunResult = { scale, inPlace, rssMaxMiB: r1(rssMax / MiB), kubeletWrites: kubelet.writes };

  await current.stop();
  current = undefined;
  // Same starting state for the next variant: nothing of this run left (no garbage collector runs here).
  await kubectlOn(plane, ['delete', 'statefulsets.apps.kruise.io,controllerrevisions', '--all', '-n', ns]);
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
    'in-place ms': (r: RunResult) => r.inPlace.ms,
    'in-place requests': (r: RunResult) => r.inPlace.requests,
    'in-place CPU s': (r: RunResult) => r.inPlace.cpuSeconds,
    'RSS max MiB': (r: RunResult) => r.rssMaxMiB,
  } as const;
  type Figure = keyof typeof figures;
  const names = Object.keys(figures) as Figure[];
  const medians = Object.fromEntries(
    VARIANTS.map((v) => [v, Object.fromEntries(names.map((k) => [k, r1(median(runs[v].map(figures[k])))]))]),
  ) as Record<Variant, Record<Figure, number>>;
  const ratios = Object.fromEntries(names.map((k) => [k, ratio(medians.ours[k], medians.upstream[k])])) as Record<Figure, number>;
  const result = {
    upstream: `kruise-manager ${pinnedKruiseVersion()}`,
    replicas: args.replicas,
    maxUnavailable,
    rounds: args.rounds,
    medians,
    ratiosOursToUpstream: ratios,
    runs,
    webhookCalls: webhookProtocol(args.extra['webhook-h2']),
    loadAverage1m: loads.map((l) => Number(l[0]!.toFixed(2))),
    cores: cpus().length,
  };
  mkdirSync(path.dirname(args.extra.out), { recursive: true });
  writeFileSync(args.extra.out, JSON.stringify(result, null, 2) + '\n');
  const o = medians.ours;
  const vs = (...ks: Figure[]) => `${ks.map((k) => `${ratios[k]}x`).join(', ')} upstream`;
  await recordBench(
    'bench:advancedstatefulset-peer',
    [
      {
        measure: `Advanced StatefulSet (Parallel) 0 → ${args.replicas} available pods: time, API requests, CPU`,
        figure: `${o['scale ms']} ms, ${o['scale requests']} requests, ${o['scale CPU s']} CPU s`,
        peer: vs('scale ms', 'scale requests', 'scale CPU s'),
      },
      {
        measure: `in-place image rollout of the ${args.replicas} pods (maxUnavailable ${maxUnavailable}): time, API requests, CPU`,
        figure: `${o['in-place ms']} ms, ${o['in-place requests']} requests, ${o['in-place CPU s']} CPU s`,
        peer: vs('in-place ms', 'in-place requests', 'in-place CPU s'),
      },
      { measure: 'controller RSS, highest sample', figure: `${o['RSS max MiB']} MiB`, peer: vs('RSS max MiB') },
    ],
    { conditions: loadDuringRun(result.loadAverage1m) },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    const row = (cells: (string | number)[]) => cells.map((c, i) => String(c).padStart(i ? 18 : 24)).join('');
    console.log(
      `Advanced StatefulSet 0 → ${args.replicas} and an in-place rollout vs upstream ${result.upstream}, median of ${args.rounds} rotating rounds`,
    );
    console.log(row(['variant', ...names]));
    for (const v of VARIANTS) console.log(row([v, ...names.map((k) => medians[v][k])]));
    console.log(row(['ours / upstream', ...names.map((k) => `${ratios[k]}x`)]));
    console.log(
      `webhook calls: ${result.webhookCalls}; load average (1 min) during the runs: ${result.loadAverage1m.join(', ')} on ${result.cores} cores; JSON: ${args.extra.out}`,
    );
  }
} finally {
  await current?.stop().catch(() => undefined);
  await plane.stop();
}

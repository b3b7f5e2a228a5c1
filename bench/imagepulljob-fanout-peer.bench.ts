// ImagePullJob fan-out to many nodes against the upstream peer, on one real kube-apiserver + etcd, one manager at
// a time, rotating the order every round:
//   ours        our controller-manager as shipped (CLI bundle, MANAGER_NODE_OPTIONS, our webhooks registered);
//   upstream    kruise-manager (test/harness/kruise-peer.ts) with its own webhooks;
// both with ImagePullJobGate on. The nodes are Node objects only (Ready for ten minutes, no kubelet: the managers
// read nothing else of a node), and the bench plays every node's daemon: one watch of NodeImages, and for each tag
// a NodeImage's spec asks for, one status write reporting it pulled at that version, as a daemon whose pull took
// no time would. Both managers see the same daemon.
// Phases, each timed from the moment that starts it:
//   nodeimages  the manager spawned → one NodeImage per node (the manager creates them from the Nodes; its start-up
//               counts, as after a restart);
//   fan-out     the ImagePullJob's create (parallelism = nodes) → its status reports every node succeeded and a
//               completionTime (the manager writes the tag into every NodeImage and aggregates the daemons' reports).
// Per phase: wall time, API requests the API server served meanwhile (apiserver_request_total, every client: the
// stand-in daemons write one status per node and the bench one job), manager CPU seconds; per run the highest
// manager RSS sampled every 250 ms.
// Usage: npm run bench:imagepulljob-fanout-peer [-- --nodes 1000,5000 --rounds 2 --out out/bench/imagepulljob-fanout-peer.json --json]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import {
  IMAGE_PULL_JOBS,
  Informer,
  KubeClient,
  loadKubeConfig,
  NAMESPACES,
  NODE_IMAGES,
  NODE_POD_PROBES,
  NODES,
  PatchStrategy,
  type NodeImageObject,
} from '../src/runtime/core/index.js';
import { bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, pinnedKruiseVersion } from '../test/harness/kruise-peer.js';
import { benchArgs, median, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import { pool } from './support/job-pods.js';
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

const args = benchArgs(
  { rounds: 2, timeout: 600 },
  {
    /** Node counts, smallest first: the curve's points (nodes are added between points, never removed). */
    nodes: { type: 'string', default: '1000,5000' },
    out: { type: 'string', default: path.join('out', 'bench', 'imagepulljob-fanout-peer.json') },
    ...WEBHOOK_H2_OPTION,
  },
);
const SIZES = args.extra.nodes.split(',').map((x) => Number(x.trim()));
if (SIZES.some((n, i) => !Number.isInteger(n) || n < 1 || (i > 0 && n <= SIZES[i - 1]!)))
  throw new Error(`--nodes: "${args.extra.nodes}" is not a rising list of node counts (e.g. --nodes 1000,5000)`);
bypassProxyForLoopback();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (x: number) => Math.round(x * 10) / 10;
const MiB = 2 ** 20;
const log = (msg: string) => console.error(`[bench] ${msg}`);
const GATES = 'ImagePullJobGate=true';
const JOBS_NS = 'pull-jobs';

type Variant = 'ours' | 'upstream';
const VARIANTS: Variant[] = ['ours', 'upstream'];

const plane = await startPeerPlane(args.extra['webhook-h2']);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 120_000 });
const silent = pino({ level: 'silent' });
let current: Runner | undefined;
let cliMain = '';

/**
 * Node objects `from`..`to`-1, Ready since ten minutes ago (upstream makes a NodeImage only for a node Ready for 30 s),
 * each with its NodePodProbe, as a manager that ran before leaves them: both managers make one per node, and the first
 * to start after the nodes came would otherwise make them inside its NodeImage phase, for the other as well.
 */
async function createNodes(from: number, to: number): Promise<void> {
  const readySince = new Date(Date.now() - 600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const names = Array.from({ length: to - from }, (_, i) => `node-${String(from + i).padStart(6, '0')}`);
  await pool(names, 16, async (name) => {
    await client.create(NODES, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name } },
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: readySince, lastTransitionTime: readySince },
        ],
      },
    } as never);
  });
  await pool(names, 16, async (name) => {
    await client.create(NODE_POD_PROBES, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'NodePodProbe',
      metadata: { name },
      spec: {},
    } as never);
  });
}

/**
 * Every node's daemon, played by one watch: a NodeImage whose spec names a tag its status does not report at the
 * spec's version gets one status write reporting every such tag pulled (Succeeded, progress 100, that version).
 */
function standInDaemons(): { stop(): void; writes: () => number } {
  const informer = new Informer<NodeImageObject>(client, NODE_IMAGES, { logger: silent });
  const waiting = new Set<string>();
  const inFlight = new Set<string>();
  let writes = 0;
  let stopped = false;
  const due = (ni: NodeImageObject): boolean =>
    Object.entries(ni.spec?.images ?? {}).some(([image, spec]) =>
      spec.tags.some((t) => {
        const st = ni.status?.imageStatuses?.[image]?.tags.find((s) => s.tag === t.tag);
        return !st || (st.version ?? 0) !== (t.version ?? 0) || st.phase !== 'Succeeded';
      }),
    );
  const report = async (name: string): Promise<void> => {
    const ni = informer.get(name);
    if (!ni || !due(ni)) return;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const imageStatuses: Record<string, unknown> = {};
    let tags = 0;
    for (const [image, spec] of Object.entries(ni.spec?.images ?? {})) {
      imageStatuses[image] = {
        tags: spec.tags.map((t) => ({
          tag: t.tag,
          phase: 'Succeeded',
          progress: 100,
          version: t.version ?? 0,
          imageID: `${image}@sha256:${'0'.repeat(64)}`,
          startTime: now,
          completionTime: now,
        })),
      };
      tags += spec.tags.length;
    }
    await client.patch(
      NODE_IMAGES,
      name,
      undefined,
      { status: { desired: tags, succeeded: tags, failed: 0, pulling: 0, imageStatuses } },
      PatchStrategy.MergePatch,
      { subresource: 'status' },
    );
    writes++;
  };
  const pump = () => {
    // A Set may lose its current entry while iterated: no copy of the whole queue per completed write.
    for (const name of waiting) {
      if (stopped || inFlight.size >= 32) return;
      if (inFlight.has(name)) continue;
      waiting.delete(name);
      inFlight.add(name);
      void report(name)
        .catch(() => waiting.add(name)) // a conflict or a NodeImage deleted meanwhile: looked at again
        .finally(() => {
          inFlight.delete(name);
          pump();
        });
    }
  };
  const seen = (ni: NodeImageObject) => {
    if (due(ni)) {
      waiting.add(ni.metadata.name!);
      pump();
    }
  };
  informer.addHandlers({ add: seen, update: seen });
  informer.start();
  return {
    stop: () => {
      stopped = true;
      informer.stop();
    },
    writes: () => writes,
  };
}

interface Phase {
  ms: number;
  requests: number;
  cpuSeconds: number;
}
interface RunResult {
  nodeimages: Phase;
  fanout: Phase;
  daemonWrites: number;
  rssMaxMiB: number;
}

async function runOnce(variant: Variant, round: number, N: number): Promise<RunResult> {
  // Live NodeImages and the job, from the bench's watches.
  const nodeImages = new Informer<NodeImageObject>(client, NODE_IMAGES, { logger: silent });
  let wake = () => undefined as void;
  nodeImages.addHandlers({ add: () => wake(), delete: () => wake() });
  nodeImages.start();
  await nodeImages.waitForSync();
  if (nodeImages.list().length !== 0) throw new Error(`${nodeImages.list().length} NodeImages left from the run before`);
  const until = async (what: string, done: () => boolean) => {
    const deadline = Date.now() + args.timeout * 1000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${variant}: ${what} not reached in ${args.timeout} s\n${current?.logTail() ?? ''}`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 500);
      });
    }
  };

  const req0 = await apiRequestsServed(plane);
  const t0 = performance.now();
  current =
    variant === 'ours'
      ? await startOurManager(plane, cliMain, { featureGates: GATES })
      : await startUpstreamManager(plane, { featureGates: GATES });
  let rssMax = current.rssBytes();
  const sampler = setInterval(() => {
    try {
      rssMax = Math.max(rssMax, current!.rssBytes());
    } catch {
      /* the process is stopping */
    }
  }, 250);
  const cpuAtStart = current.cpuSeconds();
  await until(`${N} NodeImages`, () => nodeImages.list().length >= N);
  const nodeimages: Phase = {
    ms: Math.round(performance.now() - t0),
    requests: (await apiRequestsServed(plane)) - req0,
    cpuSeconds: Number((current.cpuSeconds() - cpuAtStart).toFixed(2)),
  };
  log(`${variant}: nodeimages ${JSON.stringify(nodeimages)}`);
  // Both managers settle (upstream starts its workers a few seconds after /readyz) before the job.
  await sleep(4_000);

  const daemons = standInDaemons();
  const name = `fanout-${N}-r${round}-${variant}`;
  const image = `registry.example/app:${name}`;
  const jobs = new Informer<{ metadata: { name?: string }; status?: { succeeded?: number; completionTime?: string } }>(
    client,
    IMAGE_PULL_JOBS,
    {
      namespace: JOBS_NS,
      logger: silent,
    },
  );
  jobs.addHandlers({ add: () => wake(), update: () => wake() });
  jobs.start();
  await jobs.waitForSync();
  const req1 = await apiRequestsServed(plane);
  const cpu1 = current.cpuSeconds();
  const t1 = performance.now();
  await client.create(IMAGE_PULL_JOBS, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name, namespace: JOBS_NS },
    spec: {
      image,
      parallelism: N,
      completionPolicy: { type: 'Always', activeDeadlineSeconds: args.timeout },
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 60 },
    },
  } as never);
  await until(`ImagePullJob ${name} succeeded on ${N} nodes`, () => {
    const st = jobs.get(`${JOBS_NS}/${name}`)?.status;
    return st?.succeeded === N && st.completionTime !== undefined;
  });
  const fanout: Phase = {
    ms: Math.round(performance.now() - t1),
    requests: (await apiRequestsServed(plane)) - req1,
    cpuSeconds: Number((current.cpuSeconds() - cpu1).toFixed(2)),
  };
  log(`${variant}: fan-out ${JSON.stringify(fanout)}`);
  clearInterval(sampler);
  daemons.stop();
  jobs.stop();
  const result: RunResult = { nodeimages, fanout, daemonWrites: daemons.writes(), rssMaxMiB: r1(rssMax / MiB) };
  await current.stop();
  current = undefined;
  // Same starting state for the next manager: no job, no NodeImage (each manager creates its own).
  await client.delete(IMAGE_PULL_JOBS, name, JOBS_NS);
  await pool(
    nodeImages.list().map((ni) => ni.metadata.name!),
    16,
    async (n) => void (await client.delete(NODE_IMAGES, n).catch(() => undefined)),
  );
  await until('no NodeImage left', () => nodeImages.list().length === 0);
  nodeImages.stop();
  log(`${variant}: job ${name} deleted, NodeImages removed`);
  return result;
}

try {
  await installKruisePeerCrds(plane);
  cliMain = await bundleOurCli();
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: JOBS_NS } });
  const loads: number[][] = [loadavg()];
  const figures = {
    'nodeimages ms': (r: RunResult) => r.nodeimages.ms,
    'nodeimages requests': (r: RunResult) => r.nodeimages.requests,
    'nodeimages CPU s': (r: RunResult) => r.nodeimages.cpuSeconds,
    'fan-out ms': (r: RunResult) => r.fanout.ms,
    'fan-out requests': (r: RunResult) => r.fanout.requests,
    'fan-out CPU s': (r: RunResult) => r.fanout.cpuSeconds,
    'RSS max MiB': (r: RunResult) => r.rssMaxMiB,
  } as const;
  type Figure = keyof typeof figures;
  const names = Object.keys(figures) as Figure[];
  const points: Array<{
    nodes: number;
    medians: Record<Variant, Record<Figure, number>>;
    ratiosOursToUpstream: Record<Figure, number>;
    runs: Record<Variant, RunResult[]>;
  }> = [];
  let made = 0;
  for (const N of SIZES) {
    const t = performance.now();
    await createNodes(made, N);
    made = N;
    log(`${N} Nodes (${Math.round(performance.now() - t)} ms to add them)`);
    const runs = Object.fromEntries(VARIANTS.map((v) => [v, [] as RunResult[]])) as Record<Variant, RunResult[]>;
    for (let round = 0; round < args.rounds; round++) {
      for (const variant of VARIANTS.map((_, k) => VARIANTS[(k + round) % VARIANTS.length]!)) {
        const r = await runOnce(variant, round, N);
        runs[variant].push(r);
        loads.push(loadavg());
        log(`${N} nodes, round ${round + 1} ${variant}: ${JSON.stringify(r)}`);
      }
    }
    const medians = Object.fromEntries(
      VARIANTS.map((v) => [v, Object.fromEntries(names.map((k) => [k, r1(median(runs[v].map(figures[k])))]))]),
    ) as Record<Variant, Record<Figure, number>>;
    const ratiosOursToUpstream = Object.fromEntries(names.map((k) => [k, ratio(medians.ours[k], medians.upstream[k])])) as Record<
      Figure,
      number
    >;
    points.push({ nodes: N, medians, ratiosOursToUpstream, runs });
  }
  const result = {
    upstream: `kruise-manager ${pinnedKruiseVersion()}`,
    rounds: args.rounds,
    points,
    webhookCalls: webhookProtocol(args.extra['webhook-h2']),
    loadAverage1m: loads.map((l) => Number(l[0]!.toFixed(2))),
    cores: cpus().length,
  };
  mkdirSync(path.dirname(args.extra.out), { recursive: true });
  writeFileSync(args.extra.out, JSON.stringify(result, null, 2) + '\n');
  await recordBench(
    'bench:imagepulljob-fanout-peer',
    points.flatMap((p) => {
      const o = p.medians.ours;
      const vs = (...ks: Figure[]) => `${ks.map((k) => `${p.ratiosOursToUpstream[k]}x`).join(', ')} upstream`;
      return [
        {
          measure: `${p.nodes} Ready nodes: a NodeImage for each from the manager's spawn: time, API requests, CPU`,
          figure: `${o['nodeimages ms']} ms, ${o['nodeimages requests']} requests, ${o['nodeimages CPU s']} CPU s`,
          peer: vs('nodeimages ms', 'nodeimages requests', 'nodeimages CPU s'),
        },
        {
          measure: `${p.nodes} nodes: ImagePullJob fan-out (parallelism ${p.nodes}, stand-in daemons) to completion: time, API requests, CPU`,
          figure: `${o['fan-out ms']} ms, ${o['fan-out requests']} requests, ${o['fan-out CPU s']} CPU s`,
          peer: vs('fan-out ms', 'fan-out requests', 'fan-out CPU s'),
        },
        { measure: `${p.nodes} nodes: manager RSS, highest sample`, figure: `${o['RSS max MiB']} MiB`, peer: vs('RSS max MiB') },
      ];
    }),
    { conditions: loadDuringRun(result.loadAverage1m) },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    const row = (cells: (string | number)[]) => cells.map((c, i) => String(c).padStart(i ? 20 : 24)).join('');
    console.log(`ImagePullJob fan-out vs upstream ${result.upstream}, median of ${args.rounds} rotating rounds per point`);
    console.log(row(['nodes / variant', ...names]));
    for (const p of points) {
      for (const v of VARIANTS) console.log(row([`${p.nodes} ${v}`, ...names.map((k) => p.medians[v][k])]));
      console.log(row([`${p.nodes} ours / upstream`, ...names.map((k) => `${p.ratiosOursToUpstream[k]}x`)]));
    }
    console.log(
      `webhook calls: ${result.webhookCalls}; load average (1 min) during the runs: ${result.loadAverage1m.join(', ')} on ${result.cores} cores; JSON: ${args.extra.out}`,
    );
  }
} finally {
  await current?.stop().catch(() => undefined);
  await plane.stop();
}

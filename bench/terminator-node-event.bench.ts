// The Job sidecar terminator's cost per node event in a crowded cache: --pods pods on --nodes nodes (a share of
// them Job pods with kill sidecars, the rest plain pods), one node's `type` label flipping (virtual-kubelet or
// not), which sends that node's candidate pods back to the queue. CPU and wall time of the node handler of:
//   before   the terminator of --base (a git commit, checked out in a temporary worktree for this run): it walks
//            every cached pod of the cluster on each node event;
//   after    this tree's terminator: it reads the node's pods through the informer's `spec.nodeName` index.
// Both are set up by their own controller definition over the same pod informer (real, src/runtime/core/informer.ts,
// filled from an in-memory stand-in of the API server) and get the same events, in turn (rotating order); each
// event flips a different node. Every event's enqueued keys must be the same for both (checked on every round).
// Usage: npm run bench:terminator-node-event [-- --pods 50000 --nodes 500 --jobs-percent 20 --reps 200 --base <commit> --json]
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { ControllerContext, ControllerDefinition } from '../src/runtime/core/controller.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  Informer,
  NODES,
  PODS,
  type InformerHandlers,
  type KubeClient,
  type KubeObject,
  type Node,
  type Pod,
  type ResourceType,
} from '../src/runtime/core/index.js';
import { sidecarTerminator } from '../src/runtime/controllers/sidecarterminator/index.js';
import { benchArgs, checkoutBase, collectGarbage, cpuMs, median, percentile, ratio, repeat } from './lib.js';
import { recordBench } from './record.js';

/** The last commit whose terminator walks every cached pod on a node event (the parent of the index change). */
const DEFAULT_BASE = 'b90a451';

const args = benchArgs(
  { pods: 50_000, nodes: 500, 'jobs-percent': 20, reps: 200, warmup: 20 },
  { base: { type: 'string', default: DEFAULT_BASE } },
);
const log = (msg: string) => {
  if (!args.json) console.error(`[bench] ${msg}`);
};
if (args.nodes < 1 || args.pods < args.nodes) throw new Error(`--pods (${args.pods}) must be at least --nodes (${args.nodes}) >= 1`);

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const nodeName = (i: number) => `node-${String(i).padStart(4, '0')}`;

// ---- The objects: pods spread evenly over the nodes, every (100 / jobs-percent)th one a Job pod with a kill sidecar

const jobEvery = Math.max(1, Math.round(100 / Math.max(1, args['jobs-percent'])));
const podItems: Pod[] = Array.from({ length: args.pods }, (_, i) => {
  // Pod i lands on node i mod --nodes; counting per node (not per pod) gives every node the same share of Job pods.
  const job = Math.floor(i / args.nodes) % jobEvery === 0;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: `ns-${i % 40}`, uid: `uid-${i}`, resourceVersion: '1' },
    spec: {
      nodeName: nodeName(i % args.nodes),
      restartPolicy: job ? 'Never' : 'Always',
      containers: [
        { name: 'main', image: 'registry.example/app:1' },
        ...(job
          ? [{ name: 'proxy', image: 'registry.example/proxy:1', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] }]
          : []),
      ],
    },
    status: { phase: 'Running' },
  } as Pod;
});
const nodeItems: Node[] = Array.from({ length: args.nodes }, (_, i) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: nodeName(i), uid: `node-uid-${i}`, resourceVersion: '1', labels: {} },
}));

// ---- The in-memory API server stand-in: lists and silent watches (the bench sends the events itself) ------

const store = new Map<string, KubeObject[]>([
  [PODS.resource, podItems],
  [NODES.resource, nodeItems],
  [CONTAINER_RECREATE_REQUESTS.resource, []],
]);
const client = {
  list: (type: ResourceType) =>
    Promise.resolve({
      apiVersion: 'v1',
      kind: `${type.kind}List`,
      metadata: { resourceVersion: '1' },
      items: structuredClone(store.get(type.resource) ?? []),
    }),
  watch: () => Promise.resolve(new AbortController()),
} as unknown as KubeClient;

const logger = pino({ level: 'silent' });
const pods = new Informer<Pod>(client, PODS, { logger, pageSize: 5_000 });
const crrs = new Informer<KubeObject>(client, CONTAINER_RECREATE_REQUESTS, { logger });
for (const i of [pods, crrs]) i.start();
await Promise.all([pods, crrs].map((i) => i.waitForSync()));
log(
  `cache: ${pods.size} pods on ${args.nodes} nodes, ${podItems.filter((p) => p.spec?.restartPolicy === 'Never').length} of them Job pods`,
);

/**
 * Sets a definition up over the shared pod informer and a nodes informer of its own that only records the
 * handlers: the bench calls the node update handler itself, so only the terminator's own work is measured.
 */
function setUp(def: ControllerDefinition): { onNodeUpdate: (n: Node, old: Node) => void; enqueued: string[] } {
  const nodeHandlers: InformerHandlers<Node>[] = [];
  const nodes = {
    addHandlers: (h: InformerHandlers<Node>) => void nodeHandlers.push(h),
    get: () => undefined,
  } as unknown as Informer<Node>;
  const byType = new Map<string, unknown>([
    [PODS.resource, pods],
    [NODES.resource, nodes],
    [CONTAINER_RECREATE_REQUESTS.resource, crrs],
  ]);
  const ctx = {
    client,
    informers: { for: (type: ResourceType) => byType.get(type.resource) },
    events: undefined,
    logger,
    featureGates: new Map(),
    options: undefined,
  } as unknown as ControllerContext;
  const enqueued: string[] = [];
  def.setup(ctx, (key) => enqueued.push(key));
  const handlers = nodeHandlers.find((h) => h.update !== undefined);
  if (!handlers) throw new Error(`${def.name}: registered no node update handler`);
  return { onNodeUpdate: (n, old) => handlers.update!(n, old), enqueued };
}

// ---- The base commit's terminator, from a temporary worktree ---------------------------------------------------

const baseTree = checkoutBase(args.extra.base, 'terminator-node-event-base-');
try {
  const { baseCommit, head } = baseTree;
  const baseModule = await baseTree.importModule<{
    sidecarTerminator: ControllerDefinition;
  }>('src/runtime/controllers/sidecarterminator/index.ts');
  const variants = { before: setUp(baseModule.sidecarTerminator), after: setUp(sidecarTerminator) };
  const candidatesPerNode = Math.ceil(args.pods / args.nodes / jobEvery);

  let round = 0;
  const lastKeys: Partial<Record<'before' | 'after', string>> = {};
  const samples = repeat(['before', 'after'] as const, { warmup: args.warmup, reps: args.reps, order: 'rotate' }, (name) => {
    // Each round flips the label of the next node; both variants see the same node in one round.
    const i = Math.floor(round++ / 2) % args.nodes;
    const old = nodeItems[i]!;
    const flipped: Node = { ...old, metadata: { ...old.metadata, labels: { type: 'virtual-kubelet' } } };
    const v = variants[name];
    v.enqueued.length = 0;
    collectGarbage();
    const c0 = cpuMs();
    const t0 = performance.now();
    v.onNodeUpdate(flipped, old);
    const wall = performance.now() - t0;
    const cpu = cpuMs() - c0;
    lastKeys[name] = [...v.enqueued].sort().join(',');
    if (v.enqueued.length === 0) throw new Error(`${name}: node ${old.metadata.name}'s label flip enqueued no pod`);
    if (lastKeys.before !== undefined && lastKeys.after !== undefined) {
      if (lastKeys.before !== lastKeys.after) throw new Error(`node ${old.metadata.name}: before and after enqueued different pods`);
      lastKeys.before = lastKeys.after = undefined;
    }
    return { wall, cpu, keys: v.enqueued.length };
  });

  const stat = (name: 'before' | 'after') => {
    const wall = samples[name].map((s) => s.wall);
    const cpu = samples[name].map((s) => s.cpu);
    return { wallMedianMs: r3(median(wall)), wallP90Ms: r3(percentile(wall, 0.9)), cpuMedianMs: r3(median(cpu)) };
  };
  const result = {
    bench: 'terminator-node-event',
    cachedPods: pods.size,
    nodes: args.nodes,
    candidatesPerNode,
    enqueuedPerEvent: median(samples.after.map((s) => s.keys)),
    reps: args.reps,
    base: baseCommit,
    head,
    before: stat('before'),
    after: stat('after'),
    // Per-event CPU is far below the process clock's resolution for the index; the ratio is of medians of wall time.
    speedup: ratio(median(samples.before.map((s) => s.wall)), median(samples.after.map((s) => s.wall))),
  };
  const { before, after } = result;
  const n = (x: number) => x.toLocaleString('en-US');
  await recordBench(
    'bench:terminator-node-event',
    [
      {
        measure: `Sidecar terminator, one node's type label flipping among ${n(pods.size)} cached pods on ${n(args.nodes)} nodes (${result.enqueuedPerEvent} Job pods re-queued): handler wall, CPU`,
        figure: `${after.wallMedianMs} ms (p90 ${after.wallP90Ms}), ${after.cpuMedianMs} ms CPU`,
        peer: `${ratio(after.wallMedianMs, before.wallMedianMs, 4)}x wall of the whole-cache walk (${baseCommit}: ${before.wallMedianMs} ms, p90 ${before.wallP90Ms}, ${before.cpuMedianMs} ms CPU)`,
      },
    ],
    { conditions: `${args.reps} events each, rotating order` },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(`Terminator node event, ${pods.size} cached pods on ${args.nodes} nodes, ${args.reps} events:`);
    for (const name of ['before', 'after'] as const) {
      const s = result[name];
      console.log(
        `  ${name.padEnd(6)} (${name === 'before' ? baseCommit : head}): median ${s.wallMedianMs} ms wall (p90 ${s.wallP90Ms}), ${s.cpuMedianMs} ms CPU`,
      );
    }
    console.log(`  speedup: ${result.speedup}x`);
  }
} finally {
  for (const i of [pods, crrs]) i.stop();
  baseTree.remove();
}

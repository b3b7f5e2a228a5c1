// One CloneSet reconcile in a crowded cache: a CloneSet of --replicas pods (ready, updated, nothing to do)
// in a cache of --pods pods (the rest owned by other controllers, in its namespace and in others), --pvcs
// PVCs and --revisions ControllerRevisions of others. Time per reconcile, wall and CPU, of:
//   before   the CloneSet controller of --base (a git commit, checked out in a temporary worktree for this
//            run): it walks every cached pod, PVC and revision of the cluster on each reconcile;
//   after    this tree's controller: it reads its own pods, PVCs and revisions through informer indexes.
// Both reconcile the same CloneSet over the same informers, in turn (rotating order), after warm-up rounds.
// The informers are real (src/runtime/core/informer.ts); they are filled from an in-memory stand-in of the
// API server, which also answers the one consistency list each reconciler makes at its start and counts
// writes: a measured reconcile that writes anything is an error (the round is meant to be a no-op).
// Usage: npm run bench:cloneset-reconcile [-- --replicas 1000 --pods 50000 --pvcs 10000 --revisions 5000 --reps 30
//        --base <commit> --json]
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import {
  CLONESETS,
  CONTROLLER_REVISIONS,
  EventRecorder,
  Informer,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  type KubeClient,
  type KubeObject,
  type Pod,
  type ResourceType,
  type WatchEventType,
} from '../src/runtime/core/index.js';
import type { ControllerContext, Reconciler } from '../src/runtime/core/controller.js';
import { CloneSetReconciler } from '../src/runtime/controllers/cloneset/reconcile.js';
import { cloneSetRevision } from '../src/runtime/controllers/cloneset/revision-decision.js';
import { cloneSetOwnerReference } from '../src/runtime/controllers/cloneset/scale-decision.js';
import type { CloneSetObject } from '../src/runtime/controllers/cloneset/pods.js';
import { shortHash } from '../src/runtime/control/workload-pods.js';
import { benchArgs, checkoutBase, collectGarbage, cpuMs, median, percentile, ratio, repeatAsync } from './lib.js';
import { recordBench } from './record.js';

/** The last commit whose CloneSet controller walks the whole cache (the parent of the cut by phase). */
const DEFAULT_BASE = 'd08a482';

const args = benchArgs(
  { replicas: 1000, pods: 50_000, pvcs: 10_000, revisions: 5_000, reps: 30, warmup: 5 },
  { base: { type: 'string', default: DEFAULT_BASE } },
);
const log = (msg: string) => {
  if (!args.json) console.error(`[bench] ${msg}`);
};
if (args.pods < args.replicas) throw new Error(`--pods (${args.pods}) must be at least --replicas (${args.replicas})`);

const NS = 'bench';
const OTHER_NAMESPACES = 50;
const r2 = (x: number) => Math.round(x * 100) / 100;

// ---- The objects -------------------------------------------------------------------------------------

const cloneSet: CloneSetObject = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: NS, uid: 'uid-web', resourceVersion: '1', generation: 1 },
  spec: {
    replicas: args.replicas,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    },
    updateStrategy: { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 },
    revisionHistoryLimit: 10,
  },
} as CloneSetObject;

const ours = cloneSetRevision({
  parentName: 'web',
  namespace: NS,
  template: cloneSet.spec.template as Record<string, unknown>,
  templateLabels: { app: 'web' },
  parentAnnotations: {},
  vcts: undefined,
  collisionCount: 0,
  revision: 1,
  ownerReference: cloneSetOwnerReference(cloneSet),
});
ours.metadata.resourceVersion = '1';
const revName = ours.metadata.name!;

const owner = (kind: string, name: string, uid: string) => [
  { apiVersion: kind === 'CloneSet' ? 'apps.kruise.io/v1alpha1' : 'apps/v1', kind, name, uid, controller: true, blockOwnerDeletion: true },
];

function pod(ns: string, name: string, labels: Record<string, string>, ownerReferences: KubeObject['metadata']['ownerReferences']): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      uid: `uid-${ns}-${name}`,
      resourceVersion: '1',
      labels,
      ownerReferences,
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:10Z' }],
      containerStatuses: [{ name: 'app', image: 'registry.example/app:1', imageID: 'sha256:1', ready: true, restartCount: 0 }],
    },
  } as Pod;
}

const podItems: Pod[] = [];
for (let i = 0; i < args.replicas; i++) {
  const id = `i${String(i).padStart(5, '0')}`;
  podItems.push(
    pod(
      NS,
      `web-${id}`,
      {
        app: 'web',
        'controller-revision-hash': revName,
        'pod-template-hash': shortHash(revName),
        'apps.kruise.io/cloneset-instance-id': id,
        'lifecycle.apps.kruise.io/state': 'Normal',
      },
      owner('CloneSet', 'web', cloneSet.metadata.uid!),
    ),
  );
}
// The rest: a tenth in the CloneSet's namespace (other apps), the others spread over other namespaces.
for (let i = 0; podItems.length < args.pods; i++) {
  const ns = i % 10 === 0 ? NS : `ns-${i % OTHER_NAMESPACES}`;
  const rs = `rs-${i % 500}`;
  podItems.push(pod(ns, `other-${i}`, { app: `other-${i % 500}` }, owner('ReplicaSet', rs, `uid-${ns}-${rs}`)));
}
const pvcItems: KubeObject[] = Array.from({ length: args.pvcs }, (_, i) => {
  const ns = i % 10 === 0 ? NS : `ns-${i % OTHER_NAMESPACES}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: `data-${i}`,
      namespace: ns,
      resourceVersion: '1',
      ownerReferences: owner('CloneSet', `db-${i % 100}`, `uid-db-${i % 100}`),
    },
  };
});
const revisionItems: KubeObject[] = [
  ours,
  ...Array.from({ length: args.revisions }, (_, i) => {
    const ns = i % 10 === 0 ? NS : `ns-${i % OTHER_NAMESPACES}`;
    return {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: `other-${i}`,
        namespace: ns,
        resourceVersion: '1',
        ownerReferences: owner('CloneSet', `db-${i % 100}`, `uid-db-${i % 100}`),
      },
      revision: 1,
    };
  }),
];

// ---- The in-memory API server stand-in ------------------------------------------------------------------

type OnEvent = (type: WatchEventType, obj: KubeObject) => void;
const store = new Map<string, KubeObject[]>([
  [CLONESETS.resource, [cloneSet]],
  [PODS.resource, podItems],
  [PERSISTENT_VOLUME_CLAIMS.resource, pvcItems],
  [CONTROLLER_REVISIONS.resource, revisionItems],
]);
const watchers = new Map<string, OnEvent[]>();
const writes: string[] = [];
let rv = 100;

const client = {
  list: (type: ResourceType, opts: { namespace?: string; labelSelector?: string } = {}) => {
    let items = store.get(type.resource) ?? [];
    if (opts.namespace) items = items.filter((o) => o.metadata.namespace === opts.namespace);
    if (opts.labelSelector) {
      const want = Object.fromEntries(opts.labelSelector.split(',').map((kv) => kv.split('=') as [string, string]));
      items = items.filter((o) => Object.entries(want).every(([k, v]) => o.metadata.labels?.[k] === v));
    }
    return Promise.resolve({
      apiVersion: 'v1',
      kind: `${type.kind}List`,
      metadata: { resourceVersion: String(rv) },
      items: structuredClone(items),
    });
  },
  watch: (type: ResourceType, _opts: unknown, onEvent: OnEvent) => {
    watchers.set(type.resource, [...(watchers.get(type.resource) ?? []), onEvent]);
    return Promise.resolve(new AbortController());
  },
  // The first reconcile of each controller writes the CloneSet's status once; afterwards nothing is written.
  patch: (
    type: ResourceType,
    name: string,
    _ns: string,
    body: { status?: Record<string, unknown> },
    _strategy: unknown,
    opts?: { subresource?: string },
  ) => {
    writes.push(`patch ${type.resource}/${name}${opts?.subresource ? `/${opts.subresource}` : ''}`);
    if (type.resource !== CLONESETS.resource || opts?.subresource !== 'status')
      throw new Error(`unexpected write: patch ${type.resource}/${name}`);
    const cur = store.get(CLONESETS.resource)![0]!;
    const next = {
      ...cur,
      metadata: { ...cur.metadata, resourceVersion: String(++rv) },
      status: { ...(cur.status as object), ...body.status },
    };
    store.set(CLONESETS.resource, [next]);
    for (const w of watchers.get(CLONESETS.resource) ?? []) w('MODIFIED', structuredClone(next));
    return Promise.resolve(structuredClone(next));
  },
  create: (type: ResourceType, obj: KubeObject) => {
    throw new Error(`unexpected write: create ${type.resource}/${obj.metadata.name}`);
  },
  delete: (type: ResourceType, name: string) => {
    throw new Error(`unexpected write: delete ${type.resource}/${name}`);
  },
} as unknown as KubeClient;

// ---- Informers, shared by both reconcilers ----------------------------------------------------------------

const logger = pino({ level: 'silent' });
const informer = <T extends KubeObject>(type: ResourceType) => new Informer<T>(client, type, { logger, pageSize: 5_000 });
const sets = informer<CloneSetObject>(CLONESETS);
const pods = informer<Pod>(PODS);
const pvcs = informer<KubeObject>(PERSISTENT_VOLUME_CLAIMS);
const revisions = informer<KubeObject>(CONTROLLER_REVISIONS);
const all = [sets, pods, pvcs, revisions];
for (const i of all) i.start();
await Promise.all(all.map((i) => i.waitForSync()));
log(`cache: ${pods.size} pods, ${pvcs.size} PVCs, ${revisions.size} revisions; CloneSet of ${args.replicas} pods`);

const ctx = {
  client,
  informers: undefined,
  events: new EventRecorder(client, 'bench', logger),
  logger,
  featureGates: new Map(),
  options: undefined,
} as unknown as ControllerContext;
const options = { excludePreparingDelete: false, partitionRollback: false };
type ReconcilerClass = new (...a: ConstructorParameters<typeof CloneSetReconciler>) => Reconciler;

// ---- The base commit's controller, from a temporary worktree -------------------------------------------------

const baseTree = checkoutBase(args.extra.base, 'cloneset-reconcile-base-');
try {
  const { baseCommit, head } = baseTree;
  const baseModule = await baseTree.importModule<{
    CloneSetReconciler: ReconcilerClass;
  }>('src/runtime/controllers/cloneset/reconcile.ts');
  const make = (C: ReconcilerClass) => new C(ctx, sets, pods as never, pvcs, revisions as never, options);
  const reconcilers = { before: make(baseModule.CloneSetReconciler), after: make(CloneSetReconciler) };
  const key = `${NS}/web`;

  // Settle: each writes the status once (the first), then a round must write nothing.
  for (const r of Object.values(reconcilers)) for (let i = 0; i < 2; i++) await r.reconcile(key);
  const settled = writes.length;
  for (const r of Object.values(reconcilers)) await r.reconcile(key);
  if (writes.length !== settled) throw new Error(`a settled reconcile wrote: ${writes.slice(settled).join(', ')}`);

  const samples = await repeatAsync(
    ['before', 'after'] as const,
    { warmup: args.warmup, reps: args.reps, order: 'rotate' },
    async (name) => {
      collectGarbage();
      const c0 = cpuMs();
      const t0 = performance.now();
      const res = await reconcilers[name].reconcile(key);
      const wall = performance.now() - t0;
      const cpu = cpuMs() - c0;
      if (res && 'requeueAfterMs' in res && res.requeueAfterMs !== undefined && res.requeueAfterMs < 1000) {
        throw new Error(`${name}: the reconcile asked to come back in ${res.requeueAfterMs} ms; it was meant to be settled`);
      }
      return { wall, cpu };
    },
  );
  if (writes.length !== settled) throw new Error(`a measured reconcile wrote: ${writes.slice(settled).join(', ')}`);

  const stat = (name: 'before' | 'after') => {
    const wall = samples[name].map((s) => s.wall);
    const cpu = samples[name].map((s) => s.cpu);
    return { wallMedianMs: r2(median(wall)), wallP90Ms: r2(percentile(wall, 0.9)), cpuMedianMs: r2(median(cpu)) };
  };
  const result = {
    bench: 'cloneset-reconcile',
    replicas: args.replicas,
    cachedPods: pods.size,
    cachedPvcs: pvcs.size,
    cachedRevisions: revisions.size,
    reps: args.reps,
    base: baseCommit,
    head,
    before: stat('before'),
    after: stat('after'),
    speedup: ratio(median(samples.before.map((s) => s.wall)), median(samples.after.map((s) => s.wall))),
  };
  const { before, after } = result;
  const n = (x: number) => x.toLocaleString('en-US');
  await recordBench(
    'bench:cloneset-reconcile',
    [
      {
        measure: `CloneSet reconcile with nothing to do, ${n(args.replicas)} pods of ${n(pods.size)} cached (${n(pvcs.size)} PVCs, ${n(revisions.size)} revisions): wall, CPU`,
        figure: `${after.wallMedianMs} ms (p90 ${after.wallP90Ms}), ${after.cpuMedianMs} ms CPU`,
        peer: `${ratio(after.wallMedianMs, before.wallMedianMs)}x wall, ${ratio(after.cpuMedianMs, before.cpuMedianMs)}x CPU of the whole-cache walk (${baseCommit}: ${before.wallMedianMs} ms, ${before.cpuMedianMs} ms CPU)`,
      },
    ],
    { conditions: `${args.reps} rounds, rotating order` },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `CloneSet reconcile, ${args.replicas} pods of ${pods.size} cached (${pvcs.size} PVCs, ${revisions.size} revisions), ${args.reps} reps:`,
    );
    for (const n of ['before', 'after'] as const) {
      const s = result[n];
      console.log(
        `  ${n.padEnd(6)} (${n === 'before' ? baseCommit : head}): median ${s.wallMedianMs} ms wall (p90 ${s.wallP90Ms}), ${s.cpuMedianMs} ms CPU`,
      );
    }
    console.log(`  speedup: ${result.speedup}x`);
  }
} finally {
  for (const i of all) i.stop();
  baseTree.remove();
}

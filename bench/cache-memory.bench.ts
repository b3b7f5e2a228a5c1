// Heap of the manager's pod cache, per cached pod, and the CPU of filling it: Running Job pods as the API server
// lists them (pages of 500, server-side managedFields, a kubelet's status: conditions, container states, image
// digests, pod and host IPs) spread over namespaces and nodes, parsed and put through each variant's transform
// into a Map, as the informer does. Variants, each in a process of its own (`--expose-gc`, the heap measured
// after a full GC, the pages' text excluded):
//   whole      the object less managedFields (the informer's default; what a cache without a plan holds)
//   projected  the manager's declared pod fields (its cache plan's projection), strings as parsed
//   shipped    the manager's cache plan as it runs: the projection, strings shared (src/runtime/core/intern.ts)
// A heap difference: run alone, it is not a timing, but the fill times are, so rerun on a loaded machine.
// Usage: npm run bench:cache-memory [-- --pods 50000 --nodes 1000 --namespaces 50 --rounds 3 --json]
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { compileProjection } from '../src/api/field-projection.js';
import { cachePlanOf } from '../src/runtime/core/controller.js';
import { stripManagedFields } from '../src/runtime/core/informer.js';
import type { KubeObject, Pod } from '../src/runtime/core/index.js';
import { CONTROLLERS, WEBHOOKS } from '../src/runtime/manager/registry.js';
import { benchArgs, median, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import { jobPod, runningStatus } from './support/job-pods.js';

const VARIANTS = ['whole', 'projected', 'shipped'] as const;
type Variant = (typeof VARIANTS)[number];

const args = benchArgs({ pods: 50_000, nodes: 1000, namespaces: 50, rounds: 3 }, { variant: { type: 'string' } });
const PAGE = 500;
const KiB = 1024;

/** A Running pod as the API server lists it after the kubelet wrote its status. */
function listedPod(i: number): Pod {
  const pod = jobPod(`batch-${i}`, `team-${i % args.namespaces}`, `node-${i % args.nodes}`, true) as Pod & {
    metadata: Record<string, unknown>;
  };
  const at = new Date(Date.UTC(2026, 10, 28, 10, 0, i % 3600)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  pod.metadata.uid = randomUUID();
  pod.metadata.resourceVersion = String(1_000_000 + i);
  pod.metadata.creationTimestamp = at;
  pod.metadata.ownerReferences = [
    { apiVersion: 'batch/v1', kind: 'Job', name: `batch-${i}`, uid: randomUUID(), controller: true, blockOwnerDeletion: true },
  ];
  pod.metadata.managedFields = [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time: at,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': {} },
    },
    { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: at, fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: {} },
  ];
  return { ...pod, ...runningStatus(pod, i, at) };
}

function transformOf(variant: Variant): (o: KubeObject) => KubeObject {
  const plan = cachePlanOf([...CONTROLLERS, ...WEBHOOKS]);
  const pods = plan.all().find((p) => p.resource.group === '' && p.resource.resource === 'pods');
  if (!pods) throw new Error('the manager declares no pod cache');
  if (variant === 'shipped') return pods.transform;
  if (variant === 'whole') return stripManagedFields;
  const projection = compileProjection(pods.fields);
  return (o) => projection.apply(o) as KubeObject;
}

interface Sample {
  readonly variant: Variant;
  readonly heapBytesPerPod: number;
  /** Parse and transform of every page, ms. */
  readonly fillMs: number;
}

/** The list page starting at pod `first`, as the API server sends it. */
function pageText(first: number): string {
  const items = Array.from({ length: Math.min(PAGE, args.pods - first) }, (_, k) => listedPod(first + k));
  return JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '2000000' }, items });
}

/**
 * One variant in this process. Each page's text is made just before it is parsed and dropped after (text held
 * across the run shrinks once parsed, which skews a heap difference); only the parse and transform are timed.
 */
function measure(variant: Variant): Sample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc (npm run bench:cache-memory does)');
  const transform = transformOf(variant);
  const cache = new Map<string, KubeObject>();
  gc();
  const before = process.memoryUsage().heapUsed;
  let fillMs = 0;
  for (let first = 0; first < args.pods; first += PAGE) {
    const text = pageText(first);
    const started = performance.now();
    const page = JSON.parse(text) as { items: KubeObject[] };
    for (const item of page.items) {
      const o = transform(item);
      cache.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
    }
    fillMs += performance.now() - started;
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  if (cache.size !== args.pods) throw new Error(`cached ${cache.size} pods of ${args.pods}`);
  return { variant, heapBytesPerPod: (after - before) / cache.size, fillMs };
}

if (args.extra.variant !== undefined) {
  const variant = args.extra.variant as Variant;
  if (!VARIANTS.includes(variant)) throw new Error(`--variant: "${variant}" is not one of ${VARIANTS.join(', ')}`);
  process.stdout.write(JSON.stringify(measure(variant)));
} else {
  const self = fileURLToPath(import.meta.url);
  const samples: Sample[] = [];
  const loads: number[] = [];
  for (let round = 0; round < args.rounds; round++) {
    // Rotating order: drift on a shared machine hits every variant alike.
    for (let k = 0; k < VARIANTS.length; k++) {
      const variant = VARIANTS[(k + round) % VARIANTS.length]!;
      loads.push(loadavg()[0]!);
      const out = execFileSync(
        process.execPath,
        [
          '--expose-gc',
          '--import',
          'tsx',
          self,
          '--variant',
          variant,
          '--pods',
          String(args.pods),
          '--nodes',
          String(args.nodes),
          '--namespaces',
          String(args.namespaces),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      const sample = JSON.parse(out) as Sample;
      samples.push(sample);
      if (!args.json) {
        console.error(
          `[bench] round ${round + 1} ${variant}: ${(sample.heapBytesPerPod / KiB).toFixed(2)} KiB/pod, fill ${sample.fillMs.toFixed(0)} ms`,
        );
      }
    }
  }
  const of = (v: Variant) => {
    const mine = samples.filter((s) => s.variant === v);
    return {
      kibPerPod: Math.round((median(mine.map((s) => s.heapBytesPerPod)) / KiB) * 100) / 100,
      fillMs: Math.round(median(mine.map((s) => s.fillMs))),
    };
  };
  const result = Object.fromEntries(VARIANTS.map((v) => [v, of(v)])) as Record<Variant, { kibPerPod: number; fillMs: number }>;
  const n = (x: number) => x.toLocaleString('en-US');
  await recordBench(
    'bench:cache-memory',
    [
      {
        measure: `manager pod cache, ${n(args.pods)} Running pods on ${n(args.nodes)} nodes: heap per cached pod (whole / declared fields / shipped)`,
        figure: `${result.whole.kibPerPod} / ${result.projected.kibPerPod} / ${result.shipped.kibPerPod} KiB`,
        peer: `shipped ${ratio(result.shipped.kibPerPod, result.whole.kibPerPod)}x the whole object, ${ratio(result.shipped.kibPerPod, result.projected.kibPerPod)}x the declared fields alone`,
      },
      {
        measure: `filling it from list pages of ${PAGE} (parse and transform), ${n(args.pods)} pods`,
        figure: `${n(result.whole.fillMs)} / ${n(result.projected.fillMs)} / ${n(result.shipped.fillMs)} ms`,
        peer: `shipped ${ratio(result.shipped.fillMs, result.whole.fillMs)}x the whole object, ${ratio(result.shipped.fillMs, result.projected.fillMs)}x the declared fields alone`,
      },
    ],
    { conditions: `${args.rounds} rounds, rotating order, each variant in its own process; ${loadDuringRun(loads)}` },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
}

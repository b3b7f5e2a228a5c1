// Job Sidecar Terminator under load, on a real kube-apiserver + etcd (test/harness ControlPlane), with the
// controller run exactly as shipped (the esbuild bundle of the CLI, `cdk8s-kruise controller`).
//
//   latency   1,000 job pods whose main containers terminate together (status writes with 50 in flight);
//             per pod: "main container terminated" status write acknowledged -> our CRR seen on a watch.
//   baselines measured in the same run, same concurrency:
//             (a) the API server's own CRR create latency (request -> response), 1,000 creates;
//             (b) watch delivery of those status writes (write sent -> pod event seen): the floor for
//                 anything reacting to a status change. Measured from the send, not the acknowledgement:
//                 the API server answers and notifies watchers at about the same moment, so this process
//                 often handles the event before the response and an ack-based figure goes negative.
//                 The write's own round trip (sent -> acknowledged) is reported beside it.
//   memory    controller RSS with 10,000 pods in its cache (realistic pod specs, server-side managedFields),
//             vs the same process idle (no pods) measured at start.
// Targets: p99 <= 100 ms, RSS <= 150 MB.
// The controller runs with MANAGER_NODE_OPTIONS (the V8 limits the Deployment passes in NODE_OPTIONS) unless
// --node-flags= says otherwise ("--node-flags=" runs it with Node's defaults).
// Usage: npm run bench:sidecarterminator [-- --pods 1000 --fill 10000 --concurrency 50 --workers 10 --node-flags=... --json]
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { toCustomResourceDefinition } from '../src/api/crd.js';
import { ContainerRecreateRequestDefinition } from '../src/api/registry.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  KubeClient,
  NAMESPACES,
  NODES,
  PODS,
  Informer,
  PatchStrategy,
  loadKubeConfig,
  type KubeObject,
  type Pod,
} from '../src/runtime/core/index.js';
import { findAssets } from '../test/harness/assets.js';
import { ControlPlane, bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { ControllerProcess } from '../test/e2e/runtime/process.js';
import { MANAGER_NODE_OPTIONS } from '../src/runtime/manager/manager.js';
import { benchArgs, percentile as pct } from './lib.js';
import { recordBench } from './record.js';
import { jobPod, pool, rssBytes, statusOf } from './support/job-pods.js';
import { bundleOurCli } from './support/peer-runners.js';

const args = benchArgs(
  { pods: 1000, fill: 10000, concurrency: 50 },
  {
    // V8 flags for the controller process, e.g. "--max-semi-space-size=2 --max-old-space-size=128"
    // (what a Deployment would pass in NODE_OPTIONS).
    'node-flags': { type: 'string', default: MANAGER_NODE_OPTIONS },
    /** Sidecar-terminator workers (default: the controller's own default). */
    workers: { type: 'string' },
  },
);
const N = args.pods;
const FILL = args.fill;
const C = args.concurrency;
const run = promisify(execFile);
bypassProxyForLoopback();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (x: number) => Math.round(x * 10) / 10;
const log = (msg: string) => {
  if (!args.json) console.error(`[bench] ${msg}`);
};

const plane = await ControlPlane.start();
let ctl: ControllerProcess | undefined;
try {
  const kubectl = findAssets().kubectl;
  const crd = run(kubectl, ['--kubeconfig', plane.kubeconfigPath, 'apply', '--server-side', '-f', '-']);
  crd.child.stdin!.end(JSON.stringify(toCustomResourceDefinition(ContainerRecreateRequestDefinition)));
  await crd;
  await run(kubectl, [
    '--kubeconfig',
    plane.kubeconfigPath,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/containerrecreaterequests.apps.kruise.io',
  ]);

  const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 60_000 });
  for (const ns of ['kruise-system', 'bench-jobs', 'bench-base', 'bench-fill']) {
    await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  await client.create(NODES, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'bench-node', labels: { 'kubernetes.io/hostname': 'bench-node' } },
  });

  // The controller as shipped: the CLI bundle (no tsx, no node_modules).
  const main = await bundleOurCli();
  ctl = await ControllerProcess.start(
    plane.kubeconfigPath,
    'kruise-system',
    [
      '--feature-gates=SidecarTerminator=true',
      '--webhook-port',
      '0',
      ...(args.extra.workers ? ['--workers', `sidecarterminator=${args.extra.workers}`] : []),
    ],
    {
      logLevel: 'info',
      entry: [...String(args.extra['node-flags']).split(' ').filter(Boolean), main],
    },
  );
  await ctl.waitReady();
  await sleep(2_000);
  const idleRss = rssBytes(ctl.pid);
  log(`controller ready (pid ${ctl.pid}), idle RSS ${(idleRss / 2 ** 20).toFixed(1)} MiB`);

  // --- 1,000 running job pods
  const names = Array.from({ length: N }, (_, i) => `job-${i}`);
  const uids = new Map<string, string>();
  let t = performance.now();
  await pool(names, C, async (name) => {
    const p = await client.create<Pod>(PODS, jobPod(name, 'bench-jobs', 'bench-node', true));
    uids.set(name, p.metadata.uid!);
    await client.patch(PODS, name, 'bench-jobs', statusOf({ running: { startedAt: new Date().toISOString() } }), PatchStrategy.MergePatch, {
      subresource: 'status',
    });
  });
  log(`${N} running job pods created in ${Math.round(performance.now() - t)} ms`);
  // Let the controller's informer see them all (the running pods need no action).
  await sleep(3_000);

  // Observers: pod status events (baseline b) and CRR creations.
  const podSeen = new Map<string, number>();
  const crrSeen = new Map<string, number>();
  const written = new Map<string, number>();
  const sent = new Map<string, number>();
  // Informers (list + watch that resumes after a dropped watch) so a watch closed under load loses nothing.
  const silent = pino({ level: 'silent' });
  const podObserver = new Informer<Pod>(client, PODS, { namespace: 'bench-jobs', logger: silent });
  podObserver.addHandlers({
    update: (p) => {
      if (p.status?.containerStatuses?.some((s) => s.name === 'app' && s.state?.terminated) && !podSeen.has(p.metadata.name!)) {
        podSeen.set(p.metadata.name!, performance.now());
      }
    },
  });
  const crrObserver = new Informer<KubeObject>(client, CONTAINER_RECREATE_REQUESTS, { namespace: 'bench-jobs', logger: silent });
  crrObserver.addHandlers({
    add: (o) => {
      const podName = (o.spec as { podName?: string } | undefined)?.podName;
      if (podName && !crrSeen.has(podName)) crrSeen.set(podName, performance.now());
    },
  });
  podObserver.start();
  crrObserver.start();
  await Promise.all([podObserver.waitForSync(), crrObserver.waitForSync()]);
  await sleep(500);

  // --- all main containers terminate together
  const burstStart = performance.now();
  await pool(names, C, async (name) => {
    sent.set(name, performance.now());
    await client.patch(
      PODS,
      name,
      'bench-jobs',
      statusOf({ terminated: { exitCode: 0, reason: 'Completed', finishedAt: new Date().toISOString() } }),
      PatchStrategy.MergePatch,
      {
        subresource: 'status',
      },
    );
    written.set(name, performance.now());
  });
  const writesDone = performance.now();
  for (let i = 0; crrSeen.size < N && i < 1200; i++) await sleep(100);
  const lastCrr = Math.max(...crrSeen.values());
  if (crrSeen.size < N) {
    const stored = (await client.list(CONTAINER_RECREATE_REQUESTS, { namespace: 'bench-jobs' })).items.length;
    throw new Error(`only ${crrSeen.size}/${N} CRRs seen after 120 s (${stored} stored); controller log tail:\n${ctl.tail(30)}`);
  }
  const latency = names.map((n) => crrSeen.get(n)! - written.get(n)!);
  const watchLag = names.filter((n) => podSeen.has(n)).map((n) => podSeen.get(n)! - sent.get(n)!);
  const writeRtt = names.map((n) => written.get(n)! - sent.get(n)!);
  log(
    `${N} status writes in ${Math.round(writesDone - burstStart)} ms; last CRR ${Math.round(lastCrr - burstStart)} ms after the burst began`,
  );

  // Exactly one CRR per pod.
  const allCrrs = await client.list(CONTAINER_RECREATE_REQUESTS, { namespace: 'bench-jobs' });
  if (allCrrs.items.length !== N) throw new Error(`expected ${N} CRRs, found ${allCrrs.items.length}`);

  // --- baseline (a): the API server's own CRR create latency, same concurrency
  const createLat: number[] = [];
  await pool(names, C, async (name) => {
    const s = performance.now();
    await client.create(CONTAINER_RECREATE_REQUESTS, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: `sidecar-termination-${uids.get(name)}`, namespace: 'bench-base' },
      spec: { podName: name, containers: [{ name: 'envoy' }], strategy: { forceRecreate: true, failurePolicy: 'Ignore' } },
    });
    createLat.push(performance.now() - s);
  });
  podObserver.stop();
  crrObserver.stop();

  // --- memory: 10,000 pods in the cache
  const fill = Math.max(0, FILL - N);
  t = performance.now();
  await pool(
    Array.from({ length: fill }, (_, i) => `web-${i}`),
    C,
    async (name) => {
      await client.create(PODS, jobPod(name, 'bench-fill', undefined, false));
    },
  );
  log(`${fill} more pods created in ${Math.round(performance.now() - t)} ms`);
  for (let i = 0; i < 120; i++) {
    if ((await ctl.metric('informer_cached_objects', { resource: 'pods' })) >= FILL) break;
    await sleep(1_000);
  }
  const cached = await ctl.metric('informer_cached_objects', { resource: 'pods' });
  const rssSamples: number[] = [];
  for (let i = 0; i < 10; i++) {
    rssSamples.push(rssBytes(ctl.pid));
    await sleep(1_000);
  }
  const heapUsed = await ctl.metric('kruise_runtime_nodejs_heap_size_used_bytes');
  const podsJson = (await client.list(PODS, {})).items.reduce((a, p) => a + JSON.stringify(p).length, 0);

  const MiB = 2 ** 20;
  const result = {
    pods: N,
    concurrency: C,
    controller: { p50Ms: r1(pct(latency, 0.5)), p99Ms: r1(pct(latency, 0.99)), maxMs: r1(Math.max(...latency)) },
    baselineCrrCreate: { p50Ms: r1(pct(createLat, 0.5)), p99Ms: r1(pct(createLat, 0.99)) },
    baselineWatchDelivery: { p50Ms: r1(pct(watchLag, 0.5)), p99Ms: r1(pct(watchLag, 0.99)), samples: watchLag.length },
    statusWriteRtt: { p50Ms: r1(pct(writeRtt, 0.5)), p99Ms: r1(pct(writeRtt, 0.99)) },
    ratioToCrrCreate: { p50: r1(pct(latency, 0.5) / pct(createLat, 0.5)), p99: r1(pct(latency, 0.99) / pct(createLat, 0.99)) },
    burst: { statusWritesMs: Math.round(writesDone - burstStart), allCrrsMs: Math.round(lastCrr - burstStart) },
    memory: {
      cachedPods: cached,
      rssMiB: r1(Math.max(...rssSamples) / MiB),
      rssLastMiB: r1(rssSamples.at(-1)! / MiB),
      idleRssMiB: r1(idleRss / MiB),
      ratioToIdle: r1(Math.max(...rssSamples) / idleRss),
      heapUsedMiB: r1(heapUsed / MiB),
      podsJsonMiB: r1(podsJson / MiB),
    },
    nodeFlags: args.extra['node-flags'],
    workers: args.extra.workers ?? 'default',
    targets: { p99Ms: 100, rssMiB: 150 },
  };
  await recordBench('bench:sidecarterminator', [
    {
      measure: `the manager's sidecar termination alone, ${N} Job pods finishing together: status write → CRR seen`,
      figure: `p50 ${result.controller.p50Ms} ms, p99 ${result.controller.p99Ms} ms (target p99 ≤ 100 ms); all CRRs ${result.burst.allCrrsMs} ms`,
      peer: `${result.ratioToCrrCreate.p50}x / ${result.ratioToCrrCreate.p99}x a CRR create on the same API server (p50 ${result.baselineCrrCreate.p50Ms} / p99 ${result.baselineCrrCreate.p99Ms} ms)`,
    },
    {
      measure: `manager RSS with ${result.memory.cachedPods} pods cached`,
      figure: `${result.memory.rssMiB} MiB (target ≤ 150)`,
      peer: `${result.memory.ratioToIdle}x the idle manager (${result.memory.idleRssMiB} MiB)`,
    },
  ]);
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `Sidecar terminator: ${N} job pods finishing together (${C} status writes in flight), real kube-apiserver; controller node flags: ${args.extra['node-flags'] || '(none)'}, workers: ${args.extra.workers ?? 'default'}`,
    );
    console.log(
      `  status write -> CRR seen     p50 ${result.controller.p50Ms} ms   p99 ${result.controller.p99Ms} ms   max ${result.controller.maxMs} ms   (target p99 <= 100 ms)`,
    );
    console.log(
      `  baseline: CRR create (API)   p50 ${result.baselineCrrCreate.p50Ms} ms   p99 ${result.baselineCrrCreate.p99Ms} ms   -> ratio p50 ${result.ratioToCrrCreate.p50}x, p99 ${result.ratioToCrrCreate.p99}x`,
    );
    console.log(
      `  baseline: watch delivery     p50 ${result.baselineWatchDelivery.p50Ms} ms   p99 ${result.baselineWatchDelivery.p99Ms} ms   (write sent -> event seen; the write's round trip: p50 ${result.statusWriteRtt.p50Ms} ms, p99 ${result.statusWriteRtt.p99Ms} ms)`,
    );
    console.log(`  burst: writes ${result.burst.statusWritesMs} ms, all ${N} CRRs ${result.burst.allCrrsMs} ms after start`);
    console.log(
      `  memory: ${cached} pods cached, RSS ${result.memory.rssMiB} MiB (idle ${result.memory.idleRssMiB} MiB, ${result.memory.ratioToIdle}x), heap used ${result.memory.heapUsedMiB} MiB; the pods as JSON: ${result.memory.podsJsonMiB} MiB (target RSS <= 150 MB)`,
    );
  }
} finally {
  await ctl?.stop('SIGTERM');
  await plane.stop();
}

// Container launch priority, barrier against native-sidecar lowering (issue #37 item 3), on one real kube-apiserver +
// etcd with our controller-manager as shipped (the CLI bundle) and the install's pod webhook: pods are created (stored,
// never run: there is no kubelet), closed loop at a fixed concurrency, and the bench reports pods admitted per second
// and the `<pod>-barrier` ConfigMaps the runtime made per 1,000 pods.
//
//   barrier  the pod template the constructs compile for Kubernetes 1.28: env KRUISE_CONTAINER_PRIORITY on the
//            container that starts first; the pod webhook adds the barrier env and the barrier controller creates
//            one ConfigMap per pod.
//   native   the same construct code compiled for 1.29: the container that starts first is a restartable init
//            container; nothing for the webhook to wire, no ConfigMap.
//   plain    the same pod without any launch order: the floor of a create on this plane.
//
// The variants run in rotated order each round, each in a fresh namespace, against the same manager. After a phase
// the bench waits until the ConfigMap count has not moved for 3 s (the barrier controller works behind the creates).
// Usage: npm run bench:launch-lowering [-- --rounds 5 --pods 200 --concurrency 16 --json]
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { ApiObject, Testing } from 'cdk8s';
import { ContainerLaunchPriority, KUBERNETES_VERSION_CONTEXT } from '../constructs/index.js';
import { ENV_CONTAINER_BARRIER } from '../src/contracts/index.js';
import { CONFIGMAPS, KubeClient, loadKubeConfig, NAMESPACES, PODS, type Pod } from '../src/runtime/core/index.js';
import { bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, kubectlOn } from '../test/harness/kruise-peer.js';
import { benchArgs, formatRatio, median, percentile, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import { bundleOurCli, startOurManager, startPeerPlane, type Runner } from './support/peer-runners.js';

const args = benchArgs({ rounds: 5, pods: 200, concurrency: 16 });
bypassProxyForLoopback();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r2 = (x: number) => Math.round(x * 100) / 100;
const log = (msg: string) => console.error(`[bench] ${msg}`);

const VARIANTS = ['barrier', 'native', 'plain'] as const;
type Variant = (typeof VARIANTS)[number];

/** The pod template the constructs compile for `version` (undefined: no launch order at all). */
function template(version: string | undefined): { metadata?: Pod['metadata']; spec: Pod['spec'] } {
  const chart = Testing.chart();
  if (version) chart.node.setContext(KUBERNETES_VERSION_CONTEXT, version);
  const container = (name: string) => ({
    name,
    image: `registry.example/${name}:1`,
    readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 2 },
  });
  const dep = new ApiObject(chart, 'api', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'api' },
    spec: {
      selector: { matchLabels: { app: 'api' } },
      template: { metadata: { labels: { app: 'api' } }, spec: { containers: [container('app'), container('envoy')] } },
    },
  });
  if (version) ContainerLaunchPriority.of(dep).set('envoy', 10);
  const [out] = Testing.synth(chart) as { spec: { template: { metadata?: Pod['metadata']; spec: Pod['spec'] } } }[];
  return out!.spec.template;
}

const TEMPLATES: Record<Variant, ReturnType<typeof template>> = {
  barrier: template('1.28'),
  native: template('1.29'),
  plain: template(undefined),
};
if (!TEMPLATES.native.spec?.initContainers?.length || TEMPLATES.barrier.spec?.initContainers) {
  throw new Error(`the templates are not the two mechanisms: ${JSON.stringify(TEMPLATES)}`);
}

const plane = await startPeerPlane(false);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 30_000 });
let manager: Runner | undefined;

interface PhaseResult {
  podsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  /** Pods the webhook gave the barrier env. */
  wired: number;
  barrierConfigMaps: number;
  configMapsPer1000Pods: number;
  /** From the last create to a ConfigMap count that held still for 3 s. */
  settleMs: number;
  load1: number;
}

async function barrierConfigMaps(ns: string): Promise<number> {
  const list = await client.list<{ metadata: { name?: string } }>(CONFIGMAPS, { namespace: ns });
  return list.items.filter((c) => c.metadata.name?.endsWith('-barrier')).length;
}

async function phase(variant: Variant, round: number): Promise<PhaseResult> {
  const ns = `r${round}-${variant}`;
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const { metadata, spec } = TEMPLATES[variant];
  const latencies: number[] = [];
  let failed = 0;
  let wired = 0;
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    for (let i = next++; i < args.pods; i = next++) {
      const body: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { ...structuredClone(metadata ?? {}), name: `${variant}-${i}`, namespace: ns },
        spec: structuredClone(spec)!,
      };
      const begin = performance.now();
      try {
        const created = await client.create<Pod>(PODS, body);
        latencies.push(performance.now() - begin);
        if (created.spec?.containers.some((c) => (c.env ?? []).some((e) => e.name === ENV_CONTAINER_BARRIER))) wired++;
      } catch (err) {
        failed++;
        if (failed <= 3) log(`${variant}: create failed: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const tDone = performance.now();
  let count = await barrierConfigMaps(ns);
  let stillSince = performance.now();
  while (performance.now() - stillSince < 3000 && performance.now() - tDone < 120_000) {
    await sleep(250);
    const now = await barrierConfigMaps(ns);
    if (now !== count) {
      count = now;
      stillSince = performance.now();
    }
  }
  const result: PhaseResult = {
    podsPerSecond: r2(latencies.length / seconds),
    p50Ms: r2(percentile(latencies, 0.5)),
    p99Ms: r2(percentile(latencies, 0.99)),
    failed,
    wired,
    barrierConfigMaps: count,
    configMapsPer1000Pods: r2((count * 1000) / Math.max(1, latencies.length)),
    settleMs: Math.round(stillSince - tDone),
    load1: r2(loadavg()[0]!),
  };
  log(`${variant} round ${round}: ${JSON.stringify(result)}`);
  // No kube-controller-manager here: delete the pods by collection (their ConfigMaps with them, by the namespace).
  await kubectlOn(plane, ['delete', 'pods', '--all', '-n', ns, '--wait=false', '--grace-period=0', '--force']).catch(() => '');
  await kubectlOn(plane, ['delete', 'configmaps', '--all', '-n', ns, '--wait=false']).catch(() => '');
  return result;
}

const results = Object.fromEntries(VARIANTS.map((v) => [v, [] as PhaseResult[]])) as Record<Variant, PhaseResult[]>;
const loads: number[] = [];
try {
  await installKruisePeerCrds(plane);
  const cliMain = await bundleOurCli();
  manager = await startOurManager(plane, cliMain, { featureGates: '', podWebhook: true });
  log(`our manager ready (pid ${manager.pid})`);
  // One probe pod per mechanism first: the webhook's caches and the controller's informers are warm, and the barrier is wired.
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'warm' } });
  for (let i = 0; ; i++) {
    const probe = await client.create<Pod>(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...structuredClone(TEMPLATES.barrier.metadata ?? {}), name: `probe-${i}`, namespace: 'warm' },
      spec: structuredClone(TEMPLATES.barrier.spec)!,
    });
    if (probe.spec?.containers.some((c) => (c.env ?? []).some((e) => e.name === ENV_CONTAINER_BARRIER))) break;
    if (i > 100) throw new Error(`the pod webhook wires no barrier:\n${manager.logTail()}`);
    await sleep(200);
  }
  for (let round = 0; round < args.rounds; round++) {
    for (let k = 0; k < VARIANTS.length; k++) {
      const variant = VARIANTS[(k + round) % VARIANTS.length]!;
      loads.push(loadavg()[0]!);
      results[variant].push(await phase(variant, round));
    }
  }
} finally {
  await manager?.stop();
  await plane.stop();
}

const summary = Object.fromEntries(
  VARIANTS.map((v) => {
    const rs = results[v];
    return [
      v,
      {
        podsPerSecond: r2(median(rs.map((r) => r.podsPerSecond))),
        p50Ms: r2(median(rs.map((r) => r.p50Ms))),
        p99Ms: r2(median(rs.map((r) => r.p99Ms))),
        configMapsPer1000Pods: r2(median(rs.map((r) => r.configMapsPer1000Pods))),
        wired: rs.reduce((a, r) => a + r.wired, 0),
        failed: rs.reduce((a, r) => a + r.failed, 0),
      },
    ];
  }),
) as Record<Variant, { podsPerSecond: number; p50Ms: number; p99Ms: number; configMapsPer1000Pods: number; wired: number; failed: number }>;

// Each round's native/barrier ratio from its adjacent phases: the machine's drift between rounds cancels.
const roundRatios = results.native.map((n, i) => n.podsPerSecond / results.barrier[i]!.podsPerSecond);
const roundRatio = r2(median(roundRatios));
const conditions = `${args.rounds} rounds × ${args.pods} pods per variant, ${args.concurrency} creates in flight, no kubelet; ${loadDuringRun(loads)}`;
await recordBench(
  'bench:launch-lowering',
  [
    {
      measure: 'pods admitted per second with launch priority (envoy before app), native-sidecar lowering vs barrier',
      figure: `native ${summary.native.podsPerSecond}/s (p50 ${summary.native.p50Ms} ms), barrier ${summary.barrier.podsPerSecond}/s (p50 ${summary.barrier.p50Ms} ms)`,
      peer:
        `${formatRatio(ratio(summary.native.podsPerSecond, summary.barrier.podsPerSecond))} barrier (median of per-round ratios ` +
        `${formatRatio(roundRatio)}, range ${formatRatio(Math.min(...roundRatios))}–${formatRatio(Math.max(...roundRatios))}); plain pods ${summary.plain.podsPerSecond}/s`,
    },
    {
      measure: '<pod>-barrier ConfigMaps created per 1,000 pods (runtime from the CLI bundle, pod webhook registered)',
      figure: `native ${summary.native.configMapsPer1000Pods}, barrier ${summary.barrier.configMapsPer1000Pods}`,
      peer: `barrier env wired: native ${summary.native.wired}, barrier ${summary.barrier.wired} of ${args.rounds * args.pods} pods each`,
    },
  ],
  { conditions },
);
const out = { summary, roundRatios, results };
console.log(args.json ? JSON.stringify(out) : `launch lowering: ${JSON.stringify(summary)}`);

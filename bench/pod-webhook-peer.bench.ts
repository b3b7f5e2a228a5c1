// Pod admission through the pod webhook (SidecarSet injection), ours against the upstream peer, on one real
// kube-apiserver + etcd: pods are created (stored, never run: there is no kubelet) at a steady rate, open
// loop, with a SidecarSet that matches every one of them, and each create's latency is recorded.
//
//   none      no pod webhook registered: the API server's own cost of a pod create.
//   ours      our controller-manager as shipped (the CLI bundle, the Deployment's V8 limits) with the install's
//             pod webhook entry (and our other webhooks) pointing at it.
//   upstream  kruise-manager (test/harness/kruise-peer.ts) with its own webhooks, default gates.
//   noop      a server that allows every pod unchanged (bench/support/noop-pod-webhook.mjs), registered as ours
//             is: the floor any pod webhook adds on this machine.
//   ours-standby  (only when asked for) ours as a standby replica: leader election on and the Lease held by
//             another identity, so informers and webhooks run and no controller does; what the controllers'
//             work on the same thread costs the webhook.
//
// Every phase runs two streams of creates side by side, each at the same steady rate and half an interval
// apart: pods into a namespace the pod webhook covers, and control pods into a namespace both managers' pod
// webhooks skip (the opt-out label of each). The added admission latency of a variant is the covered stream's
// p50/p99 minus the control stream's, in the same phase: both see the same load at the same moment, so the
// machine's drift between phases cancels. In `none` the two streams should agree (the pairing's own error). The
// earlier measure (the variant's p50/p99 minus those of the `none` phase of the same round) is kept as
// `addedVsNonePhase`. Phases run in rotated order each round, in fresh namespaces. RSS of the webhook process
// is sampled every second (max and at the end), CPU seconds over the phase. Both managers run on upstream's
// CRDs (ours must be API-compatible); one at a time, their webhook configurations removed on stop. The API
// server's own histogram of its pod-webhook calls is reported too (coarse buckets: 5, 25, 100 ms).
// Usage: npm run bench:pod-webhook-peer [-- --rounds 2 --rate 50 --seconds 60 --out out/bench/pod-webhook-peer.json --json
//        --variants none,ours,upstream,noop[,ours-standby] --cpu-prof-dir out/prof --node-options=<V8 flags of our manager>]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import { LABEL_POD_WEBHOOK_OPT_OUT, POD_WEBHOOK_OPT_OUT_VALUE } from '../src/contracts/index.js';
import { MANAGER_NODE_OPTIONS } from '../src/runtime/manager/manager.js';
import { KubeClient, loadKubeConfig, NAMESPACES, PODS, SIDECARSETS, type Pod } from '../src/runtime/core/index.js';
import { bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, kubectlOn, pinnedKruiseVersion } from '../test/harness/kruise-peer.js';
import { benchArgs, median, percentile, ratio } from './lib.js';
import { loadDuringRun, recordBench } from './record.js';
import { BENCH_SIDECARSET_NAME, BENCH_SIDECARSET_SPEC } from './support/pod-webhook-fixtures.js';
import {
  bundleOurCli,
  startNoopPodWebhook,
  startOurManager,
  startPeerPlane,
  startUpstreamManager,
  RUNTIME_NS,
  WEBHOOK_H2_OPTION,
  webhookProtocol,
  type Runner,
} from './support/peer-runners.js';

const args = benchArgs(
  { rounds: 2, rate: 50, seconds: 60 },
  {
    out: { type: 'string', default: path.join('out', 'bench', 'pod-webhook-peer.json') },
    ...WEBHOOK_H2_OPTION,
    // Writes a V8 CPU profile of our manager per phase into this directory (node --cpu-prof).
    'cpu-prof-dir': { type: 'string' },
    // Node/V8 options of our manager instead of the Deployment's (MANAGER_NODE_OPTIONS), to try other limits;
    // a value starting with a dash needs the = form: --node-options=--max-semi-space-size=1.
    'node-options': { type: 'string' },
    // A subset of the phases for quick iterations (e.g. none,ours); the summary needs none, ours and upstream.
    variants: { type: 'string', default: 'none,ours,upstream,noop' },
  },
);
bypassProxyForLoopback();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r2 = (x: number) => Math.round(x * 100) / 100;
const MiB = 2 ** 20;
const log = (msg: string) => console.error(`[bench] ${msg}`);

const ALL_VARIANTS = ['none', 'ours', 'upstream', 'noop', 'ours-standby'] as const;
type Variant = (typeof ALL_VARIANTS)[number];
const VARIANTS = args.extra.variants.split(',').map((v) => {
  if (!(ALL_VARIANTS as readonly string[]).includes(v))
    throw new Error(`--variants: unknown phase ${JSON.stringify(v)} (${ALL_VARIANTS.join(', ')})`);
  return v as Variant;
});
/** Labels of the control namespace: upstream's pod webhook skips any `control-plane` label, ours its opt-out label. */
const CONTROL_NAMESPACE_LABELS = { 'control-plane': 'bench-control', [LABEL_POD_WEBHOOK_OPT_OUT]: POD_WEBHOOK_OPT_OUT_VALUE };
/** Control pods carry another app label, so no SidecarSet selects them and the controllers' work is unchanged. */
const CONTROL_APP = 'bench-control';
const SET_NAME = BENCH_SIDECARSET_NAME;

const plane = await startPeerPlane(args.extra['webhook-h2']);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 30_000 });
let current: Runner | undefined;

interface PhaseResult {
  /** Creates into the namespace the pod webhook covers. */
  p50: number;
  p99: number;
  /** Creates into the control namespace in the same phase (no pod webhook called). */
  controlP50: number;
  controlP99: number;
  /** The covered stream's quantile minus the control stream's: the admission latency the webhook adds. */
  addedP50: number;
  addedP99: number;
  injected: number;
  failed: number;
  rssMaxMiB?: number;
  rssEndMiB?: number;
  cpuSeconds?: number;
  /** CPU milliseconds of the webhook process per pod created in the phase (load-independent yardstick). */
  cpuMsPerPod?: number;
  /** What the pod webhook's server offers the API server: ALPN protocol chosen from [h2, http/1.1], key type. */
  transport?: string;
  /**
   * The API server's own measure of its pod webhook calls in the phase (its admission-webhook duration
   * histogram): calls, the share answered within 5 ms, and the smallest bucket bound holding the p50/p99.
   * This is the admission latency the webhook adds, without the noise of the rest of the create.
   */
  apiServerWait?: WebhookWait;
  load1: number;
}

interface WebhookWait {
  calls: number;
  shareWithin5ms: number;
  /** Share of calls that took more than 25 ms: the tail, as far as the API server's buckets resolve it. */
  shareOver25ms: number;
  p50AtMostMs: number;
  p99AtMostMs: number;
  /** The p99 interpolated linearly inside its bucket, as Prometheus' histogram_quantile does. */
  p99EstimateMs: number;
  /** Cumulative counts per bucket bound in seconds (as the API server reports them), for pooling rounds. */
  cumulative: Record<string, number>;
}

/** Cumulative bucket counts (le in seconds -> count) of the API server's pod-webhook CREATE calls so far. */
async function podWebhookBuckets(): Promise<Map<number, number>> {
  const text = await kubectlOn(plane, ['get', '--raw', '/metrics']);
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_admission_webhook_admission_duration_seconds_bucket{')) continue;
    if (!line.includes('name="mpod.kb.io"') || !line.includes('operation="CREATE"')) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (!le) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}

function totalCalls(buckets: Map<number, number>): number {
  return buckets.get(Infinity) ?? 0;
}

/** The calls between two bucket readings; a quantile is given as the bound of the bucket that holds it. */
function webhookWait(before: Map<number, number>, after: Map<number, number>): WebhookWait | undefined {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  return waitOf(new Map(bounds.map((b) => [b, (after.get(b) ?? 0) - (before.get(b) ?? 0)])));
}

/** Shares and quantiles of cumulative bucket counts (bound in seconds -> calls at most that long). */
function waitOf(cumulative: Map<number, number>): WebhookWait | undefined {
  const bounds = [...cumulative.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => cumulative.get(b)!);
  const calls = counts.at(-1) ?? 0;
  if (calls === 0) return undefined;
  const bucketOf = (q: number) => counts.findIndex((c) => c >= q * calls);
  const atMost = (q: number) => bounds[bucketOf(q)]! * 1000;
  const estimate = (q: number) => {
    const i = bucketOf(q);
    const lower = i > 0 ? bounds[i - 1]! : 0;
    const below = i > 0 ? counts[i - 1]! : 0;
    if (!Number.isFinite(bounds[i]!)) return lower * 1000;
    return (lower + ((bounds[i]! - lower) * (q * calls - below)) / (counts[i]! - below)) * 1000;
  };
  const share = (bound: number) => (cumulative.get(bound) ?? NaN) / calls;
  return {
    calls,
    shareWithin5ms: r2(share(0.005)),
    shareOver25ms: r2(1 - share(0.025)),
    p50AtMostMs: atMost(0.5),
    p99AtMostMs: atMost(0.99),
    p99EstimateMs: r2(estimate(0.99)),
    cumulative: Object.fromEntries(bounds.map((b, i) => [String(b), counts[i]!])),
  };
}

/** The rounds' calls of one variant as one histogram. */
function pooledWait(waits: (WebhookWait | undefined)[]): WebhookWait | undefined {
  const sum = new Map<number, number>();
  for (const w of waits) for (const [b, c] of Object.entries(w?.cumulative ?? {})) sum.set(Number(b), (sum.get(Number(b)) ?? 0) + c);
  return waitOf(sum);
}

function pod(name: string, app = 'bench'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          env: [{ name: 'REGION', value: 'eu' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  } as Pod;
}

/**
 * How the API server reaches the variant's pod webhook: the URL of the `/mutate-pod` entry, the protocol
 * its TLS server picks when offered h2 and http/1.1 (as the API server offers them with `--webhook-h2`; see
 * startPeerPlane), and its certificate's key. Both managers are registered by URL on loopback; this makes the
 * transport comparable.
 */
async function podWebhookTransport(): Promise<string> {
  const list = JSON.parse(await kubectlOn(plane, ['get', 'mutatingwebhookconfigurations', '-o', 'json'])) as {
    items: { webhooks?: { clientConfig: { url?: string } }[] }[];
  };
  const url = list.items
    .flatMap((c) => c.webhooks ?? [])
    .map((w) => w.clientConfig.url)
    .find((u) => u?.includes('/mutate-pod'));
  if (!url) return 'no /mutate-pod webhook';
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = tlsConnect(
      { host: u.hostname, port: Number(u.port), ALPNProtocols: ['h2', 'http/1.1'], rejectUnauthorized: false },
      () => {
        const cert = socket.getPeerCertificate();
        const key = cert.asn1Curve ? `EC ${cert.asn1Curve}` : cert.bits ? `RSA ${cert.bits}` : 'key ?';
        resolve(`${u.protocol}//${u.host} alpn=${socket.alpnProtocol || 'none'} ${socket.getProtocol()} ${key}`);
        socket.end();
      },
    );
    socket.on('error', (err: Error) => resolve(`tls error: ${err.message}`));
  });
}

/** A Lease held by another replica for an hour; returns its name (our manager then stands by). */
async function holdLeaseElsewhere(): Promise<string> {
  const name = 'bench-standby';
  const now = new Date().toISOString().replace(/Z$/, '000Z'); // MicroTime: six fractional digits
  const lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: RUNTIME_NS },
    spec: { holderIdentity: 'another-replica', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
  };
  await kubectlOn(plane, ['apply', '-f', '-'], JSON.stringify(lease));
  return name;
}

/**
 * Creates probe pods until the variant's webhook is called: it injects one (its cache has the SidecarSet), or,
 * for the noop webhook, the API server has counted a call to it.
 */
async function waitInjecting(ns: string, variant: Variant): Promise<void> {
  if (variant === 'none') return;
  const callsBefore = variant === 'noop' ? totalCalls(await podWebhookBuckets()) : 0;
  for (let i = 0; ; i++) {
    const body = pod(`probe-${i}`);
    body.metadata.namespace = ns;
    const p = await client.create<Pod>(PODS, body).catch(() => undefined);
    if (variant === 'noop' ? totalCalls(await podWebhookBuckets()) > callsBefore : p?.spec?.containers.some((c) => c.name === 'logtail'))
      return;
    if (i > 300) throw new Error(`${variant}: pods not injected after 60 s:\n${current?.logTail() ?? ''}`);
    await sleep(200);
  }
}

async function phase(variant: Variant, round: number): Promise<PhaseResult> {
  const ns = `r${round}-${variant}`;
  const controlNs = `${ns}-control`;
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: controlNs, labels: CONTROL_NAMESPACE_LABELS } });
  const started = performance.now();
  if (variant === 'ours' || variant === 'ours-standby') {
    const standby = variant === 'ours-standby' ? await holdLeaseElsewhere() : undefined;
    const prof = args.extra['cpu-prof-dir'];
    const nodeOptions = args.extra['node-options'] ?? MANAGER_NODE_OPTIONS;
    current = await startOurManager(plane, cliMain, {
      featureGates: '',
      podWebhook: true,
      nodeOptions: prof ? `${nodeOptions} --cpu-prof --cpu-prof-dir=${path.resolve(prof)}` : nodeOptions,
      ...(standby ? { args: ['--leader-elect', '--leader-election-id', standby] } : {}),
    });
  } else if (variant === 'upstream') {
    current = await startUpstreamManager(plane, {});
  } else if (variant === 'noop') {
    current = await startNoopPodWebhook(plane);
  }
  if (current) log(`${variant}: ready in ${Math.round(performance.now() - started)} ms (pid ${current.pid})`);
  await waitInjecting(ns, variant);
  const transport = current ? await podWebhookTransport() : undefined;
  if (transport) log(`${variant}: pod webhook ${transport}`);
  await sleep(2000); // let the start-up settle before the steady load
  const cpu0 = current?.cpuSeconds() ?? 0;
  const buckets0 = current ? await podWebhookBuckets() : undefined;
  const rss: number[] = [];
  const sampler = setInterval(() => current && rss.push(current.rssBytes()), 1000);
  const total = args.rate * args.seconds;
  const interval = 1000 / args.rate;
  const latencies: number[] = [];
  const controlLatencies: number[] = [];
  let injected = 0;
  let failed = 0;
  const t0 = performance.now();
  const inflight: Promise<void>[] = [];
  const send = (body: Pod, into: number[]) => {
    const begin = performance.now();
    inflight.push(
      client.create<Pod>(PODS, body).then(
        (created) => {
          into.push(performance.now() - begin);
          if (created.spec?.containers.some((c) => c.name === 'logtail')) injected++;
        },
        (err: Error) => {
          failed++;
          if (failed <= 3) log(`${variant}: create failed: ${err.message}`);
        },
      ),
    );
  };
  for (let slot = 0; slot < 2 * total; slot++) {
    // Open loop: each create starts on schedule whatever the earlier ones are doing; the control stream's
    // creates fall half an interval after the covered stream's.
    const due = t0 + (slot / 2) * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const i = slot >> 1;
    const covered = slot % 2 === 0;
    const body = covered ? pod(`p-${i}`) : pod(`c-${i}`, CONTROL_APP);
    body.metadata.namespace = covered ? ns : controlNs;
    send(body, covered ? latencies : controlLatencies);
  }
  await Promise.all(inflight);
  samples[variant].covered.push(...latencies);
  samples[variant].control.push(...controlLatencies);
  clearInterval(sampler);
  const apiServerWait = buckets0 ? webhookWait(buckets0, await podWebhookBuckets()) : undefined;
  const quantiles = {
    p50: r2(percentile(latencies, 0.5)),
    p99: r2(percentile(latencies, 0.99)),
    controlP50: r2(percentile(controlLatencies, 0.5)),
    controlP99: r2(percentile(controlLatencies, 0.99)),
  };
  const result: PhaseResult = {
    ...quantiles,
    addedP50: r2(quantiles.p50 - quantiles.controlP50),
    addedP99: r2(quantiles.p99 - quantiles.controlP99),
    injected,
    failed,
    load1: r2(loadavg()[0]!),
    ...(current
      ? {
          rssMaxMiB: r2(Math.max(...rss, current.rssBytes()) / MiB),
          rssEndMiB: r2(current.rssBytes() / MiB),
          cpuSeconds: r2(current.cpuSeconds() - cpu0),
          cpuMsPerPod: r2(((current.cpuSeconds() - cpu0) * 1000) / total),
          transport,
          apiServerWait,
        }
      : {}),
  };
  log(`${variant} round ${round}: ${JSON.stringify(result)}`);
  await current?.stop();
  current = undefined;
  // No kube-controller-manager here: delete the pods by collection, then the namespace object.
  for (const n of [ns, controlNs])
    await kubectlOn(plane, ['delete', 'pods', '--all', '-n', n, '--wait=false', '--grace-period=0', '--force']).catch(() => '');
  return result;
}

/** Every phase's latencies of a variant, for quantiles over all rounds. */
const samples = Object.fromEntries(ALL_VARIANTS.map((v) => [v, { covered: [] as number[], control: [] as number[] }])) as Record<
  Variant,
  { covered: number[]; control: number[] }
>;

let cliMain = '';
try {
  await installKruisePeerCrds(plane);
  cliMain = await bundleOurCli();
  await client.create(SIDECARSETS, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: SET_NAME },
    spec: BENCH_SIDECARSET_SPEC,
  });
  const results = Object.fromEntries(ALL_VARIANTS.map((v) => [v, [] as PhaseResult[]])) as Record<Variant, PhaseResult[]>;
  for (let round = 0; round < args.rounds; round++) {
    for (let k = 0; k < VARIANTS.length; k++) {
      const variant = VARIANTS[(k + round) % VARIANTS.length]!;
      results[variant].push(await phase(variant, round));
    }
  }
  if (!VARIANTS.includes('none')) console.log(JSON.stringify(results));
  else await report(results);
} finally {
  await current?.stop().catch(() => undefined);
  await plane.stop();
}

interface PhaseMedians {
  addedP50: number | null;
  addedP99: number | null;
  rssMaxMiB: number | null;
  cpuSeconds: number | null;
  cpuMsPerPod: number | null;
}

/** A variant's added latency over all its rounds: the covered creates' quantile minus the control creates'. */
function pooledAdded(v: Variant): { creates: number; p50: number; p99: number; controlP99: number } | undefined {
  const { covered, control } = samples[v];
  if (!covered.length || !control.length) return undefined;
  return {
    creates: covered.length,
    p50: r2(percentile(covered, 0.5) - percentile(control, 0.5)),
    p99: r2(percentile(covered, 0.99) - percentile(control, 0.99)),
    controlP99: r2(percentile(control, 0.99)),
  };
}

async function report(results: Record<Variant, PhaseResult[]>): Promise<void> {
  const vsNone = (v: Variant, q: 'p50' | 'p99') => results[v].map((r, i) => r2(r[q] - results.none[i]![q]));
  const ran = ALL_VARIANTS.filter((v) => v !== 'none' && results[v].length);
  const medianOf = (v: Variant, f: (r: PhaseResult) => number) => (results[v].length ? r2(median(results[v].map(f))) : null);
  const summary = {
    upstream: pinnedKruiseVersion(),
    cores: cpus().length,
    rate: args.rate,
    seconds: args.seconds,
    rounds: args.rounds,
    webhookCalls: webhookProtocol(args.extra['webhook-h2']),
    perRound: results,
    /** The headline: each variant's covered creates against the control creates of the same phases, all rounds. */
    added: Object.fromEntries(ALL_VARIANTS.map((v) => [v, pooledAdded(v)])),
    median: Object.fromEntries(
      ALL_VARIANTS.map((v): [Variant, PhaseMedians] => [
        v,
        {
          addedP50: medianOf(v, (r) => r.addedP50),
          addedP99: medianOf(v, (r) => r.addedP99),
          rssMaxMiB: v === 'none' ? null : medianOf(v, (r) => r.rssMaxMiB!),
          cpuSeconds: v === 'none' ? null : medianOf(v, (r) => r.cpuSeconds!),
          cpuMsPerPod: v === 'none' ? null : medianOf(v, (r) => r.cpuMsPerPod!),
        },
      ]),
    ) as Record<Variant, PhaseMedians>,
    /** The earlier measure: a variant's create quantile minus the `none` phase's in the same round (medians). */
    addedVsNonePhase: Object.fromEntries(
      ran.map((v) => [
        v,
        { p50: r2(median(vsNone(v, 'p50'))), p99: r2(median(vsNone(v, 'p99'))), noneP99: r2(median(results.none.map((r) => r.p99))) },
      ]),
    ),
    // Every round's calls in one histogram per variant: 1,500-3,000 calls a round leave 15-30 behind a p99.
    apiServerWaitPooled: Object.fromEntries(ran.map((v) => [v, pooledWait(results[v].map((r) => r.apiServerWait))])),
  };
  const added = summary.added as Record<Variant, ReturnType<typeof pooledAdded>>;
  const m = summary.median;
  const wait = summary.apiServerWaitPooled as Record<string, WebhookWait | undefined>;
  const ratios = {
    addedP99OursOverUpstream: added.ours && added.upstream && added.upstream.p99 > 0 ? ratio(added.ours.p99, added.upstream.p99) : null,
    addedP50OursOverUpstream: added.ours && added.upstream && added.upstream.p50 > 0 ? ratio(added.ours.p50, added.upstream.p50) : null,
    rssOursOverUpstream: m.ours.rssMaxMiB && m.upstream.rssMaxMiB ? ratio(m.ours.rssMaxMiB, m.upstream.rssMaxMiB) : null,
    cpuOursOverUpstream: m.ours.cpuSeconds && m.upstream.cpuSeconds ? ratio(m.ours.cpuSeconds, m.upstream.cpuSeconds) : null,
    apiServerWaitP99OursOverUpstream: wait.ours && wait.upstream ? ratio(wait.ours.p99EstimateMs, wait.upstream.p99EstimateMs) : null,
  };
  const out = { ...summary, ratios, targets: { oursAddedP99AtMostMs: 5, addedP99RatioAtMost: 1.0 } };
  mkdirSync(path.dirname(args.extra.out), { recursive: true });
  writeFileSync(args.extra.out, JSON.stringify(out, null, 2) + '\n');
  if (added.ours) {
    const floor = added.noop
      ? `; a webhook that allows every pod unchanged (the machine's floor) adds ${added.noop.p50} / ${added.noop.p99} ms`
      : '';
    await recordBench(
      'bench:pod-webhook-peer',
      [
        {
          measure:
            `latency the pod webhook adds to a create (SidecarSet injection), ${args.rate} creates/s for ${args.seconds} s, ` +
            `over control creates of the same moment, ${added.ours.creates.toLocaleString('en-US')} a side`,
          figure: `p50 ${added.ours.p50} ms, p99 ${added.ours.p99} ms`,
          peer: `${ratios.addedP50OursOverUpstream ?? '-'}x / ${ratios.addedP99OursOverUpstream ?? '-'}x upstream${floor}`,
        },
        {
          measure: 'webhook process RSS; CPU per pod',
          figure: `${m.ours.rssMaxMiB} MiB; ${m.ours.cpuMsPerPod} ms`,
          peer: `${ratios.rssOursOverUpstream ?? '-'}x; ${ratios.cpuOursOverUpstream ?? '-'}x upstream`,
        },
      ],
      { conditions: `${loadDuringRun(ALL_VARIANTS.flatMap((v) => results[v].map((r) => r.load1)))}; webhooks: ${summary.webhookCalls}` },
    );
  }
  if (args.json) {
    console.log(JSON.stringify(out));
    return;
  }
  const ms = (x: number | null | undefined) => (x === null || x === undefined ? '-' : `${x} ms`);
  console.log(
    `pod webhook, ${args.rate} pods/s for ${args.seconds} s beside as many control pods, ${args.rounds} rounds; webhook calls: ${summary.webhookCalls}:`,
  );
  console.log(`  added latency (covered creates minus control creates of the same phases, all rounds):`);
  for (const v of ALL_VARIANTS) {
    const a = added[v];
    if (!a) continue;
    const note = v === 'none' ? '  (no webhook in either stream: the pairing error)' : '';
    const rounds = results[v].map((r) => `${r.addedP50}/${r.addedP99}`).join(', ');
    const mv = m[v];
    const proc = v === 'none' ? '' : `  RSS max ${mv.rssMaxMiB} MiB  CPU ${mv.cpuMsPerPod} ms/pod`;
    console.log(
      `    ${v.padEnd(13)} p50 ${ms(a.p50)}  p99 ${ms(a.p99)}  (control p99 ${a.controlP99} ms; per round p50/p99 ${rounds})${proc}${note}`,
    );
  }
  console.log(`  against the none phase of the same round (the earlier measure, medians):`);
  for (const v of ran) {
    const a = summary.addedVsNonePhase[v]!;
    console.log(`    ${v.padEnd(13)} p50 ${ms(a.p50)}  p99 ${ms(a.p99)}`);
  }
  const brief = (w: WebhookWait | undefined) =>
    w ? `${w.calls} calls, within 5 ms ${w.shareWithin5ms}, over 25 ms ${w.shareOver25ms}, p99 ~${w.p99EstimateMs} ms` : 'none';
  console.log(`  API server's wait on the pod webhook (its histogram, rounds pooled):`);
  for (const v of ran) console.log(`    ${v.padEnd(13)} ${brief(wait[v])}`);
  console.log(`  ratios    ${JSON.stringify(ratios)}`);
}

// Pod admission through the pod webhook (SidecarSet injection), ours against the upstream peer, on one real
// kube-apiserver + etcd: pods are created (stored, never run: there is no kubelet) at a steady rate, open
// loop, with a SidecarSet that matches every one of them, and each create's latency is recorded.
//
//   none      no pod webhook registered: the API server's own cost of a pod create (the baseline).
//   ours      our controller-manager as shipped (the CLI bundle, the Deployment's V8 limits) with the install's
//             pod webhook entry (and our other webhooks) pointing at it.
//   upstream  kruise-manager (test/harness/kruise-peer.ts) with its own webhooks, default gates.
//
// Every round runs the three phases in rotated order, each in a fresh namespace with the same pods; the added
// admission latency of a variant is its p50/p99 minus the p50/p99 of `none` in the same round. RSS of the
// webhook process is sampled every second (max and at the end), CPU seconds over the phase. Both managers run
// on upstream's CRDs (ours must be API-compatible); one at a time, their webhook configurations removed on stop.
// The API server's own histogram of its pod-webhook calls gives the added latency without the create's noise.
// Usage: npm run bench:pod-webhook-peer [-- --rounds 2 --rate 50 --seconds 60 --out out/bench/pod-webhook-peer.json --json
//        --cpu-prof-dir out/prof --node-options=<V8 flags of our manager>]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import { MANAGER_NODE_OPTIONS } from '../src/runtime/manager/manager.js';
import { KubeClient, loadKubeConfig, NAMESPACES, PODS, SIDECARSETS, type Pod } from '../src/runtime/core/index.js';
import { bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { installKruisePeerCrds, kubectlOn, pinnedKruiseVersion } from '../test/harness/kruise-peer.js';
import { benchArgs, median, percentile, ratio } from './lib.js';
import { BENCH_SIDECARSET_NAME, BENCH_SIDECARSET_SPEC } from './support/pod-webhook-fixtures.js';
import {
  bundleOurCli,
  startOurManager,
  startPeerPlane,
  startUpstreamManager,
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
    // A subset of the phases for quick iterations (e.g. none,ours); the summary needs all three.
    variants: { type: 'string', default: 'none,ours,upstream' },
  },
);
bypassProxyForLoopback();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r2 = (x: number) => Math.round(x * 100) / 100;
const MiB = 2 ** 20;
const log = (msg: string) => console.error(`[bench] ${msg}`);

type Variant = 'none' | 'ours' | 'upstream';
const VARIANTS = args.extra.variants.split(',').map((v) => {
  if (v !== 'none' && v !== 'ours' && v !== 'upstream')
    throw new Error(`--variants: unknown phase ${JSON.stringify(v)} (none, ours, upstream)`);
  return v as Variant;
});
const SET_NAME = BENCH_SIDECARSET_NAME;

const plane = await startPeerPlane(args.extra['webhook-h2']);
const client = new KubeClient(loadKubeConfig(plane.kubeconfigPath), { requestTimeoutMs: 30_000 });
let current: Runner | undefined;

interface PhaseResult {
  p50: number;
  p99: number;
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

function pod(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench' } },
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

/** Creates probe pods until the webhook injects one: the variant's cache has the SidecarSet. */
async function waitInjecting(ns: string, variant: Variant): Promise<void> {
  if (variant === 'none') return;
  for (let i = 0; ; i++) {
    const body = pod(`probe-${i}`);
    body.metadata.namespace = ns;
    const p = await client.create<Pod>(PODS, body).catch(() => undefined);
    if (p?.spec?.containers.some((c) => c.name === 'logtail')) return;
    if (i > 300) throw new Error(`${variant}: pods not injected after 60 s:\n${current?.logTail() ?? ''}`);
    await sleep(200);
  }
}

async function phase(variant: Variant, round: number): Promise<PhaseResult> {
  const ns = `r${round}-${variant}`;
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const started = performance.now();
  if (variant === 'ours') {
    const prof = args.extra['cpu-prof-dir'];
    const nodeOptions = args.extra['node-options'] ?? MANAGER_NODE_OPTIONS;
    current = await startOurManager(plane, cliMain, {
      featureGates: '',
      podWebhook: true,
      nodeOptions: prof ? `${nodeOptions} --cpu-prof --cpu-prof-dir=${path.resolve(prof)}` : nodeOptions,
    });
  } else if (variant === 'upstream') {
    current = await startUpstreamManager(plane, {});
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
  let injected = 0;
  let failed = 0;
  const t0 = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    // Open loop: each create starts on schedule whatever the earlier ones are doing.
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const body = pod(`p-${i}`);
    body.metadata.namespace = ns;
    const begin = performance.now();
    inflight.push(
      client.create<Pod>(PODS, body).then(
        (created) => {
          latencies.push(performance.now() - begin);
          if (created.spec?.containers.some((c) => c.name === 'logtail')) injected++;
        },
        (err: Error) => {
          failed++;
          if (failed <= 3) log(`${variant}: create failed: ${err.message}`);
        },
      ),
    );
  }
  await Promise.all(inflight);
  clearInterval(sampler);
  const apiServerWait = buckets0 ? webhookWait(buckets0, await podWebhookBuckets()) : undefined;
  const result: PhaseResult = {
    p50: r2(percentile(latencies, 0.5)),
    p99: r2(percentile(latencies, 0.99)),
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
  await kubectlOn(plane, ['delete', 'pods', '--all', '-n', ns, '--wait=false', '--grace-period=0', '--force']).catch(() => '');
  return result;
}

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
  const results: Record<Variant, PhaseResult[]> = { none: [], ours: [], upstream: [] };
  for (let round = 0; round < args.rounds; round++) {
    for (let k = 0; k < VARIANTS.length; k++) {
      const variant = VARIANTS[(k + round) % VARIANTS.length]!;
      results[variant].push(await phase(variant, round));
    }
  }
  if (VARIANTS.length < 3) console.log(JSON.stringify(results));
  else report(results);
} finally {
  await current?.stop().catch(() => undefined);
  await plane.stop();
}

function report(results: Record<Variant, PhaseResult[]>): void {
  const added = (v: 'ours' | 'upstream', q: 'p50' | 'p99') => results[v].map((r, i) => r2(r[q] - results.none[i]![q]));
  const summary = {
    upstream: pinnedKruiseVersion(),
    cores: cpus().length,
    rate: args.rate,
    seconds: args.seconds,
    rounds: args.rounds,
    webhookCalls: webhookProtocol(args.extra['webhook-h2']),
    perRound: results,
    median: {
      noneP50: median(results.none.map((r) => r.p50)),
      noneP99: median(results.none.map((r) => r.p99)),
      oursAddedP50: median(added('ours', 'p50')),
      oursAddedP99: median(added('ours', 'p99')),
      upstreamAddedP50: median(added('upstream', 'p50')),
      upstreamAddedP99: median(added('upstream', 'p99')),
      oursRssMaxMiB: median(results.ours.map((r) => r.rssMaxMiB!)),
      upstreamRssMaxMiB: median(results.upstream.map((r) => r.rssMaxMiB!)),
      oursCpuSeconds: median(results.ours.map((r) => r.cpuSeconds!)),
      upstreamCpuSeconds: median(results.upstream.map((r) => r.cpuSeconds!)),
      oursShareWithin5ms: median(results.ours.map((r) => r.apiServerWait?.shareWithin5ms ?? NaN)),
      upstreamShareWithin5ms: median(results.upstream.map((r) => r.apiServerWait?.shareWithin5ms ?? NaN)),
    },
    // Every round's calls in one histogram per variant: 1,500-3,000 calls a round leave 15-30 behind a p99.
    apiServerWaitPooled: {
      ours: pooledWait(results.ours.map((r) => r.apiServerWait)),
      upstream: pooledWait(results.upstream.map((r) => r.apiServerWait)),
    },
  };
  const m = summary.median;
  const ratios = {
    addedP99OursOverUpstream: m.upstreamAddedP99 > 0 ? ratio(m.oursAddedP99, m.upstreamAddedP99) : null,
    rssOursOverUpstream: ratio(m.oursRssMaxMiB, m.upstreamRssMaxMiB),
    cpuOursOverUpstream: ratio(m.oursCpuSeconds, m.upstreamCpuSeconds),
    apiServerWaitP99OursOverUpstream:
      summary.apiServerWaitPooled.ours && summary.apiServerWaitPooled.upstream
        ? ratio(summary.apiServerWaitPooled.ours.p99EstimateMs, summary.apiServerWaitPooled.upstream.p99EstimateMs)
        : null,
  };
  const out = { ...summary, ratios, targets: { oursAddedP99AtMostMs: 5, addedP99RatioAtMost: 1.0 } };
  mkdirSync(path.dirname(args.extra.out), { recursive: true });
  writeFileSync(args.extra.out, JSON.stringify(out, null, 2) + '\n');
  if (args.json) console.log(JSON.stringify(out));
  else {
    console.log(
      `pod webhook, ${args.rate} pods/s for ${args.seconds} s, ${args.rounds} rounds (medians); webhook calls: ${summary.webhookCalls}:`,
    );
    console.log(`  none      p50 ${m.noneP50} ms  p99 ${m.noneP99} ms`);
    console.log(
      `  ours      added p50 ${m.oursAddedP50} ms  p99 ${m.oursAddedP99} ms  RSS max ${m.oursRssMaxMiB} MiB  CPU ${m.oursCpuSeconds} s`,
    );
    console.log(
      `  upstream  added p50 ${m.upstreamAddedP50} ms  p99 ${m.upstreamAddedP99} ms  RSS max ${m.upstreamRssMaxMiB} MiB  CPU ${m.upstreamCpuSeconds} s`,
    );
    const pooled = summary.apiServerWaitPooled;
    const brief = (w: WebhookWait | undefined) =>
      w ? `${w.calls} calls, within 5 ms ${w.shareWithin5ms}, over 25 ms ${w.shareOver25ms}, p99 ~${w.p99EstimateMs} ms` : 'none';
    console.log(`  API server's wait on the pod webhook (its histogram, rounds pooled):`);
    console.log(`    ours      ${brief(pooled.ours)}`);
    console.log(`    upstream  ${brief(pooled.upstream)}`);
    console.log(
      `    per round ${JSON.stringify({
        ours: results.ours.map((r) => r.apiServerWait && brief(r.apiServerWait)),
        upstream: results.upstream.map((r) => r.apiServerWait && brief(r.apiServerWait)),
      })}`,
    );
    console.log(`  ratios    ${JSON.stringify(ratios)}`);
  }
}

// The admission server under attack, in a child process with the manager's shipped V8 limits
// (MANAGER_NODE_OPTIONS). Two phases against the same server, one after the other:
//   baseline  a stream of well-formed AdmissionReviews (a valid SidecarSet) on keep-alive connections
//   stress    the same stream while 1,500 slow connections dribble headers, 200 connections send
//             2.9 MB bodies partially and stall, both re-opened when the server cuts them off
// Reports the server's peak RSS (VmHWM) against the 512 MiB container limit, the p50/p99 latency of the
// valid reviews in each phase and their ratio, refused/failed valid reviews, and whether the server is
// still up and answering afterwards, with the server's event-loop delay and GC pauses. Loopback only; bounded
// in connections and duration.
// Usage: npm run bench:webhook-stress [-- --slow 1500 --partial 200 --seconds 20 --rate 50 --json
//        --attacker-nice 19 --node-options='--max-old-space-size=128 ...' --cpu-prof-dir out/prof]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, setPriority, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { MANAGER_NODE_OPTIONS } from '../src/contracts/node-options.js';
import { SidecarSetDefinition } from '../src/api/registry.js';
import { kindWebhookPath } from '../src/install/webhooks.js';
import { benchArgs, percentile, ratio } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs(
  { slow: 1500, partial: 200, seconds: 20, rate: 50, 'partial-mb': 2.9, 'attacker-nice': 19 },
  // Writes a V8 CPU profile of the server process into this directory (node --cpu-prof).
  {
    'cpu-prof-dir': { type: 'string' },
    // The server's NODE_OPTIONS, to try other V8 limits against the shipped ones.
    'node-options': { type: 'string', default: MANAGER_NODE_OPTIONS },
  },
);
const prof = args.extra['cpu-prof-dir'];
const nodeOptions = args.extra['node-options'];
const CONTAINER_LIMIT_MIB = 512;
const PATH = kindWebhookPath('validate', SidecarSetDefinition);

const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./webhook-stress-server.ts', import.meta.url))], {
  env: { ...process.env, NODE_OPTIONS: prof ? `${nodeOptions} --cpu-prof --cpu-prof-dir=${resolve(prof)}` : nodeOptions },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let exited: number | null | undefined;
child.on('exit', (code, signal) => {
  exited = code ?? (signal ? -1 : 0);
});
const { port, ca } = await new Promise<{ port: number; ca: string }>((resolve, reject) => {
  let buf = '';
  child.stdout!.on('data', (c: Buffer) => {
    buf += c.toString();
    const nl = buf.indexOf('\n');
    if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)) as { port: number; ca: string });
  });
  child.once('exit', () => reject(new Error('webhook server exited before listening')));
});

const rssMiB = (field: 'VmRSS' | 'VmHWM'): number => {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
};

const body = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
    kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
    resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
    operation: 'CREATE',
    object: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'bench' },
      spec: { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 'sidecar', image: 'busybox:1.36' }] },
    },
  },
});

// Like the API server: a few persistent connections.
const agent = new Agent({ keepAlive: true, maxSockets: 8, ca, servername: 'localhost' });

function review(): Promise<{ ms: number; ok: boolean }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: PATH,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let ok: boolean;
          try {
            ok =
              res.statusCode === 200 &&
              (JSON.parse(Buffer.concat(chunks).toString()) as { response?: { allowed?: unknown } }).response?.allowed === true;
          } catch {
            ok = false;
          }
          resolve({ ms: performance.now() - t0, ok });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ms: performance.now() - t0, ok: false }));
    req.end(body);
  });
}

/** `rate` reviews per second for `seconds`, each timed from send to answer. */
async function stream(seconds: number, rate: number): Promise<{ latencies: number[]; failed: number }> {
  const latencies: number[] = [];
  let failed = 0;
  const pending: Promise<void>[] = [];
  const end = performance.now() + seconds * 1000;
  const gap = 1000 / rate;
  for (let next = performance.now(); next < end; next += gap) {
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      review().then((r) => {
        if (r.ok) latencies.push(r.ms);
        else failed++;
      }),
    );
  }
  await Promise.all(pending);
  return { latencies, failed };
}

const partialBytes = Math.floor(args['partial-mb'] * 1_000_000);
const sampleRss: number[] = [];
const sampler = setInterval(() => sampleRss.push(rssMiB('VmRSS')), 100);

// Warm-up, then the baseline phase.
await stream(2, args.rate);
const baseline = await stream(Math.max(5, args.seconds / 2), args.rate);
const rssBeforeAttack = rssMiB('VmRSS');

// Stress phase: the attackers run in their own process (see webhook-stress-attacker.ts), at low priority.
const caFile = join(mkdtempSync(join(tmpdir(), 'webhook-stress-')), 'ca.pem');
writeFileSync(caFile, ca);
const attacker = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    fileURLToPath(new URL('./webhook-stress-attacker.ts', import.meta.url)),
    String(port),
    caFile,
    String(args.slow),
    String(args.partial),
    String(partialBytes),
    PATH,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
// An attacker reaches the webhook over the network: its own CPU is not the server's. On one machine the attacker
// process would otherwise take the cores the server needs and the figures would measure the machine, not the
// server. At nice 19 it still mounts the whole attack when a core is free (the connection counts below say how
// much of it was mounted); on a loaded machine it gets less, so the report shows what it managed.
setPriority(attacker.pid!, args['attacker-nice']);
let attackOut = '';
attacker.stdout!.on('data', (c: Buffer) => (attackOut += c.toString()));
const attackerDone = new Promise<void>((r) => attacker.once('exit', () => r()));
// Let the attack ramp up (one second), then time the stream under it.
await new Promise((r) => setTimeout(r, 1500));
const stressed = await stream(args.seconds, args.rate);
attacker.kill('SIGTERM');
await attackerDone;
const stats = JSON.parse(attackOut.trim() || '{}') as Record<string, number>;
rmSync(dirname(caFile), { recursive: true, force: true });
const after = await review();
clearInterval(sampler);

const peakMiB = rssMiB('VmHWM');
const stayedUp = exited === undefined && after.ok;
let serverOut = '';
child.stdout!.on('data', (c: Buffer) => (serverOut += c.toString()));
const serverDone = new Promise<void>((r) => (exited === undefined ? child.once('exit', () => r()) : r()));
child.kill('SIGTERM');
await serverDone;
const loop = (JSON.parse(serverOut.trim().split('\n').pop() || '{}') ?? {}) as {
  loopDelayP99Ms?: number;
  loopDelayMaxMs?: number;
  gc?: Record<string, number>;
};
agent.destroy();

const p = (xs: number[], q: number) => (xs.length ? Math.round(percentile(xs, q) * 10) / 10 : NaN);
const result = {
  server: {
    nodeOptions,
    stayedUp,
    exitCode: exited ?? null,
    peakRssMiB: Math.round(peakMiB),
    containerLimitMiB: CONTAINER_LIMIT_MIB,
    underLimit: peakMiB < CONTAINER_LIMIT_MIB,
    rssBeforeAttackMiB: Math.round(rssBeforeAttack),
    eventLoopDelay: loop,
    maxSampledRssMiB: Math.round(Math.max(...sampleRss.filter(Number.isFinite))),
  },
  attack: {
    nice: args['attacker-nice'],
    slowConnections: args.slow,
    partialBodies: args.partial,
    partialBodyBytes: partialBytes,
    seconds: args.seconds,
    ...stats,
  },
  validReviews: {
    ratePerSecond: args.rate,
    baseline: {
      answered: baseline.latencies.length,
      failed: baseline.failed,
      p50Ms: p(baseline.latencies, 0.5),
      p99Ms: p(baseline.latencies, 0.99),
    },
    stress: {
      answered: stressed.latencies.length,
      failed: stressed.failed,
      p50Ms: p(stressed.latencies, 0.5),
      p99Ms: p(stressed.latencies, 0.99),
      maxMs: p(stressed.latencies, 1),
    },
    p99StressOverBaseline: ratio(percentile(stressed.latencies, 0.99), percentile(baseline.latencies, 0.99)),
  },
  machine: { loadAverage: loadavg(), cpus: availableParallelism() },
  targets: { stayedUp, rssUnder512Mi: peakMiB < CONTAINER_LIMIT_MIB, p99Under50ms: percentile(stressed.latencies, 0.99) < 50 },
};
{
  const v = result.validReviews;
  await recordBench('bench:webhook-stress', [
    {
      measure:
        `admission server under ${args.slow} slow and ${args.partial} partial ${args['partial-mb']} MB-body connections for ` +
        `${args.seconds} s: valid reviews at ${args.rate}/s`,
      figure:
        `p99 ${v.stress.p99Ms} ms, max ${v.stress.maxMs} ms, ${v.stress.failed} of ${v.stress.answered + v.stress.failed} failed; ` +
        `peak RSS ${result.server.peakRssMiB} MiB (limit ${CONTAINER_LIMIT_MIB}); ${stayedUp ? 'stayed up' : 'DID NOT stay up'}`,
      peer: `${v.p99StressOverBaseline}x the same server unattacked (p99 ${v.baseline.p99Ms} ms)`,
    },
  ]);
}
if (args.json) console.log(JSON.stringify(result, null, 2));
else {
  const v = result.validReviews;
  console.log(
    `webhook server (${nodeOptions}) under ${args.slow} slow connections + ${args.partial} partial ${args['partial-mb']} MB bodies for ${args.seconds} s:`,
  );
  console.log(
    `  stayed up: ${stayedUp}   peak RSS: ${result.server.peakRssMiB} MiB (limit ${CONTAINER_LIMIT_MIB} MiB; before the attack ${result.server.rssBeforeAttackMiB} MiB)`,
  );
  console.log(
    `  valid reviews at ${args.rate}/s  baseline p50 ${v.baseline.p50Ms} ms p99 ${v.baseline.p99Ms} ms (${v.baseline.failed} failed)`,
  );
  console.log(
    `                        stress   p50 ${v.stress.p50Ms} ms p99 ${v.stress.p99Ms} ms max ${v.stress.maxMs} ms (${v.stress.failed} failed of ${v.stress.answered + v.stress.failed})`,
  );
  console.log(
    `  p99 stress/baseline: ${v.p99StressOverBaseline}x   server event-loop delay over the run: p99 ${loop.loopDelayP99Ms} ms, max ${loop.loopDelayMaxMs} ms`,
  );
  console.log(
    `  server GC: minor ${loop.gc?.minorMs} ms (longest ${loop.gc?.minorMaxMs}), major ${loop.gc?.majorCount}x ${loop.gc?.majorMs} ms (longest ${loop.gc?.majorMaxMs})`,
  );
  console.log(
    `  machine load average at the end: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} on ${availableParallelism()} CPUs`,
  );
  console.log(
    `  attack (nice ${args['attacker-nice']}): ${stats.slowOpened} slow and ${stats.partialOpened} partial connections opened (${stats.partialBodiesSent} sent their body), ${stats.refused503} refused with 503, ${stats.cutOff} cut off by the server`,
  );
  console.log(`  targets: ${JSON.stringify(result.targets)}`);
}
process.exit(0);

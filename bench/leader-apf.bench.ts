// The manager's leadership under API Priority and Fairness pressure from a noisy neighbour, on a real
// kube-apiserver + etcd (test/harness ControlPlane), with and without the FlowSchemas and
// PriorityLevelConfigurations dist/ ships, in the same run:
//
//   manager   two replicas of the runtime's own LeaderElector (src/runtime/core/leader.ts, client-go's
//             defaults 15 s / 10 s / 2 s), each on a KubeClient authenticated as the manager's ServiceAccount
//             (kruise-system/kruise-manager, a TokenRequest token), so APF classifies their Lease calls as it
//             would in a cluster.
//   neighbour --tenants ServiceAccounts of another namespace (impersonated by the admin), each with
//             --concurrency loops listing --objects ConfigMaps of 1 KiB (bench/leader-apf-neighbour.ts, a
//             process of its own): every one of them, like our manager without a FlowSchema of its own, falls
//             into the built-in `service-accounts` schema and the `workload-low` level.
//   phases    "without": no runtime FlowSchema; "with": dist/'s FlowSchemas and levels applied (waited for
//             until the manager's Lease GET is classified as kruise-leader-election). Each phase: the
//             electors start, one leads, the neighbour runs --seconds, the figures are taken over that window.
//   figures   per phase: the leader's renew latency (its lease GET sent -> its UPDATE answered, including
//             attempts that failed or were cut at the renew deadline) p50 / p99 / max, failed renews, the
//             number of leadership losses, and the neighbour's own throughput and 429s.
// The API server runs with few seats (--inflight / --mutating-inflight: kube-apiserver's
// --max-requests-inflight / --max-mutating-requests-inflight) so a neighbour this machine can drive saturates it.
// Usage: npm run bench:leader-apf [-- --seconds 60 --tenants 20 --concurrency 5 --objects 1000 --inflight 10
//        --mutating-inflight 5 --json]
import { spawn } from 'node:child_process';
import https from 'node:https';
import { loadavg } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { parseAllDocuments } from 'yaml';
import { KubeClient, loadKubeConfig } from '../src/runtime/core/index.js';
import { LeaderElector, type LeaseClient } from '../src/runtime/core/leader.js';
import { ControlPlane, bypassProxyForLoopback } from '../test/harness/controlplane.js';
import { benchArgs, percentile } from './lib.js';
import { recordBench } from './record.js';

const args = benchArgs({ seconds: 60, tenants: 20, concurrency: 5, objects: 1000, inflight: 10, 'mutating-inflight': 5 });
for (const flag of ['seconds', 'tenants', 'concurrency', 'objects', 'inflight', 'mutating-inflight'] as const) {
  if (!Number.isInteger(args[flag]) || args[flag] < 1) throw new Error(`--${flag}: ${args[flag]} is not a positive integer`);
}
const log = (msg: string) => {
  if (!args.json) console.error(`[bench] ${msg}`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LEASE = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const RUNTIME_NS = 'kruise-system';
const MANAGER_SA = 'kruise-manager';
const TENANT_NS = 'tenant';
bypassProxyForLoopback();

// ---- raw requests (admin, impersonated, or with the manager's token) -----------------------------------

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const agent = new https.Agent({ keepAlive: true, maxSockets: 1000 });

async function request(
  kc: KubeConfig,
  method: string,
  p: string,
  opts: { body?: unknown; headers?: Record<string, string>; contentType?: string } = {},
): Promise<Response> {
  const url = new URL(p, kc.getCurrentCluster()!.server);
  const req: https.RequestOptions = {
    method,
    hostname: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    agent,
    headers: {
      accept: 'application/json',
      ...(opts.body === undefined ? {} : { 'content-type': opts.contentType ?? 'application/json' }),
      ...opts.headers,
    },
  };
  await kc.applyToHTTPSOptions(req);
  return new Promise((resolve, reject) => {
    const r = https.request(req, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
  });
}

async function must<T = unknown>(kc: KubeConfig, method: string, p: string, body?: unknown): Promise<T> {
  const res = await request(kc, method, p, { body });
  if (res.status >= 300 && res.status !== 409) throw new Error(`${method} ${p}: HTTP ${res.status}: ${res.body.slice(0, 500)}`);
  return JSON.parse(res.body) as T;
}

/** dist/'s API Priority and Fairness objects: what the install ships. */
interface Manifest {
  apiVersion?: string;
  kind?: string;
}

function shippedFlowControl(): Manifest[] {
  const dist = fileURLToPath(new URL('../dist/', import.meta.url));
  const out = readdirSync(dist, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .flatMap((e) => parseAllDocuments(readFileSync(path.join(e.parentPath, e.name), 'utf8')).map((d) => d.toJS() as Manifest | null))
    .filter((o): o is Manifest => o?.apiVersion === 'flowcontrol.apiserver.k8s.io/v1');
  if (out.length === 0) throw new Error('dist/ holds no flowcontrol.apiserver.k8s.io/v1 objects: run npm run synth');
  return out;
}

// ---- one phase --------------------------------------------------------------------------------------------

interface PhaseResult {
  renews: number;
  failedRenews: number;
  renewP50Ms: number;
  renewP99Ms: number;
  renewMaxMs: number;
  leadershipLosses: number;
  leaderChanges: number;
  /** Share of the window in which no elector led (sampled every 100 ms). */
  leaderlessPercent: number;
  neighbour: { requests: number; perSecond: number; throttled429: number; otherErrors: number };
}

async function phase(name: string, plane: ControlPlane, manager: KubeConfig): Promise<PhaseResult> {
  const leaseName = `apf-bench-${name}`;
  const silent = pino({ level: 'silent' });
  let measuring = false;
  const attempts: Array<{ ms: number; ok: boolean }> = [];
  let losses = 0;
  let changes = 0;
  const electors: LeaderElector[] = [];
  for (const id of ['a', 'b']) {
    const client = new KubeClient(manager, { requestTimeoutMs: 60_000 });
    let started: number | undefined;
    // The leader's attempt: its GET (the first call of a renew) to the UPDATE's answer or the failure.
    const lease: LeaseClient = {
      get: (async (...a: Parameters<KubeClient['get']>) => {
        started = elector.isLeader() ? performance.now() : undefined;
        try {
          return await client.get(...a);
        } catch (err) {
          if (started !== undefined && measuring) attempts.push({ ms: performance.now() - started, ok: false });
          started = undefined;
          throw err;
        }
      }) as KubeClient['get'],
      create: client.create.bind(client),
      update: (async (...a: Parameters<KubeClient['update']>) => {
        try {
          const res = await client.update(...a);
          if (started !== undefined && measuring) attempts.push({ ms: performance.now() - started, ok: true });
          return res;
        } catch (err) {
          if (started !== undefined && measuring) attempts.push({ ms: performance.now() - started, ok: false });
          throw err;
        } finally {
          started = undefined;
        }
      }) as KubeClient['update'],
    };
    const elector: LeaderElector = new LeaderElector(lease, {
      namespace: RUNTIME_NS,
      name: leaseName,
      identity: `${name}-${id}`,
      ...LEASE,
      logger: silent,
      onStartedLeading: () => {
        if (measuring) changes++;
      },
      onStoppedLeading: () => {
        if (measuring) losses++;
      },
    });
    electors.push(elector);
  }
  for (const e of electors) e.start();
  const t0 = performance.now();
  while (!electors.some((e) => e.isLeader())) {
    if (performance.now() - t0 > 30_000) throw new Error(`${name}: no elector led within 30 s`);
    await sleep(100);
  }

  const neighbourProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./leader-apf-neighbour.ts', import.meta.url)),
      plane.kubeconfigPath,
      TENANT_NS,
      String(args.tenants),
      String(args.concurrency),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let neighbourOut = '';
  neighbourProcess.stdout.on('data', (c: Buffer) => (neighbourOut += c.toString()));
  const neighbourDone = new Promise<void>((r) => neighbourProcess.once('exit', () => r()));
  // Let the neighbour ramp up before the window opens.
  await sleep(2_000);
  measuring = true;
  const loads: number[] = [];
  const end = performance.now() + args.seconds * 1000;
  let samples = 0;
  let leaderless = 0;
  let nextLoad = performance.now() + 5_000;
  while (performance.now() < end) {
    await sleep(100);
    samples++;
    if (!electors.some((e) => e.isLeader())) leaderless++;
    if (performance.now() >= nextLoad) {
      loads.push(loadavg()[0]!);
      nextLoad += 5_000;
    }
  }
  measuring = false;
  neighbourProcess.kill('SIGTERM');
  await neighbourDone;
  const neighbour = JSON.parse(neighbourOut.trim() || '{}') as { requests: number; throttled429: number; otherErrors: number };
  await Promise.all(electors.map((e) => e.stop()));
  phaseLoads.push(...loads);

  const ms = attempts.map((a) => a.ms);
  const r0 = (x: number) => Math.round(x);
  const result: PhaseResult = {
    renews: attempts.length,
    failedRenews: attempts.filter((a) => !a.ok).length,
    renewP50Ms: ms.length ? r0(percentile(ms, 0.5)) : NaN,
    renewP99Ms: ms.length ? r0(percentile(ms, 0.99)) : NaN,
    renewMaxMs: ms.length ? r0(Math.max(...ms)) : NaN,
    leadershipLosses: losses,
    leaderChanges: changes,
    leaderlessPercent: Math.round((leaderless / samples) * 100),
    neighbour: { ...neighbour, perSecond: Math.round(neighbour.requests / args.seconds) },
  };
  log(`${name}: ${JSON.stringify(result)}`);
  return result;
}

const phaseLoads: number[] = [];

// ---- the run ---------------------------------------------------------------------------------------------

const plane = await ControlPlane.start({
  apiServerFlags: [`--max-requests-inflight=${args.inflight}`, `--max-mutating-requests-inflight=${args['mutating-inflight']}`],
});
try {
  const admin = loadKubeConfig(plane.kubeconfigPath);
  for (const ns of [RUNTIME_NS, TENANT_NS]) await must(admin, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  await must(admin, 'POST', `/api/v1/namespaces/${RUNTIME_NS}/serviceaccounts`, { metadata: { name: MANAGER_SA } });
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await must(admin, 'POST', `${rbac}/namespaces/${RUNTIME_NS}/roles`, {
    metadata: { name: 'leases' },
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
  });
  await must(admin, 'POST', `${rbac}/namespaces/${RUNTIME_NS}/rolebindings`, {
    metadata: { name: 'leases' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leases' },
    subjects: [{ kind: 'ServiceAccount', name: MANAGER_SA, namespace: RUNTIME_NS }],
  });
  await must(admin, 'POST', `${rbac}/namespaces/${TENANT_NS}/roles`, {
    metadata: { name: 'read-configmaps' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
  });
  await must(admin, 'POST', `${rbac}/namespaces/${TENANT_NS}/rolebindings`, {
    metadata: { name: 'read-configmaps' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-configmaps' },
    subjects: Array.from({ length: args.tenants }, (_, t) => ({ kind: 'ServiceAccount', name: `noisy-${t}`, namespace: TENANT_NS })),
  });
  const filler = 'x'.repeat(1024);
  const names = Array.from({ length: args.objects }, (_, i) => `cm-${i}`);
  for (let i = 0; i < names.length; i += 10) {
    await Promise.all(
      names
        .slice(i, i + 10)
        .map((n) => must(admin, 'POST', `/api/v1/namespaces/${TENANT_NS}/configmaps`, { metadata: { name: n }, data: { filler } })),
    );
  }
  log(`${args.objects} ConfigMaps of the neighbour created`);

  const token = (
    await must<{ status: { token: string } }>(admin, 'POST', `/api/v1/namespaces/${RUNTIME_NS}/serviceaccounts/${MANAGER_SA}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 7200 },
    })
  ).status.token;
  const cluster = admin.getCurrentCluster()!;
  const manager = new KubeConfig();
  manager.loadFromOptions({
    clusters: [cluster],
    users: [{ name: MANAGER_SA, token }],
    contexts: [{ name: 'manager', cluster: cluster.name, user: MANAGER_SA }],
    currentContext: 'manager',
  });

  const without = await phase('without', plane, manager);

  const shipped = shippedFlowControl();
  for (const o of shipped) {
    const plural = o.kind === 'FlowSchema' ? 'flowschemas' : 'prioritylevelconfigurations';
    await must(admin, 'POST', `/apis/flowcontrol.apiserver.k8s.io/v1/${plural}`, o);
  }
  const leaderFlow = (
    await must<{ metadata: { uid: string } }>(admin, 'GET', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/kruise-leader-election')
  ).metadata.uid;
  const t0 = performance.now();
  for (;;) {
    const res = await request(manager, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${RUNTIME_NS}/leases/apf-bench-without`);
    if (res.headers['x-kubernetes-pf-flowschema-uid'] === leaderFlow) break;
    if (performance.now() - t0 > 30_000) throw new Error('the manager Lease GET was not classified as kruise-leader-election within 30 s');
    await sleep(200);
  }
  log(`dist/'s ${shipped.length} flow-control objects applied and in effect`);
  const withShipped = await phase('with', plane, manager);

  const result = {
    seconds: args.seconds,
    neighbour: { tenants: args.tenants, concurrency: args.concurrency, objects: args.objects },
    apiServerSeats: { inflight: args.inflight, mutatingInflight: args['mutating-inflight'] },
    without,
    with: withShipped,
  };
  const line = (r: PhaseResult) =>
    `renew p50 ${r.renewP50Ms} ms, p99 ${r.renewP99Ms} ms, max ${r.renewMaxMs} ms, ${r.failedRenews}/${r.renews} failed; ` +
    `${r.leadershipLosses} leadership losses, no leader ${r.leaderlessPercent}% of the time`;
  // The table's cells, short: the run's settings go in the measure, the neighbour's throughput in the JSON.
  const cellOf = (r: PhaseResult) =>
    `renew p50 ${r.renewP50Ms} / p99 ${r.renewP99Ms} ms, ${r.failedRenews}/${r.renews} failed; ` +
    `${r.leadershipLosses} losses, ${r.leaderlessPercent}% leaderless`;
  const setting = `${args.seconds} s; neighbour ${args.tenants} ServiceAccounts × ${args.concurrency} LISTs of ${args.objects} ConfigMaps; API server --max-requests-inflight ${args.inflight} / mutating ${args['mutating-inflight']}`;
  await recordBench(
    'bench:leader-apf',
    [
      {
        measure: `manager Lease renewals, noisy neighbour (${args.tenants} SAs × ${args.concurrency} LISTs of ${args.objects} ConfigMaps, API server ${args.inflight}/${args['mutating-inflight']} inflight), ${args.seconds} s: with dist/'s FlowSchemas`,
        figure: cellOf(withShipped),
        peer: `without them, same run: ${cellOf(without)}`,
      },
    ],
    {
      conditions: phaseLoads.length
        ? `load ${Math.min(...phaseLoads).toFixed(1)}–${Math.max(...phaseLoads).toFixed(1)} in the run`
        : 'no load sample in the run',
    },
  );
  if (args.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(`Leadership under APF pressure (${setting})`);
    console.log(`  without the runtime's FlowSchemas: ${line(without)}; neighbour ${JSON.stringify(without.neighbour)}`);
    console.log(`  with dist/'s FlowSchemas:          ${line(withShipped)}; neighbour ${JSON.stringify(withShipped.neighbour)}`);
  }
} finally {
  agent.destroy();
  await plane.stop();
}

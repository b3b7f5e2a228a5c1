// The two managers the peer benches compare, started one at a time on one ControlPlane:
//   ours      the CLI bundle (no tsx, no node_modules) run as `cdk8s-kruise controller` with the V8 limits and
//             malloc arenas the Deployment passes (MANAGER_NODE_OPTIONS, MANAGER_MALLOC_ARENA_MAX), our webhooks registered as the install registers them
//             (clientConfig pointed at its loopback port);
//   upstream  kruise-manager from test/harness/kruise-peer.ts with its own webhooks.
// stop() removes the variant's webhook configurations, so the next one starts from the same state.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { appEntries, stageEntries } from '../../src/image/app.js';
import { APP_MAIN } from '../../src/image/spec.js';
import { servedKinds } from '../../src/install/crds.js';
import type { InstallSpec } from '../../src/install/spec.js';
import { mutatingWebhookConfiguration, validatingWebhookConfiguration } from '../../src/install/webhooks.js';
import { MANAGER_NODE_OPTIONS } from '../../src/runtime/manager/manager.js';
import { MANAGER_MALLOC_ARENA_MAX } from '../../src/contracts/index.js';
import { createCA, issueServingCert } from '../../src/runtime/core/webhook/cert-issuer.js';
import { ControlPlane, freePort } from '../../test/harness/controlplane.js';
import { KruisePeer, kubectlOn, type KruisePeerOptions } from '../../test/harness/kruise-peer.js';
import { repoRoot } from '../../test/e2e/runtime/process.js';

/** The peer benches' option that lets the API server call the webhooks under test over HTTP/2. */
export const WEBHOOK_H2_OPTION = { 'webhook-h2': { type: 'boolean', default: false } } as const;

/**
 * The plane a peer bench runs both managers on. An install addresses its webhooks by Service, and the API
 * server calls a Service-addressed webhook over HTTP/1.1 only (one TLS connection per call in flight, at most
 * 25 kept idle), so that concurrent calls spread over the webhook's replicas. The benches point the webhooks at
 * a loopback URL instead, the one kind of address the API server calls over HTTP/2: upstream's Go server
 * accepts it, ours does not, so a bench on a default plane compares a protocol no installed cluster uses.
 * Unless `webhookH2` (to compare with notes made before this), the API server runs with its client-side
 * HTTP/2 off (DISABLE_HTTP2), so both managers are called as an installed cluster calls them.
 */
export function startPeerPlane(webhookH2: boolean): Promise<ControlPlane> {
  return ControlPlane.start(webhookH2 ? {} : { apiServerEnv: { DISABLE_HTTP2: '1' } });
}

/** How the API server called the webhooks, for the benches' reports. */
export function webhookProtocol(webhookH2: boolean): string {
  return webhookH2 ? 'HTTP/2 allowed (loopback URL)' : 'HTTP/1.1, as to a Service-addressed webhook';
}

/** Requests the API server has served so far (apiserver_request_total: all verbs, resources and clients). */
export async function apiRequestsServed(plane: ControlPlane): Promise<number> {
  const text = await kubectlOn(plane, ['get', '--raw', '/metrics']);
  let n = 0;
  for (const line of text.split('\n')) if (line.startsWith('apiserver_request_total{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

/** A manager under test. */
export interface Runner {
  readonly pid: number;
  /** Resident set size now, bytes. */
  rssBytes(): number;
  /** CPU seconds (user + system) used so far. */
  cpuSeconds(): number;
  logTail(): string;
  stop(): Promise<void>;
}

/** The namespace both managers run in. */
export const RUNTIME_NS = 'kruise-system';
/** The Secret our manager keeps its webhook certificates in on the shared plane. */
export const OUR_CERT_SECRET = 'cdk8s-kruise-bench-webhook-certs';
const OUR_MUTATING = 'cdk8s-kruise-bench-mutating';
const OUR_VALIDATING = 'cdk8s-kruise-bench-validating';

export function procRssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

export function procCpuSeconds(pid: number): number {
  // After "pid (comm) ": utime and stime are fields 11 and 12, in clock ticks (100 Hz on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Writes the application files as the image ships them (src/image/app.ts: the bundle's main file and its
 * chunks, package.json for `--version`) into a fresh directory; returns the path of the main file.
 */
export async function bundleOurCli(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-app-'));
  stageEntries(await appEntries(repoRoot), dir);
  return path.join(dir, APP_MAIN);
}

/** The install the benches register our webhooks from (as `cdk8s-kruise synth` would emit them). */
function benchInstallSpec(featureGates: string, pods: boolean): InstallSpec {
  return {
    namespace: RUNTIME_NS,
    daemonConfigNamespace: 'kruise-daemon-config',
    image: 'unused',
    imagePullPolicy: 'IfNotPresent',
    imagePullSecrets: [],
    manager: { replicas: 1, resources: {}, logLevel: 'info' },
    webhook: { timeoutSeconds: 10, pods, certificates: { mode: 'self' } },
    featureGates,
    kinds: servedKinds(),
  };
}

async function registerOurWebhooks(plane: ControlPlane, port: number, featureGates: string, pods: boolean): Promise<void> {
  const spec = benchInstallSpec(featureGates, pods);
  const toUrl = (config: object, name: string) => {
    const hooks = (config as unknown as { webhooks: { clientConfig: { service?: { path: string }; url?: string } }[] }).webhooks;
    for (const h of hooks) h.clientConfig = { url: `https://127.0.0.1:${port}${h.clientConfig.service!.path}` };
    return { ...config, metadata: { name } };
  };
  const items = [toUrl(mutatingWebhookConfiguration(spec), OUR_MUTATING), toUrl(validatingWebhookConfiguration(spec), OUR_VALIDATING)];
  await kubectlOn(plane, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

async function removeOurWebhooks(plane: ControlPlane): Promise<void> {
  await kubectlOn(plane, [
    'delete',
    '--ignore-not-found',
    `mutatingwebhookconfiguration/${OUR_MUTATING}`,
    `validatingwebhookconfiguration/${OUR_VALIDATING}`,
  ]);
}

function httpOk(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A Runner over a spawned webhook process: stop() sends SIGTERM, SIGKILL after `graceMs`, then `afterStop`
 * (removing the process's webhook configurations, which would otherwise block every later create).
 */
function childRunner(child: ChildProcess, logTail: () => string, graceMs: number, afterStop: () => Promise<unknown>): Runner {
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const pid = child.pid!;
  return {
    pid,
    rssBytes: () => procRssBytes(pid),
    cpuSeconds: () => procCpuSeconds(pid),
    logTail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(graceMs).then(() => child.kill('SIGKILL'))]);
        await exited;
      }
      await afterStop();
    },
  };
}

/** Starts our manager (bundle at `cliMain`) with its webhooks; resolves once /readyz passes. */
export async function startOurManager(
  plane: ControlPlane,
  cliMain: string,
  opts: {
    featureGates: string;
    args?: readonly string[];
    nodeOptions?: string;
    /** Register the install's pod webhook (`/mutate-pod`) too, as an app with SidecarSets gets it. */
    podWebhook?: boolean;
  },
): Promise<Runner> {
  const webhookPort = await freePort();
  const healthPort = await freePort();
  await registerOurWebhooks(plane, webhookPort, opts.featureGates, opts.podWebhook ?? false);
  const logs: string[] = [];
  const child = spawn(
    process.execPath,
    [
      ...(opts.nodeOptions ?? MANAGER_NODE_OPTIONS).split(' ').filter(Boolean),
      cliMain,
      'controller',
      '--kubeconfig',
      plane.kubeconfigPath,
      '--namespace',
      RUNTIME_NS,
      '--health-probe-addr',
      `127.0.0.1:${healthPort}`,
      '--metrics-addr',
      '0',
      '--log-level',
      'info',
      `--feature-gates=${opts.featureGates}`,
      '--webhook-port',
      String(webhookPort),
      '--webhook-host',
      '127.0.0.1',
      '--webhook-cert-host',
      '127.0.0.1',
      '--mutating-webhook-configuration',
      OUR_MUTATING,
      '--validating-webhook-configuration',
      OUR_VALIDATING,
      // Not upstream's Secret (same name, same namespace): each manager would find the other's certificate
      // not covering its host and issue a new one at every start, which one manager per cluster never does.
      '--webhook-cert-secret',
      OUR_CERT_SECRET,
      ...(opts.args ?? []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // The environment the install's Deployment gives the manager.
      env: { ...process.env, MALLOC_ARENA_MAX: MANAGER_MALLOC_ARENA_MAX, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
    },
  );
  const keep = (b: Buffer) => {
    logs.push(...b.toString().split('\n').filter(Boolean));
    if (logs.length > 200) logs.splice(0, logs.length - 200);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const runner = childRunner(
    child,
    () => logs.slice(-30).join('\n'),
    15_000,
    () => removeOurWebhooks(plane),
  );
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) {
      await runner.stop();
      throw new Error(`our manager exited while starting:\n${runner.logTail()}`);
    }
    if (await httpOk(`http://127.0.0.1:${healthPort}/readyz`)) break;
    if (i > 600) {
      await runner.stop();
      throw new Error(`our manager not ready after 60 s:\n${runner.logTail()}`);
    }
    await sleep(100);
  }
  return runner;
}

const NOOP_MUTATING = 'cdk8s-kruise-bench-noop';

/**
 * Starts bench/support/noop-pod-webhook.mjs (a server that allows every pod unchanged) and registers it as
 * the install registers our pod webhook (same name, selectors, timeout, failure policy), by loopback URL:
 * the floor any pod webhook adds on this machine.
 */
export async function startNoopPodWebhook(plane: ControlPlane): Promise<Runner> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-noop-'));
  const ca = await createCA(24 * 3600_000);
  const serving = await issueServingCert(ca, ['127.0.0.1'], 24 * 3600_000);
  writeFileSync(path.join(dir, 'cert.pem'), serving.cert);
  writeFileSync(path.join(dir, 'key.pem'), serving.key);
  const port = await freePort();
  const script = path.join(repoRoot, 'bench', 'support', 'noop-pod-webhook.mjs');
  const child = spawn(process.execPath, [script, String(port), path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      logs.push(b.toString());
      if (b.toString().includes('listening')) resolve();
    });
    child.stderr.on('data', (b: Buffer) => logs.push(b.toString()));
    child.once('exit', (code) => reject(new Error(`noop webhook exited (${code}): ${logs.join('')}`)));
  });
  const runner = childRunner(
    child,
    () => logs.slice(-30).join(''),
    5_000,
    () => kubectlOn(plane, ['delete', '--ignore-not-found', `mutatingwebhookconfiguration/${NOOP_MUTATING}`]),
  );
  try {
    await listening;
    const ours = mutatingWebhookConfiguration(benchInstallSpec('', true)) as unknown as { webhooks: Record<string, unknown>[] };
    const entry = ours.webhooks.find((w) => w.name === 'mpod.kb.io')!;
    const config = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: NOOP_MUTATING },
      webhooks: [
        {
          ...entry,
          clientConfig: { url: `https://127.0.0.1:${port}/mutate-pod`, caBundle: Buffer.from(ca.caCert).toString('base64') },
        },
      ],
    };
    await kubectlOn(plane, ['create', '-f', '-'], JSON.stringify(config));
  } catch (error) {
    await runner.stop();
    throw error;
  }
  return runner;
}

/** Starts upstream kruise-manager (its CRDs must be installed already). */
export async function startUpstreamManager(plane: ControlPlane, opts: Omit<KruisePeerOptions, 'installCrds'>): Promise<Runner> {
  const peer = await KruisePeer.start(plane, { ...opts, installCrds: false });
  return {
    pid: peer.pid,
    rssBytes: () => peer.rssBytes(),
    cpuSeconds: () => peer.cpuSeconds(),
    logTail: () => peer.logTail(),
    stop: () => peer.stop(),
  };
}

// The upstream peer: OpenKruise kruise-manager (the version pinned in test/kruise-peer/versions.env), built
// from Go modules by test/prepare.d/20-kruise-peer.sh, run against a ControlPlane of this harness with its
// own CRDs and webhook configurations. For compatibility tests (the same objects through upstream and
// through ours) and for benches that run both on one API server.
//
//   const plane = await ControlPlane.start();             // a control plane of its own (see below)
//   await installKruisePeerCrds(plane);                    // upstream's CRDs (+ kruise-system namespaces)
//   const peer = await KruisePeer.start(plane, { featureGates: 'SidecarTerminator=true' });
//   ... create CloneSets, SidecarSets, pods with plane.kubeconfigPath ...
//   await peer.stop();                                     // also removes its webhook configurations
//   await plane.stop();
//
// Use a ControlPlane of your own, not the e2e project's shared one: upstream's CRDs replace ours
// (same names) and its pod webhook sees every namespace without a `control-plane` label.
//
// How upstream runs here: WEBHOOK_HOST=127.0.0.1 selects its file certificate writer (it self-signs a CA
// and a serving certificate into WEBHOOK_CERT_DIR) and makes it rewrite both webhook configurations to
// `url: https://127.0.0.1:<port>/<path>` with that CA. The configurations must exist before it starts
// (start() creates them from the prepared webhook-configs.yaml). Its webhook server binds 0.0.0.0:<port>;
// metrics and health bind loopback; leader election and pprof are off.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort, type ControlPlane } from './controlplane.js';
import { pinnedKruiseVersion } from './upstream-crds.js';
import { projectCacheDir } from './cache.js';

export { pinnedKruiseVersion };

const run = promisify(execFile);

const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 15_000;

/** The namespace upstream's manager runs in (POD_NAMESPACE) and its webhook configurations point at. */
export const KRUISE_PEER_NAMESPACE = 'kruise-system';
/** Names of upstream's webhook configurations (config/webhook with the chart's `kruise-` prefix). */
export const KRUISE_PEER_WEBHOOK_CONFIGURATIONS = {
  mutating: 'kruise-mutating-webhook-configuration',
  validating: 'kruise-validating-webhook-configuration',
} as const;

export interface KruisePeerAssets {
  /** e.g. "v1.9.1" */
  readonly version: string;
  /** The kruise-manager binary. */
  readonly manager: string;
  /** Directory of upstream's CRDs of that version (one YAML file per CRD). */
  readonly crdDir: string;
  /** Upstream's mutating and validating webhook configurations (clientConfig.service; the manager rewrites them). */
  readonly webhookConfigs: string;
}

/** Where 20-kruise-peer.sh puts its files: KRUISE_PEER_ASSETS, else CDK8S_KRUISE_PEER_DIR, else the cache. */
export function kruisePeerDir(): string {
  if (process.env.KRUISE_PEER_ASSETS) return process.env.KRUISE_PEER_ASSETS;
  if (process.env.CDK8S_KRUISE_PEER_DIR) return process.env.CDK8S_KRUISE_PEER_DIR;
  return projectCacheDir('kruise-peer', pinnedKruiseVersion());
}

/** The prepared peer; throws with the command that prepares it when something is missing. */
export function findKruisePeerAssets(): KruisePeerAssets {
  const dir = kruisePeerDir();
  const assets = {
    version: pinnedKruiseVersion(),
    manager: path.join(dir, 'kruise-manager'),
    crdDir: path.join(dir, 'crds'),
    webhookConfigs: path.join(dir, 'webhook-configs.yaml'),
  };
  try {
    accessSync(assets.manager, constants.X_OK);
    accessSync(assets.webhookConfigs, constants.R_OK);
    if (!readdirSync(assets.crdDir).some((f) => f.endsWith('.yaml'))) throw new Error('no CRDs');
  } catch {
    throw new Error(
      `upstream kruise-manager ${assets.version} is not prepared in ${dir}: run \`bash test/prepare.sh\` ` +
        `(or \`bash test/prepare.d/20-kruise-peer.sh\`), or set KRUISE_PEER_ASSETS to a directory with ` +
        `kruise-manager, crds/*.yaml and webhook-configs.yaml.`,
    );
  }
  return assets;
}

/** The control plane's own kubectl against it (admin), with a discovery cache in its directory; stdout. */
export async function kubectlOn(plane: ControlPlane, args: readonly string[], input?: string): Promise<string> {
  const cacheDir = path.join(plane.dir, 'kubectl-cache');
  const child = run(plane.assets.kubectl, ['--kubeconfig', plane.kubeconfigPath, '--cache-dir', cacheDir, ...args], {
    maxBuffer: 64 * 2 ** 20,
  });
  if (input !== undefined) child.child.stdin!.end(input);
  try {
    return (await child).stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr || e.message}`, { cause: error });
  }
}

/**
 * Applies upstream's CRDs (server-side: some are too large for client-side apply's annotation), waits until
 * they are Established, and creates the namespaces upstream expects: kruise-system (labelled
 * `control-plane=controller-manager` as the chart does, so upstream's pod webhook skips it) and
 * kruise-daemon-config. Idempotent.
 */
export async function installKruisePeerCrds(plane: ControlPlane, assets = findKruisePeerAssets()): Promise<void> {
  await kubectlOn(plane, ['apply', '--server-side', '--force-conflicts', '-f', assets.crdDir]);
  await kubectlOn(plane, ['wait', '--for=condition=Established', '--timeout=60s', '-f', assets.crdDir]);
  const namespaces = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KRUISE_PEER_NAMESPACE, labels: { 'control-plane': 'controller-manager' } } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kruise-daemon-config' } },
  ];
  await kubectlOn(plane, ['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: namespaces }));
}

/** Deletes upstream's webhook configurations (a stopped peer's would block writes: failurePolicy Fail). */
export async function removeKruisePeerWebhooks(plane: ControlPlane): Promise<void> {
  await kubectlOn(plane, [
    'delete',
    '--ignore-not-found',
    `mutatingwebhookconfiguration/${KRUISE_PEER_WEBHOOK_CONFIGURATIONS.mutating}`,
    `validatingwebhookconfiguration/${KRUISE_PEER_WEBHOOK_CONFIGURATIONS.validating}`,
  ]);
}

export interface KruisePeerOptions {
  readonly assets?: KruisePeerAssets;
  /** `--feature-gates` value, e.g. "SidecarTerminator=true" (default: upstream's defaults). */
  readonly featureGates?: string;
  /** Client QPS and burst (`--rest-config-qps/-burst`; upstream's defaults are 30 and 50). */
  readonly qps?: number;
  readonly burst?: number;
  /** More flags, e.g. ['--sidecarterminator-workers=50']. */
  readonly args?: readonly string[];
  /** klog verbosity (default 1). */
  readonly verbosity?: number;
  /** Apply upstream's CRDs and namespaces first (installKruisePeerCrds). Default true. */
  readonly installCrds?: boolean;
}

let instances = 0;

/** A running upstream kruise-manager. */
export class KruisePeer {
  /**
   * (Re)creates upstream's webhook configurations, starts kruise-manager, and resolves once its /readyz
   * passes (webhook server serving) and it has rewritten both configurations to its own URL.
   */
  static async start(plane: ControlPlane, options: KruisePeerOptions = {}): Promise<KruisePeer> {
    const assets = options.assets ?? findKruisePeerAssets();
    if (options.installCrds ?? true) await installKruisePeerCrds(plane, assets);
    await removeKruisePeerWebhooks(plane);
    await kubectlOn(plane, ['create', '-f', assets.webhookConfigs]);
    const peer = new KruisePeer(plane, assets, await freePort(), await freePort(), await freePort());
    try {
      peer.spawn(options);
      await peer.waitReady();
    } catch (error) {
      await peer.stop();
      throw error;
    }
    return peer;
  }

  /** This instance's files: kruise-manager.log, webhook-certs/. Removed with the control plane's directory. */
  readonly dir: string;
  private child?: ChildProcess;
  private exited: Promise<void> = Promise.resolve();
  private readonly pidFile: string;
  private readonly exitHandler = () => this.child?.kill('SIGKILL');

  private constructor(
    readonly plane: ControlPlane,
    readonly assets: KruisePeerAssets,
    /** Port of the webhook server (all interfaces; the configurations point at 127.0.0.1). */
    readonly webhookPort: number,
    private readonly metricsPort: number,
    private readonly healthPort: number,
  ) {
    this.dir = path.join(plane.dir, `kruise-peer-${++instances}`);
    mkdirSync(path.join(this.dir, 'webhook-certs'), { recursive: true });
    // The control plane's watchdog kills every <plane.dir>/*.pid if the test process dies without stop().
    this.pidFile = path.join(plane.dir, `kruise-peer-${instances}.pid`);
  }

  /** Process id of kruise-manager. */
  get pid(): number {
    return this.child!.pid!;
  }

  /** Prometheus metrics of the manager (controller-runtime and Go process metrics). */
  get metricsUrl(): string {
    return `http://127.0.0.1:${this.metricsPort}/metrics`;
  }

  /** Resident set size of the manager process, from /proc. */
  rssBytes(): number {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
    if (!m) throw new Error(`no VmRSS for pid ${this.pid}`);
    return Number(m[1]) * 1024;
  }

  /** CPU seconds (user + system) the manager has used, from /proc. */
  cpuSeconds(): number {
    const fields = readFileSync(`/proc/${this.pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    // After "pid (comm) ": state is field 0, utime field 11, stime field 12, in clock ticks (100 Hz on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  }

  /** Last lines of the manager's log, for error messages. */
  logTail(lines = 40): string {
    try {
      return readFileSync(path.join(this.dir, 'kruise-manager.log'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /**
   * Stops the manager (SIGTERM, then SIGKILL) and, unless told otherwise, deletes its webhook
   * configurations so the API server does not call a dead endpoint. Safe to call more than once.
   */
  async stop(options: { keepWebhooks?: boolean } = {}): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = new AbortController();
      const timedOut = await Promise.race([
        this.exited.then(() => false),
        sleep(STOP_TIMEOUT_MS, true, { signal: timer.signal }).catch(() => false),
      ]);
      timer.abort();
      if (timedOut) {
        child.kill('SIGKILL');
        await this.exited;
      }
    }
    process.removeListener('exit', this.exitHandler);
    if (!options.keepWebhooks) await removeKruisePeerWebhooks(this.plane);
  }

  private spawn(options: KruisePeerOptions): void {
    const args = [
      '--enable-leader-election=false',
      `--metrics-addr=127.0.0.1:${this.metricsPort}`,
      `--health-probe-addr=127.0.0.1:${this.healthPort}`,
      '--enable-pprof=false',
      `--v=${options.verbosity ?? 1}`,
      ...(options.featureGates ? [`--feature-gates=${options.featureGates}`] : []),
      ...(options.qps !== undefined ? [`--rest-config-qps=${options.qps}`] : []),
      ...(options.burst !== undefined ? [`--rest-config-burst=${options.burst}`] : []),
      ...(options.args ?? []),
    ];
    const env = {
      ...process.env,
      KUBECONFIG: this.plane.kubeconfigPath,
      POD_NAMESPACE: KRUISE_PEER_NAMESPACE,
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_PORT: String(this.webhookPort),
      WEBHOOK_CERT_DIR: path.join(this.dir, 'webhook-certs'),
    };
    const log = openSync(path.join(this.dir, 'kruise-manager.log'), 'a');
    const child = spawn(this.assets.manager, args, { stdio: ['ignore', log, log], env });
    closeSync(log);
    child.once('error', () => undefined);
    if (child.pid) writeFileSync(this.pidFile, String(child.pid));
    this.exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        try {
          unlinkSync(this.pidFile);
        } catch {
          /* removed with the control plane's directory */
        }
        resolve();
      }),
    );
    this.child = child;
    process.once('exit', this.exitHandler);
  }

  private async waitReady(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const url = `https://127.0.0.1:${this.webhookPort}/`;
    while (Date.now() < deadline) {
      const child = this.child!;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`kruise-manager exited (${child.exitCode ?? child.signalCode}) while starting:\n${this.logTail()}`);
      }
      if ((await this.readyz()) && (await this.webhooksRewritten(url))) return;
      await sleep(250);
    }
    throw new Error(`kruise-manager not ready after ${START_TIMEOUT_MS / 1000}s:\n${this.logTail()}`);
  }

  private readyz(): Promise<boolean> {
    return new Promise((resolve) => {
      const req = http.get(`http://127.0.0.1:${this.healthPort}/readyz`, { timeout: 2000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
  }

  private async webhooksRewritten(urlPrefix: string): Promise<boolean> {
    const out = await kubectlOn(this.plane, [
      'get',
      `mutatingwebhookconfiguration/${KRUISE_PEER_WEBHOOK_CONFIGURATIONS.mutating}`,
      `validatingwebhookconfiguration/${KRUISE_PEER_WEBHOOK_CONFIGURATIONS.validating}`,
      '-o',
      'json',
    ]).catch(() => '');
    if (!out) return false;
    const list = JSON.parse(out) as { items: { webhooks?: { clientConfig: { url?: string; caBundle?: string } }[] }[] };
    return (
      list.items.length === 2 &&
      list.items.every(
        (c) =>
          (c.webhooks ?? []).length > 0 && c.webhooks!.every((w) => w.clientConfig.url?.startsWith(urlPrefix) && w.clientConfig.caBundle),
      )
    );
  }
}

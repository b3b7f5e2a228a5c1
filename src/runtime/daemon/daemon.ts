import { appendFileSync } from 'node:fs';
import type { Logger } from 'pino';
import {
  ControllerRunner,
  EventRecorder,
  createRunners,
  HealthServer,
  InformerFactory,
  KubeClient,
  RuntimeMetrics,
  createLogger,
  loadKubeConfig,
  parseFeatureGates,
  cachePlanOf,
} from '../core/index.js';
import { Gauge } from 'prom-client';
import { CriClient } from '../cri/client.js';
import { resolveCriEndpoint } from '../cri/endpoint.js';
import { daemonScopes } from '../../contracts/index.js';
import type { DaemonContext } from './context.js';
import { DAEMON_CONTROLLERS } from './registry.js';
import { ControllerOptionValues } from '../core/options.js';

import { DAEMON_CONTROLLER_OPTIONS, type DaemonOptions } from './options.js';
export { DEFAULT_DAEMON_OPTIONS, type DaemonOptions } from './options.js';

/**
 * The node daemon: per-node informers (only this node's CRRs and NodeImage), controllers acting
 * through the node's CRI runtime, probes and metrics. No leader election: one daemon per node.
 * A CRI outage fails reconciles with UNAVAILABLE, which retry with backoff; the gRPC channel
 * reconnects by itself when the socket comes back.
 */
export class Daemon {
  readonly logger: Logger;
  readonly metrics = new RuntimeMetrics();
  readonly client: KubeClient;
  readonly informers: InformerFactory;
  readonly health: HealthServer;
  readonly runners: ControllerRunner[] = [];
  cri?: CriClient;
  criUp = false;
  private criTimer?: NodeJS.Timeout;
  private scheme?: string;
  private readonly criRecovered: Array<() => void> = [];
  private readonly starting: Array<() => Promise<void>> = [];
  private readonly stopping: Array<() => Promise<void>> = [];
  readonly ports: { health?: number } = {};
  private readonly criGauge: Gauge;

  constructor(readonly opts: DaemonOptions) {
    if (!opts.nodeName) throw new Error('the daemon needs its node name: pass --node-name or set NODE_NAME (downward API spec.nodeName)');
    this.logger = createLogger({ level: opts.logLevel, name: 'kruise-daemon' }).child({ node: opts.nodeName });
    this.client = new KubeClient(loadKubeConfig(opts.kubeconfig), {
      permissions: { scopes: daemonScopes(opts.configNamespace), enforce: opts.strictPermissions },
      onAccess: opts.accessLogFile ? (a) => appendFileSync(opts.accessLogFile!, JSON.stringify({ set: 'DAEMON', ...a }) + '\n') : undefined,
    });
    this.informers = new InformerFactory(this.client, this.logger, {}, cachePlanOf(DAEMON_CONTROLLERS));
    this.health = new HealthServer(this.metrics);
    this.criGauge = new Gauge({
      name: 'kruise_daemon_cri_up',
      help: '1 while the CRI runtime answers',
      registers: [this.metrics.registry],
    });
  }

  private async checkCri(): Promise<void> {
    try {
      const v = await this.cri!.version();
      this.scheme = v.runtimeName || 'containerd';
      const recovered = !this.criUp;
      this.criUp = true;
      if (recovered) {
        this.logger.info({ runtime: v.runtimeName, version: v.runtimeVersion, target: this.cri!.target }, 'CRI runtime reachable');
        for (const cb of this.criRecovered) cb();
      }
    } catch (err) {
      if (this.criUp) this.logger.warn({ err: (err as Error).message }, 'CRI runtime unreachable; will keep retrying');
      this.criUp = false;
    }
    this.criGauge.set(this.criUp ? 1 : 0);
  }

  async start(): Promise<void> {
    const o = this.opts;
    const endpoint = await resolveCriEndpoint(o.criSocket);
    this.cri = new CriClient(endpoint);
    await this.checkCri();
    this.criTimer = setInterval(() => void this.checkCri(), o.criCheckIntervalMs);
    this.criTimer.unref();

    const gates = parseFeatureGates(o.featureGates);
    const ctx: DaemonContext = {
      client: this.client,
      informers: this.informers,
      events: new EventRecorder(this.client, 'kruise-daemon', this.logger),
      logger: this.logger,
      featureGates: gates,
      options: new ControllerOptionValues(DAEMON_CONTROLLER_OPTIONS, {
        ...o.controllerOptions,
        daemonConfigNamespace: o.configNamespace,
        maxPullWorkers: o.maxPullWorkers,
      }),
      nodeName: o.nodeName,
      cri: this.cri,
      runtimeScheme: async () => {
        if (!this.scheme) await this.checkCri();
        if (!this.scheme) throw new Error(`CRI runtime at ${this.cri!.target} is unreachable`);
        return this.scheme;
      },
      onCriRecovered: (cb) => this.criRecovered.push(cb),
      onStart: (cb) => this.starting.push(cb),
      onStop: (cb) => this.stopping.push(cb),
    };
    this.runners.push(
      ...createRunners(DAEMON_CONTROLLERS, ctx, { workers: o.workers, metrics: this.metrics, logger: this.logger, unknownGate: 'run' }),
    );
    this.health.addLiveCheck('ping', () => undefined);
    this.health.addReadyCheck('informers-synced', () => (this.informers.allSynced() ? undefined : 'caches not synced'));
    // A watch left open past its server deadline is on a dead connection: the caches go stale until it is replaced.
    this.health.addReadyCheck('informers-watching', () => this.informers.watchProblems());
    this.health.addReadyCheck('cri', () => (this.criUp ? undefined : `CRI runtime at ${this.cri?.target} is unreachable`));
    this.ports.health = await this.health.listen(o.healthProbeAddr);
    this.informers.startAll();
    await this.informers.waitForSync();
    for (const cb of this.starting) await cb();
    for (const r of this.runners) r.start();
    this.logger.info({ criEndpoint: endpoint, health: this.ports.health, controllers: this.runners.map((r) => r.name) }, 'daemon started');
  }

  async stop(): Promise<void> {
    clearInterval(this.criTimer);
    await Promise.all(this.stopping.map((cb) => cb()));
    this.informers.stopAll();
    await Promise.all(this.runners.map((r) => r.stop()));
    await this.health.close();
    this.cri?.close();
  }
}

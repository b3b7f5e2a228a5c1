import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { KubeClient, loadKubeConfig } from '../core/client.js';
import { cachePlanOf, ControllerRunner, createRunners, type ControllerContext } from '../core/controller.js';
import { EventRecorder } from '../core/events.js';
import { parseFeatureGates } from '../../contracts/features.js';
import { HealthServer } from '../core/health.js';
import { InformerFactory } from '../core/informer.js';
import { LeaderElector } from '../core/leader.js';
import { createLogger } from '../core/log.js';
import { RuntimeMetrics } from '../core/metrics.js';
import { CERT_MANAGER_READS, CertManager } from '../core/webhook/certmanager.js';
import { AdmissionServer } from '../core/webhook/server.js';
import { KRUISE_KINDS, managerNodeOptions, managerScopes, MANAGER_NODE_OPTIONS, type KruiseKindName } from '../../contracts/index.js';
import { CONTROLLERS, WEBHOOKS } from './registry.js';
import { ControllerOptionValues, SHARED_OPTIONS } from '../core/options.js';
import { composeAdmission } from '../core/webhook/compose.js';
import { setMaxListeners } from 'node:events';
import { appendFileSync, readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

export { MANAGER_NODE_OPTIONS };

/** The container's memory limit in bytes (cgroup v2, then v1), or undefined when it has none or it is unknown. */
function containerMemoryLimit(): number | undefined {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const text = readFileSync(file, 'utf8').trim();
      const bytes = Number(text);
      // cgroup v1 says "no limit" with a number near 2^63.
      return text === 'max' || !Number.isFinite(bytes) || bytes >= 2 ** 62 ? undefined : bytes;
    } catch {
      // Not this cgroup version, or not in a container.
    }
  }
  return undefined;
}

/** `<plural>.<group>` of one of our kinds. */
function crdNameOf(kind: string): string {
  const k = KRUISE_KINDS[kind as KruiseKindName];
  if (!k) throw new Error(`conversion registered for ${kind}, which is not one of our kinds`);
  return `${k.plural}.${k.group}`;
}

/** A term's controller. Every request in flight listens on its signal: hundreds at once in a burst, not a leak. */
function newTerm(): AbortController {
  const term = new AbortController();
  setMaxListeners(0, term.signal);
  return term;
}

import { MANAGER_CONTROLLER_OPTIONS, type ManagerOptions } from './options.js';
export { DEFAULT_MANAGER_OPTIONS, type ManagerOptions } from './options.js';

/**
 * The controller-manager process: shared informers and webhooks on every replica (standbys keep warm
 * caches and serve admission requests), controllers' workers only on the elected leader.
 */
export class Manager {
  readonly logger: Logger;
  readonly metrics = new RuntimeMetrics();
  readonly client: KubeClient;
  readonly informers: InformerFactory;
  readonly health: HealthServer;
  readonly admission: AdmissionServer;
  readonly runners: ControllerRunner[] = [];
  private certs?: CertManager;
  private elector?: LeaderElector;
  private leading = false;
  private stopping = false;
  /** The current leadership term: aborting it aborts every request its reconciles still have in flight. */
  private term = newTerm();
  /** Counts starts and ends of terms, so a start that waited is dropped if the lease was lost meanwhile. */
  private termSeq = 0;
  /** Resolves when the reconciles of the last term to end have ended. */
  private previousTerm: Promise<unknown> = Promise.resolve();
  readonly identity: string;
  /** Parsed values of the options the registered controllers and webhooks declared. */
  readonly controllerOptions: ControllerOptionValues;
  /** Ports actually bound (useful when configured as 0). */
  readonly ports: { health?: number; metrics?: number; webhook?: number } = {};

  constructor(readonly opts: ManagerOptions) {
    this.logger = createLogger({ level: opts.logLevel, name: 'kruise-manager' });
    const kc = loadKubeConfig(opts.kubeconfig);
    const electionNs = opts.leaderElectionNamespace ?? opts.namespace;
    this.controllerOptions = new ControllerOptionValues(MANAGER_CONTROLLER_OPTIONS, opts.controllerOptions);
    this.client = new KubeClient(kc, {
      permissions: {
        scopes: managerScopes({ runtime: electionNs, daemonConfig: this.controllerOptions.get(SHARED_OPTIONS.daemonConfigNamespace) }),
        enforce: opts.strictPermissions,
      },
      // Each call as it is written (`at`: wall-clock ms), so a log shows what left the process and when.
      onAccess: opts.accessLogFile
        ? (a) => appendFileSync(opts.accessLogFile!, JSON.stringify({ set: 'MANAGER', ...a, at: Date.now() }) + '\n')
        : undefined,
    });
    this.informers = new InformerFactory(
      this.client,
      this.logger,
      { resyncMs: opts.syncPeriodMs },
      // The certificate manager watches its Secret and the two webhook configurations through the same factory.
      cachePlanOf([...CONTROLLERS, ...WEBHOOKS, { reads: CERT_MANAGER_READS }]),
    );
    this.health = new HealthServer(this.metrics);
    this.admission = new AdmissionServer(this.logger.child({ component: 'webhook' }), this.metrics);
    this.identity = `${process.env.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`;
  }

  /** Starts everything; resolves once caches are synced and the webhook serves. */
  async start(): Promise<void> {
    const o = this.opts;
    const heapLimit = getHeapStatistics().heap_size_limit;
    const memoryLimit = containerMemoryLimit();
    if (memoryLimit !== undefined && heapLimit > memoryLimit) {
      // The container would be OOM-killed before V8 reports the heap full, which says what ran out.
      this.logger.warn(
        {
          heapLimitMiB: Math.round(heapLimit / 2 ** 20),
          memoryLimitMiB: Math.round(memoryLimit / 2 ** 20),
          recommended: managerNodeOptions(`${Math.floor(memoryLimit / 2 ** 20)}Mi`),
        },
        'V8 heap larger than the container memory limit: set NODE_OPTIONS',
      );
    }
    const gates = parseFeatureGates(o.featureGates);
    // Controllers write only while this replica leads and can prove its lease at the moment of the write (the
    // elector's time fence); a term's requests are aborted when it ends.
    const fencedClient = this.client.fenced({
      mayWrite: () => this.leading && (this.elector?.mayWrite() ?? true),
      signal: () => this.term.signal,
    });
    const ctx: ControllerContext = {
      client: fencedClient,
      informers: this.informers,
      events: new EventRecorder(fencedClient, 'kruise-manager', this.logger),
      logger: this.logger,
      featureGates: gates,
      options: this.controllerOptions,
      ...(o.objectValidator ? { objectValidator: o.objectValidator } : {}),
    };

    this.runners.push(
      ...createRunners(CONTROLLERS, ctx, { workers: o.workers, metrics: this.metrics, logger: this.logger, unknownGate: 'skip' }),
    );

    if (o.webhookPort > 0) {
      // Webhooks serve on every replica (the Service balances over all ready pods): unfenced client, and events
      // through it too (a refusal's event, such as PubPreventPodDeletion, from a standby replica was dropped by the fence).
      const webhookCtx = { ...ctx, client: this.client, events: new EventRecorder(this.client, 'kruise-manager', this.logger) };
      const handlers = WEBHOOKS.filter((def) => !def.featureGate || gates.get(def.featureGate)).flatMap((def) => def.setup(webhookCtx));
      // Handlers of several definitions on one path (the pod webhook's mutators) run as one ordered chain.
      for (const h of composeAdmission(handlers)) this.admission.register(h);
      for (const c of WEBHOOKS.flatMap((def) => def.converters ?? [])) this.admission.registerConverter(c);
    }

    this.health.addLiveCheck('ping', () => undefined);
    this.health.addReadyCheck('informers-synced', () => (this.informers.allSynced() ? undefined : 'caches not synced yet'));
    // A watch left open past its server deadline is on a dead connection: the caches go stale until it is replaced.
    this.health.addReadyCheck('informers-watching', () => this.informers.watchProblems());
    this.health.addReadyCheck('leader-election', () =>
      !o.enableLeaderElection || this.leading || this.elector ? undefined : 'leader election not running',
    );
    if (o.webhookPort > 0) {
      this.health.addReadyCheck('webhook', () =>
        this.admission.isListening() && this.admission.hasCertificate() ? undefined : 'webhook server not serving yet',
      );
    }
    this.ports.health = await this.health.listen(o.healthProbeAddr);
    if (o.metricsAddr && o.metricsAddr !== o.healthProbeAddr && o.metricsAddr !== '0') {
      this.ports.metrics = await this.health.listen(o.metricsAddr);
    }
    this.logger.info(
      { healthPort: this.ports.health, metricsPort: this.ports.metrics ?? this.ports.health, identity: this.identity },
      'probes listening',
    );

    const objects = this.metrics.informerObjects;
    setInterval(() => {
      for (const i of this.informers.all()) objects.set({ resource: i.type.resource }, i.size);
    }, 5_000).unref();

    // Its informers must exist before the factory starts them.
    if (o.webhookPort > 0) this.certs = this.createCertManager();
    this.informers.startAll();

    if (o.webhookPort > 0) await this.startWebhook();

    await this.informers.waitForSync();
    this.logger.info({ informers: this.informers.all().length }, 'caches synced');

    if (o.enableLeaderElection) {
      this.elector = new LeaderElector(this.client, {
        namespace: o.leaderElectionNamespace ?? o.namespace,
        name: o.leaderElectionId,
        identity: this.identity,
        leaseDurationMs: o.leaseDurationMs,
        renewDeadlineMs: o.renewDeadlineMs,
        retryPeriodMs: o.retryPeriodMs,
        logger: this.logger.child({ component: 'leader-election' }),
        onStartedLeading: () => this.startLeading(),
        onStoppedLeading: () => this.lostLeadership(),
      });
      this.elector.start();
    } else {
      this.startLeading();
    }
  }

  private createCertManager(): CertManager {
    const o = this.opts;
    const hosts = [
      `${o.webhookServiceName}.${o.namespace}.svc`,
      `${o.webhookServiceName}.${o.namespace}.svc.cluster.local`,
      ...o.webhookCertHosts,
    ];
    return new CertManager(this.client, this.informers, {
      namespace: o.namespace,
      secretName: o.webhookSecretName,
      hosts,
      caValidityMs: o.webhookCaValidityMs,
      certValidityMs: o.webhookCertValidityMs,
      renewBeforeMs: o.webhookCertRenewBeforeMs,
      checkIntervalMs: o.webhookCertCheckIntervalMs,
      mutatingConfig: o.mutatingWebhookConfiguration,
      validatingConfig: o.validatingWebhookConfiguration,
      // The kinds whose CRD converts through this server (their versions' schemas differ).
      conversionCrds: WEBHOOKS.flatMap((d) => d.converters ?? []).map((c) => crdNameOf(c.kind)),
      serviceName: o.webhookServiceName,
      caPropagationMs: 2_000,
      ...(o.webhookPreviousCaGraceMs !== undefined ? { previousCaGraceMs: o.webhookPreviousCaGraceMs } : {}),
      readOnly: o.webhookCertMode === 'cert-manager',
      logger: this.logger.child({ component: 'webhook-certs' }),
      onCertificate: (cert, key) => this.admission.setCertificate(cert, key),
      ...(o.webhookCertIssuer ? { issuer: o.webhookCertIssuer } : {}),
    });
  }

  private async startWebhook(): Promise<void> {
    const o = this.opts;
    const certs = this.certs!;
    // The API server may be unreachable at start: keep trying without blocking informers.
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        await certs.start();
        break;
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'webhook certificates not ready; retrying');
        await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** attempt)));
      }
    }
    if (!this.stopping) {
      this.ports.webhook = await this.admission.listen(o.webhookPort, o.webhookHost);
      this.logger.info({ port: this.ports.webhook, paths: this.admission.paths() }, 'webhook server listening');
    }
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * A new term begins once the previous term's reconciles have ended (their requests were aborted when it
   * ended, so that is quick): two terms' workers never overlap, so nothing decided in an old term is
   * written in a new one.
   */
  private startLeading(): void {
    if (this.stopping) return;
    const seq = ++this.termSeq;
    void this.previousTerm.then(() => {
      if (seq !== this.termSeq || this.stopping || (this.elector && !this.elector.isLeader())) return;
      this.term = newTerm();
      this.leading = true;
      this.metrics.isLeader.set(1);
      for (const r of this.runners) r.start();
      // Keys seen while standing by (or dropped when a previous term ended) are re-derived from the caches.
      this.informers.resyncAll();
      this.logger.info({ controllers: this.runners.map((r) => r.name) }, 'controllers started');
    });
  }

  /**
   * The moment the lease is lost: writes are fenced off, the term's requests in flight aborted (their
   * connections reset), queues dropped, workers stopped. Unlike upstream (which exits), the process stays up
   * as a warm standby and campaigns again: an API server outage longer than the renew deadline then costs
   * no restart, and caches stay warm.
   */
  private lostLeadership(): void {
    this.termSeq++;
    this.leading = false;
    this.metrics.isLeader.set(0);
    this.term.abort(new Error('leadership lost: request aborted'));
    const ended = Promise.all(this.runners.map((r) => r.pause()));
    const slow = setTimeout(
      () => this.logger.warn('reconciles of the lost term have not ended yet; the next term waits for them'),
      this.opts.renewDeadlineMs,
    ).unref();
    this.previousTerm = ended.finally(() => clearTimeout(slow));
    this.logger.error('leadership lost: controllers stopped; standing by');
  }

  /** Graceful stop: no new work, in-flight reconciles finish (bounded), lease released, servers closed. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.certs?.stop();
    const drain = Promise.all(this.runners.map((r) => r.stop()));
    await Promise.race([drain, new Promise((r) => setTimeout(r, this.opts.gracefulShutdownMs).unref())]);
    await this.elector?.stop();
    this.leading = false;
    this.informers.stopAll();
    await Promise.all([this.admission.close(), this.health.close()]);
    this.logger.info('stopped');
  }
}

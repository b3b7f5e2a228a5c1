import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one runtime process (own registry, so tests can run several in one process). */
export class RuntimeMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileDuration: Histogram<'controller'>;
  readonly queueDepth: Gauge<'controller'>;
  readonly queueAdds: Counter<'controller'>;
  readonly isLeader: Gauge;
  readonly webhookRequests: Counter<'webhook' | 'allowed'>;
  readonly webhookDuration: Histogram<'webhook'>;
  readonly webhookAbandoned: Counter;
  readonly informerObjects: Gauge<'resource'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'kruise_runtime_' });
    const registers = [this.registry];
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Reconciliations per controller and result',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Reconciliation duration',
      labelNames: ['controller'],
      registers,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.queueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Keys waiting in the work queue',
      labelNames: ['controller'],
      registers,
    });
    this.queueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Keys added to the work queue',
      labelNames: ['controller'],
      registers,
    });
    this.isLeader = new Gauge({ name: 'leader_election_master_status', help: '1 while this replica leads', registers });
    this.webhookRequests = new Counter({
      name: 'webhook_requests_total',
      help: 'Admission requests per webhook and answer',
      labelNames: ['webhook', 'allowed'],
      registers,
    });
    this.webhookDuration = new Histogram({
      name: 'webhook_latency_seconds',
      help: 'Admission request handling time',
      labelNames: ['webhook'],
      registers,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    });
    this.webhookAbandoned = new Counter({
      name: 'webhook_requests_abandoned_total',
      help: 'Admission requests whose client went away before its turn came (not handled)',
      registers,
    });
    this.informerObjects = new Gauge({
      name: 'informer_cached_objects',
      help: 'Objects in each informer cache',
      labelNames: ['resource'],
      registers,
    });
  }
}

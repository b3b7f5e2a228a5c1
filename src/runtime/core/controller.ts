import type { Logger } from 'pino';
import type { FeatureGateName, FeatureGates } from '../../contracts/features.js';
import { CachePlan, type CacheRead } from './cache-plan.js';
import type { ControllerOptionValues } from './options.js';
import type { EventRecorder } from './events.js';
import type { InformerFactory } from './informer.js';
import type { KubeClient } from './client.js';
import type { RuntimeMetrics } from './metrics.js';
import { runWorkers, WorkQueue, type ProcessResult } from './queue.js';

/** One problem an object validator found: the rule, where, what, and how to fix it. */
export interface ObjectFinding {
  readonly ruleId: string;
  readonly jsonPointer: string;
  readonly message: string;
  readonly hint?: string;
}

/**
 * Validates one object as authored (error findings only). Injected by the process entry point, so the
 * runtime can admit with the same rules as `cdk8s-kruise validate` without depending on the policy engine.
 */
export type ObjectValidator = (obj: Record<string, unknown>) => ObjectFinding[];

/** What a controller gets from the manager when it is set up. */
export interface ControllerContext {
  readonly client: KubeClient;
  readonly informers: InformerFactory;
  readonly events: EventRecorder;
  readonly logger: Logger;
  readonly featureGates: FeatureGates;
  /** Parsed values of the options the process's controllers declared; read with the declaring option. */
  readonly options: ControllerOptionValues;
  /**
   * Loads the validator of our kinds' admission webhooks (the policy engine when the CLI runs the manager).
   * Called on the first admission request, not at start: the rules, schemas and their compiled validators
   * are a large part of the manager's idle memory (bench/memory-peer.bench.ts).
   */
  readonly objectValidator?: () => Promise<ObjectValidator>;
}

/**
 * A controller as registered in src/runtime/manager/registry.ts (context `ControllerContext`) or in
 * src/runtime/daemon/registry.ts (`DaemonContext`): `setup` wires informer handlers that call `enqueue(key)`;
 * `reconcile(key)` reads caches, calls the pure decision and applies it idempotently.
 */
export interface ControllerDefinition<C extends ControllerContext = ControllerContext> {
  readonly name: string;
  /** Feature gate that must be on, if any. */
  readonly featureGate?: FeatureGateName;
  readonly defaultWorkers: number;
  /** Every resource the controller watches and the fields it reads from their caches. */
  readonly reads: readonly CacheRead[];
  setup(ctx: C, enqueue: (key: string) => void): Reconciler;
}

export interface Reconciler {
  reconcile(key: string): Promise<ProcessResult>;
}

/**
 * Runs one controller: its queue, workers and metrics. Workers run only while leading; keys added
 * meanwhile wait in the queue. `pause` drops the queue at once (a replica that lost its lease must not
 * act) and resolves when the reconciles already running have ended; the next `start` begins from a fresh
 * queue that the caller refills with a cache resync.
 */
export class ControllerRunner {
  queue: WorkQueue;
  private running?: Promise<void>;

  constructor(
    readonly name: string,
    private readonly reconciler: Reconciler,
    private readonly workers: number,
    private readonly metrics: RuntimeMetrics,
    private readonly logger: Logger,
  ) {
    this.queue = this.newQueue();
  }

  private newQueue(): WorkQueue {
    const depth = this.metrics.queueDepth.labels({ controller: this.name });
    return new WorkQueue({ onDepth: (d) => depth.set(d) });
  }

  /**
   * Stops the workers now and starts a fresh queue. The reconciles already running are fenced off by the
   * client (their requests aborted, their writes refused); the promise resolves once they have ended, so a
   * caller can keep the next term's workers from overlapping them.
   */
  pause(): Promise<void> {
    this.queue.shutDown();
    const running = this.running ?? Promise.resolve();
    this.running = undefined;
    this.queue = this.newQueue();
    return running;
  }

  enqueue(key: string): void {
    this.metrics.queueAdds.inc({ controller: this.name });
    this.queue.add(key);
  }

  start(): void {
    if (this.running) return;
    const queue = this.queue;
    const dur = this.metrics.reconcileDuration.labels({ controller: this.name });
    this.running = runWorkers(
      queue,
      this.workers,
      async (key) => {
        // Keys still queued when the queue shut down are dropped, not reconciled: the term that queued them is over.
        if (queue.isShuttingDown()) return;
        const end = dur.startTimer();
        try {
          const r = await this.reconciler.reconcile(key);
          this.metrics.reconcileTotal.inc({ controller: this.name, result: r ? 'requeue_after' : 'success' });
          return r;
        } finally {
          end();
        }
      },
      (key, err, retryInMs) => {
        this.metrics.reconcileTotal.inc({ controller: this.name, result: 'error' });
        this.metrics.reconcileErrors.inc({ controller: this.name });
        this.logger.warn({ controller: this.name, key, err: (err as Error).message, retryInMs }, 'reconcile failed');
      },
    );
  }

  /** Stops taking keys; resolves when in-flight reconciles have finished. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.running;
  }
}

/**
 * What a definition whose `featureGate` is absent from the gates map gets. Both the manager and the
 * daemon build their map with parseFeatureGates, which holds every gate of BUNDLED_RUNTIME_GATES, so
 * this only decides for a definition naming a gate that table lacks: the manager leaves it off
 * (a gate must be on), the daemon runs it (it is only skipped when a gate is known to be off).
 */
export type UnknownGatePolicy = 'skip' | 'run';

export interface CreateRunnersOptions {
  /** Per-controller worker counts (`--workers name=N`); a definition's default otherwise. */
  readonly workers: Readonly<Record<string, number>>;
  readonly metrics: RuntimeMetrics;
  /** Parent of each controller's child logger; also logs the controllers left off. */
  readonly logger: Logger;
  readonly unknownGate: UnknownGatePolicy;
}

/**
 * Sets up every definition whose feature gate (per `ctx.featureGates`) allows it and returns its runner,
 * not yet started. The runner exists only after `setup` returns, so `enqueue` must not be called during it.
 */
export function createRunners<C extends ControllerContext>(
  defs: readonly ControllerDefinition<C>[],
  ctx: C,
  opts: CreateRunnersOptions,
): ControllerRunner[] {
  const gates = ctx.featureGates;
  const runners: ControllerRunner[] = [];
  for (const def of defs) {
    const on = !def.featureGate || (gates.has(def.featureGate) ? gates.get(def.featureGate) : opts.unknownGate === 'run');
    if (!on) {
      opts.logger.info({ controller: def.name, gate: def.featureGate }, 'controller disabled by feature gate');
      continue;
    }
    const reconciler = def.setup({ ...ctx, logger: opts.logger.child({ controller: def.name }) }, (key) => runner.enqueue(key));
    const runner = new ControllerRunner(def.name, reconciler, opts.workers[def.name] ?? def.defaultWorkers, opts.metrics, opts.logger);
    runners.push(runner);
  }
  return runners;
}

/** A webhook as registered in src/runtime/manager/registry.ts; `setup` returns its HTTP handlers. */
export interface WebhookDefinition {
  readonly name: string;
  readonly featureGate?: FeatureGateName;
  /** Resources whose caches the webhook reads, and the fields it reads (empty when it reads none). */
  readonly reads: readonly CacheRead[];
  /** Handlers; several definitions may serve one path (each with a distinct `order`), composed into one chain. */
  setup(ctx: ControllerContext): import('./webhook/compose.js').OrderedAdmissionHandler[];
  /**
   * CRD conversion the webhook server answers at `/convert` (pure, no cache): served whatever the feature gates say,
   * since the API server cannot read the kind at another version than stored without it.
   */
  readonly converters?: readonly import('./webhook/conversion.js').KindConverter[];
}

/** The cache plan of a process: the union of what its registered controllers and webhooks read. */
export function cachePlanOf(defs: ReadonlyArray<{ readonly reads: readonly CacheRead[] }>): CachePlan {
  return new CachePlan(defs.flatMap((d) => d.reads));
}

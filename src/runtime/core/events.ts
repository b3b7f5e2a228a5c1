import type { Logger } from 'pino';
import type { KubeClient } from './client.js';
import { EVENTS, apiVersionOf, type ResourceType } from '../../contracts/index.js';
import type { KubeObject } from './types.js';

export interface EventRecorderOptions {
  /** Event writes in flight at most: events must not crowd out the writes controllers exist for. */
  readonly maxInFlight?: number;
  /** Events waiting beyond this are dropped (counted and logged), like client-go's broadcaster. */
  readonly maxPending?: number;
  /**
   * client-go's spam filter: per involved object, a token bucket of this many events refilled at one per
   * `spamRefillMs`; events beyond it are dropped (a 1,000-pod rollout writes ~25 events about its
   * CloneSet, not 2,000). Defaults 25 and 5 minutes, client-go's.
   */
  readonly spamBurst?: number;
  readonly spamRefillMs?: number;
  /** Clock, for tests. */
  readonly now?: () => number;
}

/**
 * Event names as client-go makes them, `<object>.<hex nanoseconds>`: unique enough without a synchronous
 * `randomBytes` per event (a noticeable share of the manager's CPU when 1,000 pods finish together). The
 * counter keeps two events of one millisecond apart.
 */
let lastNameNs = 0n;
export function eventNameSuffix(nowMs: number): string {
  let ns = BigInt(Math.trunc(nowMs)) * 1_000_000n;
  if (ns <= lastNameNs) ns = lastNameNs + 1n;
  lastNameNs = ns;
  return ns.toString(16);
}

/** Buckets kept at most (oldest dropped first): the filter's memory stays bounded. */
const SPAM_KEYS_MAX = 4096;

/**
 * Writes core/v1 Events about the objects the runtime acts on, off the reconcile path: emitting never
 * blocks or fails a reconcile, at most `maxInFlight` event writes run at once, and a burst beyond
 * `maxPending` is dropped rather than queued without bound.
 */
export class EventRecorder {
  private readonly pending: KubeObject[] = [];
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxPending: number;
  private readonly spamBurst: number;
  private readonly spamRefillMs: number;
  private readonly now: () => number;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  dropped = 0;
  /** Events the spam filter dropped. */
  filtered = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly component: string,
    private readonly logger: Logger,
    opts: EventRecorderOptions = {},
  ) {
    this.maxInFlight = opts.maxInFlight ?? 4;
    this.maxPending = opts.maxPending ?? 2_000;
    this.spamBurst = opts.spamBurst ?? 25;
    this.spamRefillMs = opts.spamRefillMs ?? 300_000;
    this.now = opts.now ?? Date.now;
  }

  /** Takes a token of the object's bucket; false when it is empty. */
  private allow(key: string): boolean {
    const now = this.now();
    let b = this.buckets.get(key);
    if (b) {
      this.buckets.delete(key);
      b.tokens = Math.min(this.spamBurst, b.tokens + (now - b.at) / this.spamRefillMs);
      b.at = now;
    } else {
      b = { tokens: this.spamBurst, at: now };
      if (this.buckets.size >= SPAM_KEYS_MAX) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(key, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  emit(type: ResourceType, obj: KubeObject, eventType: 'Normal' | 'Warning', reason: string, message: string): void {
    const md = obj.metadata;
    const namespace = md.namespace ?? 'default';
    if (!this.allow(`${type.group}/${type.kind}/${md.namespace ?? ''}/${md.name}/${md.uid ?? ''}`)) {
      this.filtered++;
      return;
    }
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const ev: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${md.name}.${eventNameSuffix(nowMs)}`, namespace },
      involvedObject: {
        apiVersion: apiVersionOf(type),
        kind: type.kind,
        name: md.name,
        namespace: md.namespace,
        uid: md.uid,
        resourceVersion: md.resourceVersion,
      },
      reason,
      message,
      type: eventType,
      source: { component: this.component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.component,
      reportingInstance: process.env.POD_NAME ?? 'local',
    };
    if (this.pending.length >= this.maxPending) {
      this.dropped++;
      if (this.dropped === 1 || this.dropped % 100 === 0) this.logger.warn({ dropped: this.dropped }, 'event backlog full: events dropped');
      return;
    }
    this.pending.push(ev);
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.pending.length > 0) {
      const ev = this.pending.shift()!;
      this.inFlight++;
      const ns = ev.metadata.namespace!;
      this.client
        .create(EVENTS, ev, ns)
        .catch((err: unknown) => {
          const inv = ev.involvedObject as { name?: string };
          this.logger.warn({ reason: ev.reason, object: `${ns}/${inv.name}`, err: (err as Error).message }, 'event not recorded');
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}

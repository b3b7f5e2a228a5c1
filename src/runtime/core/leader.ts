import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient } from './client.js';
import { LEASES } from '../../contracts/index.js';
import type { Lease } from './types.js';

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica (pod name + random suffix). */
  readonly identity: string;
  /** How long a lease is valid without renewal (client-go default 15 s). */
  readonly leaseDurationMs: number;
  /** The leader gives up if it cannot renew for this long (default 10 s; must be < leaseDuration). */
  readonly renewDeadlineMs: number;
  /** Interval between acquire/renew attempts (default 2 s). */
  readonly retryPeriodMs: number;
  readonly logger: Logger;
  readonly onStartedLeading: () => void;
  /** Called the moment leadership is lost; the caller must stop acting at once. The elector goes on as a standby. */
  readonly onStoppedLeading: () => void;
  readonly onNewLeader?: (identity: string) => void;
}

/** Kubernetes MicroTime (RFC 3339 with microseconds). */
function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Lease-based leader election (coordination.k8s.io/v1), following client-go's leaderelection: expiry is
 * judged by the local time at which the lease record was last seen to change (not by the holder's clock),
 * takeovers use optimistic concurrency on resourceVersion, and the leader steps down when it has not
 * renewed within `renewDeadline`. On a clean stop it releases the lease so a standby takes over at once.
 */
export class LeaderElector {
  private leading = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private observed?: { record: string; at: number };
  private lastRenew = 0;
  private currentLeader = '';

  constructor(
    private readonly client: KubeClient,
    private readonly o: LeaderElectionOptions,
  ) {
    if (o.renewDeadlineMs >= o.leaseDurationMs) throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
    if (o.retryPeriodMs >= o.renewDeadlineMs) throw new Error('leader election: retryPeriod must be shorter than renewDeadline');
  }

  isLeader(): boolean {
    return this.leading;
  }

  leader(): string {
    return this.currentLeader;
  }

  start(): void {
    this.stopped = false;
    void this.tick();
  }

  private schedule(): void {
    if (this.stopped) return;
    // Jitter standby polling a little (client-go's JitterFactor 1.2) so replicas do not move in lockstep.
    const delay = this.leading ? this.o.retryPeriodMs : this.o.retryPeriodMs * (1 + Math.random() * 0.2);
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'leader election: lease call failed');
    }
    if (this.stopped) return;
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.o.logger.info({ identity: this.o.identity, lease: this.o.name }, 'became leader');
        this.o.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew >= this.o.renewDeadlineMs) {
      this.loseLeadership('could not renew the lease within the renew deadline');
    } else if (this.leading && this.currentLeader !== this.o.identity) {
      this.loseLeadership(`lease taken by ${this.currentLeader}`);
    }
    this.schedule();
  }

  /** Steps down at once, then keeps campaigning as a standby (no process restart needed). */
  private loseLeadership(why: string): void {
    this.leading = false;
    this.o.logger.error({ identity: this.o.identity, why }, 'lost leadership');
    this.o.onStoppedLeading();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const durationS = Math.max(1, Math.ceil(this.o.leaseDurationMs / 1000));
    let lease: Lease;
    try {
      lease = await this.client.get<Lease>(LEASES, this.o.name, this.o.namespace);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.client.create<Lease>(LEASES, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: {
            holderIdentity: this.o.identity,
            leaseDurationSeconds: durationS,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        });
        this.setLeader(this.o.identity);
        return true;
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const record = JSON.stringify([holder, spec.renewTime, spec.leaseDurationSeconds]);
    if (!this.observed || this.observed.record !== record) this.observed = { record, at: Date.now() };
    this.setLeader(holder);
    const heldByOther = holder !== '' && holder !== this.o.identity;
    const validForMs = (spec.leaseDurationSeconds ?? durationS) * 1000;
    if (heldByOther && this.observed.at + validForMs > Date.now()) return false;
    const transitions = (spec.leaseTransitions ?? 0) + (holder === this.o.identity ? 0 : 1);
    const next: Lease = {
      ...lease,
      spec: {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: durationS,
        acquireTime: holder === this.o.identity ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: transitions,
      },
    };
    try {
      const updated = await this.client.update<Lease>(LEASES, next);
      this.observed = {
        record: JSON.stringify([this.o.identity, updated.spec?.renewTime, updated.spec?.leaseDurationSeconds]),
        at: Date.now(),
      };
      this.setLeader(this.o.identity);
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  private setLeader(id: string): void {
    if (id !== this.currentLeader) {
      this.currentLeader = id;
      if (id) this.o.onNewLeader?.(id);
    }
  }

  /** Stops campaigning; a leader releases the lease (holder cleared, 1 s duration) for a fast takeover. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.client.get<Lease>(LEASES, this.o.name, this.o.namespace);
      if (lease.spec?.holderIdentity === this.o.identity) {
        await this.client.update<Lease>(LEASES, {
          ...lease,
          spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, acquireTime: null, renewTime: microTime() },
        });
      }
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'leader election: could not release the lease');
    }
  }
}

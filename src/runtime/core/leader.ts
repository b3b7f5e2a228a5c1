import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient } from './client.js';
import { LEASES } from '../../contracts/index.js';
import type { Lease } from './types.js';

/**
 * The elector's time: a monotonic clock (a frozen, then thawed process sees the time that passed; a wall-clock
 * step does not move it) and its timers. Injected by tests.
 */
export interface ElectionClock {
  /** Milliseconds on a monotonic scale (`performance.now()`). */
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const MONOTONIC_CLOCK: ElectionClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, Math.max(0, ms)).unref(),
  clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** The lease calls the elector makes (a KubeClient; a fake in unit tests). */
export type LeaseClient = Pick<KubeClient, 'get' | 'create' | 'update'>;

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
  readonly clock?: ElectionClock;
}

/** Kubernetes MicroTime (RFC 3339 with microseconds). */
function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Lease-based leader election (coordination.k8s.io/v1), following client-go's leaderelection: expiry is
 * judged by the local time at which the lease record was last seen to change (not by the holder's clock),
 * takeovers use optimistic concurrency on resourceVersion, each lease call is bounded by the time left to
 * the renew deadline (and by its own share of it, so a call hung on a dead connection is retried), and the
 * leader steps down when no renew succeeded within `renewDeadline`. On a clean stop it releases the lease so
 * a standby takes over at once.
 *
 * Leadership is also a time fence (`mayWrite`): it holds only while `now - lastRenew < renewDeadline`, where
 * `lastRenew` is when the last successful renew was *sent* (the API server cannot have recorded it earlier,
 * and another replica's view of it starts later still). A standby takes over no sooner than `leaseDuration`
 * after it saw that record change, so every write checked against the fence leaves before anyone else can
 * lead, whatever the event loop, a partition or SIGSTOP did in between: the check reads the clock at the
 * moment of the write, not a flag a timer may not yet have cleared.
 */
export class LeaderElector {
  private leading = false;
  private stopped = false;
  private timer?: unknown;
  /** Fires when the fence closes, so the loss is acted on (term aborted, workers stopped) without waiting for a tick. */
  private deadlineTimer?: unknown;
  private observed?: { record: string; at: number };
  /** Monotonic time at which the last successful acquire or renew was sent. */
  private lastRenew = Number.NEGATIVE_INFINITY;
  private currentLeader = '';
  private readonly clock: ElectionClock;

  constructor(
    private readonly client: LeaseClient,
    private readonly o: LeaderElectionOptions,
  ) {
    if (o.renewDeadlineMs >= o.leaseDurationMs) throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
    if (o.retryPeriodMs >= o.renewDeadlineMs) throw new Error('leader election: retryPeriod must be shorter than renewDeadline');
    this.clock = o.clock ?? MONOTONIC_CLOCK;
  }

  isLeader(): boolean {
    return this.leading && this.mayWrite();
  }

  /** Whether a write may leave now: leading, and the last successful renew was sent less than `renewDeadline` ago. */
  mayWrite(): boolean {
    return this.leading && this.clock.now() - this.lastRenew < this.o.renewDeadlineMs;
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
    this.scheduleIn(this.leading ? this.o.retryPeriodMs : this.o.retryPeriodMs * (1 + Math.random() * 0.2));
  }

  private scheduleIn(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    // A tick late past the deadline (a frozen process thawing, a starved event loop) steps down before it asks.
    if (this.leading && !this.mayWrite()) this.loseLeadership('could not renew the lease within the renew deadline');
    const sent = this.clock.now();
    // client-go bounds the attempt by the renew deadline: a call that hangs (a stalled connection) must not
    // keep a leader believing in a lease it can no longer prove. A standby bounds its attempt the same way.
    // Each attempt is also bounded by its own share of the deadline, so that one call caught on a connection
    // that went silent leaves time for a second on a fresh one; that second is sent at once.
    const until = Math.min((this.leading ? this.lastRenew : sent) + this.o.renewDeadlineMs, sent + this.attemptTimeoutMs());
    const attempt = new AbortController();
    const bound = this.clock.setTimer(() => attempt.abort(new DOMException('lease call exceeded its time', 'TimeoutError')), until - sent);
    let ok = false;
    let timedOut = false;
    try {
      // A write of the attempt leaves only before `until`, checked by the clock as it is sent: a process frozen
      // between reading the lease and writing it would otherwise renew from a record it read before the freeze.
      ok = await this.tryAcquireOrRenew(attempt.signal, () => this.clock.now() < until);
    } catch (err) {
      timedOut = attempt.signal.aborted;
      this.o.logger.warn({ err: (err as Error).message }, 'leader election: lease call failed');
    } finally {
      this.clock.clearTimer(bound);
    }
    if (this.stopped) return;
    const now = this.clock.now();
    if (ok && now - sent < this.o.renewDeadlineMs) {
      this.lastRenew = sent;
      this.armDeadline();
      if (!this.leading) {
        this.leading = true;
        this.o.logger.info({ identity: this.o.identity, lease: this.o.name }, 'became leader');
        this.o.onStartedLeading();
      }
    } else if (this.leading) {
      if (ok) this.loseLeadership('the renew was answered after the renew deadline');
      else if (this.currentLeader !== this.o.identity) this.loseLeadership(`lease taken by ${this.currentLeader}`);
      else if (!this.mayWrite()) this.loseLeadership('could not renew the lease within the renew deadline');
    }
    // A call that timed out says nothing about the API server: a leader asks again at once on a new connection.
    // A refused or failed call waits the retry period, so an unreachable server is not asked in a tight loop.
    if (timedOut && this.leading) this.scheduleIn(0);
    else this.schedule();
  }

  /**
   * How long one lease call may take: half of what the renew deadline leaves after a retry period (4 s with
   * client-go's defaults), at least a retry period. Far above an answer of a loaded API server (milliseconds),
   * and short enough that two attempts fit in the deadline.
   */
  private attemptTimeoutMs(): number {
    return Math.max(this.o.retryPeriodMs, (this.o.renewDeadlineMs - this.o.retryPeriodMs) / 2);
  }

  private armDeadline(): void {
    this.clock.clearTimer(this.deadlineTimer);
    this.deadlineTimer = this.clock.setTimer(
      () => {
        this.deadlineTimer = undefined;
        if (!this.leading) return;
        if (this.mayWrite()) this.armDeadline();
        else this.loseLeadership('could not renew the lease within the renew deadline');
      },
      this.lastRenew + this.o.renewDeadlineMs - this.clock.now(),
    );
  }

  /** Steps down at once, then keeps campaigning as a standby (no process restart needed). */
  private loseLeadership(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.clock.clearTimer(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.o.logger.error(
      { identity: this.o.identity, why, sinceLastRenewMs: Math.round(this.clock.now() - this.lastRenew) },
      'lost leadership',
    );
    this.o.onStoppedLeading();
  }

  /**
   * Every lease call goes on a connection of its own (`freshConnection`): a pooled keep-alive connection may be
   * silently dead, and a renewal hung on it until the deadline cost the leadership while new connections passed.
   */
  private async tryAcquireOrRenew(signal: AbortSignal, maySend: () => boolean): Promise<boolean> {
    const now = new Date();
    const durationS = Math.max(1, Math.ceil(this.o.leaseDurationMs / 1000));
    let lease: Lease;
    try {
      lease = await this.client.get<Lease>(LEASES, this.o.name, this.o.namespace, { signal, freshConnection: true });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.client.create<Lease>(
          LEASES,
          {
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
          },
          this.o.namespace,
          { signal, freshConnection: true, maySend },
        );
        this.setLeader(this.o.identity);
        return true;
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    // Any write to the lease changes its resourceVersion, whatever the holder's clock wrote into renewTime.
    const record = JSON.stringify([lease.metadata.resourceVersion, holder, spec.renewTime, spec.leaseDurationSeconds]);
    if (!this.observed || this.observed.record !== record) this.observed = { record, at: this.clock.now() };
    this.setLeader(holder);
    const heldByOther = holder !== '' && holder !== this.o.identity;
    const validForMs = (spec.leaseDurationSeconds ?? durationS) * 1000;
    if (heldByOther && this.observed.at + validForMs > this.clock.now()) return false;
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
      const updated = await this.client.update<Lease>(LEASES, next, undefined, { signal, freshConnection: true, maySend });
      this.observed = {
        record: JSON.stringify([
          updated.metadata.resourceVersion,
          this.o.identity,
          updated.spec?.renewTime,
          updated.spec?.leaseDurationSeconds,
        ]),
        at: this.clock.now(),
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

  /**
   * Stops campaigning; a leader that can still prove its lease releases it (holder cleared, 1 s duration) for
   * a fast takeover, within the time its fence has left.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimer(this.timer);
    this.clock.clearTimer(this.deadlineTimer);
    const release = this.mayWrite();
    const left = this.lastRenew + this.o.renewDeadlineMs - this.clock.now();
    this.leading = false;
    if (!release) return;
    const attempt = new AbortController();
    const bound = this.clock.setTimer(() => attempt.abort(new DOMException('lease release timed out', 'TimeoutError')), left);
    const signal = attempt.signal;
    try {
      const lease = await this.client.get<Lease>(LEASES, this.o.name, this.o.namespace, { signal, freshConnection: true });
      if (lease.spec?.holderIdentity === this.o.identity) {
        await this.client.update<Lease>(
          LEASES,
          {
            ...lease,
            spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, acquireTime: null, renewTime: microTime() },
          },
          undefined,
          // No `maySend` here: the release names the resourceVersion it read, so it can only clear a lease still ours.
          { signal, freshConnection: true },
        );
      }
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'leader election: could not release the lease');
    } finally {
      this.clock.clearTimer(bound);
    }
  }
}

import { exponentialDelay } from './backoff.js';
import { clampTimerMs } from './timers.js';

/** Outcome of processing one key: nothing, or "look again after this long" (not a failure). */
export type ProcessResult = void | { requeueAfterMs: number };

export interface WorkQueueOptions {
  /** Per-key failure backoff: base and cap (client-go defaults 5 ms / 1000 s; ours are shorter). */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Overall token bucket for retries (client-go: 10 qps, burst 100). 0 disables. */
  readonly qps?: number;
  readonly burst?: number;
  /** Called on depth changes (metrics). */
  readonly onDepth?: (depth: number) => void;
}

/**
 * Keyed, de-duplicating, rate-limited work queue with client-go's workqueue semantics:
 * - a key waiting in the queue is held once however often it is added;
 * - a key being processed is never handed to a second worker; if it is added meanwhile it is marked
 *   dirty and queued again when the first worker calls `done`;
 * - failures retry after a per-key exponential delay (reset by `forget`), bounded by a token bucket.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; t: NodeJS.Timeout }>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  private tokens: number;
  private lastRefill = Date.now();

  constructor(private readonly opts: WorkQueueOptions = {}) {
    this.tokens = opts.burst ?? 100;
  }

  get depth(): number {
    return this.queue.length - this.head;
  }

  /** Keys currently held by a worker. */
  get active(): number {
    return this.processing.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const w = this.waiters.shift();
    if (w) {
      this.dirty.delete(key);
      this.processing.add(key);
      w(key);
      return;
    }
    this.queue.push(key);
    this.opts.onDepth?.(this.depth);
  }

  /** Adds `key` after `ms`; an earlier pending timer for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (!(ms > 0)) return this.add(key);
    // Past the timer range the key comes back at the limit and is re-evaluated then.
    ms = clampTimerMs(ms);
    const at = Date.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.t);
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.set(key, { at, t });
  }

  /** Re-adds a failed key after its per-key exponential delay (and the overall bucket). */
  addRateLimited(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const perKey = exponentialDelay(n, this.opts.baseDelayMs ?? 50, this.opts.maxDelayMs ?? 60_000);
    const delay = Math.max(perKey, this.bucketDelay());
    this.addAfter(key, delay);
    return delay;
  }

  /** Forgets the failure history of `key` (call after it succeeds). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Next key to process (waits); undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    if (this.depth > 0) {
      const key = this.queue[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      this.dirty.delete(key);
      this.processing.add(key);
      this.opts.onDepth?.(this.depth);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added while processing, it goes back into the queue. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { t } of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private bucketDelay(): number {
    const qps = this.opts.qps ?? 10;
    if (qps <= 0) return 0;
    const burst = this.opts.burst ?? 100;
    const now = Date.now();
    this.tokens = Math.min(burst, this.tokens + ((now - this.lastRefill) / 1000) * qps);
    this.lastRefill = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / qps) * 1000);
  }
}

/**
 * Runs `workers` loops that take keys from `queue` and call `process`; a thrown error re-queues the key
 * with backoff, success forgets its failures. Resolves when the queue shuts down and workers are idle.
 */
export async function runWorkers(
  queue: WorkQueue,
  workers: number,
  process: (key: string) => Promise<ProcessResult>,
  onError: (key: string, err: unknown, retryInMs: number) => void,
): Promise<void> {
  const loop = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        const r = await process(key);
        queue.forget(key);
        if (r && r.requeueAfterMs > 0) queue.addAfter(key, r.requeueAfterMs);
      } catch (err) {
        const delay = queue.isShuttingDown() ? 0 : queue.addRateLimited(key);
        onError(key, err, delay);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, workers) }, loop));
}

/** Exponential backoff with full jitter ("decorrelated" enough for reconnect storms). */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {}

  /** Delay before the next attempt: min * 2^n capped at max, jittered into [cap/2, cap]. */
  next(): number {
    const cap = Math.min(this.maxMs, this.minMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(cap / 2 + Math.random() * (cap / 2));
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Deterministic per-key exponential delay (client-go's ItemExponentialFailureRateLimiter). */
export function exponentialDelay(failures: number, baseMs: number, maxMs: number): number {
  if (failures <= 0) return 0;
  return Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
}

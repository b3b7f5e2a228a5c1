/**
 * Node stores timer delays as 32-bit signed milliseconds: a delay above 2^31-1 (about 24.8 days) becomes
 * 1 ms, so a huge user-supplied duration (a grace period, a TTL) would turn into an immediate timeout or a
 * hot requeue loop. Every delay computed from user input passes through here.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a delay Node honours: NaN and negatives become 0, anything above the limit the limit. */
export function clampTimerMs(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(MAX_TIMER_MS, Math.ceil(ms));
}

/** Whole seconds whose millisecond value is a valid timer delay (for timeouts given in seconds). */
export function clampTimerSeconds(seconds: number): number {
  if (Number.isNaN(seconds) || seconds <= 0) return 0;
  return Math.min(Math.floor(MAX_TIMER_MS / 1000), Math.ceil(seconds));
}

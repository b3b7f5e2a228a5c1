/**
 * When a watch is presumed dead. A watch connection can die without a FIN or a reset: a conntrack flush, a
 * load balancer or API-server failover leave the socket open and silent (half-open). client-go notices that
 * with HTTP/2 pings (30 s read idle + 15 s ping timeout); our client speaks HTTP/1.1, where a watch holds its
 * connection and nothing else can be sent on it, and TCP keep-alive is answered by any proxy or balancer that
 * terminates TCP, so neither notices. What does notice: every watch asks the API server to end it after
 * `timeoutSeconds` (a short one, 25–30 s, jittered so informers and replicas do not reconnect in lockstep),
 * and the server always does, with a clean end of the response, whatever the traffic; with
 * `allowWatchBookmarks` it also sends a bookmark shortly before, so the informer resumes from a fresh
 * resourceVersion and never relists for it. A watch whose server deadline passed without that end is on a
 * dead connection: past `unreadyAfterMs` it makes readiness fail, past `abortAfterMs` (room for a slow
 * close from a loaded server) it is reset and the informer watches again on a fresh connection. Worst case
 * from the silence to a new watch: maxTimeoutSeconds + abortAfterMs (35 s).
 *
 * The price is one watch request per informer every ~27 s, served from the API server's watch cache.
 */
export interface WatchLivenessSettings {
  /** Server-side watch timeout, drawn uniformly from [min, max). */
  readonly minTimeoutSeconds: number;
  readonly maxTimeoutSeconds: number;
  /** How long after its server deadline an unclosed watch makes readiness fail. */
  readonly unreadyAfterMs: number;
  /** How long after its server deadline an unclosed watch is reset. */
  readonly abortAfterMs: number;
}

export const WATCH_LIVENESS: WatchLivenessSettings = {
  minTimeoutSeconds: 25,
  maxTimeoutSeconds: 30,
  unreadyAfterMs: 2_000,
  abortAfterMs: 5_000,
};

/** The `timeoutSeconds` of a new watch (`random` in [0, 1), injectable for tests). */
export function pickWatchTimeoutSeconds(s: WatchLivenessSettings = WATCH_LIVENESS, random: () => number = Math.random): number {
  const span = Math.max(0, s.maxTimeoutSeconds - s.minTimeoutSeconds);
  return s.minTimeoutSeconds + Math.min(span, Math.floor(random() * span));
}

/** Milliseconds after a watch was sent at which it is reset if the server has not ended it. */
export function watchAbortAfterMs(timeoutSeconds: number, s: WatchLivenessSettings = WATCH_LIVENESS): number {
  return timeoutSeconds * 1000 + s.abortAfterMs;
}

export type WatchVerdict = 'live' | 'overdue' | 'dead';

/**
 * A watch sent at `sentAt` (ms of a monotonic clock) with `timeoutSeconds`, still open at `now`: `live`
 * until its server deadline plus `unreadyAfterMs`, then `overdue` (readiness fails), then `dead` from
 * `watchAbortAfterMs` on (reset it). A watch the server ended is no longer judged: the caller stops asking.
 */
export function watchVerdict(sentAt: number, timeoutSeconds: number, now: number, s: WatchLivenessSettings = WATCH_LIVENESS): WatchVerdict {
  const late = now - sentAt - timeoutSeconds * 1000;
  if (late >= s.abortAfterMs) return 'dead';
  if (late >= s.unreadyAfterMs) return 'overdue';
  return 'live';
}

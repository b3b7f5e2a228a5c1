/**
 * Resource bounds of the admission server. The API server calls a webhook with a timeout (10 s in our
 * install manifests) and retries nothing, so everything here is sized to answer well inside that, and to
 * keep the manager inside its 512 MiB container limit however many clients misbehave at once.
 */
import { DEFAULT_REVIEW_LIMITS, type ReviewLimits } from './review.js';

export interface AdmissionServerLimits {
  /** Largest body accepted (413 above). The API server's own request limit is 3 MiB. */
  readonly maxBodyBytes: number;
  /** Bodies up to this size draw on the small-body pool, larger ones on the large-body pool. */
  readonly smallBodyBytes: number;
  /** Bytes all small bodies being received or handled may hold together. */
  readonly smallPoolBytes: number;
  /**
   * Bytes all large bodies may hold together. Small on purpose: a parsed 3 MiB review takes several times
   * that in heap, and the manager's old space can be as small as 128 MiB (a 512Mi memory limit).
   */
  readonly largePoolBytes: number;
  /** Reviews parsed and handled at once; the rest wait in line (their bodies already counted above). */
  readonly maxConcurrentReviews: number;
  /** Time per event-loop iteration for reviews waiting in line, before the loop gets back to sockets (see ReviewTurns). */
  readonly reviewSliceMs: number;
  /**
   * Open connections. Past this, new connections are closed right after accept, before any TLS work: a
   * flood of connections then costs no handshakes (each is ~1 ms of the one event loop) and no TLS buffers.
   * The API server talks over a few persistent connections, which stay open through such a flood.
   *
   * Every slot a slow client holds costs a handshake each time the headers timeout cuts it off and it comes
   * back, and its socket objects live long enough to reach V8's old generation: under a slowloris the
   * handshake rate and the major-GC rate grow with this number. 256 is far above what the API server opens
   * (it keeps 25 idle connections per webhook host and at most one per review in flight, and we handle
   * 8 reviews at once): under the bench:webhook-stress attack, the valid reviews' p99 was 23-39 ms with
   * 256 against 66-103 ms with 512 (28 major GCs against 48 in the run).
   */
  readonly maxConnections: number;
  /** A TLS handshake must finish within this. */
  readonly handshakeTimeoutMs: number;
  /** Request headers must arrive within this. */
  readonly headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this. */
  readonly requestTimeoutMs: number;
  /**
   * How often Node checks the two timeouts above (its default, 30 s, would let slow clients linger). Every
   * connection overdue at a check is cut off in that one callback, and those clients tend to come back
   * together: a short interval keeps each batch (and the event-loop time it takes) small.
   */
  readonly timeoutCheckIntervalMs: number;
  readonly review: ReviewLimits;
}

const MiB = 1024 * 1024;

export const DEFAULT_ADMISSION_SERVER_LIMITS: AdmissionServerLimits = {
  maxBodyBytes: 3 * MiB,
  smallBodyBytes: 256 * 1024,
  smallPoolBytes: 32 * MiB,
  largePoolBytes: 9 * MiB,
  maxConcurrentReviews: 8,
  reviewSliceMs: 4,
  maxConnections: 256,
  handshakeTimeoutMs: 3_000,
  headersTimeoutMs: 3_000,
  requestTimeoutMs: 5_000,
  timeoutCheckIntervalMs: 100,
  review: DEFAULT_REVIEW_LIMITS,
};

/** A byte budget shared by concurrent requests: reserve before buffering, release when answered. */
export class ByteBudget {
  private used = 0;

  constructor(readonly capacity: number) {}

  get inUse(): number {
    return this.used;
  }

  tryReserve(bytes: number): boolean {
    if (bytes < 0 || this.used + bytes > this.capacity) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

/**
 * Turns for the CPU-bound part of a review (parse, handlers, answer), at most `limit` held at once, in arrival
 * order, and only from a macrotask of their own (setImmediate). A review handled in the callback that read its
 * last byte would run before the event loop gets back to the sockets: with a backlog, one poll phase then runs
 * every ready review back to back, for seconds when CPU is short, while handshakes and request headers of
 * other connections sit unread and run out their timeouts. That charged our own backlog to well-behaved
 * clients (the API server saw 408s and resets).
 *
 * So each loop iteration gives reviews a slice of `sliceMs`: the first waiter is granted from setImmediate,
 * and a turn released within the slice hands over to the next waiter at once; past the slice the next waits
 * for the next iteration, after the loop has read sockets, advanced handshakes and checked timeouts. One
 * review per iteration (no slice) left a burst's reviews queued behind the iterations of everything else the
 * process does: the API server waited 1.3x as long per review as on upstream's webhook
 * (bench/terminator-peer.bench.ts).
 */
export class ReviewTurns {
  private held = 0;
  private scheduled = false;
  private sliceStart = Number.NEGATIVE_INFINITY;
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly limit: number,
    readonly sliceMs = 0,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get active(): number {
    return this.held;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  acquire(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  release(): void {
    this.held = Math.max(0, this.held - 1);
    if (this.now() - this.sliceStart < this.sliceMs) this.grant();
    this.schedule();
  }

  private grant(): void {
    if (this.held >= this.limit) return;
    const next = this.waiters.shift();
    if (!next) return;
    this.held++;
    next();
  }

  private schedule(): void {
    if (this.scheduled || this.waiters.length === 0 || this.held >= this.limit) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.sliceStart = this.now();
      this.grant();
      this.schedule();
    });
  }
}

/**
 * Time the event loop could not run, recently. The slow-client timeouts (handshake, headers, request) are
 * meant to measure the client, but they run on the one event loop: when the process stalls (CPU starved on a
 * busy node, a long GC, a burst of work), bytes a client sent in time sit unread until the stall ends and the
 * timeout check, which runs first, blames the client. Ticking every `tickMs` and recording how late each tick
 * came gives the stall time of the last `windowMs`; the server extends its timeouts by that much (at most
 * `capMs`), so a client is charged only for time the server was listening, and a slow client is still cut
 * off within the base timeout plus the cap.
 */
export class LoopStalls {
  private readonly stalls: Array<{ readonly at: number; readonly ms: number }> = [];
  private last: number;

  constructor(
    readonly tickMs: number,
    readonly windowMs: number,
    readonly capMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.last = now();
  }

  /** Called every `tickMs`: records how much later than due this tick came. */
  tick(): void {
    const t = this.now();
    const late = t - this.last - this.tickMs;
    if (late > 0) this.stalls.push({ at: t, ms: late });
    this.last = t;
    while (this.stalls.length > 0 && this.stalls[0]!.at < t - this.windowMs) this.stalls.shift();
  }

  /** Stall milliseconds of the last `windowMs` (the one in progress included), at most `capMs`. */
  recent(): number {
    const t = this.now();
    let sum = Math.max(0, t - this.last - this.tickMs);
    for (const s of this.stalls) if (s.at >= t - this.windowMs) sum += s.ms;
    return Math.min(this.capMs, Math.round(sum));
  }
}

export type BodyAdmission =
  | { readonly ok: true; readonly pool: 'small' | 'large'; readonly reserve: number }
  | { readonly ok: false; readonly httpStatus: 411 | 413; readonly message: string };

/**
 * Which pool a body draws on and how much to reserve up front, from its declared Content-Length.
 * The API server always declares it; a chunked body is reserved at the maximum (it may grow to that).
 */
export function admitBody(contentLength: string | undefined, limits: AdmissionServerLimits): BodyAdmission {
  if (contentLength === undefined) return { ok: true, pool: 'large', reserve: limits.maxBodyBytes };
  if (!/^\d{1,12}$/.test(contentLength))
    return { ok: false, httpStatus: 411, message: `Content-Length ${JSON.stringify(contentLength.slice(0, 40))} is not a byte count` };
  const n = Number(contentLength);
  if (n > limits.maxBodyBytes)
    return {
      ok: false,
      httpStatus: 413,
      message: `body of ${n} bytes is larger than the ${limits.maxBodyBytes}-byte limit of this webhook`,
    };
  return n <= limits.smallBodyBytes ? { ok: true, pool: 'small', reserve: n } : { ok: true, pool: 'large', reserve: n };
}

/** Kubernetes `status.reason` for an admission denial code (metav1.StatusReason). */
export function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 413:
      return 'RequestEntityTooLarge';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return code >= 500 ? 'InternalError' : 'Forbidden';
  }
}

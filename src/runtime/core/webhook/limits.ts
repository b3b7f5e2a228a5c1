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
   * that in heap, and the manager's old space is 128 MiB.
   */
  readonly largePoolBytes: number;
  /** Reviews parsed and handled at once; the rest wait in line (their bodies already counted above). */
  readonly maxConcurrentReviews: number;
  /**
   * Open connections. Past this, new connections are closed right after accept, before any TLS work: a
   * flood of connections then costs no handshakes (each is ~1 ms of the one event loop) and no TLS buffers.
   * The API server talks over a few persistent connections, which stay open through such a flood.
   */
  readonly maxConnections: number;
  /** A TLS handshake must finish within this. */
  readonly handshakeTimeoutMs: number;
  /** Request headers must arrive within this. */
  readonly headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this. */
  readonly requestTimeoutMs: number;
  /** How often Node checks the two timeouts above (its default, 30 s, would let slow clients linger). */
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
  maxConnections: 512,
  handshakeTimeoutMs: 3_000,
  headersTimeoutMs: 3_000,
  requestTimeoutMs: 5_000,
  timeoutCheckIntervalMs: 500,
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

/** At most `limit` holders at once; the others wait in arrival order. */
export class Semaphore {
  private held = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly limit: number) {}

  get active(): number {
    return this.held;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  acquire(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = Math.max(0, this.held - 1);
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

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { RuntimeMetrics } from '../metrics.js';
import {
  ByteBudget,
  DEFAULT_ADMISSION_SERVER_LIMITS,
  LoopStalls,
  ReviewTurns,
  admitBody,
  reasonForCode,
  type AdmissionServerLimits,
} from './limits.js';
import { ADMISSION_API_VERSION, ADMISSION_KIND, parseAdmissionReview, REVIEW_UID_PREFIX_BYTES, reviewUid } from './review.js';
import { answerConversionReview, type KindConverter } from './conversion.js';
import { CONVERSION_PATH } from '../../../contracts/index.js';

export type { AdmissionHandler, AdmissionRequest, AdmissionResult, JsonPatchOp } from './types.js';
import type { AdmissionHandler, AdmissionResult } from './types.js';

/** A result as the API server reads it: `response` of an AdmissionReview v1. */
export function admissionResponse(uid: string, result: AdmissionResult): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: result.allowed };
  if (result.allowed) {
    if (result.patch && result.patch.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(result.patch)).toString('base64');
    }
    if (result.warnings?.length) response.warnings = result.warnings;
  } else {
    const code = result.code ?? 403;
    // 400 has always meant "the object is invalid" for our handlers: keep the reason users see.
    response.status = { code, reason: result.reason ?? (code === 400 ? 'Invalid' : reasonForCode(code)), message: result.message };
  }
  return response;
}

/**
 * HTTPS server answering AdmissionReview v1. The serving certificate can be swapped at any time
 * (`setCertificate`): new TLS handshakes get the new one, established connections finish undisturbed.
 *
 * Hostile clients are expected: bodies are capped (413), buffered only within byte budgets (503 when
 * full), slow handshakes/headers/bodies are cut off by timeouts far below the API server's webhook
 * timeout, connections and concurrently handled reviews are capped, malformed reviews get 400, objects
 * too deep or too large for validation get a denial before any schema work, and a failing handler
 * answers 500 InternalError. Nothing a client sends can reject a promise nobody handles.
 */
export class AdmissionServer {
  private readonly handlers = new Map<string, AdmissionHandler>();
  private readonly converters: KindConverter[] = [];
  private server?: Server;
  private current?: { cert: string; key: string };
  private readonly small: ByteBudget;
  private readonly large: ByteBudget;
  private readonly reviews: ReviewTurns;
  private stallTimer?: NodeJS.Timeout;
  /** Requests fully received per connection (a spared connection that completes one is not cut off). */
  private readonly completed = new WeakMap<object, number>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics: RuntimeMetrics,
    readonly limits: AdmissionServerLimits = DEFAULT_ADMISSION_SERVER_LIMITS,
  ) {
    this.small = new ByteBudget(limits.smallPoolBytes);
    this.large = new ByteBudget(limits.largePoolBytes);
    this.reviews = new ReviewTurns(limits.maxConcurrentReviews, limits.reviewSliceMs);
  }

  register(h: AdmissionHandler): void {
    if (this.handlers.has(h.path)) throw new Error(`webhook path ${h.path} registered twice`);
    this.handlers.set(h.path, h);
  }

  /** Serves CRD conversion of `c.kind` at CONVERSION_PATH (one path for every kind, as upstream). */
  registerConverter(c: KindConverter): void {
    if (this.converters.some((x) => x.group === c.group && x.kind === c.kind))
      throw new Error(`conversion of ${c.kind}.${c.group} registered twice`);
    this.converters.push(c);
  }

  paths(): string[] {
    return [...this.handlers.keys(), ...(this.converters.length > 0 ? [CONVERSION_PATH] : [])];
  }

  hasCertificate(): boolean {
    return this.current !== undefined;
  }

  isListening(): boolean {
    return this.server?.listening ?? false;
  }

  servingCertificate(): string | undefined {
    return this.current?.cert;
  }

  setCertificate(cert: string, key: string): void {
    if (this.current?.cert === cert) return;
    this.current = { cert, key };
    this.server?.setSecureContext({ cert, key });
  }

  /** Starts listening once a certificate is set. Returns the bound port. */
  async listen(port: number, host?: string): Promise<number> {
    if (!this.current) throw new Error('webhook server: no serving certificate yet');
    const l = this.limits;
    this.server = createServer(
      {
        cert: this.current.cert,
        key: this.current.key,
        minVersion: 'TLSv1.2',
        // A backstop only: the handshake deadline is enforced below, net of event-loop stalls.
        handshakeTimeout: l.handshakeTimeoutMs + l.headersTimeoutMs,
        headersTimeout: l.headersTimeoutMs,
        requestTimeout: l.requestTimeoutMs,
        connectionsCheckingInterval: l.timeoutCheckIntervalMs,
        maxHeaderSize: 16 * 1024,
      },
      (req, res) => {
        this.serve(req, res).catch((err: unknown) => this.failed(res, err));
      },
    );
    this.server.maxConnections = l.maxConnections;
    const spared = this.chargeClientsOnlyForListeningTime(this.server);
    // The API server reuses idle connections for up to 90 s (Go's default transport idle timeout): one we closed
    // first can meet its next review and fail it with a reset, which the API server does not retry for a POST.
    // Keeping them longer leaves the close to the API server (65 s failed a SidecarSet update 66 s after the last).
    this.server.keepAliveTimeout = WEBHOOK_KEEP_ALIVE_MS;
    // A peer that resets mid-handshake or sends garbage is that connection's problem, not the server's.
    // (With a listener installed, closing the socket is ours to do: that includes handshake timeouts.)
    this.server.on('tlsClientError', (_err, socket) => socket.destroy());
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable || socket.destroyed) {
        socket.destroy();
        return;
      }
      const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT';
      if (timedOut && spared(socket)) return;
      socket.end(
        timedOut ? 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n' : 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n',
      );
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    this.server.on('error', (err) => this.logger.error({ err: err.message }, 'webhook server error'));
    const a = this.server.address();
    return typeof a === 'object' && a ? a.port : port;
  }

  /**
   * Keeps the handshake, headers and request deadlines net of the event loop's own stalls (see LoopStalls):
   * Node checks headers and request deadlines against its server properties on every check, so they are
   * raised by the recent stall time; handshakes are timed here, from accept, on the same terms.
   */
  private chargeClientsOnlyForListeningTime(server: Server): (socket: Duplex) => boolean {
    const l = this.limits;
    const tickMs = 100;
    const stalls = new LoopStalls(tickMs, l.requestTimeoutMs + l.headersTimeoutMs, l.headersTimeoutMs);
    const handshaking = new Map<string, { readonly socket: Socket; readonly since: number }>();
    let applied = 0;
    server.on('connection', (socket: Socket) => {
      if (socket.remotePort === undefined) return;
      const key = `${socket.remoteAddress}:${socket.remotePort}`;
      handshaking.set(key, { socket, since: performance.now() });
      socket.once('close', () => handshaking.delete(key));
    });
    server.on('secureConnection', (tls: TLSSocket) => handshaking.delete(`${tls.remoteAddress}:${tls.remotePort}`));
    this.stallTimer = setInterval(() => {
      stalls.tick();
      const extra = (applied = stalls.recent());
      server.headersTimeout = l.headersTimeoutMs + extra;
      server.requestTimeout = l.requestTimeoutMs + extra;
      const cutoff = performance.now() - l.handshakeTimeoutMs - extra;
      for (const [key, h] of handshaking) {
        if (h.since >= cutoff) continue;
        handshaking.delete(key);
        h.socket.destroy();
      }
    }, tickMs).unref();
    // Node's deadline check can run before the tick above after a stall (both are timers): a timeout it reports
    // while a stall not yet applied is in progress gets one more request timeout, measured from now, to finish
    // the request it was waiting for, and is cut off then if it has not.
    const sparedOnce = new WeakSet<object>();
    return (socket) => {
      if (sparedOnce.has(socket) || stalls.recent() <= applied + tickMs) return false;
      sparedOnce.add(socket);
      const before = this.completed.get(socket) ?? 0;
      setTimeout(() => {
        if (socket.destroyed || (this.completed.get(socket) ?? 0) > before) return;
        if (socket.writable) socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
        else socket.destroy();
      }, l.requestTimeoutMs).unref();
      return true;
    };
  }

  async close(): Promise<void> {
    clearInterval(this.stallTimer);
    if (!this.server) return;
    const s = this.server;
    await new Promise<void>((r) => {
      s.close(() => r());
      s.closeIdleConnections();
    });
  }

  /** Last resort for an error outside the handler call: answer 500 if still possible, never throw. */
  private failed(res: ServerResponse, err: unknown): void {
    this.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'webhook request failed');
    try {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain', connection: 'close' }).end('internal error\n');
      else res.destroy();
    } catch {
      res.destroy();
    }
  }

  private refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(`${message}\n`);
  }

  /** Answers, then drops the connection once the answer is out: its unread body is not worth reading. */
  private refuseAndClose(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    req.pause();
    res.once('finish', () => req.socket.destroy());
    res.once('close', () => req.socket.destroy());
    this.refuse(res, status, message, { ...headers, connection: 'close' });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.once('end', () => this.completed.set(req.socket, (this.completed.get(req.socket) ?? 0) + 1));
    const path = (req.url ?? '/').split('?')[0]!;
    const h = this.handlers.get(path);
    const conversion = path === CONVERSION_PATH && this.converters.length > 0;
    if (!h && !conversion) {
      this.refuse(res, 404, `no webhook at ${path.slice(0, 200)}`);
      req.resume();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      req.resume();
      return;
    }
    const admission = admitBody(req.headers['content-length'], this.limits);
    if (!admission.ok) {
      const declared = Number(req.headers['content-length']);
      if (h && admission.httpStatus === 413 && declared <= OVERSIZED_REVIEW_DRAIN_BYTES) {
        // A review the API server sent for a tenant's large object: read its uid, discard the rest, and deny it by
        // an AdmissionReview (a 413 the tenant sees) instead of an HTTP error (a 500 "failed calling webhook").
        const uid = await uidOfOversizedReview(req);
        if (uid !== undefined) {
          if (res.destroyed) return;
          this.metrics.webhookRequests.inc({ webhook: h.name, allowed: 'false' });
          const message = `request: the review is ${declared} bytes, larger than the ${this.limits.maxBodyBytes}-byte limit of this webhook; store large data outside the object (a ConfigMap, an image)`;
          const out = Buffer.from(
            JSON.stringify({
              apiVersion: ADMISSION_API_VERSION,
              kind: ADMISSION_KIND,
              response: admissionResponse(uid, { allowed: false, code: 413, message }),
            }),
          );
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
          return;
        }
        if (res.headersSent || res.destroyed) return;
      }
      // Close: the unread body would otherwise be parsed as the next request.
      this.refuseAndClose(req, res, admission.httpStatus, admission.message);
      return;
    }
    const pool = admission.pool === 'small' ? this.small : this.large;
    if (!pool.tryReserve(admission.reserve)) {
      this.refuseAndClose(req, res, 503, 'webhook server busy with other requests; retry', { 'retry-after': '1' });
      return;
    }
    try {
      const body = await readBody(req, this.limits.maxBodyBytes);
      if (body === undefined) {
        if (!res.headersSent && !req.destroyed)
          this.refuseAndClose(req, res, 413, `body larger than the ${this.limits.maxBodyBytes}-byte limit of this webhook`);
        else req.destroy();
        return;
      }
      if (body === null) return; // client went away or timed out: nothing to answer
      await this.reviews.acquire();
      try {
        // The client gave up while this review waited (the API server closes the connection at its
        // timeout): answering would be wasted work that delays the reviews still wanted.
        if (res.destroyed || !req.socket.writable) {
          this.metrics.webhookAbandoned.inc();
          return;
        }
        if (h) await this.answer(h, body, res);
        else this.answerConversion(body, res);
      } finally {
        this.reviews.release();
      }
    } finally {
      pool.release(admission.reserve);
    }
  }

  /** A ConversionReview: converted objects, a failed review naming the object and field, or 400 for a non-review. */
  private answerConversion(body: Buffer, res: ServerResponse): void {
    const end = this.metrics.webhookDuration.startTimer({ webhook: 'convert' });
    const answer = answerConversionReview(body.toString('utf8'), this.converters);
    end();
    if (!answer.ok) {
      this.refuse(res, answer.httpStatus, `bad ConversionReview: ${answer.message}`);
      return;
    }
    this.metrics.webhookRequests.inc({ webhook: 'convert', allowed: String(!answer.failed) });
    if (answer.failed) this.logger.warn({ response: answer.body.response }, 'conversion refused');
    const out = Buffer.from(JSON.stringify(answer.body));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
  }

  private async answer(h: AdmissionHandler, body: Buffer, res: ServerResponse): Promise<void> {
    const parsed = parseAdmissionReview(body.toString('utf8'), this.limits.review);
    if (!parsed.ok && parsed.uid === undefined) {
      this.refuse(res, parsed.httpStatus, `bad AdmissionReview: ${parsed.message}`);
      return;
    }
    const uid = parsed.ok ? parsed.request.uid : parsed.uid!;
    let result: AdmissionResult;
    if (!parsed.ok) {
      result = { allowed: false, code: parsed.httpStatus, message: parsed.message };
    } else {
      const end = this.metrics.webhookDuration.startTimer({ webhook: h.name });
      try {
        result = await h.handle(parsed.request);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.logger.error({ webhook: h.name, uid, err: message }, 'webhook handler failed');
        result = {
          allowed: false,
          code: 500,
          reason: 'InternalError',
          message: `internal error in webhook ${h.name}: ${message.slice(0, 500)}`,
        };
      }
      end();
    }
    this.metrics.webhookRequests.inc({ webhook: h.name, allowed: String(result.allowed) });
    const out = Buffer.from(
      JSON.stringify({ apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response: admissionResponse(uid, result) }),
    );
    // The length is known: the answer goes out with Content-Length, not in chunked framing.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
  }
}

/** Largest oversized review whose body is read (and discarded) to deny it by uid; the API server sends at most 3 MiB objects, twice in an UPDATE. */
const OVERSIZED_REVIEW_DRAIN_BYTES = 8 * 1024 * 1024;

/**
 * The uid of an oversized review, from the first REVIEW_UID_PREFIX_BYTES of its body (kept), the rest read and
 * discarded; resolves once the body ended. `undefined`, with the body left unread, as soon as the start is not an
 * AdmissionReview naming its uid first, and when the client went away.
 */
function uidOfOversizedReview(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    let prefix = '';
    let uid: string | undefined;
    const finish = (v: string | undefined) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(v);
    };
    const onData = (c: Buffer) => {
      if (uid !== undefined) return; // discarded
      prefix += c.toString('latin1', 0, Math.min(c.length, REVIEW_UID_PREFIX_BYTES - prefix.length));
      uid = reviewUid(prefix);
      // Not a review the API server wrote: leave the body unread (the caller refuses and closes).
      if (uid === undefined && (prefix.length >= REVIEW_UID_PREFIX_BYTES || !/^\s*(\{|$)/.test(prefix))) {
        req.pause();
        finish(undefined);
      }
    };
    const onEnd = () => finish(uid);
    const onClose = () => finish(undefined);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
  });
}

/**
 * The body, `undefined` if it grew past `max` (a chunked body, or one longer than it declared), `null` if
 * the client aborted or the request timed out. Never rejects.
 */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.off('data', onData);
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(size > max ? undefined : Buffer.concat(chunks, size)));
    req.on('error', () => resolve(null));
    req.on('close', () => {
      if (!req.complete) resolve(null);
    });
  });
}

/** JSON-pointer escaping of one path segment (RFC 6901). */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** How long an idle connection stays open: above the API server's 90 s idle timeout, so it is the one to close. */
export const WEBHOOK_KEEP_ALIVE_MS = 120_000;

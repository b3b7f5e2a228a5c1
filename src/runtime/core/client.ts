// client-node's modules one by one, not its index: the index pulls in every generated API class and
// model (~1,000 classes the runtime never uses), which the manager would load and keep (memory).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { HttpMethod } from '@kubernetes/client-node/dist/gen/http/http.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import { createSecureContext, TLSSocket } from 'node:tls';
import type { ApiAccess, PermissionScope, Verb } from '../../contracts/index.js';
import { findCoveringRule } from '../../contracts/index.js';
import { resourcePath, type ResourceType } from '../../contracts/index.js';
import type { KubeList, KubeObject } from './types.js';
import { watchAbortAfterMs } from './watch-liveness.js';

export { PatchStrategy };
export type PatchType = (typeof PatchStrategy)[keyof typeof PatchStrategy];

/** An error answer of the API server, with the fields callers branch on. */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly access: ApiAccess,
    readonly body?: unknown,
  ) {
    super(`${access.verb} ${access.resource}${access.name ? ` ${access.name}` : ''}: ${code} ${reason}: ${message}`);
    this.name = 'KubeApiError';
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof KubeApiError && e.code === 404;
export const isConflict = (e: unknown): boolean => e instanceof KubeApiError && e.code === 409 && e.reason === 'Conflict';
export const isAlreadyExists = (e: unknown): boolean => e instanceof KubeApiError && e.code === 409 && e.reason === 'AlreadyExists';
export const isInvalid = (e: unknown): boolean => e instanceof KubeApiError && e.code === 422;

const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * JSON text as Go's encoding/json writes it: like JSON.stringify, with `<`, `>`, `&`, U+2028 and U+2029
 * escaped (the same value, other bytes). Raw JSON fields such as ControllerRevision `data` are stored
 * as sent and compared byte for byte on update; when the API server applies a patch it re-encodes the
 * object the Go way, so data sent with a literal `&` (a shell `cmd & wait`) would no longer equal
 * itself and the patch would be refused as changing immutable data. Outside strings these characters
 * never occur in JSON, so replacing them everywhere is safe.
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!);
}

export const isGone = (e: unknown): boolean =>
  (e instanceof KubeApiError && e.code === 410) ||
  (typeof e === 'object' && e !== null && (e as { statusCode?: number }).statusCode === 410);

/** Receives every API call the client makes (before it is sent). */
export type AccessListener = (access: ApiAccess) => void;

/** Which declared rules the client checks its calls against (see src/contracts/permissions.ts). */
export interface PermissionCheck {
  /** The declared lists with the namespace each is bound in (`managerScopes` / `daemonScopes`). */
  readonly scopes: readonly PermissionScope[];
  /** Throw before sending a call the declared list does not cover (tests and dev runs). */
  readonly enforce: boolean;
}

export interface KubeClientOptions {
  readonly permissions?: PermissionCheck;
  readonly onAccess?: AccessListener;
  /** Per-request timeout for non-watch calls. */
  readonly requestTimeoutMs?: number;
  /**
   * Write fence: create/update/patch/delete pass only while it is open. Controllers get a client fenced on
   * leadership (`KubeClient.fenced`), so a replica that lost its lease, or can no longer prove it holds it,
   * cannot write even from a reconcile that was already running.
   */
  readonly fence?: WriteFence;
}

/**
 * What a fenced client asks before each write, and what aborts its requests. `mayWrite` is asked when the
 * call is made and again at the moment its bytes are handed to the connection (after credentials were
 * awaited, after a new connection's TLS handshake), so a write decided before a process was frozen or cut
 * off is judged by the clock at the moment it would leave.
 */
export interface WriteFence {
  mayWrite(): boolean;
  /**
   * The signal of the current leadership term: when it aborts, every request of the fenced client still in
   * flight (reads included, so the term's reconciles end at once) is aborted and its connection reset.
   */
  signal?(): AbortSignal | undefined;
}

/** Per-call options of a request. */
export interface RequestOptions {
  /** Aborts the request; the connection is reset, so bytes still queued are never delivered. */
  readonly signal?: AbortSignal;
  /**
   * Send it on a new connection, closed after the answer, never on a pooled keep-alive one: a pooled connection
   * may be silently dead (a conntrack flush, a load-balancer failover) and is noticed only when a request on it
   * hangs. Lease renewals use it: one hung renewal costs the leadership.
   */
  readonly freshConnection?: boolean;
  /**
   * Asked at the moment the request would be written (a new connection's after its handshake); false refuses it
   * and nothing is sent. A lease call uses it so that an answer read before a freeze cannot lead to a write after it.
   */
  readonly maySend?: () => boolean;
}

const WRITE_VERBS: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

/** Thrown instead of sending a write through a closed fence, and by writes aborted when the fence closed. */
export class FencedError extends Error {
  constructor(access: ApiAccess, why = 'this replica is not the leader') {
    super(`refused ${access.verb} ${access.resource}${access.name ? ` ${access.name}` : ''}: ${why}`);
    this.name = 'FencedError';
  }
}

export const isFenced = (e: unknown): boolean => e instanceof FencedError;

/**
 * Closes a connection with a TCP reset instead of a FIN. A FIN-closed socket keeps what it has not yet
 * delivered (a request stuck behind a partition) and the kernel retransmits it, so it may reach the API
 * server after the partition heals, long after the fence closed; a reset drops it. A TLS socket's own
 * `resetAndDestroy` refuses its handle type: the reset goes to the TCP handle under the TLS layer.
 */
export function resetConnection(socket: Socket | null | undefined): void {
  if (!socket || socket.destroyed) return;
  if (socket instanceof TLSSocket) {
    const tcp = (socket as unknown as { _handle?: { _parent?: { reset?: (cb: () => void) => number } } })._handle?._parent;
    if (typeof tcp?.reset === 'function') tcp.reset(() => undefined);
    socket.destroy();
    return;
  }
  socket.resetAndDestroy();
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * Authentication headers are taken again from the kubeconfig at most this often (and after a 401), like
 * client-go's cached token sources: rotated service-account tokens and exec credentials still reach the
 * API server, without building client-node's per-request authentication on every call.
 */
export const AUTH_REFRESH_MS = 10_000;

/**
 * A watch without `timeoutSeconds` is ended when nothing arrived for this long (the API server then picks its
 * own timeout, up to 30 min). The informer's watches carry a short `timeoutSeconds` and are judged by it
 * instead (watch-liveness.ts): that is what notices a dead connection in well under a minute.
 */
const WATCH_INACTIVITY_MS = 5 * 60_000;

/**
 * Idle keep-alive connections kept open to the API server: more than a burst's writes in flight (50 workers),
 * so connections are reused rather than closed and handshaken again; bounded so one burst does not keep
 * hundreds of TLS sockets.
 */
const MAX_IDLE_SOCKETS = 100;

/**
 * A response body read whole as UTF-8 text, decoded chunk by chunk (a multi-byte character split across
 * chunks is kept whole): no list of chunks and no concatenated copy of a multi-megabyte list page.
 */
function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    res.on('end', () => resolve(text));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('API server closed the connection mid-answer')));
  });
}

/**
 * How requests reach the API server, shared by a client and its fenced copies: one keep-alive
 * `node:https` (or `node:http`) Agent built once from the kubeconfig's TLS settings (CA, client
 * certificate, server name, skip-verify), and the authentication headers client-node computes
 * (`applyToHTTPSOptions`: tokens, exec and file credentials), reused for AUTH_REFRESH_MS. client-node 2.0
 * instead builds a new undici Agent (a new TLS connection), decodes the certificates and re-reads
 * file-backed credentials for every request (a tenth of the controller's CPU under a burst;
 * bench/terminator-peer.bench.ts). Node's own http module rather than undici's: the bundle then evaluates
 * no undici at start (~1 MiB of source and its bytecode, manager RSS; bench/memory-peer.bench.ts). A
 * kubeconfig `proxy-url` goes through the proxy Agent client-node builds for it.
 */
class Transport {
  private agent?: HttpAgent;
  /** Same TLS settings, no keep-alive: one connection per request (`RequestOptions.freshConnection`). */
  private freshAgent?: HttpAgent;
  private auth?: { headers: Record<string, string>; at: number };
  private loading?: Promise<void>;

  constructor(private readonly kubeConfig: KubeConfig) {}

  private refresh(): Promise<void> {
    this.loading ??= (async () => {
      const cluster = this.kubeConfig.getCurrentCluster();
      if (!cluster) throw new Error('kubeconfig has no current cluster');
      const opts: HttpsRequestOptions = {};
      await this.kubeConfig.applyToHTTPSOptions(opts);
      if (!this.agent) {
        if (cluster.proxyUrl) this.agent = this.freshAgent = opts.agent as HttpAgent;
        else if (cluster.server.startsWith('http:')) {
          this.agent = new HttpAgent({ keepAlive: true, maxFreeSockets: MAX_IDLE_SOCKETS });
          this.freshAgent = new HttpAgent({ keepAlive: false });
        } else {
          // One context for every connection; given the PEM texts instead, each new connection parses the CA,
          // certificate and key again (2% of the manager's CPU in a burst, bench/terminator-peer.bench.ts).
          const tls = {
            secureContext: createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key }),
            servername: opts.servername,
            ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
          };
          this.agent = new HttpsAgent({
            keepAlive: true,
            // client-go's TCP keep-alive period; idle load balancers drop connections after 60 s.
            keepAliveMsecs: 30_000,
            maxFreeSockets: MAX_IDLE_SOCKETS,
            ...tls,
          });
          this.freshAgent = new HttpsAgent({ keepAlive: false, ...tls });
        }
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
      if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
      this.auth = { headers, at: Date.now() };
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async headers(): Promise<Record<string, string>> {
    if (!this.auth || Date.now() - this.auth.at >= AUTH_REFRESH_MS) await this.refresh();
    return this.auth!.headers;
  }

  private request(method: string, u: URL, headers: Record<string, string>, signal?: AbortSignal, fresh = false): ClientRequest {
    const opts: HttpsRequestOptions = {
      method,
      protocol: u.protocol,
      hostname: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      headers,
      agent: fresh ? this.freshAgent : this.agent,
      signal,
    };
    return u.protocol === 'http:' ? httpRequest(opts) : httpsRequest(opts);
  }

  /**
   * Starts a watch on the shared agent and splits its body into events itself (newline-delimited JSON):
   * client-node's Watch adapts a fetch body to a WHATWG stream, then to a Node stream, then to readline,
   * which cost more than the JSON parsing under a burst of pod updates. `onDone` is called once: null on
   * a clean close, a `TimeoutError` when the watch outlived its deadline (`deadlineMs` after it was sent,
   * or else nothing arrived for `inactivityMs`), an error with `statusCode` on an HTTP error (410 Gone
   * included), or the transport's error. `onOpen` runs when the API server answered 200 (the watch is live).
   */
  async watch(
    url: string,
    timing: WatchTiming,
    onEvent: (type: string, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    const headers = { ...(await this.headers()), Accept: 'application/json' };
    const controller = new AbortController();
    let timedOut = false;
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      controller.abort();
      onDone(timedOut ? new DOMException('watch inactive', 'TimeoutError') : err);
    };
    // Decided one turn of the event loop later: after a stall of this process, timers run before pending
    // socket reads, and the server's on-time end may be waiting among them.
    const expire = () => setImmediate(giveUp);
    const giveUp = () => {
      if (finished) return;
      timedOut = true;
      // Outlived the end the API server promised: the connection is presumed dead (half-open). Ended here
      // rather than by the abort's stream events, which a TLS socket on a dead connection need not deliver.
      // The idle keep-alive sockets are closed too: what silenced this one (a conntrack flush, a balancer
      // failover) silenced them as well, and the next request on one would hang until its own timeout.
      if (timing.deadlineMs !== undefined) this.dropIdleConnections();
      finish(new DOMException('watch inactive', 'TimeoutError'));
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(expire, timing.inactivityMs);
      timer.unref();
    };
    if (timing.deadlineMs !== undefined) {
      timer = setTimeout(expire, timing.deadlineMs);
      timer.unref();
    } else arm();
    const rearm = timing.deadlineMs === undefined ? arm : () => undefined;
    const u = new URL(url);
    const req = this.request('GET', u, headers, controller.signal);
    req.on('error', finish);
    req.on('response', (res) => {
      if (res.statusCode === 200) timing.onOpen?.();
      if (res.statusCode !== 200) {
        void readAll(res)
          .catch(() => '')
          .then((text) => {
            if (res.statusCode === 401) this.auth = undefined;
            const err = new Error(`watch ${u.pathname}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`) as Error & { statusCode: number };
            err.statusCode = res.statusCode!;
            finish(err);
          });
        return;
      }
      rearm();
      // Bytes of a line not yet ended; events are split at '\n' bytes (never inside a UTF-8 sequence).
      let partial: Buffer[] = [];
      const line = (buf: Buffer, start: number, end: number) => {
        if (end <= start) return;
        let event: { type?: string; object?: KubeObject } | null;
        try {
          event = JSON.parse(buf.toString('utf8', start, end)) as typeof event;
        } catch {
          return; // not an event: skipped, as client-node's Watch does
        }
        if (typeof event !== 'object' || event === null || !event.type || !event.object) return;
        try {
          onEvent(event.type, event.object);
        } catch (err) {
          // Never out of the stream's 'data' listener (that would be an uncaught exception): the watch ends
          // with the error, and the informer logs it and watches again after its backoff.
          finish(err);
        }
      };
      res.on('data', (chunk: Buffer) => {
        if (finished) return;
        rearm();
        let start = 0;
        for (let nl = chunk.indexOf(10); nl !== -1 && !finished; nl = chunk.indexOf(10, start)) {
          if (partial.length > 0) {
            partial.push(chunk.subarray(start, nl));
            const whole = Buffer.concat(partial);
            partial = [];
            line(whole, 0, whole.length);
          } else line(chunk, start, nl);
          start = nl + 1;
        }
        if (start < chunk.length) partial.push(chunk.subarray(start));
      });
      res.on('end', () => finish(null));
      res.on('error', finish);
      res.on('close', () => finish(null));
    });
    req.end();
    return controller;
  }

  /**
   * Closes the agent's idle keep-alive sockets (requests in flight keep theirs). A plain destroy: they hold
   * no request bytes, so nothing could be delivered late, and it removes them from the agent's free list.
   */
  private dropIdleConnections(): void {
    const free = (this.agent as (HttpAgent & { freeSockets?: Record<string, Socket[] | undefined> }) | undefined)?.freeSockets;
    for (const sockets of Object.values(free ?? {})) for (const s of [...(sockets ?? [])]) s.destroy();
  }

  /** Sends one request; a 401 with cached credentials refreshes them and sends it once more. */
  async send(
    method: HttpMethod,
    url: string,
    body: string | undefined,
    contentType: string | undefined,
    timeoutMs: number,
    control: SendControl = {},
  ): Promise<{ status: number; text: string }> {
    for (let attempt = 0; ; attempt++) {
      let refreshed = false;
      if (!this.auth || attempt > 0 || Date.now() - this.auth.at >= AUTH_REFRESH_MS) {
        await this.refresh();
        refreshed = true;
      }
      const res = await this.transmit(method, url, body, contentType, timeoutMs, control);
      if (res.status === 401 && !refreshed) continue;
      return res;
    }
  }

  /**
   * One request on the shared agent. The socket's idle timeout bounds the wait for the answer's headers
   * and then for each body chunk (timeoutMs each) rather than an AbortSignal.timeout per call: a timer, a
   * signal and its listeners per request showed in the profile under a burst. A caller's signal (a lease
   * call's deadline, a leadership term) aborts the request and resets its connection.
   *
   * With `beforeSend`, nothing is written until the connection is usable (a keep-alive socket at once, a
   * new one after its TCP connect and TLS handshake); `beforeSend` runs right then and may refuse the
   * request, which is then never written at all.
   */
  private transmit(
    method: HttpMethod,
    url: string,
    body: string | undefined,
    contentType: string | undefined,
    timeoutMs: number,
    { signal, beforeSend, fresh }: SendControl,
  ): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { ...this.auth!.headers, Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const req = this.request(method, new URL(url), headers, undefined, fresh);
      let settled = false;
      const onAbort = () => {
        const reason = abortReason(signal!);
        settle(() => reject(reason));
        resetConnection(req.socket);
        req.destroy(reason);
      };
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url}: no answer from the API server within ${timeoutMs} ms`)));
      req.on('error', (err) => settle(() => reject(err)));
      req.on('response', (res) => {
        readAll(res).then(
          (text) => settle(() => resolve({ status: res.statusCode!, text })),
          (err: unknown) => settle(() => reject(err as Error)),
        );
      });
      if (!beforeSend) {
        req.end(body);
        return;
      }
      const go = () => {
        if (settled || req.destroyed) return;
        try {
          beforeSend();
        } catch (err) {
          // Never written: a plain destroy loses nothing, and a keep-alive socket that carried no bytes of
          // this request is closed rather than handed back half-used.
          req.destroy(err as Error);
          return;
        }
        req.end(body);
      };
      req.once('socket', (socket: Socket) => {
        if (socket instanceof TLSSocket ? socket.connecting || !isHandshakeDone(socket) : socket.connecting) {
          socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', go);
        } else go();
      });
    });
  }
}

/** When a watch is given up (`Transport.watch`). */
interface WatchTiming {
  /** Reset the watch this long after it was sent, whatever arrived (its server deadline plus a grace). */
  readonly deadlineMs?: number;
  /** Without a deadline: end the watch when nothing arrived for this long. */
  readonly inactivityMs: number;
  readonly onOpen?: () => void;
}

/** What a caller of `Transport.send` controls beyond the request itself. */
interface SendControl {
  readonly signal?: AbortSignal;
  /** On a new connection closed after the answer (`RequestOptions.freshConnection`). */
  readonly fresh?: boolean;
  /** Runs at the moment the request would be written; throwing refuses it (nothing is sent). */
  readonly beforeSend?: () => void;
}

/**
 * Whether a client TLS socket finished its handshake (a reused keep-alive socket has). Node has no public
 * flag (`getProtocol()` answers before the handshake too); `_secureEstablished` is the one its TLS layer sets.
 */
function isHandshakeDone(socket: TLSSocket): boolean {
  return (socket as unknown as { _secureEstablished?: boolean })._secureEstablished !== false;
}

function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new DOMException('request aborted', 'AbortError');
}

/**
 * The runtime's only way to the API server. Built on client-node's KubeConfig (authentication, TLS
 * settings) and Node's own http client (Transport), generic over `ResourceType`, so one code path
 * knows the (group, resource, verb) of each call: it reports it to `onAccess` and, with `enforce`, refuses
 * calls that src/contracts/permissions.ts does not declare. Objects stay plain JSON.
 * Every patch names its patch type (`PatchStrategy`); there is no default.
 */
export class KubeClient {
  private transport: Transport;
  private readonly listeners: AccessListener[] = [];

  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly options: KubeClientOptions = {},
  ) {
    this.transport = new Transport(kubeConfig);
    if (options.onAccess) this.listeners.push(options.onAccess);
  }

  /**
   * A client sharing this one's transport and listeners whose writes pass only while `fence` is open, and
   * whose requests are all aborted when the fence's term signal aborts.
   */
  fenced(fence: WriteFence): KubeClient {
    const c = new KubeClient(this.kubeConfig, { ...this.options, onAccess: undefined, fence });
    c.listeners.push(...this.listeners);
    c.transport = this.transport;
    return c;
  }

  /** Adds a listener for every call (used by tests to collect accesses). */
  addAccessListener(l: AccessListener): void {
    this.listeners.push(l);
  }

  /** Refuses a call the declared permissions do not cover, or a write through a closed fence. */
  private check(access: ApiAccess): void {
    if (this.options.fence && WRITE_VERBS.has(access.verb) && !this.options.fence.mayWrite()) throw new FencedError(access);
    const p = this.options.permissions;
    if (p?.enforce && !findCoveringRule(access, p.scopes)) {
      throw new Error(
        `undeclared Kubernetes API call ${access.verb} ${access.apiGroup || 'core'}/${access.resource}` +
          `${access.namespace ? ` in ${access.namespace}` : ''}: add a rule to src/contracts/permissions.ts`,
      );
    }
  }

  private record(access: ApiAccess): void {
    this.check(access);
    this.notify(access);
  }

  private notify(access: ApiAccess): void {
    for (const l of this.listeners) l(access);
  }

  private async send<T>(
    verb: Verb,
    method: HttpMethod,
    type: ResourceType,
    where: { namespace?: string; name?: string; subresource?: string; selectedName?: string },
    query: Record<string, string | number | boolean | undefined> = {},
    body?: unknown,
    contentType?: string,
    opts: RequestOptions = {},
  ): Promise<T> {
    const name = where.name ?? where.selectedName;
    const access: ApiAccess = {
      apiGroup: type.group,
      resource: where.subresource ? `${type.resource}/${where.subresource}` : type.resource,
      verb,
      ...(type.namespaced && where.namespace !== undefined ? { namespace: where.namespace } : {}),
      ...(name !== undefined ? { name } : {}),
    };
    this.check(access);
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server + resourcePath(type, where.namespace, where.name, where.subresource));
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const fence = this.options.fence;
    const write = WRITE_VERBS.has(verb);
    const term = fence?.signal?.();
    const signal = term && opts.signal ? AbortSignal.any([term, opts.signal]) : (term ?? opts.signal);
    const { status, text } = await this.transport.send(
      method,
      url.toString(),
      body !== undefined ? goJson(body) : undefined,
      contentType,
      this.options.requestTimeoutMs ?? 30_000,
      {
        ...(signal ? { signal } : {}),
        ...(opts.freshConnection ? { fresh: true } : {}),
        // Listeners hear of a call when it is written, so an access log shows what actually left the process.
        beforeSend: () => {
          if (write && fence && !fence.mayWrite()) throw new FencedError(access, 'the leader fence closed before it was sent');
          if (opts.maySend && !opts.maySend())
            throw new DOMException(`${verb} ${access.resource}: its time ran out before it was sent`, 'TimeoutError');
          this.notify(access);
        },
      },
    );
    const parsed = text ? safeJson(text) : undefined;
    if (status >= 300) {
      const st = (parsed ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(status, st.reason ?? 'Unknown', st.message ?? text.slice(0, 300), access, parsed);
    }
    return parsed as T;
  }

  get<T extends KubeObject>(type: ResourceType, name: string, namespace?: string, opts: RequestOptions = {}): Promise<T> {
    return this.send('get', HttpMethod.GET, type, { namespace, name }, {}, undefined, undefined, opts);
  }

  list<T extends KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const { namespace, ...q } = opts;
    return this.send('list', HttpMethod.GET, type, { namespace, selectedName: nameFromFieldSelector(q.fieldSelector) }, q);
  }

  create<T extends KubeObject>(type: ResourceType, obj: T, namespace = obj.metadata.namespace, opts: RequestOptions = {}): Promise<T> {
    return this.send('create', HttpMethod.POST, type, { namespace }, {}, obj, undefined, opts);
  }

  /** PUT of the whole object (optimistic concurrency through metadata.resourceVersion). */
  update<T extends KubeObject>(type: ResourceType, obj: T, subresource?: string, opts: RequestOptions = {}): Promise<T> {
    return this.send(
      'update',
      HttpMethod.PUT,
      type,
      {
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
        subresource,
      },
      {},
      obj,
      undefined,
      opts,
    );
  }

  patch<T extends KubeObject>(
    type: ResourceType,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    patchType: PatchType,
    opts: { subresource?: string; fieldManager?: string; force?: boolean } = {},
  ): Promise<T> {
    return this.send(
      'patch',
      HttpMethod.PATCH,
      type,
      { namespace, name, subresource: opts.subresource },
      { fieldManager: opts.fieldManager, force: opts.force },
      patch,
      patchType,
    );
  }

  delete(type: ResourceType, name: string, namespace?: string, opts: { gracePeriodSeconds?: number } = {}): Promise<unknown> {
    return this.send(
      'delete',
      HttpMethod.DELETE,
      type,
      { namespace, name },
      {},
      {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
      },
    );
  }

  /**
   * Starts a watch; `onEvent` gets each event, `onDone` the end (null on a clean close; a `TimeoutError`
   * when it was given up). Returns the AbortController that stops it. With `timeoutSeconds`, a watch the
   * API server has not ended `WATCH_LIVENESS.abortAfterMs` after that timeout is presumed on a dead
   * connection and reset (watch-liveness.ts); `onOpen` runs once the server accepted it.
   */
  async watch(
    type: ResourceType,
    opts: WatchOptions,
    onEvent: (type: WatchEventType, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
    hooks: { onOpen?: () => void; /** Overrides the deadline derived from `timeoutSeconds`. */ deadlineMs?: number } = {},
  ): Promise<AbortController> {
    const { namespace, ...q } = opts;
    const name = nameFromFieldSelector(q.fieldSelector);
    this.record({
      apiGroup: type.group,
      resource: type.resource,
      verb: 'watch',
      ...(type.namespaced && namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
    });
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server + resourcePath(type, namespace));
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(q)) if (v !== undefined) url.searchParams.set(k, String(v));
    const timing: WatchTiming = {
      inactivityMs: WATCH_INACTIVITY_MS,
      ...(hooks.deadlineMs !== undefined
        ? { deadlineMs: hooks.deadlineMs }
        : q.timeoutSeconds !== undefined
          ? { deadlineMs: watchAbortAfterMs(q.timeoutSeconds) }
          : {}),
      ...(hooks.onOpen ? { onOpen: hooks.onOpen } : {}),
    };
    return this.transport.watch(url.toString(), timing, (t, obj) => onEvent(t as WatchEventType, obj), onDone);
  }
}

/**
 * The object a list or watch is confined to by a `metadata.name=<name>` field selector. The API server's
 * authorizer treats such a request as one on that name, so RBAC `resourceNames` can allow it; the access
 * record carries the name so the declared-permission check agrees. Only a selector with that one term
 * counts (a conservative subset of what the API server accepts).
 */
export function nameFromFieldSelector(selector: string | undefined): string | undefined {
  const m = /^metadata\.name==?([^,=!]+)$/.exec(selector?.trim() ?? '');
  return m?.[1];
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 300) };
  }
}

/** Loads the kubeconfig: `--kubeconfig` path, else in-cluster service account, else KUBECONFIG/default. */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

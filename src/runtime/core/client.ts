// client-node's modules one by one, not its index: the index pulls in every generated API class and
// model (~1,000 classes the runtime never uses), which the manager would load and keep (memory).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { HttpMethod, RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import { IsomorphicFetchHttpLibrary } from '@kubernetes/client-node/dist/gen/http/isomorphic-fetch.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { Watch } from '@kubernetes/client-node/dist/watch.js';
import type { ApiAccess, PermissionScope, Verb } from '../../contracts/index.js';
import { findCoveringRule } from '../../contracts/index.js';
import { resourcePath, type ResourceType } from '../../contracts/index.js';
import type { KubeList, KubeObject } from './types.js';

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
   * Write fence: when it returns false, create/update/patch/delete are refused before they are sent.
   * Controllers get a client fenced on leadership, so a replica that lost its lease cannot write even
   * from a reconcile that was already running.
   */
  readonly fence?: () => boolean;
}

const WRITE_VERBS: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

/** Thrown instead of sending a write through a closed fence. */
export class FencedError extends Error {
  constructor(access: ApiAccess) {
    super(`refused ${access.verb} ${access.resource}: this replica is not the leader`);
    this.name = 'FencedError';
  }
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

/** Watches idle longer than client-node's 30 s default on quiet clusters; bookmarks keep them alive. */
const WATCH_INACTIVITY_MS = 5 * 60_000;

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * How requests reach the API server, shared by a client and its fenced copies. client-node 2.0 builds a new
 * undici Agent (a new TLS connection), decodes the certificates and re-reads file-backed credentials for
 * every request (`applySecurityAuthentication`); under a burst that was a tenth of the controller's CPU
 * (bench/terminator-peer.bench.ts, CPU profile). Here the first dispatcher is kept for every call (so calls
 * share its keep-alive connection; the TLS transport, CA and client certificate, is fixed at start) and the
 * headers client-node computes are reused for AUTH_REFRESH_MS.
 */
class Transport {
  /** null: the kubeconfig needs no TLS dispatcher (plain HTTP): client-node's own transport is used. */
  private dispatcher?: Dispatcher | null;
  private auth?: { headers: Record<string, string>; at: number };
  private loading?: Promise<void>;
  private readonly http = new IsomorphicFetchHttpLibrary();

  constructor(private readonly kubeConfig: KubeConfig) {}

  private refresh(): Promise<void> {
    this.loading ??= (async () => {
      const cluster = this.kubeConfig.getCurrentCluster();
      if (!cluster) throw new Error('kubeconfig has no current cluster');
      const ctx = new RequestContext(cluster.server, HttpMethod.GET);
      await this.kubeConfig.applySecurityAuthentication(ctx);
      const fresh = ctx.getDispatcher();
      if (this.dispatcher === undefined) this.dispatcher = fresh ?? null;
      else if (fresh && fresh !== this.dispatcher) void fresh.close().catch(() => undefined);
      this.auth = { headers: { ...ctx.getHeaders() }, at: Date.now() };
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async headers(): Promise<Record<string, string>> {
    if (!this.auth || Date.now() - this.auth.at >= AUTH_REFRESH_MS) await this.refresh();
    return this.auth!.headers;
  }

  /**
   * Starts a watch on the shared dispatcher and splits its body into events itself (newline-delimited
   * JSON): client-node's Watch adapts a fetch body to a WHATWG stream, then to a Node stream, then to
   * readline, which cost more than the JSON parsing under a burst of pod updates. Resolves to undefined
   * when there is no dispatcher (plain HTTP): the caller then uses client-node's Watch. `onDone` is called
   * once: null on a clean close, a `TimeoutError` when nothing arrived for `inactivityMs`, an error with
   * `statusCode` on an HTTP error (410 Gone included), or the transport's error.
   */
  async watch(
    url: string,
    inactivityMs: number,
    onEvent: (type: string, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController | undefined> {
    const headers = { ...(await this.headers()), Accept: 'application/json' };
    if (!this.dispatcher) return undefined;
    const controller = new AbortController();
    let timedOut = false;
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      controller.abort();
      onDone(err && timedOut ? new DOMException('watch inactive', 'TimeoutError') : err);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new DOMException('watch inactive', 'TimeoutError'));
      }, inactivityMs);
      timer.unref();
    };
    arm();
    const u = new URL(url);
    this.dispatcher
      .request({ origin: u.origin, path: u.pathname + u.search, method: HttpMethod.GET, headers, signal: controller.signal })
      .then(async (res) => {
        if (res.statusCode !== 200) {
          const text = await res.body.text().catch(() => '');
          if (res.statusCode === 401) this.auth = undefined;
          const err = new Error(`watch ${u.pathname}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`) as Error & { statusCode: number };
          err.statusCode = res.statusCode;
          finish(err);
          return;
        }
        arm();
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
        res.body.on('data', (chunk: Buffer) => {
          if (finished) return;
          arm();
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
        res.body.on('end', () => finish(null));
        res.body.on('error', finish);
        res.body.on('close', () => finish(null));
      })
      .catch(finish);
    return controller;
  }

  /** Sends one request; a 401 with cached credentials refreshes them and sends it once more. */
  async send(
    method: HttpMethod,
    url: string,
    body: string | undefined,
    contentType: string | undefined,
    timeoutMs: number,
  ): Promise<{ status: number; text: string }> {
    for (let attempt = 0; ; attempt++) {
      let refreshed = false;
      if (!this.auth || attempt > 0 || Date.now() - this.auth.at >= AUTH_REFRESH_MS) {
        await this.refresh();
        refreshed = true;
      }
      const res = await this.transmit(method, url, body, contentType, timeoutMs);
      if (res.status === 401 && !refreshed) continue;
      return res;
    }
  }

  /**
   * Sends with undici's `request` on the shared dispatcher rather than client-node's fetch: fetch's
   * Request objects, WHATWG streams and signal plumbing cost more controller CPU per call than the
   * rest of a reconcile, so under a burst (1,000 pods finishing together) reconciles queued on the
   * event loop (bench/sidecarterminator.bench.ts). Without a dispatcher (plain-HTTP kubeconfigs)
   * client-node's own transport is used.
   */
  private async transmit(
    method: HttpMethod,
    url: string,
    body: string | undefined,
    contentType: string | undefined,
    timeoutMs: number,
  ): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { ...this.auth!.headers, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = contentType ?? 'application/json';
    if (!this.dispatcher) {
      const ctx = new RequestContext(url, method);
      for (const [k, v] of Object.entries(headers)) ctx.setHeaderParam(k, v);
      if (body !== undefined) ctx.setBody(body);
      ctx.setSignal(AbortSignal.timeout(timeoutMs));
      const res = await this.http.send(ctx).toPromise();
      return { status: res.httpStatusCode, text: await res.body.text() };
    }
    const u = new URL(url);
    // undici's own timeouts (answer headers, then each body chunk, within timeoutMs) rather than an
    // AbortSignal.timeout per call: a timer, a signal and its listeners per request showed in the profile.
    const res = await this.dispatcher.request({
      origin: u.origin,
      path: u.pathname + u.search,
      method,
      headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return { status: res.statusCode, text: await res.body.text() };
  }
}

/**
 * The runtime's only way to the API server. Built on client-node's own transport (KubeConfig
 * authentication, its undici dispatcher, its Watch) but generic over `ResourceType`, so one code path
 * knows the (group, resource, verb) of each call: it reports it to `onAccess` and, with `enforce`, refuses
 * calls that src/contracts/permissions.ts does not declare. Objects stay plain JSON.
 * Every patch names its patch type (`PatchStrategy`); there is no default.
 */
export class KubeClient {
  private transport: Transport;
  private readonly watcher: Watch;
  private readonly listeners: AccessListener[] = [];

  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly options: KubeClientOptions = {},
  ) {
    this.transport = new Transport(kubeConfig);
    this.watcher = new Watch(kubeConfig);
    (this.watcher as unknown as { requestTimeoutMs: number }).requestTimeoutMs = WATCH_INACTIVITY_MS;
    if (options.onAccess) this.listeners.push(options.onAccess);
  }

  /** A client sharing this one's transport and listeners whose writes pass only while `fence()` is true. */
  fenced(fence: () => boolean): KubeClient {
    const c = new KubeClient(this.kubeConfig, { ...this.options, onAccess: undefined, fence });
    c.listeners.push(...this.listeners);
    c.transport = this.transport;
    return c;
  }

  /** Adds a listener for every call (used by tests to collect accesses). */
  addAccessListener(l: AccessListener): void {
    this.listeners.push(l);
  }

  private record(access: ApiAccess): void {
    if (this.options.fence && WRITE_VERBS.has(access.verb) && !this.options.fence()) throw new FencedError(access);
    const p = this.options.permissions;
    if (p?.enforce && !findCoveringRule(access, p.scopes)) {
      throw new Error(
        `undeclared Kubernetes API call ${access.verb} ${access.apiGroup || 'core'}/${access.resource}` +
          `${access.namespace ? ` in ${access.namespace}` : ''}: add a rule to src/contracts/permissions.ts`,
      );
    }
    for (const l of this.listeners) l(access);
  }

  private async send<T>(
    verb: Verb,
    method: HttpMethod,
    type: ResourceType,
    where: { namespace?: string; name?: string; subresource?: string },
    query: Record<string, string | number | boolean | undefined> = {},
    body?: unknown,
    contentType?: string,
  ): Promise<T> {
    const access: ApiAccess = {
      apiGroup: type.group,
      resource: where.subresource ? `${type.resource}/${where.subresource}` : type.resource,
      verb,
      ...(type.namespaced && where.namespace !== undefined ? { namespace: where.namespace } : {}),
      ...(where.name !== undefined ? { name: where.name } : {}),
    };
    this.record(access);
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server + resourcePath(type, where.namespace, where.name, where.subresource));
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const { status, text } = await this.transport.send(
      method,
      url.toString(),
      body !== undefined ? goJson(body) : undefined,
      contentType,
      this.options.requestTimeoutMs ?? 30_000,
    );
    const parsed = text ? safeJson(text) : undefined;
    if (status >= 300) {
      const st = (parsed ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(status, st.reason ?? 'Unknown', st.message ?? text.slice(0, 300), access, parsed);
    }
    return parsed as T;
  }

  get<T extends KubeObject>(type: ResourceType, name: string, namespace?: string): Promise<T> {
    return this.send('get', HttpMethod.GET, type, { namespace, name });
  }

  list<T extends KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const { namespace, ...q } = opts;
    return this.send('list', HttpMethod.GET, type, { namespace }, q);
  }

  create<T extends KubeObject>(type: ResourceType, obj: T, namespace = obj.metadata.namespace): Promise<T> {
    return this.send('create', HttpMethod.POST, type, { namespace }, {}, obj);
  }

  /** PUT of the whole object (optimistic concurrency through metadata.resourceVersion). */
  update<T extends KubeObject>(type: ResourceType, obj: T, subresource?: string): Promise<T> {
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
   * Starts a watch; `onEvent` gets each event, `onDone` the end (null on a clean close). Returns the
   * AbortController that stops it.
   */
  async watch(
    type: ResourceType,
    opts: WatchOptions,
    onEvent: (type: WatchEventType, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    const { namespace, ...q } = opts;
    this.record({
      apiGroup: type.group,
      resource: type.resource,
      verb: 'watch',
      ...(type.namespaced && namespace !== undefined ? { namespace } : {}),
    });
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server + resourcePath(type, namespace));
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(q)) if (v !== undefined) url.searchParams.set(k, String(v));
    const own = await this.transport.watch(url.toString(), WATCH_INACTIVITY_MS, (t, obj) => onEvent(t as WatchEventType, obj), onDone);
    if (own) return own;
    return this.watcher.watch(
      resourcePath(type, namespace),
      q,
      (t: string, obj: KubeObject) => onEvent(t as WatchEventType, obj),
      (err: unknown) => onDone(err ?? null),
    );
  }
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

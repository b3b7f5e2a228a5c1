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
 * The runtime's only way to the API server. Built on client-node's own transport (KubeConfig
 * authentication, its undici dispatcher, its Watch) but generic over `ResourceType`, so one code path
 * knows the (group, resource, verb) of each call: it reports it to `onAccess` and, with `enforce`, refuses
 * calls that src/contracts/permissions.ts does not declare. Objects stay plain JSON.
 * Every patch names its patch type (`PatchStrategy`); there is no default.
 */
export class KubeClient {
  private readonly http = new IsomorphicFetchHttpLibrary();
  private readonly watcher: Watch;
  private readonly listeners: AccessListener[] = [];
  private dispatcher?: ReturnType<RequestContext['getDispatcher']>;

  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly options: KubeClientOptions = {},
  ) {
    this.watcher = new Watch(kubeConfig);
    // Watches idle longer than client-node's 30 s default on quiet clusters; bookmarks keep them alive.
    (this.watcher as unknown as { requestTimeoutMs: number }).requestTimeoutMs = 5 * 60_000;
    if (options.onAccess) this.listeners.push(options.onAccess);
  }

  /** A client sharing this one's transport and listeners whose writes pass only while `fence()` is true. */
  fenced(fence: () => boolean): KubeClient {
    const c = new KubeClient(this.kubeConfig, { ...this.options, onAccess: undefined, fence });
    c.listeners.push(...this.listeners);
    c.dispatcher = this.dispatcher;
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

  /**
   * client-node 2.0 builds a new undici Agent (so a new TLS connection) for every request; reuse the
   * first one so calls share keep-alive connections. Authentication headers (tokens) are still applied
   * per request; only the TLS transport (CA, client certificate) is kept.
   */
  private reuseDispatcher(ctx: RequestContext): void {
    const fresh = ctx.getDispatcher();
    if (!fresh) return;
    if (!this.dispatcher) this.dispatcher = fresh;
    else if (fresh !== this.dispatcher) void fresh.close().catch(() => undefined);
    ctx.setDispatcher(this.dispatcher);
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
    const ctx = new RequestContext(url.toString(), method);
    ctx.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      ctx.setHeaderParam('Content-Type', contentType ?? 'application/json');
      ctx.setBody(goJson(body));
    }
    ctx.setSignal(AbortSignal.timeout(this.options.requestTimeoutMs ?? 30_000));
    await this.kubeConfig.applySecurityAuthentication(ctx);
    this.reuseDispatcher(ctx);
    const { status, text } = await this.transmit(ctx);
    const parsed = text ? safeJson(text) : undefined;
    if (status >= 300) {
      const st = (parsed ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(status, st.reason ?? 'Unknown', st.message ?? text.slice(0, 300), access, parsed);
    }
    return parsed as T;
  }

  /**
   * Sends with undici's `request` on the shared dispatcher rather than client-node's fetch: fetch's
   * Request objects, WHATWG streams and signal plumbing cost more controller CPU per call than the
   * rest of a reconcile, so under a burst (1,000 pods finishing together) reconciles queued on the
   * event loop (bench/sidecarterminator.bench.ts). Without a dispatcher (plain-HTTP kubeconfigs)
   * client-node's own transport is used as before.
   */
  private async transmit(ctx: RequestContext): Promise<{ status: number; text: string }> {
    const dispatcher = ctx.getDispatcher();
    if (!dispatcher) {
      const res = await this.http.send(ctx).toPromise();
      return { status: res.httpStatusCode, text: await res.body.text() };
    }
    const url = new URL(ctx.getUrl());
    const body = ctx.getBody();
    const res = await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: ctx.getHttpMethod(),
      headers: ctx.getHeaders(),
      body: typeof body === 'string' ? body : undefined,
      signal: ctx.getSignal(),
    });
    return { status: res.statusCode, text: await res.body.text() };
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

import type { Logger } from 'pino';
import { isGone, type KubeClient, type WatchEventType } from './client.js';
import type { ResourceType } from '../../contracts/index.js';
import { objectKey, type KubeObject } from './types.js';
import { Backoff } from './backoff.js';
import type { CachePlan } from './cache-plan.js';
import { pickWatchTimeoutSeconds, WATCH_LIVENESS, watchAbortAfterMs, watchVerdict, type WatchLivenessSettings } from './watch-liveness.js';

export type Transform<T extends KubeObject> = (obj: KubeObject) => T;

/**
 * The index values of one cached object (e.g. its controller's uid, its node name); an object with none is
 * not in the index. Pure and cheap: it runs for every stored object on every event.
 */
export type IndexFunc<T extends KubeObject> = (obj: T) => readonly string[];

/** One named index: value → keys of the cached objects with that value, and each object's values. */
interface Index<T extends KubeObject> {
  /** Method syntax keeps `Informer<Pod>` assignable to `Informer<KubeObject>`, as the handlers' methods do. */
  fn(obj: T): readonly string[];
  readonly byValue: Map<string, Set<string>>;
  readonly valuesOf: Map<string, readonly string[]>;
}

export interface InformerHandlers<T> {
  add?(obj: T): void;
  /** Also called on resync with `old === obj`. */
  update?(obj: T, old: T): void;
  delete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Applied to every object before it is cached: drop what no reader needs (memory). */
  readonly transform?: Transform<T>;
  /** Period to replay every cached object as an update (0 = never). */
  readonly resyncMs?: number;
  /** Page size of the initial/recovery list. */
  readonly pageSize?: number;
  readonly logger: Logger;
  /** Minimum/maximum delay between retries after a failed list or watch. */
  readonly backoffMinMs?: number;
  readonly backoffMaxMs?: number;
  /** When a watch is presumed dead (tests shorten it); default WATCH_LIVENESS. */
  readonly liveness?: WatchLivenessSettings;
  /** Monotonic milliseconds (injectable for tests); default performance.now. */
  readonly now?: () => number;
}

/** Drops fields no reader uses, as client-go's cache transforms do (managedFields is the big one). */
export function stripManagedFields<T extends KubeObject>(obj: KubeObject): T {
  const md = obj.metadata;
  if (md) {
    delete md.managedFields;
    if (md.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] !== undefined) {
      delete md.annotations['kubectl.kubernetes.io/last-applied-configuration'];
    }
  }
  return obj as T;
}

/**
 * List+watch reflector with an in-memory cache (client-go's shared informer, reduced to what we use):
 * paged list, watch from the list's resourceVersion with bookmarks, relist on 410 Gone (diffing so
 * vanished objects are delivered as deletes), restart with jittered exponential backoff on any other
 * watch or list error, periodic resync, `waitForSync`. Each watch asks the server to end it within 25–30 s;
 * one left open past that is on a dead connection: it fails readiness (`watchProblem`), is reset and
 * replaced by a new watch on a fresh connection (watch-liveness.ts).
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly indexes = new Map<string, Index<T>>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private resourceVersion = '';
  /** Bumped whenever a watch is replaced, so callbacks of an aborted watch are ignored. */
  private generation = 0;
  private synced = false;
  private stopped = true;
  private abort?: AbortController;
  private retryTimer?: NodeJS.Timeout;
  private resyncTimer?: NodeJS.Timeout;
  private readonly syncWaiters: Array<() => void> = [];
  private readonly backoff: Backoff;
  private readonly transform: Transform<T>;
  private readonly liveness: WatchLivenessSettings;
  private readonly now: () => number;
  /** The watch in flight (sent, not yet ended), judged by its server deadline. */
  private current?: { sentAt: number; timeoutSeconds: number };
  /** Why the last watch was given up as dead; cleared once a new watch is accepted or a list succeeds. */
  private dead?: string;
  /** Counts for metrics/tests. */
  readonly stats = { lists: 0, watches: 0, watchErrors: 0, relists410: 0, deadWatches: 0 };

  constructor(
    private readonly client: KubeClient,
    readonly type: ResourceType,
    private readonly options: InformerOptions<T>,
  ) {
    this.backoff = new Backoff(options.backoffMinMs ?? 250, options.backoffMaxMs ?? 30_000);
    this.transform = options.transform ?? stripManagedFields;
    this.liveness = options.liveness ?? WATCH_LIVENESS;
    this.now = options.now ?? (() => performance.now());
  }

  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
    // Late registrations see the current cache as adds, like client-go's AddEventHandler.
    if (this.synced) for (const o of this.store.values()) h.add?.(o);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /**
   * Adds a named index over the cache (controller-runtime's field index): from now on every add, update,
   * delete and relist keeps it current before the handlers run, so a handler or reconcile reading
   * `byIndex` sees the object it was called for. Objects already cached are indexed at once. Informers are
   * shared, so two readers may register the same name with the same function; another function under a
   * taken name is refused.
   */
  addIndex(name: string, fn: IndexFunc<T>): void {
    const existing = this.indexes.get(name);
    if (existing) {
      if (existing.fn === fn) return;
      throw new Error(`informer ${this.type.resource}: index ${JSON.stringify(name)} is already defined by another function`);
    }
    const index: Index<T> = { fn, byValue: new Map(), valuesOf: new Map() };
    this.indexes.set(name, index);
    for (const [key, obj] of this.store) this.indexObject(index, name, key, obj);
  }

  /** The cached objects whose index `name` holds `value` (in no particular order). */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`informer ${this.type.resource}: no index ${JSON.stringify(name)} (addIndex it before reading)`);
    const keys = index.byValue.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.store.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Stores `obj` under `key` and moves it in every index to its current values. */
  private put(key: string, obj: T): void {
    this.store.set(key, obj);
    for (const [name, index] of this.indexes) this.indexObject(index, name, key, obj);
  }

  /** Drops `key` from the store and every index. */
  private remove(key: string): void {
    this.store.delete(key);
    for (const index of this.indexes.values()) this.unindex(index, key);
  }

  private indexObject(index: Index<T>, name: string, key: string, obj: T): void {
    let values: readonly string[];
    try {
      values = [...new Set(index.fn(obj))];
    } catch (err) {
      // One object the function cannot read must not stop the cache; it is left out of this index.
      this.log().error({ resource: this.type.resource, index: name, key, err: errText(err) }, 'index function threw');
      values = [];
    }
    const before = index.valuesOf.get(key);
    if (before && before.length === values.length && before.every((v, i) => v === values[i])) return;
    this.unindex(index, key);
    if (values.length === 0) return;
    index.valuesOf.set(key, values);
    for (const v of values) {
      let keys = index.byValue.get(v);
      if (!keys) index.byValue.set(v, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(index: Index<T>, key: string): void {
    const before = index.valuesOf.get(key);
    if (!before) return;
    index.valuesOf.delete(key);
    for (const v of before) {
      const keys = index.byValue.get(v);
      keys?.delete(key);
      if (keys?.size === 0) index.byValue.delete(v);
    }
  }

  list(): T[] {
    return [...this.store.values()];
  }

  get size(): number {
    return this.store.size;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * The resourceVersion the cache has reached (its last list, watch event or bookmark): every event up to
   * it has been delivered to the handlers.
   */
  get lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  /**
   * Why this informer's cache may be going stale for want of a live watch, or undefined: its watch outlived
   * the server's deadline (presumed on a dead connection), or the last one was given up as dead and no new
   * one was accepted yet. For readiness; a synced informer between two healthy watches has no problem.
   */
  watchProblem(now = this.now()): string | undefined {
    if (this.stopped || !this.synced) return undefined;
    if (this.dead) return this.dead;
    const w = this.current;
    if (!w || watchVerdict(w.sentAt, w.timeoutSeconds, now, this.liveness) === 'live') return undefined;
    const late = Math.round((now - w.sentAt) / 1000 - w.timeoutSeconds);
    return `watch of ${this.type.resource} open ${late}s past its ${w.timeoutSeconds}s server timeout: connection presumed dead`;
  }

  /** Resolves once the first list has filled the cache (rejects if `signal` aborts first). */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => resolve();
      this.syncWaiters.push(done);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rejects with the signal's own reason, as fetch and timers do
      signal?.addEventListener('abort', () => reject(signal.reason ?? new Error('aborted')), { once: true });
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.relist();
    const resync = this.options.resyncMs ?? 0;
    if (resync > 0) {
      this.resyncTimer = setInterval(() => this.resync(), resync);
      this.resyncTimer.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    this.current = undefined;
    this.dead = undefined;
    this.generation++;
    this.abort?.abort();
    this.abort = undefined;
    clearTimeout(this.retryTimer);
    clearInterval(this.resyncTimer);
  }

  private log() {
    return this.options.logger;
  }

  private retry(what: () => Promise<void> | void, err: unknown, phase: string): void {
    if (this.stopped) return;
    const delay = this.backoff.next();
    this.log().warn({ resource: this.type.resource, phase, err: errText(err), retryInMs: delay }, 'informer retry');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void what(), delay);
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    this.generation++;
    this.abort?.abort();
    try {
      const fresh = new Map<string, T>();
      let cont: string | undefined;
      let rv = '';
      do {
        this.stats.lists++;
        const page = await this.client.list(this.type, {
          namespace: this.options.namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
          limit: this.options.pageSize ?? 500,
          continue: cont,
        });
        for (const item of page.items) {
          // An object the cache holds at the same version is kept as it is: a relist after an expired watch then
          // holds one copy of what did not change, not two until the swap (100,000 pods would need twice their
          // heap for that moment), and skips their transform.
          const key = objectKey(item);
          const cached = this.store.get(key);
          if (
            cached !== undefined &&
            cached.metadata.resourceVersion === item.metadata.resourceVersion &&
            cached.metadata.uid === item.metadata.uid
          ) {
            fresh.set(key, cached);
            continue;
          }
          // List items carry no apiVersion/kind; set them so handlers see the same shape as watch events.
          item.apiVersion ??= page.apiVersion;
          item.kind ??= page.kind?.replace(/List$/, '');
          // The transform keeps the name and namespace, so the key computed above is the cached object's too.
          fresh.set(key, this.transform(item));
        }
        cont = page.metadata.continue || undefined;
        rv = page.metadata.resourceVersion ?? rv;
      } while (cont);
      if (this.stopped) return;
      this.replace(fresh);
      this.resourceVersion = rv;
      this.dead = undefined;
      this.backoff.reset();
      if (!this.synced) {
        this.synced = true;
        for (const w of this.syncWaiters.splice(0)) w();
      }
      void this.watch();
    } catch (err) {
      this.retry(() => this.relist(), err, 'list');
    }
  }

  private replace(fresh: Map<string, T>): void {
    const old = new Map(this.store);
    // The cache takes the list's order, as before indexes existed.
    this.store.clear();
    for (const k of old.keys()) if (!fresh.has(k)) this.remove(k);
    for (const [k, o] of fresh) this.put(k, o);
    for (const [k, o] of fresh) {
      const prev = old.get(k);
      if (!prev) this.emit('add', o);
      else if (prev.metadata.resourceVersion !== o.metadata.resourceVersion) this.emit('update', o, prev);
    }
    for (const [k, o] of old) if (!fresh.has(k)) this.emit('delete', o);
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    this.stats.watches++;
    const gen = ++this.generation;
    const timeoutSeconds = pickWatchTimeoutSeconds(this.liveness);
    this.current = { sentAt: this.now(), timeoutSeconds };
    let finished = false;
    const finish = (err: unknown) => {
      if (finished || this.stopped || gen !== this.generation) return;
      finished = true;
      this.current = undefined;
      if (err && isTimeout(err)) {
        // The server did not end the watch by its deadline: the connection is dead (the client reset it).
        // Watch again at once on a fresh connection, from the last resourceVersion (a 410 then relists).
        this.stats.deadWatches++;
        this.dead = `watch of ${this.type.resource} gave no sign of life ${timeoutSeconds}s after it was sent: connection presumed dead, watching again`;
        this.log().warn({ resource: this.type.resource, timeoutSeconds }, 'watch connection presumed dead; watching again');
        void this.watch();
      } else if (err && isGone(err)) {
        this.stats.relists410++;
        void this.relist();
      } else if (err) {
        this.stats.watchErrors++;
        this.retry(() => this.watch(), err, 'watch');
      } else {
        // Clean close (the server's timeout): resume from the last resourceVersion.
        void this.watch();
      }
    };
    try {
      this.abort = await this.client.watch(
        this.type,
        {
          namespace: this.options.namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
          resourceVersion: this.resourceVersion,
          // The server sends a bookmark before it ends the watch, so the next one resumes from a fresh version.
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        (type, obj) => {
          if (finished || gen !== this.generation) return;
          if (type === 'ERROR') {
            const code = (obj as unknown as { code?: number }).code;
            const ab = this.abort;
            finish(code === 410 ? { statusCode: 410 } : new Error(`watch error event: ${JSON.stringify(obj).slice(0, 200)}`));
            ab?.abort();
            return;
          }
          this.backoff.reset();
          this.onWatchEvent(type, obj);
        },
        finish,
        {
          deadlineMs: watchAbortAfterMs(timeoutSeconds, this.liveness),
          onOpen: () => {
            if (gen === this.generation) this.dead = undefined;
          },
        },
      );
    } catch (err) {
      finish(err);
    }
  }

  private onWatchEvent(type: WatchEventType, raw: KubeObject): void {
    const rv = raw.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (type === 'BOOKMARK') return;
    const obj = this.transform(raw);
    const key = objectKey(obj);
    const prev = this.store.get(key);
    if (type === 'DELETED') {
      this.remove(key);
      this.emit('delete', prev ?? obj);
      return;
    }
    this.put(key, obj);
    if (prev) this.emit('update', obj, prev);
    else this.emit('add', obj);
  }

  /** Replays every cached object as an update (periodic resync; also after a replica becomes leader). */
  resync(): void {
    if (!this.synced) return;
    for (const o of this.store.values()) this.emit('update', o, o);
  }

  private emit(ev: 'add' | 'update' | 'delete', obj: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        if (ev === 'add') h.add?.(obj);
        else if (ev === 'update') h.update?.(obj, old as T);
        else h.delete?.(obj);
      } catch (err) {
        this.log().error({ resource: this.type.resource, err: errText(err) }, 'informer handler threw');
      }
    }
  }
}

function isTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: string }).name === 'TimeoutError';
}

function errText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return JSON.stringify(err);
}

/** Shares one informer per (resource, namespace, selectors) between controllers and webhooks. */
export class InformerFactory {
  private readonly informers = new Map<string, Informer<KubeObject>>();

  /**
   * @param plan what the registered controllers declared they read; with it every resource gets one
   * transform (the union of its readers' fields) and undeclared resources are refused. Without it (tools
   * and tests that build informers directly) objects are cached whole, less managedFields.
   */
  constructor(
    private readonly client: KubeClient,
    private readonly logger: Logger,
    private readonly defaults: { resyncMs?: number } = {},
    private readonly plan?: CachePlan,
  ) {}

  for<T extends KubeObject>(type: ResourceType, opts: Omit<InformerOptions<T>, 'logger' | 'transform'> = {}): Informer<T> {
    const key = [type.group, type.resource, opts.namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? ''].join('|');
    let inf = this.informers.get(key);
    if (!inf) {
      const transform = this.plan ? (this.plan.for(type).transform as Transform<T>) : undefined;
      inf = new Informer<T>(this.client, type, {
        resyncMs: this.defaults.resyncMs,
        ...opts,
        ...(transform ? { transform } : {}),
        logger: this.logger.child({ informer: type.resource }),
      }) as unknown as Informer<KubeObject>;
      this.informers.set(key, inf);
    }
    return inf as unknown as Informer<T>;
  }

  all(): Informer<KubeObject>[] {
    return [...this.informers.values()];
  }

  startAll(): void {
    for (const i of this.informers.values()) i.start();
  }

  stopAll(): void {
    for (const i of this.informers.values()) i.stop();
  }

  resyncAll(): void {
    for (const i of this.informers.values()) i.resync();
  }

  allSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** The informers' watch problems (see `Informer.watchProblem`), joined; undefined when every watch is live. */
  watchProblems(): string | undefined {
    const problems = [...this.informers.values()].map((i) => i.watchProblem()).filter((p): p is string => p !== undefined);
    return problems.length > 0 ? problems.join('; ') : undefined;
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
  }
}

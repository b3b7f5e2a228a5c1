/**
 * Expectations (controller-runtime / upstream Kruise `pkg/util/expectations`): what a controller has written
 * and must see in its informer caches before it decides again, so it never acts twice on a cache older than
 * its own writes.
 *
 * - Scale expectations are met by the informer's events themselves: a create when an event of that object
 *   was observed (its Add, even if the object is gone again by the next reconcile), a delete when its Delete
 *   was observed (or the object was seen being deleted). Looking the object up in the cache at reconcile time
 *   is not enough: an object created and deleted at once (a user, a descheduler, a stale leader) is never in
 *   the cache, and its create would count as unmet until the timeout.
 * - Resource-version expectations are met once the cached copy of an object is at least as new as the
 *   version a write of ours returned.
 *
 * Past the timeout (upstream's `--expectation-timeout`, 5 minutes) unmet expectations are dropped and
 * reported as leaked.
 */
import type { InformerHandlers } from './informer.js';
import type { KubeObject } from './types.js';

/** Upstream's `--expectation-timeout`: past it, unmet expectations are dropped (and logged). */
export const EXPECTATION_TIMEOUT_MS = 5 * 60_000;

export type ScaleAction = 'create' | 'delete';

interface Pending {
  readonly since: number;
  /** Delete: the uid of the object we deleted (another object of that name does not meet it). */
  readonly uid?: string;
  /** Create: the resourceVersion the create returned, once it returned. */
  rv?: bigint;
}

export interface ScaleCheck {
  readonly ok: boolean;
  /** Names whose expectations timed out and were dropped. */
  readonly leaked: readonly string[];
}

/** Parses a resourceVersion as the integer kube-apiserver makes it (an etcd revision); undefined if it is not one. */
export function parseResourceVersion(rv: string | undefined): bigint | undefined {
  return rv !== undefined && /^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}

/** Creates and deletes a controller expects to observe, per controller key (`namespace/name` of the owner). */
export class ScaleExpectations {
  private readonly byKey = new Map<string, { create: Map<string, Pending>; delete: Map<string, Pending> }>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly timeoutMs = EXPECTATION_TIMEOUT_MS,
  ) {}

  /** Call before the write is sent: its event may arrive before the write's answer. */
  expect(key: string, action: ScaleAction, name: string, uid?: string): void {
    let e = this.byKey.get(key);
    if (!e) this.byKey.set(key, (e = { create: new Map(), delete: new Map() }));
    e[action].set(name, { since: this.now(), ...(uid ? { uid } : {}) });
  }

  /**
   * The create was answered with this resourceVersion. Should the informer skip the object's Add (a relist
   * that no longer finds an object created and deleted since its last watch), a cache that has reached this
   * version also meets the create: every event up to it has been delivered or was never going to be.
   */
  created(key: string, name: string, resourceVersion: string | undefined): void {
    const p = this.byKey.get(key)?.create.get(name);
    const rv = parseResourceVersion(resourceVersion);
    if (p && rv !== undefined) p.rv = rv;
  }

  /** The write failed: nothing will be observed for it. */
  failed(key: string, action: ScaleAction, name: string): void {
    this.drop(key, action, name);
  }

  /** An informer event showed the create happened, or the delete (for `uid`, when the expectation names one). */
  observe(key: string, action: ScaleAction, name: string, uid?: string): void {
    const p = this.byKey.get(key)?.[action].get(name);
    if (!p) return;
    if (action === 'delete' && p.uid && uid && p.uid !== uid) return;
    this.drop(key, action, name);
  }

  /**
   * Whether every expectation of `key` is met. `cacheVersion` is the resourceVersion the informer has
   * reached (see `created`). Timed-out expectations are dropped and returned as leaked.
   */
  satisfied(key: string, cacheVersion?: string): ScaleCheck {
    const e = this.byKey.get(key);
    if (!e) return { ok: true, leaked: [] };
    const now = this.now();
    const reached = parseResourceVersion(cacheVersion);
    const leaked: string[] = [];
    let ok = true;
    for (const [action, m] of [
      ['create', e.create],
      ['delete', e.delete],
    ] as const) {
      for (const [name, p] of m) {
        if (action === 'create' && p.rv !== undefined && reached !== undefined && reached >= p.rv) m.delete(name);
        else if (now - p.since > this.timeoutMs) {
          m.delete(name);
          leaked.push(name);
        } else ok = false;
      }
    }
    if (e.create.size === 0 && e.delete.size === 0) this.byKey.delete(key);
    return { ok, leaked };
  }

  /** Names still expected for `key` (for logs and tests). */
  pending(key: string): { create: string[]; delete: string[] } {
    const e = this.byKey.get(key);
    return { create: [...(e?.create.keys() ?? [])], delete: [...(e?.delete.keys() ?? [])] };
  }

  /** The owner is gone: its expectations go with it. */
  forget(key: string): void {
    this.byKey.delete(key);
  }

  private drop(key: string, action: ScaleAction, name: string): void {
    const e = this.byKey.get(key);
    if (!e) return;
    e[action].delete(name);
    if (e.create.size === 0 && e.delete.size === 0) this.byKey.delete(key);
  }
}

/**
 * Informer handlers that feed scale expectations from the events, as upstream's pod event handler does:
 * any event of an object proves its create happened; its Delete, or an update showing it being deleted,
 * proves the delete. `ownerKey` names the controller key an object belongs to (undefined: none). Resync
 * replays (`old === obj`) carry no news and are skipped.
 */
export function scaleExpectationHandlers<T extends KubeObject>(
  expectations: ScaleExpectations,
  ownerKey: (obj: T) => string | undefined,
): InformerHandlers<T> {
  const seen = (obj: T, deleted: boolean) => {
    const key = ownerKey(obj);
    const name = obj.metadata.name;
    if (!key || !name) return;
    expectations.observe(key, 'create', name);
    if (deleted || obj.metadata.deletionTimestamp) expectations.observe(key, 'delete', name, obj.metadata.uid);
  };
  return {
    add: (obj) => seen(obj, false),
    update: (obj, old) => {
      if (obj === old) return;
      seen(obj, false);
      // An object released to another owner while being deleted still concerns the old owner's delete.
      if (obj.metadata.deletionTimestamp && ownerKey(old) !== ownerKey(obj)) seen(old, true);
    },
    delete: (obj) => seen(obj, true),
  };
}

/**
 * The resourceVersion each of our last writes returned, per object, compared with the cached copy: the cache
 * meets the expectation once it holds that version or a newer one (kube-apiserver versions are etcd
 * revisions, so they order as integers; a version that is not an integer is never held against the cache).
 */
export class ResourceVersionExpectations<O extends { metadata?: { resourceVersion?: string } } = KubeObject> {
  private readonly versions = new Map<string, { rv: bigint; since: number }>();

  constructor(
    /** The key of an object: `namespace/name` by default (a uid tells two objects of one name apart). */
    private readonly keyOf: (obj: O) => string | undefined = (o) => {
      const md = o.metadata as { namespace?: string; name?: string } | undefined;
      return md?.name ? `${md.namespace ?? ''}/${md.name}` : undefined;
    },
    private readonly now: () => number = Date.now,
    private readonly timeoutMs = Number.POSITIVE_INFINITY,
  ) {}

  /** Records the version a write returned (the written object as the API server answered it). */
  record(obj: O | undefined): void {
    if (!obj) return;
    const key = this.keyOf(obj);
    const rv = parseResourceVersion(obj.metadata?.resourceVersion);
    if (key !== undefined && rv !== undefined) this.versions.set(key, { rv, since: this.now() });
  }

  /** Whether the cached copy is at least as new as our last write to it; a met (or timed-out) expectation is dropped. */
  satisfiedBy(cached: O): boolean {
    const key = this.keyOf(cached);
    if (key === undefined) return true;
    const want = this.versions.get(key);
    if (!want) return true;
    const have = parseResourceVersion(cached.metadata?.resourceVersion);
    if (have !== undefined && have < want.rv && this.now() - want.since <= this.timeoutMs) return false;
    this.versions.delete(key);
    return true;
  }

  /** Drops the expectation of an object that is gone. */
  forget(obj: O): void {
    const key = this.keyOf(obj);
    if (key !== undefined) this.versions.delete(key);
  }
}

/**
 * Scale and resource-version expectations (controller-runtime/Kruise style), checked against the
 * informer caches rather than counted from events: a create is met once the pod is in the cache, a
 * delete once the pod is gone from it or being deleted, a write once the cached resourceVersion has
 * reached the one the write returned. A reconcile never decides from a cache older than its own writes,
 * so it cannot create a pod twice.
 */
import type { Pod } from '../../core/types.js';

/** Upstream's `--expectation-timeout`: past it, unmet expectations are dropped (and logged). */
export const EXPECTATION_TIMEOUT_MS = 5 * 60_000;

interface Pending {
  readonly since: number;
  readonly uid?: string;
}

function rvAtLeast(cached: string | undefined, wanted: string): boolean {
  if (!cached) return false;
  try {
    return BigInt(cached) >= BigInt(wanted);
  } catch {
    // Opaque (non-numeric) versions: only equality proves the cache has our write.
    return cached === wanted;
  }
}

export class Expectations {
  private readonly creates = new Map<string, Map<string, Pending>>();
  private readonly deletes = new Map<string, Map<string, Pending>>();
  /** pod uid → resourceVersion our last write returned. */
  private readonly versions = new Map<string, { rv: string; since: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  expectCreate(key: string, podName: string): void {
    this.set(this.creates, key).set(podName, { since: this.now() });
  }

  createFailed(key: string, podName: string): void {
    this.creates.get(key)?.delete(podName);
  }

  expectDelete(key: string, podName: string, uid: string | undefined): void {
    this.set(this.deletes, key).set(podName, { since: this.now(), uid });
  }

  deleteFailed(key: string, podName: string): void {
    this.deletes.get(key)?.delete(podName);
  }

  /** Records the resourceVersion a write to a pod returned. */
  wrote(obj: { metadata: { uid?: string; resourceVersion?: string } } | undefined): void {
    const uid = obj?.metadata.uid;
    const rv = obj?.metadata.resourceVersion;
    if (uid && rv) this.versions.set(uid, { rv, since: this.now() });
  }

  forget(key: string): void {
    this.creates.delete(key);
    this.deletes.delete(key);
  }

  /**
   * Whether the scale expectations of `key` are met by `cached` (name → pod). Met entries are dropped;
   * entries older than the timeout are dropped and counted in `leaked`.
   */
  scaleSatisfied(key: string, cached: (name: string) => Pod | undefined): { ok: boolean; leaked: number } {
    const now = this.now();
    let ok = true;
    let leaked = 0;
    const check = (m: Map<string, Pending> | undefined, met: (name: string, p: Pending) => boolean) => {
      if (!m) return;
      for (const [name, p] of m) {
        if (met(name, p)) m.delete(name);
        else if (now - p.since > EXPECTATION_TIMEOUT_MS) {
          m.delete(name);
          leaked++;
        } else ok = false;
      }
    };
    check(this.creates.get(key), (name) => cached(name) !== undefined);
    check(this.deletes.get(key), (name, p) => {
      const pod = cached(name);
      return !pod || !!pod.metadata.deletionTimestamp || (p.uid !== undefined && pod.metadata.uid !== p.uid);
    });
    return { ok, leaked };
  }

  /** Whether the cached pod is at least as new as our last write to it. */
  upToDate(pod: Pod): boolean {
    const uid = pod.metadata.uid;
    if (!uid) return true;
    const w = this.versions.get(uid);
    if (!w) return true;
    if (rvAtLeast(pod.metadata.resourceVersion, w.rv) || this.now() - w.since > EXPECTATION_TIMEOUT_MS) {
      this.versions.delete(uid);
      return true;
    }
    return false;
  }

  /** Drops the version expectation of a pod that is gone. */
  podGone(uid: string | undefined): void {
    if (uid) this.versions.delete(uid);
  }

  private set(m: Map<string, Map<string, Pending>>, key: string): Map<string, Pending> {
    let s = m.get(key);
    if (!s) {
      s = new Map();
      m.set(key, s);
    }
    return s;
  }
}

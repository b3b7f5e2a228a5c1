import { injectedSidecarSets } from '../../control/sidecarset-pod.js';
import { objectKey, type Pod } from '../../core/types.js';

/**
 * The cached pods that name each SidecarSet in their injected-list annotation, kept up to date from the pod
 * informer's events. A set counts and upgrades only pods it injected, so a reconcile reads the set's own
 * pods from here instead of walking every pod of the cluster: the walk grew with the cluster and, on one
 * JavaScript thread, held admission reviews back while it ran.
 */
export class PodsBySidecarSet {
  private readonly bySet = new Map<string, Set<string>>();
  private readonly setsOfPod = new Map<string, readonly string[]>();

  /** Records the pod as it is now; returns the sets whose pods changed (named before or now). */
  put(pod: Pod): string[] {
    const key = objectKey(pod);
    const now = injectedSidecarSets(pod.metadata.annotations);
    const before = this.setsOfPod.get(key) ?? [];
    for (const name of before) if (!now.includes(name)) this.drop(name, key);
    for (const name of now) {
      let keys = this.bySet.get(name);
      if (!keys) this.bySet.set(name, (keys = new Set()));
      keys.add(key);
    }
    if (now.length > 0) this.setsOfPod.set(key, now);
    else this.setsOfPod.delete(key);
    return [...new Set([...before, ...now])];
  }

  /** Forgets the pod; returns the sets it counted for. */
  remove(pod: Pod): string[] {
    const key = objectKey(pod);
    const before = this.setsOfPod.get(key) ?? injectedSidecarSets(pod.metadata.annotations);
    for (const name of before) this.drop(name, key);
    this.setsOfPod.delete(key);
    return [...before];
  }

  private drop(set: string, key: string): void {
    const keys = this.bySet.get(set);
    keys?.delete(key);
    if (keys?.size === 0) this.bySet.delete(set);
  }

  /** Keys (`namespace/name`) of the pods that name `set` in their injected list. */
  keysOf(set: string): ReadonlySet<string> {
    return this.bySet.get(set) ?? new Set();
  }
}

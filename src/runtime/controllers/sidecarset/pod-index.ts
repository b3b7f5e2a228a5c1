import { injectedSidecarSets } from '../../control/sidecarset-pod.js';
import type { IndexFunc } from '../../core/informer.js';
import type { Pod } from '../../core/types.js';

/**
 * Pods by the SidecarSets named in their injected-list annotation. A set counts and upgrades only pods it
 * injected, so a reconcile reads the set's own pods from this informer index instead of walking every pod of
 * the cluster: the walk grew with the cluster and, on one JavaScript thread, held admission reviews back while
 * it ran.
 */
export const PODS_BY_INJECTED_SIDECARSET = 'sidecarsets.injected';
export const podInjectedSidecarSets: IndexFunc<Pod> = (pod) => injectedSidecarSets(pod.metadata.annotations);

/** The sets whose pods an update changed: those the pod named before and those it names now. */
export function sidecarSetsOfUpdate(pod: Pod, old: Pod): string[] {
  return [...new Set([...podInjectedSidecarSets(old), ...podInjectedSidecarSets(pod)])];
}

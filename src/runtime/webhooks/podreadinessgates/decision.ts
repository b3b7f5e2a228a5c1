/**
 * Readiness gates of pods owned by Kruise workloads (upstream pod webhook's readiness step): a pod whose
 * controller owner is in `apps.kruise.io` gets `KruisePodReady` (lifecycle hooks and CRRs mark it not
 * ready through that condition) and `InPlaceUpdateReady` (an in-place update marks it not ready while the
 * kubelet restarts containers). With gate KruisePodReadinessGate every pod gets `KruisePodReady`.
 */
import { CONDITION_INPLACE_UPDATE_READY, CONDITION_KRUISE_POD_READY, KRUISE_GROUP } from '../../../contracts/index.js';
import { controllerOf } from '../../core/meta.js';
import type { Pod } from '../../core/types.js';

/** True when the pod's controller owner reference is a Kruise workload (`apps.kruise.io/<version>`). */
export function ownedByKruiseWorkload(pod: Pod): boolean {
  const owner = controllerOf(pod);
  return owner !== undefined && owner.apiVersion.split('/')[0] === KRUISE_GROUP;
}

/** The readiness gate condition types `pod` must carry, in the order they are added. */
export function requiredReadinessGates(pod: Pod, allPodsGetKruisePodReady: boolean): string[] {
  if (ownedByKruiseWorkload(pod)) return [CONDITION_KRUISE_POD_READY, CONDITION_INPLACE_UPDATE_READY];
  return allPodsGetKruisePodReady ? [CONDITION_KRUISE_POD_READY] : [];
}

/** Appends the missing readiness gates to `pod` (in place); returns whether it changed anything. */
export function addReadinessGates(pod: Pod, allPodsGetKruisePodReady: boolean): boolean {
  const wanted = requiredReadinessGates(pod, allPodsGetKruisePodReady);
  if (wanted.length === 0 || !pod.spec) return false;
  const gates = (pod.spec.readinessGates ?? []) as Array<{ conditionType: string }>;
  const missing = wanted.filter((t) => !gates.some((g) => g.conditionType === t));
  if (missing.length === 0) return false;
  pod.spec.readinessGates = [...gates, ...missing.map((conditionType) => ({ conditionType }))];
  return true;
}

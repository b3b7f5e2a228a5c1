/**
 * The pod lifecycle of the workloads with lifecycle hooks (CloneSet, Advanced StatefulSet, Advanced DaemonSet), pure (upstream's `refreshPodState` and the lifecycle's not-ready mark): the state a pod
 * moves to this round and the KruisePodReady condition the lifecycle hooks ask for. One hole of upstream's
 * closed: a direct Updating/PreparingUpdate → Normal step clears the not-ready mark too.
 */
import type { LifecycleState } from '../../api/pod-contracts.js';
import { CONDITION_KRUISE_POD_READY } from '../../contracts/index.js';
import type { Pod, PodCondition } from '../core/types.js';
import { kruisePodReadyWithKeys, notReadyKeysOf } from './pod-readiness.js';
import { hasReadinessGate, isAllHooked, isPodAtRevision, podState, type Lifecycle } from './workload-pods.js';

/** The key the lifecycle writes into KruisePodReady's message while a hook holds the pod. */
export const NOT_READY_KEY = { preDelete: 'preDeleteHook', preUpdate: 'preUpdateHook' } as const;
export const LIFECYCLE_USER_AGENT = 'Lifecycle';

export interface RefreshInput {
  readonly pod: Pod;
  readonly lifecycle?: Lifecycle;
  readonly updateRevision: string;
  /** Whether an in-place update that is under way has completed (see `inPlaceCompleted`). */
  readonly inPlaceCompleted: boolean;
}

/** The state a pod moves to this round, if any. */
export function nextLifecycleState(i: RefreshInput): LifecycleState | undefined {
  const { pod, lifecycle: l } = i;
  const ipu = l?.inPlaceUpdate;
  const afterUpdate = (): LifecycleState => (l && !isAllHooked(ipu, pod) ? 'Updated' : 'Normal');
  switch (podState(pod)) {
    case 'PreparingNormal':
      // v1.9: without a preNormal hook, a pod becomes Normal once scheduled.
      if (!l?.preNormal) return pod.spec?.nodeName ? 'Normal' : undefined;
      return isAllHooked(l.preNormal, pod) ? 'Normal' : undefined;
    case 'PreparingUpdate':
      // Rolled back (or re-pointed) to the revision it already has: nothing to update in place.
      return isPodAtRevision(pod, i.updateRevision) ? afterUpdate() : undefined;
    case 'Updating':
      return i.inPlaceCompleted ? afterUpdate() : undefined;
    case 'Updated':
      return !ipu || isAllHooked(ipu, pod) ? 'Normal' : undefined;
    default:
      return undefined;
  }
}

/** The KruisePodReady condition after adding or removing one lifecycle key; undefined when unchanged. */
export function kruisePodReadyWith(pod: Pod, key: string, present: boolean, now: string): PodCondition | undefined {
  const mine = notReadyKeysOf(pod, LIFECYCLE_USER_AGENT);
  return kruisePodReadyWithKeys(pod, LIFECYCLE_USER_AGENT, present ? [...mine, key] : mine.filter((k) => k !== key), now);
}

/**
 * The not-ready mark a state change asks for: entering PreparingDelete/PreparingUpdate with
 * markPodNotReady adds the hook's key; leaving PreparingUpdate for Updated *or Normal* removes it
 * (upstream removes it only on Updated, so a direct step to Normal left the pod NotReady).
 */
export function notReadyChange(to: LifecycleState, l: Lifecycle | undefined): { key: string; present: boolean } | undefined {
  if (to === 'PreparingDelete' && l?.preDelete?.markPodNotReady) return { key: NOT_READY_KEY.preDelete, present: true };
  if (to === 'PreparingUpdate' && l?.inPlaceUpdate?.markPodNotReady) return { key: NOT_READY_KEY.preUpdate, present: true };
  if ((to === 'Updated' || to === 'Normal') && l?.inPlaceUpdate?.markPodNotReady) return { key: NOT_READY_KEY.preUpdate, present: false };
  if (to === 'PreparingNormal' && l?.preDelete?.markPodNotReady) return { key: NOT_READY_KEY.preDelete, present: false };
  return undefined;
}

/** markPodNotReady asked for a pod without the KruisePodReady gate: reported, never silently ignored. */
export function missingGateForNotReady(pod: Pod, change: { present: boolean } | undefined): boolean {
  return !!change?.present && !hasReadinessGate(pod, CONDITION_KRUISE_POD_READY);
}

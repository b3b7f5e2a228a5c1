/**
 * Initial value of the readiness gates the pod webhook adds (upstream `podreadiness` controller for
 * `KruisePodReady`; the in-place update refresh does it for `InPlaceUpdateReady` on new pods): a gated
 * pod with no such condition yet gets it True, so a new pod becomes Ready as soon as its containers are.
 * Only absent conditions are written: a False set by a lifecycle hook, a CRR or an in-place update is
 * never touched here.
 */
import { CONDITION_INPLACE_UPDATE_READY, CONDITION_KRUISE_POD_READY } from '../../../contracts/index.js';
import type { Pod } from '../../core/types.js';

/** The readiness gates this controller initialises. */
export const INITIALISED_GATES: readonly string[] = [CONDITION_KRUISE_POD_READY, CONDITION_INPLACE_UPDATE_READY];

/** Condition types to add with status True (empty: nothing to do). */
export function conditionsToInitialise(pod: Pod): string[] {
  if (pod.metadata.deletionTimestamp) return [];
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return [];
  const gates = ((pod.spec?.readinessGates ?? []) as Array<{ conditionType?: string }>).map((g) => g.conditionType);
  const present = new Set((pod.status?.conditions ?? []).map((c) => c.type));
  return INITIALISED_GATES.filter((t) => gates.includes(t) && !present.has(t));
}

/**
 * PodUnavailableBudget admission, pure (upstream v1.9's pod validating webhook): which pod operation a review is.
 * Whether the pod's budget lets it happen (spending one unit of `unavailableAllowed` and recording the pod) is
 * decided in control/pod-unavailable-budget.ts, which the workload controllers share.
 *
 * - DELETE of a pod (not a subresource), CREATE of `pods/eviction`: gate PodUnavailableBudgetDeleteGate.
 * - UPDATE that changes the pod spec (an in-place update) or adds an `unavailable-pod.kruise.io/` label: gate
 *   PodUnavailableBudgetUpdateGate; the pod is judged as it was before the update.
 * - A pod without `kruise.io/related-pub`, with `pub.kruise.io/no-protect: "true"`, not ready or mid-update, is let
 *   go: it is already unavailable. So is every pod of a budget that wants none available, of an operation the budget
 *   does not protect, or that the budget already recorded.
 */
import { ANNOTATION_RELATED_PUB, UNAVAILABLE_POD_LABEL_PREFIX } from '../../../contracts/index.js';
import type { PubOperation } from '../../control/pod-unavailable-budget.js';
import type { Pod } from '../../core/types.js';

/** What a review asks of a budget. */
export type Classified =
  | { readonly skip: true }
  | { readonly skip: false; readonly operation: PubOperation; readonly pod?: Pod; readonly evictee?: { namespace: string; name: string } };

function hasUnavailableLabel(labels: Record<string, string> | undefined): boolean {
  return Object.keys(labels ?? {}).some((k) => k.startsWith(UNAVAILABLE_POD_LABEL_PREFIX));
}

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
}

/** Whether an UPDATE may make the pod unavailable: its spec changed, or it gained an unavailable label. */
export function updateMayDisrupt(oldPod: Pod, newPod: Pod): boolean {
  if (canonical(oldPod.spec) !== canonical(newPod.spec)) return true;
  return !hasUnavailableLabel(oldPod.metadata.labels) && hasUnavailableLabel(newPod.metadata.labels);
}

export interface ReviewFacts {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly subResource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly object?: Pod;
  readonly oldObject?: Pod;
  readonly deleteGate: boolean;
  readonly updateGate: boolean;
}

/** The operation a pod review is for the budget, and the pod (or, for an eviction, which pod to read). */
export function classify(r: ReviewFacts): Classified {
  const skip = { skip: true } as const;
  switch (r.operation) {
    case 'UPDATE': {
      if (!r.updateGate || r.subResource || !r.object || !r.oldObject) return skip;
      if (!r.object.metadata.annotations?.[ANNOTATION_RELATED_PUB]) return skip;
      if (!updateMayDisrupt(r.oldObject, r.object)) return skip;
      return { skip: false, operation: 'UPDATE', pod: r.oldObject };
    }
    case 'DELETE':
      if (!r.deleteGate || r.subResource || !r.oldObject) return skip;
      return { skip: false, operation: 'DELETE', pod: r.oldObject };
    case 'CREATE':
      if (!r.deleteGate || r.subResource !== 'eviction' || !r.name || !r.namespace) return skip;
      return { skip: false, operation: 'EVICT', evictee: { namespace: r.namespace, name: r.name } };
    default:
      return skip;
  }
}

/**
 * PodUnavailableBudget admission, pure (upstream v1.9's pod validating webhook): which pod operation a review is,
 * and whether the pod's budget lets it happen, spending one unit of `unavailableAllowed` and recording the pod.
 *
 * - DELETE of a pod (not a subresource), CREATE of `pods/eviction`: gate PodUnavailableBudgetDeleteGate.
 * - UPDATE that changes the pod spec (an in-place update) or adds an `unavailable-pod.kruise.io/` label: gate
 *   PodUnavailableBudgetUpdateGate; the pod is judged as it was before the update.
 * - A pod without `kruise.io/related-pub`, with `pub.kruise.io/no-protect: "true"`, not ready or mid-update, is let
 *   go: it is already unavailable. So is every pod of a budget that wants none available, of an operation the budget
 *   does not protect, or that the budget already recorded.
 */
import { ANNOTATION_PUB_NO_PROTECT, ANNOTATION_RELATED_PUB, UNAVAILABLE_POD_LABEL_PREFIX } from '../../../contracts/index.js';
import {
  isPodReady,
  isPodStateConsistent,
  protectsOperation,
  type PubObject,
  type PubOperation,
  type PubStatus,
} from '../../control/pod-unavailable-budget.js';
import type { Pod } from '../../core/types.js';

/** Upstream's bound on the webhook's records in one budget. */
export const MAX_RECORDED_PODS = 2000;

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

/** The budget a pod names, or undefined when it needs none (no annotation, opted out, or already unavailable). */
export function budgetNameOf(pod: Pod): string | undefined {
  const a = pod.metadata.annotations ?? {};
  const name = a[ANNOTATION_RELATED_PUB];
  if (!name || a[ANNOTATION_PUB_NO_PROTECT] === 'true') return undefined;
  if (!isPodReady(pod) || !isPodStateConsistent(pod)) return undefined;
  return name;
}

/** A budget's answer: let go without spending, refuse, or spend (the status to write before letting go). */
export type Judgement =
  | { readonly allowed: true; readonly spend?: undefined }
  | { readonly allowed: false; readonly message: string }
  | { readonly allowed: true; readonly spend: PubStatus };

/** upstream's Forbidden error text for a budget. */
export function forbidden(pubName: string, why: string): string {
  return `podunavailablebudgets.policy.kruise.io "${pubName}" is forbidden: ${why}`;
}

/** Whether `pub` lets `podName` go by `operation` at `now` (RFC 3339), and what it spends. */
export function judge(pub: PubObject, podName: string, operation: PubOperation, now: string): Judgement {
  const st = pub.status;
  if (!st || st.desiredAvailable === 0) return { allowed: true };
  if (!protectsOperation(pub, operation)) return { allowed: true };
  if (st.disruptedPods?.[podName] !== undefined || st.unavailablePods?.[podName] !== undefined) return { allowed: true };
  const name = pub.metadata.name ?? '';
  if (st.unavailableAllowed <= 0) return { allowed: false, message: forbidden(name, 'pub unavailable allowed is negative') };
  if (Object.keys(st.disruptedPods ?? {}).length + Object.keys(st.unavailablePods ?? {}).length > MAX_RECORDED_PODS) {
    return {
      allowed: false,
      message: forbidden(name, 'DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller'),
    };
  }
  const spend: PubStatus = {
    ...st,
    unavailableAllowed: st.unavailableAllowed - 1,
    disruptedPods: { ...(st.disruptedPods ?? {}) },
    unavailablePods: { ...(st.unavailablePods ?? {}) },
  };
  if (operation === 'UPDATE') spend.unavailablePods![podName] = now;
  else spend.disruptedPods![podName] = now;
  return { allowed: true, spend };
}

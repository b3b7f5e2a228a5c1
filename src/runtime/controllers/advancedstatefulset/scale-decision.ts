/**
 * Advanced StatefulSet scale, pure (upstream's `processReplica`, `processCondemned` and `deletePod`): which ordinals
 * get a pod this round, which pods go (a preDelete hook first moves a pod to PreparingDelete and holds it there), and
 * whether the round stops before the rolling update. OrderedReady is monotonic (one step at a time, waiting for each
 * predecessor to be running and available); Parallel creates and deletes at once, bounded by scaleStrategy.maxUnavailable.
 */
import { condition, isHooked, podState, type Lifecycle } from '../../control/workload-pods.js';
import type { Pod } from '../../core/types.js';

/** What removing one pod takes: a PreparingDelete mark while its preDelete hook holds, nothing while it still holds, or the delete. */
export type DeleteStep = 'prepare-delete' | 'hold' | 'delete';

/** Upstream's `deletePod`: a pod hooked by preDelete is marked PreparingDelete (once) and kept; any other is deleted. */
export function deleteStep(pod: Pod, lifecycle: Lifecycle | undefined): DeleteStep {
  if (lifecycle?.preDelete && isHooked(lifecycle.preDelete, pod)) return podState(pod) === 'PreparingDelete' ? 'hold' : 'prepare-delete';
  return 'delete';
}

export function isTerminating(p: Pod): boolean {
  return !!p.metadata.deletionTimestamp;
}

export function isRunningAndReady(p: Pod): boolean {
  return p.status?.phase === 'Running' && condition(p, 'Ready')?.status === 'True';
}

/** Upstream's `isHealthy`: lifecycle state absent or Normal, running, ready and not terminating. */
export function isHealthy(p: Pod): boolean {
  const s = podState(p);
  return (s === '' || s === 'Normal') && isRunningAndReady(p) && !isTerminating(p);
}

/** Upstream's `isRunningAndAvailable` (lifecycle state Normal or absent, ready for minReadySeconds). */
export function isRunningAndAvailable(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  const s = podState(p);
  return (s === '' || s === 'Normal') && isRunningAndReady(p) && readyFor(p, minReadySeconds, nowMs);
}

function readyFor(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (minReadySeconds <= 0) return true;
  const since = Date.parse(condition(p, 'Ready')?.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= nowMs;
}

export interface ScaleInput {
  /** Replicas by slot (`ordinal - start`); undefined for a missing ordinal or a reserved one. */
  readonly replicas: ReadonlyArray<Pod | undefined>;
  readonly start: number;
  readonly reserved: ReadonlySet<number>;
  /** Pods outside the range or on a reserved ordinal, highest ordinal first. */
  readonly condemned: readonly Pod[];
  /** OrderedReady (true) or Parallel. */
  readonly monotonic: boolean;
  /** scaleStrategy.maxUnavailable resolved against replicas (at least 1), or undefined without one. */
  readonly scaleMaxUnavailable?: number;
  readonly minReadySeconds: number;
  readonly lifecycle?: Lifecycle;
  readonly nowMs: number;
}

export type ScaleAction =
  | { readonly kind: 'create'; readonly ordinal: number }
  | { readonly kind: 'prepare-delete'; readonly pod: Pod; readonly condemned: boolean }
  | { readonly kind: 'delete'; readonly pod: Pod; readonly condemned: boolean };

export interface ScalePlan {
  readonly actions: ScaleAction[];
  /** The round ends after these actions (no rolling update): monotonic progress is blocked or under way. */
  readonly stop: boolean;
}

/** One round of upstream's replica and condemned processing. */
export function planScale(i: ScaleInput): ScalePlan {
  const actions: ScaleAction[] = [];
  let budget = i.scaleMaxUnavailable;
  // Upstream's decreaseAndCheckMaxUnavailable: spend one unit; true once none is left.
  const spend = () => budget !== undefined && --budget <= 0;
  const remove = (pod: Pod, condemned: boolean): boolean => {
    const step = deleteStep(pod, i.lifecycle);
    if (step === 'hold') return false;
    actions.push(step === 'delete' ? { kind: 'delete', pod, condemned } : { kind: 'prepare-delete', pod, condemned });
    return true;
  };

  let firstUnhealthy: Pod | undefined;
  let firstUnhealthyOrd = Infinity;
  const ordOf = (idx: number) => i.start + idx;
  i.replicas.forEach((p, idx) => {
    if (p && !isHealthy(p) && ordOf(idx) < firstUnhealthyOrd) {
      firstUnhealthyOrd = ordOf(idx);
      firstUnhealthy = p;
    }
  });
  if (!firstUnhealthy) {
    for (let k = i.condemned.length - 1; k >= 0; k--) {
      const p = i.condemned[k]!;
      if (!isHealthy(p)) {
        firstUnhealthy = p;
        break;
      }
    }
  }

  replicas: for (let idx = 0; idx < i.replicas.length; idx++) {
    const ordinal = ordOf(idx);
    if (i.reserved.has(ordinal)) continue;
    const p = i.replicas[idx];
    if (!p) {
      actions.push({ kind: 'create', ordinal });
      if (i.monotonic) return { actions, stop: true };
      if (spend()) break replicas;
      continue;
    }
    const phase = p.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded') {
      if (spend()) break replicas;
      if (!isTerminating(p)) remove(p, false);
      if (i.monotonic) return { actions, stop: true };
      continue;
    }
    if (isTerminating(p)) {
      if (i.monotonic) return { actions, stop: true };
      if (spend()) break replicas;
      continue;
    }
    if (i.monotonic || budget !== undefined) {
      const available = isRunningAndAvailable(p, i.minReadySeconds, i.nowMs);
      if (!available && i.monotonic) return { actions, stop: true };
      if (!available && spend()) break replicas;
    }
  }

  for (const p of i.condemned) {
    if (isTerminating(p)) {
      if (i.monotonic) return { actions, stop: true };
      continue;
    }
    if (i.monotonic && p !== firstUnhealthy && !isRunningAndAvailable(p, i.minReadySeconds, i.nowMs)) return { actions, stop: true };
    // A pod its preDelete hook holds is not a change: upstream goes on to the next condemned pod.
    if (remove(p, true) && i.monotonic) return { actions, stop: true };
  }
  return { actions, stop: false };
}

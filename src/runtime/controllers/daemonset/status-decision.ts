/**
 * Advanced DaemonSet status, pure (as the native DaemonSet and upstream count): per node that should run the pod,
 * whether it runs one, whether its oldest pod is ready and available, whether it runs one at the update revision;
 * per node that should not, whether it still runs one. The revision hash is v1beta1's `updateRevision`: the status is
 * written at v1beta1, the version upstream stores, where v1alpha1's `daemonSetHash` would be pruned.
 */
import type { DaemonSetStatus } from '../../../api/kinds/daemonset.js';
import type { Pod } from '../../core/types.js';
import { condition, isPodActive, isPodAtRevision, isPodUpdateReady, podState } from '../../control/workload-pods.js';
import { byAge, type DaemonSetObject } from './placement-decision.js';

export interface StatusInput {
  readonly ds: DaemonSetObject;
  /** Nodes that should run the pod. */
  readonly desired: readonly string[];
  /** Active pods by node (every node, eligible or not). */
  readonly byNode: ReadonlyMap<string, readonly Pod[]>;
  readonly hash: string;
  readonly collisionCount: number;
  readonly nowMs: number;
}

/**
 * States only the hooks beyond upstream (preNormal, inPlaceUpdate) put a pod in: such a pod is not available, as on a
 * CloneSet, however ready it is. PreparingDelete counts by readiness alone, as upstream's DaemonSet counts it.
 */
const HELD_BY_HOOK = new Set(['PreparingNormal', 'PreparingUpdate', 'Updated']);

export function computeStatus(i: StatusInput): DaemonSetStatus {
  const minReady = i.ds.spec.minReadySeconds ?? 0;
  const desired = new Set(i.desired);
  let current = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  let misscheduled = 0;
  for (const [node, all] of i.byNode) {
    const pods = all.filter(isPodActive).sort(byAge);
    if (pods.length === 0) continue;
    if (!desired.has(node)) {
      misscheduled++;
      continue;
    }
    current++;
    const first = pods[0]!;
    if (condition(first, 'Ready')?.status === 'True') {
      ready++;
      if (isPodUpdateReady(first, minReady, i.nowMs) && !HELD_BY_HOOK.has(podState(first))) available++;
    }
    if (pods.some((p) => isPodAtRevision(p, i.hash))) updated++;
  }
  return {
    observedGeneration: i.ds.metadata.generation,
    desiredNumberScheduled: desired.size,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    numberAvailable: available,
    numberUnavailable: Math.max(desired.size - available, 0),
    updatedNumberScheduled: updated,
    updateRevision: i.hash,
    ...(i.collisionCount > 0 ? { collisionCount: i.collisionCount } : {}),
    ...(i.ds.status?.conditions ? { conditions: i.ds.status.conditions } : {}),
  };
}

/**
 * Whether writing `after` changes anything of `before` (the status as the runtime reads it, at v1alpha1, which has no
 * `updateRevision`): the revision written last is compared with `writtenRevision` instead.
 */
export function statusChanged(before: DaemonSetStatus | undefined, after: DaemonSetStatus, writtenRevision: string | undefined): boolean {
  if (!before || after.updateRevision !== writtenRevision) return true;
  const keys = (Object.keys(after) as (keyof DaemonSetStatus)[]).filter((k) => k !== 'updateRevision');
  return keys.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

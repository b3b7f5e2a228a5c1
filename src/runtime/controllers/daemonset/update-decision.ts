/**
 * Advanced DaemonSet rolling update, pure (upstream's `rollingUpdate` and `filterDaemonPodsNodeToUpdate`): which
 * nodes may be updated this round and how.
 *
 * - Nodes taking part: those whose pod is at the update revision or on its way there first, then the nodes matching
 *   `rollingUpdate.selector` (all nodes without one), each group from the last node name down; `partition` nodes
 *   (a count, or a percentage of the desired pods rounded down) keep the old revision.
 * - Without maxSurge: an old pod that is not available is replaced at once; other old pods are replaced while fewer
 *   than maxUnavailable nodes (percentages rounded up, 1 when both are 0) have no available pod. InPlaceIfPossible
 *   updates a replaced pod in place when only images and metadata changed, and recreates it otherwise.
 * - With maxSurge: a node whose old pod is not available gets its new pod at once, others while fewer than maxSurge
 *   nodes run two pods; the old pod goes once the new one is available.
 * - A pod in PreparingDelete (held by a preDelete hook) counts as going: its node counts as unavailable.
 */
import type { Pod } from '../../core/types.js';
import { isHooked, isPodAvailable, isPodAtRevision, podState, type Lifecycle } from '../../control/workload-pods.js';
import { byAge, scaled, type DaemonSetObject } from './placement-decision.js';
import { selectorMatches } from '../../../contracts/index.js';

/** Node labels by node name (the rollout's node selector reads them). */
export type NodeLabels = ReadonlyMap<string, Readonly<Record<string, string>>>;

export interface UpdateInput {
  readonly ds: DaemonSetObject;
  /** Active pods by node, for the nodes that should run the pod. */
  readonly byNode: ReadonlyMap<string, readonly Pod[]>;
  readonly nodeLabels: NodeLabels;
  readonly hash: string;
  /** Nodes that should run the pod (the base of percentages). */
  readonly desired: number;
  readonly nowMs: number;
}

export interface UpdatePlan {
  /** Old pods to replace: deleted (Standard, or not in place), or updated in place (`inPlace`). */
  readonly replace: readonly Pod[];
  /** Nodes that get a new pod beside their old one (maxSurge). */
  readonly surgeOn: readonly string[];
  /** Old pods whose new pod on the node is available (maxSurge): deleted. */
  readonly retire: readonly Pod[];
  readonly maxUnavailable: number;
  readonly maxSurge: number;
}

/** maxSurge and maxUnavailable of this round, as upstream resolves them against the desired pods. */
export function updateBudget(ds: DaemonSetObject, desired: number): { maxSurge: number; maxUnavailable: number } {
  const ru = ds.spec.updateStrategy?.rollingUpdate;
  const inPlace = ru?.rollingUpdateType === 'InPlaceIfPossible';
  const maxSurge = inPlace ? 0 : scaled(ru?.maxSurge, desired, true, 0);
  let maxUnavailable = scaled(ru?.maxUnavailable, desired, true, maxSurge > 0 ? 0 : 1);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable: maxSurge > 0 ? 0 : maxUnavailable };
}

/** The pod at the update revision and the old pod of one node (the oldest of each), if any. */
export function splitNode(pods: readonly Pod[], hash: string): { newPod?: Pod; oldPod?: Pod } {
  const sorted = [...pods].sort(byAge);
  return { newPod: sorted.find((p) => isPodAtRevision(p, hash)), oldPod: sorted.find((p) => !isPodAtRevision(p, hash)) };
}

const preDeleting = (p: Pod | undefined) => p !== undefined && podState(p) === 'PreparingDelete';

/** The nodes that may take part in this round, in upstream's order, bounded by the partition. */
export function nodesToUpdate(i: UpdateInput): string[] {
  const ru = i.ds.spec.updateStrategy?.rollingUpdate;
  const partition = scaled(ru?.partition, i.desired, false, 0);
  const names = [...i.byNode.keys()].sort().reverse();
  const updated: string[] = [];
  const updating: string[] = [];
  const selected: string[] = [];
  const rest: string[] = [];
  for (const name of names) {
    const { newPod, oldPod } = splitNode(i.byNode.get(name) ?? [], i.hash);
    if (newPod || !oldPod) updated.push(name);
    else if (preDeleting(oldPod)) updating.push(name);
    else if (ru?.selector && selectorMatches(ru.selector, i.nodeLabels.get(name) ?? {})) selected.push(name);
    else rest.push(name);
  }
  const order = [...updated, ...updating, ...(ru?.selector ? selected : rest)];
  const max = names.length - partition;
  return max <= 0 ? [] : order.slice(0, max);
}

/** The round's replacements (upstream's rollingUpdate); the caller skips it while paused or OnDelete. */
export function planUpdate(i: UpdateInput): UpdatePlan {
  const minReady = i.ds.spec.minReadySeconds ?? 0;
  const { maxSurge, maxUnavailable } = updateBudget(i.ds, i.desired);
  const available = (p: Pod) => isPodAvailable(p, minReady, i.nowMs);
  const nodes = nodesToUpdate(i);
  if (maxSurge === 0) {
    let unavailable = 0;
    const allowed: Pod[] = [];
    const candidates: Pod[] = [];
    // Count every taking-part node's unavailability first, then pick candidates in order.
    const parts = nodes.map((n) => ({ n, ...splitNode(i.byNode.get(n) ?? [], i.hash) }));
    for (const { newPod, oldPod } of parts) {
      if ((oldPod && newPod) || (!oldPod && !newPod) || preDeleting(oldPod)) unavailable++;
      else if (newPod && (!available(newPod) || preDeleting(newPod))) unavailable++;
    }
    for (const { newPod, oldPod } of parts) {
      if (!oldPod || newPod || preDeleting(oldPod)) continue;
      if (!available(oldPod)) allowed.push(oldPod);
      else candidates.push(oldPod);
    }
    const room = Math.min(Math.max(maxUnavailable - unavailable, 0), candidates.length);
    return { replace: [...allowed, ...candidates.slice(0, room)], surgeOn: [], retire: [], maxUnavailable, maxSurge };
  }
  let surging = 0;
  const allowedNew: string[] = [];
  const candidateNew: string[] = [];
  const retire: Pod[] = [];
  for (const n of nodes) {
    const { newPod, oldPod } = splitNode(i.byNode.get(n) ?? [], i.hash);
    if (!oldPod || preDeleting(oldPod)) continue;
    if (!newPod) {
      if (!available(oldPod)) allowedNew.push(n);
      else candidateNew.push(n);
    } else if (!available(newPod) || preDeleting(newPod)) surging++;
    else retire.push(oldPod);
  }
  const room = Math.min(Math.max(maxSurge - surging, 0), candidateNew.length);
  return { replace: [], surgeOn: [...allowedNew, ...candidateNew.slice(0, room)], retire, maxUnavailable, maxSurge };
}

/** How an old pod the rollout picked is replaced. */
export type ReplaceAction = 'delete' | 'in-place' | 'prepare-update' | 'wait';

/**
 * Standard, or a change that cannot be made in place: delete (the placement creates the new pod). In place, with
 * the inPlaceUpdate hook (beyond upstream, as CloneSet's): a Normal pod the hook holds goes to PreparingUpdate first
 * and waits there until released; an Updated pod is prepared again.
 */
export function replaceAction(pod: Pod, canInPlace: boolean, lifecycle: Lifecycle | undefined): ReplaceAction {
  if (!canInPlace) return 'delete';
  const hook = lifecycle?.inPlaceUpdate;
  switch (podState(pod)) {
    case '':
    case 'PreparingNormal':
    case 'Normal':
      return isHooked(hook, pod) ? 'prepare-update' : 'in-place';
    case 'Updated':
      return hook ? 'prepare-update' : 'in-place';
    case 'PreparingUpdate':
      return isHooked(hook, pod) ? 'wait' : 'in-place';
    case 'Updating':
      return 'in-place';
    default:
      return 'wait';
  }
}

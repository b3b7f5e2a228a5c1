/**
 * Advanced StatefulSet rolling update, pure (upstream's `rollingUpdateStatefulsetPods`, `sortPodsToUpdate`,
 * `handleSpecifiedDeletedPods` and `inPlaceUpdatePod`): which pods count as unavailable, the update order (descending
 * ordinal above the partition, or the priority order of an unordered update), and what each picked pod gets
 * (in place, a PreparingUpdate mark for its inPlaceUpdate hook, a recreate through its preDelete hook, or an error
 * under InPlaceOnly), within maxUnavailable; with claim resizing, a pod's claims are grown before it is updated.
 */
import { LABEL_SPECIFIED_DELETE } from '../../../contracts/index.js';
import type { PreDownloadStrategy } from '../../control/image-predownload.js';
import { inPlaceCompleted } from '../../control/inplace-update.js';
import { isHooked, isPodAtRevision, podState, type Lifecycle } from '../../control/workload-pods.js';
import type { Pod } from '../../core/types.js';
import { deleteStep, isHealthy, isRunningAndAvailable, isTerminating } from './scale-decision.js';

export type PodUpdatePolicy = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly';

/**
 * How an Advanced StatefulSet's update strategy reads for image pre-download (control/image-predownload.ts), as
 * upstream: OnDelete, no rollingUpdate or podUpdatePolicy ReCreate recreate; the partition is the plain ordinal count.
 */
export function statefulSetPreDownloadStrategy(
  strategy:
    { readonly type?: string; readonly rollingUpdate?: { readonly podUpdatePolicy?: string; readonly partition?: number } } | undefined,
  maxUnavailable: number,
  canUpdateInPlace: () => boolean,
): PreDownloadStrategy {
  const ru = strategy?.rollingUpdate;
  return {
    recreate: strategy?.type === 'OnDelete' || !ru || (ru.podUpdatePolicy ?? 'ReCreate') === 'ReCreate',
    partition: ru?.partition ?? 0,
    maxUnavailable,
    canUpdateInPlace,
  };
}

interface PriorityStrategy {
  readonly weightPriority?: ReadonlyArray<{ weight: number; matchSelector: { matchLabels?: Record<string, string> } }>;
  readonly orderPriority?: ReadonlyArray<{ orderedKey: string }>;
}

export interface UpdateInput {
  /** Replicas by slot (`ordinal - start`); undefined for a missing or reserved ordinal. */
  readonly replicas: ReadonlyArray<Pod | undefined>;
  readonly replicaCount: number;
  readonly updateRevision: string;
  readonly partition: number;
  /** rollingUpdate.maxUnavailable resolved against replicas (at least 1). */
  readonly maxUnavailable: number;
  readonly policy: PodUpdatePolicy;
  readonly unordered?: { readonly priorityStrategy?: PriorityStrategy };
  readonly minReadySeconds: number;
  readonly lifecycle?: Lifecycle;
  /** Whether the pod's revision reaches the update revision in place (images and metadata only). */
  readonly canInPlace: (pod: Pod) => boolean;
  /**
   * Claim resizing (OnPodRollingUpdate, gate on): how the pod's claims stand against their templates. Absent when
   * claims are not resized: a claim template change then reaches new claims only.
   */
  readonly claims?: (pod: Pod) => PodClaims;
  readonly nowMs: number;
}

/** A pod's existing claims against their templates (a claim missing or being deleted counts as fine). */
export interface PodClaims {
  /** Every claim asks at least its template's size, with the template's class and access modes. */
  readonly matched: boolean;
  /** Every claim's capacity reached what it asks. */
  readonly ready: boolean;
  /** Every claim's resize needs nothing more from the controller (grown, or only the file system resize left). */
  readonly completed: boolean;
}

export type PodUpdate =
  | { readonly pod: Pod; readonly action: 'in-place' }
  | { readonly pod: Pod; readonly action: 'prepare-update'; readonly readdHandlers: boolean }
  | { readonly pod: Pod; readonly action: 'prepare-delete' }
  | { readonly pod: Pod; readonly action: 'delete'; readonly specified: boolean }
  | { readonly pod: Pod; readonly action: 'resize-claims' }
  | { readonly pod: Pod; readonly action: 'error'; readonly message: string };

/**
 * Upstream's unavailable count: unhealthy, terminating, in-place update not complete, not available for
 * minReadySeconds, or (claims resized) a claim not grown to what it asks.
 */
export function unavailableNames(i: Pick<UpdateInput, 'replicas' | 'minReadySeconds' | 'nowMs' | 'claims'>): Set<string> {
  const out = new Set<string>();
  for (const p of i.replicas) {
    if (!p) continue;
    if (!isHealthy(p) || !inPlaceCompleted(p) || !isRunningAndAvailable(p, i.minReadySeconds, i.nowMs) || (i.claims && !i.claims(p).ready))
      out.add(p.metadata.name!);
  }
  return out;
}

function weight(p: Pod, ps: PriorityStrategy): number {
  const labels = p.metadata.labels ?? {};
  return (ps.weightPriority ?? []).reduce(
    (s, t) => s + (Object.entries(t.matchSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) ? t.weight : 0),
    0,
  );
}

function orderValue(p: Pod, ps: PriorityStrategy): { k: number; v: number } {
  const labels = p.metadata.labels ?? {};
  const keys = ps.orderPriority ?? [];
  const k = keys.findIndex((o) => labels[o.orderedKey] !== undefined);
  if (k < 0) return { k: keys.length, v: -1 };
  const m = /(\d+)$/.exec(labels[keys[k]!.orderedKey] ?? '');
  return { k, v: m ? Number(m[1]) : -1 };
}

/** Upstream's `sortPodsToUpdate`: slot indexes in update order, at most replicas − partition of them. */
export function sortForUpdate(i: Pick<UpdateInput, 'replicas' | 'replicaCount' | 'partition' | 'unordered' | 'updateRevision'>): number[] {
  const maxUpdate = i.replicaCount - i.partition;
  if (maxUpdate <= 0) return [];
  if (!i.unordered) {
    const out: number[] = [];
    for (let t = i.replicas.length - 1; t >= i.partition && out.length < maxUpdate; t--) if (i.replicas[t]) out.push(t);
    return out;
  }
  const updated: number[] = [];
  let waiting: number[] = [];
  for (let t = i.replicas.length - 1; t >= 0; t--) {
    const p = i.replicas[t];
    if (!p) continue;
    if (isTerminating(p) || isPodAtRevision(p, i.updateRevision)) updated.push(t);
    else waiting.push(t);
  }
  const ps = i.unordered.priorityStrategy;
  if (ps?.weightPriority?.length) {
    waiting = waiting
      .map((t, idx) => ({ t, idx, w: weight(i.replicas[t]!, ps) }))
      .sort((a, b) => b.w - a.w || a.idx - b.idx)
      .map((x) => x.t);
  } else if (ps?.orderPriority?.length) {
    waiting = waiting
      .map((t, idx) => ({ t, idx, r: orderValue(i.replicas[t]!, ps) }))
      .sort((a, b) => a.r.k - b.r.k || b.r.v - a.r.v || a.idx - b.idx)
      .map((x) => x.t);
  }
  return [...updated, ...waiting].slice(0, maxUpdate);
}

/** Upstream's `inPlaceUpdatePod` for one pod: undefined when it is not updated in place (recreate instead). */
function inPlaceStep(pod: Pod, i: UpdateInput): PodUpdate | undefined {
  if (i.policy !== 'InPlaceIfPossible' && i.policy !== 'InPlaceOnly') return undefined;
  if (i.canInPlace(pod)) {
    const ipu = i.lifecycle?.inPlaceUpdate;
    switch (podState(pod)) {
      case '':
      case 'PreparingNormal':
      case 'Normal':
        return isHooked(ipu, pod) ? { pod, action: 'prepare-update', readdHandlers: false } : { pod, action: 'in-place' };
      case 'Updated':
        return { pod, action: 'prepare-update', readdHandlers: true };
      case 'PreparingUpdate':
        return isHooked(ipu, pod) ? undefined : { pod, action: 'in-place' };
      case 'Updating':
        return { pod, action: 'in-place' };
      default:
        return { pod, action: 'error', message: `not allowed to in-place update pod ${pod.metadata.name} in state ${podState(pod)}` };
    }
  }
  if (i.policy === 'InPlaceOnly') {
    return { pod, action: 'error', message: `find strategy is InPlaceOnly but Pod ${pod.metadata.name} can not update in-place` };
  }
  return undefined;
}

/** One round of the rolling update: the specified deletes, then the pods in update order within maxUnavailable. */
export function planUpdate(i: UpdateInput): PodUpdate[] {
  const out: PodUpdate[] = [];
  const unavailable = unavailableNames(i);
  const specified = new Set<string>();
  // Specified deletes first, highest slot first, regardless of partition; an available one waits for room.
  for (let t = i.replicas.length - 1; t >= 0; t--) {
    const p = i.replicas[t];
    if (!p || p.metadata.labels?.[LABEL_SPECIFIED_DELETE] === undefined) continue;
    if (unavailable.size >= i.maxUnavailable && !unavailable.has(p.metadata.name!)) continue;
    specified.add(p.metadata.name!);
    const step = deleteStep(p, i.lifecycle);
    if (step === 'delete') out.push({ pod: p, action: 'delete', specified: true });
    else if (step === 'prepare-delete') out.push({ pod: p, action: 'prepare-delete' });
    unavailable.add(p.metadata.name!);
  }
  for (const t of sortForUpdate(i)) {
    const p = i.replicas[t]!;
    const claims = i.claims?.(p);
    if (isPodAtRevision(p, i.updateRevision) && (claims?.matched ?? true)) continue;
    if (unavailable.size >= i.maxUnavailable && !unavailable.has(p.metadata.name!)) break;
    if (claims) {
      // A pod's claims grow before the pod is updated (the pod keeps the volume mounted, so the file system can grow
      // online); the pod waits, counted unavailable, until every resize is done, and the next pod is looked at.
      if (!claims.matched) out.push({ pod: p, action: 'resize-claims' });
      if (!claims.matched || !claims.completed) {
        unavailable.add(p.metadata.name!);
        continue;
      }
      if (isPodAtRevision(p, i.updateRevision)) continue;
    }
    if (!specified.has(p.metadata.name!) && !isTerminating(p)) {
      const inPlace = inPlaceStep(p, i);
      if (inPlace) out.push(inPlace);
      else if (i.policy === 'ReCreate' || !i.canInPlace(p) || podState(p) !== 'PreparingUpdate') {
        const step = deleteStep(p, i.lifecycle);
        if (step === 'delete') out.push({ pod: p, action: 'delete', specified: false });
        else if (step === 'prepare-delete') out.push({ pod: p, action: 'prepare-delete' });
      }
    }
    unavailable.add(p.metadata.name!);
  }
  return out;
}

/**
 * CloneSet Scale, pure (upstream's `sync/cloneset_scale.go` and `calculateDiffsWithExpectation`): int-or-percent
 * values, the diff between desired and current pods, what Scale does this round, and whether a pod picked for
 * deletion waits for its preDelete hook. Upstream's algorithms (Kruise v1.9) with one hole closed: a reused
 * instance id whose pod still terminates is skipped instead of stalling the create (scale-sync.ts).
 */
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CLONESET_DEFAULT_MAX_UNAVAILABLE,
  CONDITION_INPLACE_UPDATE_READY,
  CONDITION_KRUISE_POD_READY,
  LABEL_CLONESET_INSTANCE_ID,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
} from '../../../contracts/index.js';
import { kruiseOwnerReference } from '../../core/meta.js';
import type { OwnerReference, Pod } from '../../core/types.js';
import { templateOf, type Revision } from '../../control/controller-revision.js';
import { isHooked, isPodAtRevision, isPodAvailable, podState, shortHash, type Lifecycle } from '../../control/workload-pods.js';
import { isSpecifiedDelete, sortForScaleIn, type CloneSetObject } from './pods.js';

// ---------------------------------------------------------------------------------------------
// Int-or-percent
// ---------------------------------------------------------------------------------------------

/** Ints as-is; `"N%"` of `total`, rounded up or down. Throws on anything else (validation catches it first). */
export function scaledValue(v: number | string | undefined, total: number, roundUp: boolean, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v.trim());
  if (!m) {
    if (/^\d+$/.test(v.trim())) return Number(v.trim());
    throw new Error(`invalid value "${v}": expected an integer or a percentage like "20%"`);
  }
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/** Partition in pods: percent rounded up; a percent below 100% never keeps every pod back; clamped. */
export function partitionReplicas(partition: number | string | undefined, replicas: number): number {
  if (partition === undefined || partition === null) return 0;
  let p = scaledValue(partition, replicas, true, 0);
  if (typeof partition === 'string' && partition.trim() !== '100%' && p === replicas && replicas > 1) p = replicas - 1;
  return Math.min(Math.max(p, 0), replicas);
}

// ---------------------------------------------------------------------------------------------
// Diffs (calculateDiffsWithExpectation)
// ---------------------------------------------------------------------------------------------

export interface DiffInput {
  readonly replicas: number;
  readonly partition?: number | string;
  readonly maxSurge?: number | string;
  readonly maxUnavailable?: number | string;
  readonly scaleMaxUnavailable?: number | string;
  readonly paused?: boolean;
  readonly minReadySeconds: number;
  /** Active, claimed pods. */
  readonly pods: readonly Pod[];
  readonly updateRevision: string;
  readonly currentRevision: string;
  readonly podsToDelete: ReadonlySet<string>;
  /** PreparingDelete pods do not count when scaling (label or manager flag). */
  readonly excludePreparingDelete: boolean;
  /** Gate CloneSetPartitionRollback. */
  readonly partitionRollback?: boolean;
  /**
   * Gate PreparingUpdateAsUpdate (upstream alpha, off by default): when scaling, a pod held in PreparingUpdate
   * counts as of the update revision, so the pods created to replace others keep the partition's old share.
   * Scale only; Update always counts by revision hash.
   */
  readonly preparingUpdateAsUpdate?: boolean;
  readonly nowMs: number;
}

export interface Diffs {
  readonly scaleUpNum: number;
  readonly scaleUpNumOldRevision: number;
  readonly scaleUpLimit: number;
  readonly scaleDownNum: number;
  readonly scaleDownNumOldRevision: number;
  readonly deleteReadyLimit: number;
  readonly useSurge: number;
  readonly useSurgeOldRevision: number;
  /** >0: pods to move to the update revision; <0: pods to roll back to the current revision. */
  readonly updateNum: number;
  readonly updateMaxUnavailable: number;
}

const sameSign = (a: number, b: number) => (a > 0 && b < 0) || (a < 0 && b > 0);

export function calculateDiffs(i: DiffInput): Diffs {
  const R = i.replicas;
  const P = partitionReplicas(i.partition, R);
  const S = i.paused ? 0 : scaledValue(i.maxSurge, R, true, 0);
  const U = scaledValue(i.maxUnavailable, R, S === 0, scaledValue(CLONESET_DEFAULT_MAX_UNAVAILABLE, R, S === 0, 0));
  const SU = i.scaleMaxUnavailable === undefined ? Number.MAX_SAFE_INTEGER : scaledValue(i.scaleMaxUnavailable, R, true, 0);

  let newActive = 0,
    oldCount = 0,
    oldActive = 0,
    unavailNew = 0,
    unavailOld = 0,
    toDeleteNew = 0,
    toDeleteOld = 0,
    preDelNew = 0,
    preDelOld = 0;
  for (const p of i.pods) {
    const isNew = isPodAtRevision(p, i.updateRevision) || (!!i.preparingUpdateAsUpdate && podState(p) === 'PreparingUpdate');
    if (!isNew) oldCount++;
    if (podState(p) === 'PreparingDelete') {
      if (isNew) preDelNew++;
      else preDelOld++;
      continue;
    }
    if (isNew) newActive++;
    else oldActive++;
    if (isSpecifiedDelete(p, i.podsToDelete)) {
      if (isNew) toDeleteNew++;
      else toDeleteOld++;
    } else if (!isPodAvailable(p, i.minReadySeconds, i.nowMs)) {
      if (isNew) unavailNew++;
      else unavailOld++;
    }
  }

  let oldDiff = oldActive - P;
  let newDiff = newActive - (R - P);
  if (i.updateRevision === i.currentRevision || !i.partitionRollback) {
    oldDiff = Math.max(oldDiff, 0);
    newDiff = Math.min(newDiff, 0);
  }
  const preDeleting = preDelNew + preDelOld;
  const unavail = preDeleting + unavailNew + unavailOld;
  const toDelete = toDeleteNew + toDeleteOld;

  let useSurge = 0,
    useSurgeOld = 0;
  if (S > 0) {
    let scaleSurge = 0,
      scaleSurgeOld = 0;
    if (toDelete > 0) {
      scaleSurge = Math.min(Math.max(unavail + toDelete - U, 0), toDelete);
      if (scaleSurge > toDeleteNew) scaleSurgeOld = scaleSurge - toDeleteNew;
    }
    let updateSurge = 0,
      updateSurgeOld = 0;
    if (sameSign(oldDiff, newDiff)) {
      if (Math.abs(oldDiff) <= Math.abs(newDiff)) {
        updateSurge = Math.abs(oldDiff);
        if (oldDiff < 0) updateSurgeOld = updateSurge;
      } else {
        updateSurge = Math.abs(newDiff);
        if (newDiff > 0) updateSurgeOld = updateSurge;
      }
    }
    if (scaleSurge >= updateSurge) {
      useSurge = Math.min(S, scaleSurge);
      useSurgeOld = Math.min(useSurge, scaleSurgeOld);
    } else {
      useSurge = Math.min(S, updateSurge);
      useSurgeOld = Math.min(useSurge, updateSurgeOld);
    }
  }

  const curTotal = i.pods.length - (i.excludePreparingDelete ? preDeleting : 0);
  const curOld = oldCount - (i.excludePreparingDelete ? preDelOld : 0);
  const expTotal = R + useSurge;
  const expOld = P + useSurgeOld;

  const up = expTotal - curTotal;
  const scaleUpNum = Math.max(up, 0);
  const scaleUpNumOldRevision = scaleUpNum > 0 ? Math.max(expOld - curOld, 0) : 0;
  const scaleUpLimit = scaleUpNum > 0 ? Math.min(scaleUpNum, Math.max(SU - unavail, 0)) : 0;
  const down = curTotal - toDelete - expTotal;
  const scaleDownNum = Math.max(down, 0);
  const scaleDownNumOldRevision = scaleDownNum > 0 ? Math.max(curOld - toDeleteOld - expOld, 0) : 0;
  const deleteReadyLimit = toDelete > 0 || scaleDownNum > 0 ? Math.max(U + i.pods.length - R - unavail, 0) : 0;

  const updateNum = Math.abs(oldDiff) <= Math.abs(newDiff) ? oldDiff : -newDiff;
  const updateMaxUnavailable = updateNum !== 0 ? U + i.pods.length - R : 0;
  return {
    scaleUpNum,
    scaleUpNumOldRevision,
    scaleUpLimit,
    scaleDownNum,
    scaleDownNumOldRevision,
    deleteReadyLimit,
    useSurge,
    useSurgeOldRevision: useSurgeOld,
    updateNum,
    updateMaxUnavailable,
  };
}

// ---------------------------------------------------------------------------------------------
// Scale
// ---------------------------------------------------------------------------------------------

export interface ScaleInput extends DiffInput {
  readonly lifecycle?: Lifecycle;
}

/** One Scale step; the reconcile carries it out and ends the round if anything changed. */
export type ScalePlan =
  | { readonly action: 'none' }
  /** Scale-up while pods wait in PreparingDelete: take them back (to PreparingNormal) first. */
  | { readonly action: 'undelete'; readonly pods: readonly Pod[] }
  /** Create `count` pods, the first `oldRevisionCount` at the current revision; `wanted` before the limit. */
  | { readonly action: 'create'; readonly count: number; readonly oldRevisionCount: number; readonly wanted: number }
  /** Delete (or move to PreparingDelete, see `deleteStep`) these pods. */
  | { readonly action: 'delete'; readonly pods: readonly Pod[]; readonly reason: 'preparing-delete' | 'specified' | 'scale-in' };

function anyMarkNotReady(l: Lifecycle | undefined): boolean {
  return !!(l?.preDelete?.markPodNotReady || l?.inPlaceUpdate?.markPodNotReady || l?.preNormal?.markPodNotReady);
}

/**
 * Scale, in upstream's order: take PreparingDelete pods back on scale-up, create, finish PreparingDelete
 * pods, delete specified pods (ready ones within the budget), then scale in by the scale-in order.
 */
export function planScale(i: ScaleInput, d: Diffs = calculateDiffs(i)): ScalePlan {
  const preparingDelete = i.pods.filter((p) => podState(p) === 'PreparingDelete');
  const specified = i.pods.filter((p) => podState(p) !== 'PreparingDelete' && isSpecifiedDelete(p, i.podsToDelete));
  const numToDelete = preparingDelete.length + specified.length;

  if (!anyMarkNotReady(i.lifecycle)) {
    let diff = i.replicas - i.pods.length + numToDelete;
    const back: Pod[] = [];
    for (const p of preparingDelete) {
      if (diff <= 0) break;
      if (isSpecifiedDelete(p, i.podsToDelete)) continue;
      back.push(p);
      diff--;
    }
    if (back.length > 0) return { action: 'undelete', pods: back };
  }

  if (d.scaleUpNum > 0) {
    const count = d.scaleUpLimit;
    if (count > 0) return { action: 'create', count, oldRevisionCount: Math.min(d.scaleUpNumOldRevision, count), wanted: d.scaleUpNum };
    return { action: 'create', count: 0, oldRevisionCount: 0, wanted: d.scaleUpNum };
  }

  const finishing = preparingDelete.filter((p) => deleteStep(p, i.lifecycle) === 'delete');
  if (finishing.length > 0) return { action: 'delete', pods: finishing, reason: 'preparing-delete' };

  if (specified.length > 0) {
    let budget = d.deleteReadyLimit;
    const chosen: Pod[] = [];
    for (const p of sortForScaleIn(specified, i.minReadySeconds, i.nowMs)) {
      if (isPodAvailable(p, 0, i.nowMs)) {
        if (budget <= 0) continue;
        budget--;
      }
      chosen.push(p);
    }
    if (chosen.length > 0) return { action: 'delete', pods: chosen, reason: 'specified' };
  }

  if (d.scaleDownNum > 0 && numToDelete === 0) {
    const isNew = (p: Pod) => isPodAtRevision(p, i.updateRevision);
    const victims: Pod[] = [];
    if (d.scaleDownNumOldRevision > 0) {
      victims.push(
        ...sortForScaleIn(
          i.pods.filter((p) => !isNew(p)),
          i.minReadySeconds,
          i.nowMs,
        ).slice(0, d.scaleDownNumOldRevision),
      );
    }
    const rest = d.scaleDownNum - victims.length;
    if (rest > 0)
      victims.push(
        ...sortForScaleIn(
          i.pods.filter((p) => isNew(p)),
          i.minReadySeconds,
          i.nowMs,
        ).slice(0, rest),
      );
    let budget = d.deleteReadyLimit;
    const chosen: Pod[] = [];
    for (const p of victims) {
      if (isPodAvailable(p, 0, i.nowMs)) {
        if (budget <= 0) continue;
        budget--;
      }
      chosen.push(p);
    }
    if (chosen.length > 0) return { action: 'delete', pods: chosen, reason: 'scale-in' };
  }
  return { action: 'none' };
}

/** For a pod picked for deletion: hold it in PreparingDelete while the preDelete hook holds, else delete. */
export function deleteStep(p: Pod, l: Lifecycle | undefined): 'prepare' | 'wait' | 'delete' {
  if (!isHooked(l?.preDelete, p)) return 'delete';
  return podState(p) === 'PreparingDelete' ? 'wait' : 'prepare';
}

/** The owner reference a CloneSet puts on the pods, PVCs and revisions it creates (it controls them). */
export function cloneSetOwnerReference(cs: CloneSetObject): OwnerReference {
  return kruiseOwnerReference(cs, 'CloneSet', { controller: true, blockOwnerDeletion: true });
}

/** The pod of one instance: template of its revision, our labels, owner, gates, PVC volumes; `now` stamps its lifecycle. */
export function newPod(cs: CloneSetObject, name: string, id: string, revision: Revision, claims: Record<string, string>, now: string): Pod {
  const t = (templateOf(revision) ?? (cs.spec.template as Record<string, unknown>)) as {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] };
    spec?: Record<string, unknown>;
  };
  const revName = revision.metadata.name!;
  const spec = structuredClone(t.spec ?? {}) as NonNullable<Pod['spec']> & {
    readinessGates?: Array<{ conditionType: string }>;
    volumes?: Array<Record<string, unknown> & { name: string }>;
  };
  const gates = spec.readinessGates ?? [];
  for (const g of [CONDITION_INPLACE_UPDATE_READY, CONDITION_KRUISE_POD_READY]) {
    if (!gates.some((x) => x.conditionType === g)) gates.push({ conditionType: g });
  }
  spec.readinessGates = gates;
  if (Object.keys(claims).length) {
    const volumes = (spec.volumes ?? []).filter((v) => !(v.name in claims));
    for (const [vname, claimName] of Object.entries(claims)) volumes.push({ name: vname, persistentVolumeClaim: { claimName } });
    spec.volumes = volumes;
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${cs.metadata.name}-`,
      namespace: cs.metadata.namespace,
      labels: {
        ...(t.metadata?.labels ?? {}),
        [LABEL_CONTROLLER_REVISION_HASH]: revName,
        [LABEL_POD_TEMPLATE_HASH]: shortHash(revName),
        [LABEL_CLONESET_INSTANCE_ID]: id,
        [LABEL_LIFECYCLE_STATE]: 'PreparingNormal',
      },
      annotations: { ...(t.metadata?.annotations ?? {}), [ANNOTATION_LIFECYCLE_TIMESTAMP]: now },
      ...(t.metadata?.finalizers?.length ? { finalizers: [...t.metadata.finalizers] } : {}),
      ownerReferences: [cloneSetOwnerReference(cs)],
    },
    spec,
  };
}

/**
 * The CloneSet controller's decisions, pure (no I/O): the diff between desired and current pods, what
 * Scale and Update do this round, the lifecycle and in-place transitions of one pod, and the status.
 * Upstream's algorithms (Kruise v1.9 CloneSet) with the holes the issue names closed:
 * - a direct Updating/PreparingUpdate → Normal step clears the lifecycle's not-ready mark;
 * - in-place completion also accepts a new container ID, so a re-tag to the same digest cannot hang;
 * - a reused instance id whose pod still terminates is skipped instead of stalling the create.
 */
import type { LifecycleState } from '../../../api/pod-contracts.js';
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  CONDITION_INPLACE_UPDATE_READY,
  CONDITION_KRUISE_POD_READY,
  LABEL_SPECIFIED_DELETE,
} from '../../../contracts/index.js';
import type { Pod, PodCondition } from '../../core/types.js';
import {
  condition,
  hasReadinessGate,
  isAllHooked,
  isHooked,
  isPodAtRevision,
  isPodAvailable,
  isPodUpdateReady,
  isSpecifiedDelete,
  podState,
  sortForScaleIn,
  type Hook,
  type Lifecycle,
} from './pods.js';

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
  const U = scaledValue(i.maxUnavailable, R, S === 0, scaledValue('20%', R, S === 0, 0));
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
    const isNew = isPodAtRevision(p, i.updateRevision);
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

// ---------------------------------------------------------------------------------------------
// Lifecycle refresh (refreshPodState) and the not-ready mark
// ---------------------------------------------------------------------------------------------

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

export interface NotReadyKey {
  readonly userAgent: string;
  readonly key: string;
}

/** Parses KruisePodReady's message (sorted JSON array of {userAgent,key}); anything else is no keys. */
export function parseNotReadyKeys(c: PodCondition | undefined): NotReadyKey[] {
  if (!c?.message) return [];
  try {
    const v = JSON.parse(c.message) as unknown;
    if (!Array.isArray(v)) return [];
    return v
      .filter((x): x is NotReadyKey => {
        const o = x as Partial<Record<keyof NotReadyKey, unknown>> | null;
        return typeof o === 'object' && o !== null && typeof o.userAgent === 'string' && typeof o.key === 'string';
      })
      .map((x) => ({ userAgent: x.userAgent, key: x.key }));
  } catch {
    return [];
  }
}

/** The KruisePodReady condition after adding or removing one lifecycle key; undefined when unchanged. */
export function kruisePodReadyWith(pod: Pod, key: string, present: boolean, now: string): PodCondition | undefined {
  const c = condition(pod, CONDITION_KRUISE_POD_READY);
  const keys = parseNotReadyKeys(c);
  const has = keys.some((k) => k.userAgent === LIFECYCLE_USER_AGENT && k.key === key);
  let next = keys;
  if (present && !has) next = [...keys, { userAgent: LIFECYCLE_USER_AGENT, key }];
  else if (!present && has) next = keys.filter((k) => !(k.userAgent === LIFECYCLE_USER_AGENT && k.key === key));
  const status = next.length === 0 ? 'True' : 'False';
  if (next === keys && c?.status === status) return undefined;
  next = [...next].sort((a, b) => (a.userAgent + a.key < b.userAgent + b.key ? -1 : a.userAgent + a.key > b.userAgent + b.key ? 1 : 0));
  return {
    type: CONDITION_KRUISE_POD_READY,
    status,
    ...(next.length ? { message: JSON.stringify(next) } : {}),
    lastTransitionTime: c?.status === status && c.lastTransitionTime ? c.lastTransitionTime : now,
  };
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

// ---------------------------------------------------------------------------------------------
// In-place update state and completion
// ---------------------------------------------------------------------------------------------

/** `apps.kruise.io/inplace-update-state`, upstream's fields plus the container IDs we compare. */
export interface InPlaceUpdateState {
  revision: string;
  updateTimestamp: string;
  lastContainerStatuses?: Record<string, { imageID?: string; containerID?: string }>;
  updateImages?: boolean;
  /** Upstream's record of which containers each patch changed (one batch: every changed container at once). */
  containerBatchesRecord?: Array<{ timestamp: string; containers: string[] }>;
}

/** `apps.kruise.io/inplace-update-grace`: the patch held back for the grace period. */
export interface InPlaceUpdateGrace {
  revision: string;
  containerImages: Record<string, string>;
  graceSeconds: number;
}

export function parseJson<T>(raw: string | undefined): T | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

/** The state recorded when images are patched: the pre-update image and container IDs of changed containers. */
export function inPlaceState(pod: Pod, revision: string, images: Readonly<Record<string, string>>, now: string): InPlaceUpdateState {
  const last: Record<string, { imageID?: string; containerID?: string }> = {};
  for (const name of Object.keys(images)) {
    const s = pod.status?.containerStatuses?.find((c) => c.name === name);
    last[name] = { imageID: (s?.imageID as string | undefined) ?? '', ...(s?.containerID ? { containerID: s.containerID } : {}) };
  }
  const names = Object.keys(images);
  return {
    revision,
    updateTimestamp: now,
    lastContainerStatuses: last,
    ...(names.length ? { updateImages: true, containerBatchesRecord: [{ timestamp: now, containers: names }] } : {}),
  };
}

function withLatest(image: string): string {
  const slash = image.lastIndexOf('/');
  return image.indexOf('@') < 0 && image.lastIndexOf(':') <= slash ? `${image}:latest` : image;
}

/**
 * Completion of an in-place update. Upstream's rule: every recorded container is in status and its
 * imageID changed or its status image equals the spec image. A re-tag to the same digest keeps the
 * imageID and may keep the old tag in status, so that rule can wait for ever; a new container ID for
 * the recorded container (the kubelet recreated it after our patch) completes it too.
 */
export function inPlaceCompleted(pod: Pod): boolean {
  if (pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_GRACE]) return false;
  const state = parseJson<InPlaceUpdateState>(pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE]);
  if (!state) return true;
  for (const [name, last] of Object.entries(state.lastContainerStatuses ?? {})) {
    const s = pod.status?.containerStatuses?.find((c) => c.name === name);
    if (!s) return false;
    const spec = pod.spec?.containers.find((c) => c.name === name);
    const imageChanged = !!s.imageID && s.imageID !== last.imageID;
    const restarted = !!last.containerID && !!s.containerID && s.containerID !== last.containerID;
    const sameImage = !!spec?.image && !!s.image && withLatest(spec.image) === withLatest(s.image);
    if (!imageChanged && !restarted && !(sameImage && !last.containerID)) return false;
  }
  return true;
}

/** InPlaceUpdateReady should be set True: the pod has the gate, no update is pending, it is not True yet. */
export function shouldMarkInPlaceReady(pod: Pod): boolean {
  if (!hasReadinessGate(pod, CONDITION_INPLACE_UPDATE_READY)) return false;
  if (condition(pod, CONDITION_INPLACE_UPDATE_READY)?.status === 'True') return false;
  return inPlaceCompleted(pod);
}

// ---------------------------------------------------------------------------------------------
// Update
// ---------------------------------------------------------------------------------------------

export type UpdateType = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly' | 'OnDelete';

export interface UpdateInput {
  readonly pods: readonly Pod[];
  readonly diffs: Diffs;
  readonly updateRevision: string;
  readonly currentRevision: string;
  readonly type: UpdateType;
  readonly paused?: boolean;
  readonly minReadySeconds: number;
  readonly lifecycle?: Lifecycle;
  readonly priority?: {
    readonly weightPriority?: ReadonlyArray<{ weight: number; matchSelector: { matchLabels?: Record<string, string> } }>;
    readonly orderPriority?: ReadonlyArray<{ orderedKey: string }>;
  };
  readonly scatter?: ReadonlyArray<{ key: string; value: string }>;
  /** Whether the pod's revision can reach the target in place (images/metadata only). */
  readonly canInPlace: (pod: Pod, targetRevision: string) => boolean;
  readonly nowMs: number;
}

/** What to do to one pod picked for update. */
export type PodUpdate =
  | { readonly pod: Pod; readonly action: 'in-place'; readonly target: string }
  /** The inPlaceUpdate hook holds: move to PreparingUpdate (and re-add handlers when it was Updated). */
  | { readonly pod: Pod; readonly action: 'prepare-update'; readonly readdHandlers: boolean }
  /** Still held in PreparingUpdate. */
  | { readonly pod: Pod; readonly action: 'wait' }
  /** ReCreate (or no in-place possible): label specified-delete; Scale deletes and recreates it. */
  | { readonly pod: Pod; readonly action: 'recreate' }
  | { readonly pod: Pod; readonly action: 'error'; readonly message: string };

function matchesLabels(sel: { matchLabels?: Record<string, string> }, labels: Record<string, string>): boolean {
  return Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

function trailingInt(s: string | undefined): number {
  const m = /(\d+)$/.exec(s ?? '');
  return m ? Number(m[1]) : -1;
}

/** k8s ActivePods order then priorityStrategy then scatterStrategy then PreparingUpdate first. */
export function sortForUpdate(pods: readonly Pod[], i: Pick<UpdateInput, 'priority' | 'scatter' | 'nowMs'>): Pod[] {
  const active = (p: Pod) => [
    p.spec?.nodeName ? 1 : 0,
    p.status?.phase === 'Pending' ? 0 : p.status?.phase === 'Unknown' ? 1 : 2,
    condition(p, 'Ready')?.status === 'True' ? 1 : 0,
  ];
  let sorted = [...pods].sort((a, b) => {
    const x = active(a);
    const y = active(b);
    for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
    return 0;
  });
  const wp = i.priority?.weightPriority;
  const op = i.priority?.orderPriority;
  if (wp?.length) {
    const w = (p: Pod) => wp.reduce((s, t) => s + (matchesLabels(t.matchSelector, p.metadata.labels ?? {}) ? t.weight : 0), 0);
    sorted = sorted
      .map((p, idx) => ({ p, idx, w: w(p) }))
      .sort((a, b) => b.w - a.w || a.idx - b.idx)
      .map((x) => x.p);
  } else if (op?.length) {
    const rank = (p: Pod) => {
      const labels = p.metadata.labels ?? {};
      const k = op.findIndex((o) => labels[o.orderedKey] !== undefined);
      return k < 0 ? { k: op.length, v: -1 } : { k, v: trailingInt(labels[op[k]!.orderedKey]) };
    };
    sorted = sorted
      .map((p, idx) => ({ p, idx, r: rank(p) }))
      .sort((a, b) => a.r.k - b.r.k || b.r.v - a.r.v || a.idx - b.idx)
      .map((x) => x.p);
  }
  if (i.scatter?.length) {
    // Interleave pods matching a scatter term evenly among the others (stable within each group).
    for (const term of i.scatter) {
      const match = sorted.filter((p) => p.metadata.labels?.[term.key] === term.value);
      const other = sorted.filter((p) => p.metadata.labels?.[term.key] !== term.value);
      if (match.length < 2 || other.length === 0) continue;
      const out: Pod[] = [];
      const step = (other.length + match.length) / match.length;
      let m = 0;
      for (let pos = 0; out.length < sorted.length; pos++) {
        if (m < match.length && pos >= Math.floor(m * step)) out.push(match[m++]!);
        else if (other.length) out.push(other.shift()!);
        else out.push(match[m++]!);
      }
      sorted = out;
    }
  }
  const prep = sorted.filter((p) => podState(p) === 'PreparingUpdate');
  return [...prep, ...sorted.filter((p) => podState(p) !== 'PreparingUpdate')];
}

/** The pods updated this round and how, within updateNum and maxUnavailable. */
export function planUpdate(i: UpdateInput): PodUpdate[] {
  if (i.type === 'OnDelete' || i.paused || i.diffs.updateNum === 0) return [];
  const target = i.diffs.updateNum > 0 ? i.updateRevision : i.currentRevision;
  const waiting = i.pods.filter(
    (p) =>
      !isPodAtRevision(p, target) &&
      podState(p) !== 'PreparingDelete' &&
      !p.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_GRACE] &&
      !p.metadata.labels?.[LABEL_SPECIFIED_DELETE],
  );
  let chosen = sortForUpdate(waiting, i).slice(0, Math.abs(i.diffs.updateNum));
  let unavailable = 0,
    targetUnavailable = 0;
  for (const p of i.pods) {
    if (!isPodAvailable(p, i.minReadySeconds, i.nowMs)) {
      unavailable++;
      if (isPodAtRevision(p, target)) targetUnavailable++;
    }
  }
  let can = 0;
  for (const p of chosen) {
    if (targetUnavailable + can >= i.diffs.updateMaxUnavailable) break;
    if (isPodAvailable(p, i.minReadySeconds, i.nowMs)) {
      if (unavailable >= i.diffs.updateMaxUnavailable) break;
      unavailable++;
    }
    can++;
  }
  chosen = chosen.slice(0, can);
  return chosen.map((pod) => podUpdate(pod, target, i));
}

function podUpdate(pod: Pod, target: string, i: UpdateInput): PodUpdate {
  if (i.type === 'InPlaceIfPossible' || i.type === 'InPlaceOnly') {
    if (i.canInPlace(pod, target)) {
      const ipu: Hook | undefined = i.lifecycle?.inPlaceUpdate;
      switch (podState(pod)) {
        case '':
        case 'PreparingNormal':
        case 'Normal':
          if (isHooked(ipu, pod)) return { pod, action: 'prepare-update', readdHandlers: false };
          return { pod, action: 'in-place', target };
        case 'Updated':
          return { pod, action: 'prepare-update', readdHandlers: true };
        case 'PreparingUpdate':
          if (isHooked(ipu, pod)) return { pod, action: 'wait' };
          return { pod, action: 'in-place', target };
        case 'Updating':
          return { pod, action: 'in-place', target };
        default:
          return { pod, action: 'error', message: `not allowed to update pod ${pod.metadata.name} in place in state ${podState(pod)}` };
      }
    }
    if (i.type === 'InPlaceOnly') {
      return {
        pod,
        action: 'error',
        message: `pod ${pod.metadata.name} cannot be updated in place to ${target} and the strategy is InPlaceOnly`,
      };
    }
  }
  return { pod, action: 'recreate' };
}

// ---------------------------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------------------------

export interface StatusCounts {
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  updatedReplicas: number;
  updatedReadyReplicas: number;
  updatedAvailableReplicas: number;
  expectedUpdatedReplicas: number;
}

/** Counts over the active, claimed pods. readyReplicas ignores lifecycle; availableReplicas needs Normal. */
export function statusCounts(
  pods: readonly Pod[],
  updateRevision: string,
  replicas: number,
  partition: number | string | undefined,
  minReadySeconds: number,
  nowMs: number,
): StatusCounts {
  let ready = 0,
    available = 0,
    updated = 0,
    updatedReady = 0,
    updatedAvailable = 0;
  for (const p of pods) {
    const r = isPodUpdateReady(p, 0, nowMs);
    const a = isPodAvailable(p, minReadySeconds, nowMs);
    const u = isPodAtRevision(p, updateRevision);
    if (r) ready++;
    if (a) available++;
    if (u) updated++;
    if (u && r) updatedReady++;
    if (u && a) updatedAvailable++;
  }
  return {
    replicas: pods.length,
    readyReplicas: ready,
    availableReplicas: available,
    updatedReplicas: updated,
    updatedReadyReplicas: updatedReady,
    updatedAvailableReplicas: updatedAvailable,
    expectedUpdatedReplicas: replicas - partitionReplicas(partition, replicas),
  };
}

export interface CloneSetConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
}

/**
 * FailedScale/FailedUpdate after a sync: set (True, the error) when the step failed, removed once it
 * succeeded (upstream never clears them).
 */
export function syncConditions(
  existing: readonly CloneSetConditionLike[],
  failures: { scale?: string; update?: string },
  now: string,
): CloneSetConditionLike[] {
  const out = existing.filter((c) => c.type !== 'FailedScale' && c.type !== 'FailedUpdate');
  const put = (type: string, message: string | undefined) => {
    if (message === undefined) return;
    const old = existing.find((c) => c.type === type);
    out.push({
      type,
      status: 'True',
      message,
      lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : now,
    });
  };
  put('FailedScale', failures.scale);
  put('FailedUpdate', failures.update);
  return out;
}

/** currentRevision becomes the update revision once every pod is updated and the count is right. */
export function nextCurrentRevision(current: string | undefined, update: string, counts: StatusCounts, specReplicas: number): string {
  if (!current) return update;
  if (counts.updatedReplicas === counts.replicas && counts.replicas === specReplicas) return update;
  return current;
}

/** `metav1.LabelSelector` as `labels.Selector.String()` writes it (the scale subresource's selector). */
export function selectorString(sel: {
  matchLabels?: Record<string, string>;
  matchExpressions?: ReadonlyArray<{ key: string; operator: string; values?: string[] }>;
}): string {
  const parts: Array<{ key: string; s: string }> = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) parts.push({ key: k, s: `${k}=${v}` });
  for (const e of sel.matchExpressions ?? []) {
    const vals = [...(e.values ?? [])].sort().join(',');
    const s =
      e.operator === 'In'
        ? `${e.key} in (${vals})`
        : e.operator === 'NotIn'
          ? `${e.key} notin (${vals})`
          : e.operator === 'Exists'
            ? e.key
            : `!${e.key}`;
    parts.push({ key: e.key, s });
  }
  return parts
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((p) => p.s)
    .join(',');
}

// ---------------------------------------------------------------------------------------------
// The Progressing condition (spec.progressDeadlineSeconds)
// ---------------------------------------------------------------------------------------------

/** Condition type and reasons, in upstream's spelling (users and upstream's e2e match on them). */
export const CONDITION_PROGRESSING = 'Progressing';
export const PROGRESS_DEADLINE_EXCEEDED = 'ProgressDeadlineExceeded';
export const PROGRESS_PAUSED = 'CloneSetPaused';
export const PROGRESS_UPDATED = 'CloneSetUpdated';
export const PROGRESS_PARTITION_AVAILABLE = 'ProgressPartitionAvailable';
export const PROGRESS_AVAILABLE = 'CloneSetAvailable';

/** A deadline of MaxInt32 means "no deadline", as for Deployments. */
const NO_DEADLINE = 2147483647;

export interface ProgressInput {
  progressDeadlineSeconds: number | undefined;
  /** spec.replicas with its default (1). */
  specReplicas: number;
  paused: boolean;
  /** The status this round computed, including the next currentRevision. */
  status: Pick<StatusCounts, 'replicas' | 'updatedReplicas' | 'updatedAvailableReplicas' | 'expectedUpdatedReplicas'> & {
    currentRevision: string;
    updateRevision: string;
  };
  /** The conditions carried over from the stored status (the Progressing one is the clock of the deadline). */
  conditions: readonly CloneSetConditionLike[];
}

export interface ProgressResult {
  conditions: CloneSetConditionLike[];
  /** When the deadline of a progressing rollout falls due, if it can. */
  requeueAfterMs?: number;
}

const rfc3339At = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Upstream's calculateProgressingStatus: the first of available, paused, partition available, deadline
 * exceeded, else progressing. A condition with the same status and reason is kept as it is (times included),
 * so the deadline runs from when the rollout was first seen progressing; note upstream also measures it from
 * an older Available/Paused condition's lastUpdateTime, so a rollout that starts long after the last one
 * settled is reported as exceeded at once. Without a deadline (unset or MaxInt32) the condition is removed.
 */
export function progressingCondition(input: ProgressInput, nowMs: number): ProgressResult {
  const { progressDeadlineSeconds: pds, specReplicas: want, status: s } = input;
  const existing = input.conditions.find((c) => c.type === CONDITION_PROGRESSING);
  if (pds === undefined || pds === null || pds === NO_DEADLINE) {
    return { conditions: input.conditions.filter((c) => c.type !== CONDITION_PROGRESSING) };
  }
  const set = (status: 'True' | 'False', reason: string, message: string): CloneSetConditionLike[] => {
    if (existing && existing.status === status && existing.reason === reason) return [...input.conditions];
    const now = rfc3339At(nowMs);
    const next: CloneSetConditionLike = {
      type: CONDITION_PROGRESSING,
      status,
      reason,
      message,
      lastUpdateTime: now,
      lastTransitionTime: existing?.status === status && existing.lastTransitionTime ? existing.lastTransitionTime : now,
    };
    // Replaced in place: a moving position would read as a status change in the next round's comparison.
    return existing ? input.conditions.map((c) => (c === existing ? next : c)) : [...input.conditions, next];
  };

  const available =
    s.currentRevision === s.updateRevision && s.replicas === want && s.updatedReplicas === want && s.updatedAvailableReplicas === want;
  if (available) return { conditions: set('True', PROGRESS_AVAILABLE, 'CloneSet is available') };
  if (input.paused) return { conditions: set('True', PROGRESS_PAUSED, 'CloneSet is paused') };
  // expectedUpdatedReplicas below spec.replicas means a partition holds pods back.
  if (s.expectedUpdatedReplicas < want && s.expectedUpdatedReplicas <= s.updatedAvailableReplicas) {
    return { conditions: set('True', PROGRESS_PARTITION_AVAILABLE, 'CloneSet has been paused due to partition ready') };
  }
  const since = existing?.lastUpdateTime ? Date.parse(existing.lastUpdateTime) : NaN;
  if (existing && (existing.reason === PROGRESS_DEADLINE_EXCEEDED || since + pds * 1000 < nowMs)) {
    return { conditions: set('False', PROGRESS_DEADLINE_EXCEEDED, `CloneSet revision ${s.updateRevision} has timed out progressing`) };
  }
  const conditions = set('True', PROGRESS_UPDATED, 'CloneSet is progressing');
  const cond = conditions.find((c) => c.type === CONDITION_PROGRESSING)!;
  const left = Date.parse(cond.lastUpdateTime ?? '') + pds * 1000 - nowMs;
  if (Number.isNaN(left)) return { conditions };
  // Past one second, one more avoids waking a hair before the deadline (the times are whole seconds).
  return { conditions, requeueAfterMs: left < 1000 ? Math.max(left, 1) : left + 1000 };
}

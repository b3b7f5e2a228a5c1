/**
 * CloneSet Update, pure (upstream's `sync/cloneset_update.go`): the update order and which pods are updated this
 * round and how. The in-place machinery it shares with the Advanced workloads is control/inplace-update.ts.
 */
import { ANNOTATION_INPLACE_UPDATE_GRACE, LABEL_SPECIFIED_DELETE } from '../../../contracts/index.js';
import type { Pod } from '../../core/types.js';
import { condition, isHooked, isPodAtRevision, isPodAvailable, podState, type Hook, type Lifecycle } from '../../control/workload-pods.js';
import type { Diffs } from './scale-decision.js';

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

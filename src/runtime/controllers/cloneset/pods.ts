/**
 * Pure predicates over pods for the CloneSet controller: lifecycle state and hooks, readiness and
 * availability, revision match, the scale-in order. Upstream's semantics (Kruise v1.9) unless noted.
 */
import type { CloneSet } from '../../../api/kinds/cloneset.js';
import type { LifecycleState } from '../../../api/pod-contracts.js';
import {
  ANNOTATION_POD_DELETION_COST,
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_SPECIFIED_DELETE,
} from '../../../contracts/index.js';
import type { KubeObject, Pod, PodCondition } from '../../core/types.js';

/** A CloneSet as the informer caches it. */
export type CloneSetObject = CloneSet & KubeObject;

/** A lifecycle hook as the CloneSet spec writes it. */
export interface Hook {
  readonly labelsHandler?: Readonly<Record<string, string>>;
  readonly finalizersHandler?: readonly string[];
  readonly markPodNotReady?: boolean;
}

/** `spec.lifecycle` of a CloneSet. */
export interface Lifecycle {
  readonly preDelete?: Hook;
  readonly inPlaceUpdate?: Hook;
  readonly preNormal?: Hook;
}

/** The pod's lifecycle state label (`''` when absent, which counts as Normal). */
export function podState(p: Pod): LifecycleState | '' {
  return (p.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '') as LifecycleState | '';
}

/** Hooked: ANY listed finalizer present or ANY label with exactly the listed value (nil hook: false). */
export function isHooked(hook: Hook | undefined, p: Pod): boolean {
  if (!hook) return false;
  const fin = p.metadata.finalizers ?? [];
  if ((hook.finalizersHandler ?? []).some((f) => fin.includes(f))) return true;
  const labels = p.metadata.labels ?? {};
  return Object.entries(hook.labelsHandler ?? {}).some(([k, v]) => labels[k] === v);
}

/** AllHooked: ALL finalizers present and ALL labels equal (nil hook: false; empty hook: true). */
export function isAllHooked(hook: Hook | undefined, p: Pod): boolean {
  if (!hook) return false;
  const fin = p.metadata.finalizers ?? [];
  if (!(hook.finalizersHandler ?? []).every((f) => fin.includes(f))) return false;
  const labels = p.metadata.labels ?? {};
  return Object.entries(hook.labelsHandler ?? {}).every(([k, v]) => labels[k] === v);
}

export function condition(p: Pod, type: string): PodCondition | undefined {
  return p.status?.conditions?.find((c) => c.type === type);
}

export function hasReadinessGate(p: Pod, type: string): boolean {
  const gates = (p.spec?.readinessGates ?? []) as Array<{ conditionType?: string }>;
  return gates.some((g) => g.conditionType === type);
}

/** Not Succeeded/Failed and not being deleted. */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata.deletionTimestamp;
}

function isReadyFor(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  const c = condition(p, 'Ready');
  if (c?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= nowMs;
}

/** Running, Ready for at least `minReadySeconds`, and InPlaceUpdateReady absent or True. */
export function isPodUpdateReady(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (p.status?.phase !== 'Running' || !isReadyFor(p, minReadySeconds, nowMs)) return false;
  const ipu = condition(p, CONDITION_INPLACE_UPDATE_READY);
  return !ipu || ipu.status === 'True';
}

/** Lifecycle state `''` or Normal, and update-ready: the only pods that count as available. */
export function isPodAvailable(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  const s = podState(p);
  return (s === '' || s === 'Normal') && isPodUpdateReady(p, minReadySeconds, nowMs);
}

/** When the pod becomes available, or undefined when it is ready but not yet for minReadySeconds. */
export function availableInMs(p: Pod, minReadySeconds: number, nowMs: number): number | undefined {
  if (minReadySeconds <= 0 || p.status?.phase !== 'Running') return undefined;
  const c = condition(p, 'Ready');
  if (c?.status !== 'True' || !c.lastTransitionTime) return undefined;
  const left = Date.parse(c.lastTransitionTime) + minReadySeconds * 1000 - nowMs;
  return left > 0 ? left : undefined;
}

/** The short hash of a revision name: the part after the last `-`. */
export function shortHash(revisionName: string): string {
  const i = revisionName.lastIndexOf('-');
  return i < 0 ? revisionName : revisionName.slice(i + 1);
}

/** The pod's revision label equals `revisionName`, or their short hashes are equal. */
export function isPodAtRevision(p: Pod, revisionName: string): boolean {
  const h = p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  if (h === undefined) return false;
  return h === revisionName || shortHash(h) === shortHash(revisionName);
}

/** Labelled specified-delete (any value) or listed in `scaleStrategy.podsToDelete`. */
export function isSpecifiedDelete(p: Pod, podsToDelete: ReadonlySet<string>): boolean {
  return p.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined || podsToDelete.has(p.metadata.name ?? '');
}

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function deletionCost(p: Pod): number {
  const raw = p.metadata.annotations?.[ANNOTATION_POD_DELETION_COST];
  const n = raw === undefined ? 0 : Number(raw);
  return Number.isInteger(n) ? n : 0;
}

function restarts(p: Pod): number {
  return (p.status?.containerStatuses ?? []).reduce((m, c) => Math.max(m, c.restartCount ?? 0), 0);
}

function readySince(p: Pod): number {
  const c = condition(p, 'Ready');
  return c?.status === 'True' && c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : 0;
}

function created(p: Pod): number {
  return p.metadata.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : 0;
}

/**
 * Co-location rank: on a node running more than one of the pods, every pod but the one kept gets a rank
 * (n−1 … 1), so scale-in spreads the survivors across nodes.
 */
export function colocationRanks(pods: readonly Pod[]): Map<Pod, number> {
  const byNode = new Map<string, Pod[]>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    if (!n) continue;
    const list = byNode.get(n) ?? [];
    list.push(p);
    byNode.set(n, list);
  }
  const ranks = new Map<Pod, number>();
  for (const list of byNode.values()) {
    if (list.length < 2) continue;
    list.sort((a, b) => created(a) - created(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    // The oldest pod on a node is kept; the newest gets the highest rank.
    list.forEach((p, i) => ranks.set(p, i));
  }
  return ranks;
}

/**
 * Scale-in order, first to delete first: unscheduled; Pending < Unknown < Running; unavailable; not
 * ready; lower deletion cost; higher co-location rank; more recently Ready; more restarts; newer.
 */
export function sortForScaleIn(pods: readonly Pod[], minReadySeconds: number, nowMs: number): Pod[] {
  const ranks = colocationRanks(pods);
  const key = (p: Pod) => ({
    scheduled: p.spec?.nodeName ? 1 : 0,
    phase: PHASE_ORDER[p.status?.phase ?? 'Pending'] ?? 0,
    available: isPodAvailable(p, minReadySeconds, nowMs) ? 1 : 0,
    ready: condition(p, 'Ready')?.status === 'True' ? 1 : 0,
    cost: deletionCost(p),
    rank: ranks.get(p) ?? 0,
    readySince: readySince(p),
    restarts: restarts(p),
    created: created(p),
  });
  return pods
    .map((p) => ({ p, k: key(p) }))
    .sort(
      (a, b) =>
        a.k.scheduled - b.k.scheduled ||
        a.k.phase - b.k.phase ||
        a.k.available - b.k.available ||
        a.k.ready - b.k.ready ||
        a.k.cost - b.k.cost ||
        b.k.rank - a.k.rank ||
        b.k.readySince - a.k.readySince ||
        b.k.restarts - a.k.restarts ||
        b.k.created - a.k.created ||
        (a.p.metadata.name ?? '').localeCompare(b.p.metadata.name ?? ''),
    )
    .map((x) => x.p);
}

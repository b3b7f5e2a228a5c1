/**
 * Pure predicates over pods for the CloneSet controller: specified delete and the scale-in order (the predicates
 * the Advanced workloads share live in control/workload-pods.ts). Upstream's semantics (Kruise v1.9) unless noted.
 */
import type { CloneSet } from '../../../api/kinds/cloneset.js';
import { ANNOTATION_POD_DELETION_COST, LABEL_SPECIFIED_DELETE } from '../../../contracts/index.js';
import type { KubeObject, Pod } from '../../core/types.js';
import { condition, isPodAvailable } from '../../control/workload-pods.js';

/** A CloneSet as the informer caches it. */
export type CloneSetObject = CloneSet & KubeObject;

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

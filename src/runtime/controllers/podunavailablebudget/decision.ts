/**
 * PodUnavailableBudget status, pure (upstream v1.9's podunavailablebudget controller): from the budget, the pods it
 * covers and the replicas their workloads expect, the counts the webhook spends from.
 *
 * - desiredAvailable: `expected - maxUnavailable` (floored at 0), or `minAvailable`; a percentage is of the expected
 *   replicas, rounded up.
 * - currentAvailable: covered active pods that are ready and consistent and not recorded by the webhook.
 * - unavailableAllowed: `currentAvailable - desiredAvailable`, at least 0.
 * - disruptedPods (deletions/evictions admitted) are kept until the pod is gone or for 20 s, unavailablePods
 *   (in-place updates admitted) for 10 s: long enough for the informer to see the change itself.
 */
import {
  ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS,
  ANNOTATION_RELATED_PUB,
  groupOf,
  isEmptySelector,
  selectorMatches,
} from '../../../contracts/index.js';
import { isPodActive, isPodAvailable, type PubObject, type PubStatus } from '../../control/pod-unavailable-budget.js';
import type { Pod } from '../../core/types.js';

/** How long an admitted deletion or eviction counts against the budget while the pod is still there. */
export const DELETION_TIMEOUT_MS = 20_000;
/** How long an admitted in-place update counts against the budget (the pod's own state takes over). */
export const UPDATE_RECHECK_MS = 10_000;

/** An owner the I/O side looked up: its scale, or none when it is gone or being deleted. */
export interface WorkloadScale {
  readonly uid: string;
  readonly replicas: number;
}

/** `value` of an IntOrString against `total`: a percentage rounds up, as upstream's `GetScaledValueFromIntOrPercent(..., true)`. */
export function scaledValue(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (m) return Math.ceil((Number(m[1]) * total) / 100);
  if (/^\d+$/.test(value)) return Number(value);
  throw new Error(`invalid value ${JSON.stringify(value)}: an integer or a percentage such as "25%"`);
}

/** desiredAvailable of upstream's controller. */
export function desiredAvailable(spec: PubObject['spec'], expected: number): number {
  if (spec?.maxUnavailable !== undefined) return Math.max(0, expected - scaledValue(spec.maxUnavailable, expected));
  if (spec?.minAvailable !== undefined) return scaledValue(spec.minAvailable, expected);
  return 0;
}

/** The covered pods of a budget with a selector (targetRef budgets are resolved by the I/O side): active pods it selects. */
export function selectedPods(pub: PubObject, pods: readonly Pod[]): Pod[] {
  const sel = pub.spec?.selector;
  // An empty selector selects nothing (upstream: a nil or empty PUB selector must not match everything).
  if (!sel || (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length)) return [];
  return pods.filter(
    (p) => p.metadata.namespace === pub.metadata.namespace && isPodActive(p) && selectorMatches(sel, p.metadata.labels ?? {}),
  );
}

/** The replicas the budget counts: its annotation when set, else the sum over the distinct live workloads. */
export function expectedReplicas(pub: PubObject, workloads: readonly (WorkloadScale | undefined)[]): number {
  const v = pub.metadata.annotations?.[ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS];
  if (v && /^\d+$/.test(v)) return Number(v);
  const seen = new Map<string, number>();
  for (const w of workloads) if (w) seen.set(w.uid, w.replicas);
  let n = 0;
  for (const r of seen.values()) n += r;
  return n;
}

export interface StatusInput {
  readonly pub: PubObject;
  /** Active pods the budget covers. */
  readonly pods: readonly Pod[];
  readonly expected: number;
  readonly nowMs: number;
}

export interface StatusDecision {
  /** The status to write, or undefined when it is already current. */
  readonly status?: PubStatus;
  /** Pods the controller annotates with the budget's name (the webhook's match condition reads it). */
  readonly annotate: readonly string[];
  /** When to look again (a record expires), in epoch ms. */
  readonly recheckAtMs?: number;
  /** Pods expected gone by now but still there (upstream's NotDeleted event). */
  readonly notDeleted: readonly string[];
}

function sameRecord(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b).length && ka.every((k) => a![k] === b[k]);
}

/** The budget's status from what is covered now. Throws on a max/min value that is not an integer or a percentage. */
export function decideStatus({ pub, pods, expected, nowMs }: StatusInput): StatusDecision {
  const desired = desiredAvailable(pub.spec, expected);
  const disrupted: Record<string, string> = {};
  const unavailable: Record<string, string> = {};
  const notDeleted: string[] = [];
  let recheckAtMs: number | undefined;
  const soonest = (t: number) => (recheckAtMs = recheckAtMs === undefined ? t : Math.min(recheckAtMs, t));
  const old = pub.status;
  for (const p of pods) {
    const name = p.metadata.name!;
    const d = old?.disruptedPods?.[name];
    if (d !== undefined) {
      const until = Date.parse(d) + DELETION_TIMEOUT_MS;
      if (until <= nowMs) notDeleted.push(name);
      else {
        disrupted[name] = d;
        soonest(until);
      }
    }
    const u = old?.unavailablePods?.[name];
    if (u !== undefined) {
      const until = Date.parse(u) + UPDATE_RECHECK_MS;
      if (until > nowMs) {
        unavailable[name] = u;
        soonest(until);
      }
    }
  }
  let current = 0;
  for (const p of pods) {
    const name = p.metadata.name!;
    if (name in disrupted || name in unavailable) continue;
    if (isPodAvailable(p)) current++;
  }
  const status: PubStatus = {
    observedGeneration: pub.metadata.generation ?? 0,
    disruptedPods: disrupted,
    unavailablePods: unavailable,
    unavailableAllowed: Math.max(0, current - desired),
    currentAvailable: current,
    desiredAvailable: desired,
    totalReplicas: expected,
  };
  const unchanged =
    !!old &&
    old.observedGeneration === status.observedGeneration &&
    old.unavailableAllowed === status.unavailableAllowed &&
    old.currentAvailable === status.currentAvailable &&
    old.desiredAvailable === status.desiredAvailable &&
    old.totalReplicas === status.totalReplicas &&
    sameRecord(old.disruptedPods, disrupted) &&
    sameRecord(old.unavailablePods, unavailable);
  const annotate = pods.filter((p) => !p.metadata.annotations?.[ANNOTATION_RELATED_PUB]).map((p) => p.metadata.name!);
  return { ...(unchanged ? {} : { status }), annotate, notDeleted, ...(recheckAtMs !== undefined ? { recheckAtMs } : {}) };
}

/** A workload whose replicas a budget counts, as its cache holds it: identity, scale and pod template labels. */
export interface WatchedWorkload {
  readonly group: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string };
  readonly spec?: { readonly replicas?: number; readonly template?: { readonly metadata?: { readonly labels?: Record<string, string> } } };
}

/**
 * The budgets a workload's change concerns (upstream's SetEnqueueRequestForPUB): those of its namespace that name it
 * as their targetRef (group, kind and name) and those without one whose selector matches its pod template. Upstream
 * takes the first only; every one is taken here, since two budgets may cover one workload's pods.
 */
export function budgetsOfWorkload(budgets: readonly PubObject[], w: WatchedWorkload): PubObject[] {
  const labels = w.spec?.template?.metadata?.labels ?? {};
  return budgets.filter((b) => {
    if (b.metadata.namespace !== w.metadata.namespace) return false;
    const ref = b.spec?.targetRef;
    if (ref) return groupOf(ref.apiVersion ?? '') === w.group && ref.kind === w.kind && ref.name === w.metadata.name;
    const sel = b.spec?.selector;
    return !!sel && !isEmptySelector(sel) && selectorMatches(sel, labels);
  });
}

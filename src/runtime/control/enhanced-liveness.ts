/**
 * Enhanced liveness (gate EnhancedLivenessProbe), shared by the pod webhook step that moves the liveness probes out of
 * the pod and the controller that runs them through the node daemon and restarts failing containers: the annotation
 * the probes move into (upstream's key and JSON format, so pods admitted by either runtime read the same), the name a
 * moved probe gets in a NodePodProbe, and the budget decision that admits a restart.
 */
import type { V1Probe } from '../../api/core/k8s-core-types.js';
import { ANNOTATION_CONTAINER_PROBE_CONTEXT, ANNOTATION_USING_ENHANCED_LIVENESS } from '../../contracts/index.js';
import type { Pod } from '../core/types.js';

/** One entry of the probe-context annotation (upstream `containerLivenessProbe`). */
export interface ContainerLivenessProbe {
  readonly name: string;
  readonly livenessProbe: V1Probe;
}

/** Whether the pod opts in (upstream reads exactly `"true"`). */
export function usesEnhancedLiveness(pod: Pick<Pod, 'metadata'>): boolean {
  return pod.metadata.annotations?.[ANNOTATION_USING_ENHANCED_LIVENESS] === 'true';
}

/**
 * Moves every regular container's liveness probe into the probe-context annotation, as upstream's webhook does
 * (init and ephemeral containers keep theirs: the kubelet does not run liveness probes of init containers, and
 * upstream moves only `spec.containers`). Returns the moved entries; the pod is unchanged when there are none.
 */
export function moveLivenessProbes(pod: Pod): ContainerLivenessProbe[] {
  const moved: ContainerLivenessProbe[] = [];
  for (const c of pod.spec?.containers ?? []) {
    const probe = c.livenessProbe as V1Probe | null | undefined;
    if (!probe) continue;
    moved.push({ name: c.name, livenessProbe: probe });
    delete c.livenessProbe;
  }
  if (moved.length === 0) return moved;
  pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [ANNOTATION_CONTAINER_PROBE_CONTEXT]: JSON.stringify(moved) };
  return moved;
}

/**
 * The moved probes of a pod, read back from its annotation. Entries that are not `{name, livenessProbe}` objects are
 * skipped (the annotation is user-writable), and a value that is not a JSON list yields none.
 */
export function movedLivenessProbes(pod: Pick<Pod, 'metadata'>): ContainerLivenessProbe[] {
  const raw = pod.metadata.annotations?.[ANNOTATION_CONTAINER_PROBE_CONTEXT];
  if (!raw) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: ContainerLivenessProbe[] = [];
  for (const e of parsed) {
    if (typeof e !== 'object' || e === null) continue;
    const { name, livenessProbe } = e as { name?: unknown; livenessProbe?: unknown };
    if (typeof name !== 'string' || !name || typeof livenessProbe !== 'object' || livenessProbe === null) continue;
    out.push({ name, livenessProbe: livenessProbe as V1Probe });
  }
  return out;
}

/**
 * A moved probe's name in the node's NodePodProbe. A PodProbeMarker's probes are named `<marker>#<probe>`; this name
 * holds no `#`, so neither the PodProbeMarker nor the NodePodProbe controller ever takes it for a marker's probe.
 */
export const LIVENESS_PROBE_NAME_PREFIX = 'enhanced-liveness:';

export function livenessProbeName(container: string): string {
  return `${LIVENESS_PROBE_NAME_PREFIX}${container}`;
}

/** The container of a moved probe's NodePodProbe name; undefined for any other probe. */
export function livenessProbeContainer(probeName: string): string | undefined {
  return probeName.startsWith(LIVENESS_PROBE_NAME_PREFIX) && probeName.length > LIVENESS_PROBE_NAME_PREFIX.length
    ? probeName.slice(LIVENESS_PROBE_NAME_PREFIX.length)
    : undefined;
}

// ─── The restart budget ───────────────────────────────────────────────────────────────────────────────────────

/** One pod under a budget, as the restart decision sees it. */
export interface BudgetMember {
  readonly uid: string;
  readonly name: string;
  /** Ready and running what its spec asks (a PodUnavailableBudget's availability). */
  readonly available: boolean;
  /** A liveness restart of ours is under way (its request exists and the pod has not been available since). */
  readonly restarting: boolean;
  /** Containers whose liveness probe fails on the current container, oldest failure first. */
  readonly failing: readonly string[];
}

/** The budget covering a group of pods: who counts, and how many of them may be unavailable at once. */
export interface RestartBudget {
  /** What sets it, for messages: `PodUnavailableBudget ns/name`, `PodDisruptionBudget ns/name`, `CloneSet ns/name (maxUnavailable)`. */
  readonly source: string;
  /** Pods that may be unavailable at once (negative counts as 0). */
  readonly maxUnavailable: number;
  readonly members: readonly BudgetMember[];
}

export interface RestartAdmission {
  /** Restarts to make now: one container per pod (its first failing one). */
  readonly restart: readonly { readonly uid: string; readonly name: string; readonly container: string }[];
  /**
   * Failing pods that wait: `reason` names the budget and stays the same while it does (the pod's condition says it),
   * `detail` gives the counts of the moment (for the event).
   */
  readonly wait: readonly {
    readonly uid: string;
    readonly name: string;
    readonly container: string;
    readonly reason: string;
    readonly detail: string;
  }[];
  /** Set when most of the group fails at once: the event to raise (once per episode, by the caller). */
  readonly clusterWide?: { readonly failing: number; readonly total: number; readonly message: string };
}

/**
 * Which failing containers restart now. A restart makes its pod unavailable, so:
 * - at most `maxUnavailable` of the group's pods restart at once (restarts in flight count);
 * - a pod still available restarts only while the pods unavailable or restarting stay within `maxUnavailable`
 *   after it; a pod already unavailable costs the budget nothing more (as a PodUnavailableBudget lets an unavailable
 *   pod go), but still takes one of the restart slots, so a group that is down does not restart all at once.
 * Pods already unavailable go first (their restart costs no availability), then by name, so the order is stable.
 * When more than half of a group of at least 3 pods fails at once and the failures exceed the budget, the decision
 * names the episode so the caller can raise one event about it instead of one per pod.
 */
export function admitLivenessRestarts(budget: RestartBudget): RestartAdmission {
  const max = Math.max(0, Math.floor(budget.maxUnavailable));
  const members = budget.members;
  let inFlight = members.filter((m) => m.restarting).length;
  let unavailable = members.filter((m) => m.restarting || !m.available).length;
  const candidates = members
    .filter((m) => m.failing.length > 0 && !m.restarting)
    .sort((a, b) => Number(a.available) - Number(b.available) || a.name.localeCompare(b.name));
  const restart: { uid: string; name: string; container: string }[] = [];
  const wait: { uid: string; name: string; container: string; reason: string; detail: string }[] = [];
  const reason = `${budget.source} allows ${max} pod(s) unavailable at once`;
  for (const m of candidates) {
    const container = m.failing[0]!;
    if (inFlight + 1 > max) {
      wait.push({ uid: m.uid, name: m.name, container, reason, detail: `${inFlight} liveness restart(s) are under way` });
      continue;
    }
    if (m.available && unavailable + 1 > max) {
      wait.push({
        uid: m.uid,
        name: m.name,
        container,
        reason,
        detail: `${unavailable} of ${members.length} are unavailable or restarting`,
      });
      continue;
    }
    restart.push({ uid: m.uid, name: m.name, container });
    inFlight++;
    if (m.available) unavailable++;
  }
  const failing = members.filter((m) => m.failing.length > 0 || m.restarting).length;
  const total = members.length;
  const clusterWide =
    total >= 3 && failing * 2 > total && failing > max
      ? {
          failing,
          total,
          message:
            `cluster-wide liveness failure: ${failing} of ${total} pods under ${budget.source} fail their liveness probes at once; ` +
            `restarting at most ${max} at a time instead of all of them. A shared cause (a dependency, the network, a node) is more likely than the pods themselves.`,
        }
      : undefined;
  return { restart, wait, ...(clusterWide ? { clusterWide } : {}) };
}

/**
 * A count or percentage of `total` as a number of pods, a percentage rounded `down` or `up`; undefined for a value
 * that is neither.
 */
export function scaledCount(value: number | string | undefined, total: number, round: 'down' | 'up' = 'down'): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  const m = /^(\d+)%$/.exec(v);
  if (m) return (round === 'down' ? Math.floor : Math.ceil)((Number(m[1]) * total) / 100);
  return /^\d+$/.test(v) ? Number(v) : undefined;
}

/**
 * How many of `total` pods a budget spec lets be unavailable: its maxUnavailable (a percentage rounded down), else
 * `total` less its minAvailable (a percentage rounded up, as Kubernetes rounds both); 0 for a spec with neither or
 * a value that is neither a count nor a percentage (nothing restarts rather than everything).
 */
export function budgetMaxUnavailable(spec: { maxUnavailable?: number | string; minAvailable?: number | string }, total: number): number {
  if (spec.maxUnavailable !== undefined) return scaledCount(spec.maxUnavailable, total, 'down') ?? 0;
  const min = scaledCount(spec.minAvailable, total, 'up');
  return min === undefined ? 0 : Math.max(0, total - min);
}

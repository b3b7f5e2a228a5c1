/**
 * Pure predicates over the pods of the Kruise workloads that share lifecycle hooks and in-place update (CloneSet,
 * Advanced StatefulSet, Advanced DaemonSet): lifecycle state and hooks, readiness and availability, revision
 * match. Upstream's semantics (Kruise v1.9) unless noted.
 */
import type { LifecycleState } from '../../api/pod-contracts.js';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_CONTROLLER_REVISION_HASH, LABEL_LIFECYCLE_STATE } from '../../contracts/index.js';
import type { Pod, PodCondition } from '../core/types.js';

/**
 * The pod fields each of these workloads' controllers reads from its pod cache: identity and ownership, lifecycle
 * labels and finalizers, the containers and env an in-place update compares, and readiness (minReadySeconds counts
 * from the Ready transition; KruisePodReady's message holds the not-ready keys). A controller declares these in its
 * `reads` and adds its own.
 */
export const WORKLOAD_POD_FIELDS = [
  'metadata.labels',
  'metadata.annotations',
  'metadata.ownerReferences',
  'metadata.finalizers',
  'metadata.creationTimestamp',
  'spec.nodeName',
  'spec.readinessGates',
  'spec.containers[].name',
  'spec.containers[].image',
  // Env from metadata: which labels/annotations a container reads (names and field paths, never values).
  'spec.containers[].env[].name',
  'spec.containers[].env[].valueFrom.fieldRef.fieldPath',
  'status.phase',
  'status.conditions[].type',
  'status.conditions[].status',
  'status.conditions[].lastTransitionTime',
  'status.conditions[].message',
  'status.containerStatuses[].name',
  'status.containerStatuses[].image',
  'status.containerStatuses[].imageID',
  'status.containerStatuses[].containerID',
  // The next in-place batch waits until the previous batch's containers are ready.
  'status.containerStatuses[].ready',
] as const;

/** A lifecycle hook as the workloads' specs write it (CloneSet, Advanced StatefulSet, Advanced DaemonSet). */
export interface Hook {
  readonly labelsHandler?: Readonly<Record<string, string>>;
  readonly finalizersHandler?: readonly string[];
  readonly markPodNotReady?: boolean;
}

/** `spec.lifecycle` of a workload with lifecycle hooks. */
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

/**
 * Container launch priority: the barrier controller's pure decision (upstream's semantics). A pod whose
 * containers carry `KRUISE_CONTAINER_BARRIER` (added by the pod webhook) gets ConfigMap `<pod>-barrier`,
 * owned by the pod; while its containers are not all ready, the key of the highest priority among the
 * containers that are not ready yet is added, which lets the kubelet start them. Table-tested in
 * test/unit/runtime/launch-priority.test.ts.
 */
import { ENV_CONTAINER_BARRIER, launchBarrierConfigMapName, launchBarrierKey } from '../../../api/pod-contracts.js';
import type { Pod } from '../../core/types.js';

/** The priority a container's barrier env waits for, or undefined when it has none (or a foreign one). */
export function barrierPriority(container: { env?: Array<{ name: string; valueFrom?: unknown }> }): number | undefined {
  const env = container.env?.find((e) => e.name === ENV_CONTAINER_BARRIER);
  const key = (env?.valueFrom as { configMapKeyRef?: { key?: unknown } } | undefined)?.configMapKeyRef?.key;
  if (typeof key !== 'string') return undefined;
  const m = /^p_(-?\d{1,10})$/.exec(key);
  return m ? Number(m[1]) : undefined;
}

/** True when the pod waits on a barrier (some container carries the barrier env). */
export function hasBarrier(pod: Pod): boolean {
  return (pod.spec?.containers ?? []).some((c) => barrierPriority(c) !== undefined);
}

export type BarrierDecision =
  | { readonly action: 'none'; readonly reason: string }
  | { readonly action: 'create'; readonly name: string }
  | { readonly action: 'release'; readonly name: string; readonly key: string };

export interface BarrierInput {
  readonly pod: Pod;
  /** The barrier ConfigMap's data, or undefined when it does not exist. */
  readonly barrier: Readonly<Record<string, string>> | undefined;
}

export function decideBarrier({ pod, barrier }: BarrierInput): BarrierDecision {
  if (!hasBarrier(pod)) return { action: 'none', reason: 'no barrier env' };
  if (pod.metadata.deletionTimestamp) return { action: 'none', reason: 'pod is being deleted' };
  const name = launchBarrierConfigMapName(pod.metadata.name ?? '');
  if (!barrier) return { action: 'create', name };
  const ready = pod.status?.conditions?.find((c) => c.type === 'ContainersReady');
  if (ready?.status === 'True') return { action: 'none', reason: 'all containers ready' };
  // As upstream: a container the kubelet has not reported yet is not ready, so a fresh pod (no status at all)
  // gets its highest key at once (test/e2e/launch-priority-peer.test.ts compares with upstream).
  const readyNames = new Set((pod.status?.containerStatuses ?? []).filter((s) => s.ready).map((s) => s.name));
  let next: number | undefined;
  for (const c of pod.spec?.containers ?? []) {
    if (readyNames.has(c.name)) continue;
    const p = barrierPriority(c);
    if (p !== undefined && (next === undefined || p > next)) next = p;
  }
  if (next === undefined) return { action: 'none', reason: 'no container waiting' };
  const key = launchBarrierKey(next);
  if (barrier[key] !== undefined) return { action: 'none', reason: `${key} already released` };
  return { action: 'release', name, key };
}

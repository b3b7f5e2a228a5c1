/**
 * Writes to the pods of the workloads with lifecycle hooks (CloneSet, Advanced StatefulSet, Advanced DaemonSet),
 * shared by their scale and update phases: patches that record the version they produced (a reconcile waits until
 * the cache has it), and the lifecycle state change with the not-ready mark it implies (pod-lifecycle.ts says which).
 */
import type { LifecycleState } from '../../api/pod-contracts.js';
import { ANNOTATION_LIFECYCLE_TIMESTAMP, CONDITION_KRUISE_POD_READY, LABEL_LIFECYCLE_STATE, PODS } from '../../contracts/index.js';
import { isNotFound, PatchStrategy } from '../core/client.js';
import type { ControllerContext } from '../core/controller.js';
import { EXPECTATION_TIMEOUT_MS, ResourceVersionExpectations } from '../core/expectations.js';
import { rfc3339 } from '../core/meta.js';
import type { Pod, PodCondition } from '../core/types.js';
import { kruisePodReadyWith, missingGateForNotReady, notReadyChange } from './pod-lifecycle.js';
import { condition, hasReadinessGate, type Lifecycle } from './workload-pods.js';

/** The owner of the pods, as far as the lifecycle writes read it. */
export interface LifecycleOwner {
  readonly spec: { readonly lifecycle?: unknown };
}

/** Pod writes of one round run this many at a time (a 1,000-pod ReCreate is not 1,000 round trips in a row). */
export const WRITE_CONCURRENCY = 16;

/** Runs `fn` over `items`, at most `limit` at once; resolves with the errors' messages (none thrown). */
export async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<string[]> {
  const errors: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return errors;
}

type PatchType = (typeof PatchStrategy)[keyof typeof PatchStrategy];

export class PodWrites {
  /** The version each pod write of ours returned, by pod uid: a reconcile waits until the cache has it. */
  readonly versions = new ResourceVersionExpectations<Pod>((p) => p.metadata.uid, Date.now, EXPECTATION_TIMEOUT_MS);

  constructor(private readonly ctx: ControllerContext) {}

  /** Patches the pod; undefined when it is gone. */
  async patchPod(p: Pod, patch: unknown, type: PatchType = PatchStrategy.StrategicMergePatch): Promise<Pod | undefined> {
    try {
      const res = await this.ctx.client.patch<Pod>(PODS, p.metadata.name!, p.metadata.namespace, patch, type);
      this.versions.record(res);
      return res;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Merges these conditions into the pod's status; undefined when it is gone. */
  async patchPodStatus(p: Pod, conditions: PodCondition[]): Promise<Pod | undefined> {
    try {
      const res = await this.ctx.client.patch<Pod>(
        PODS,
        p.metadata.name!,
        p.metadata.namespace,
        { status: { conditions } },
        PatchStrategy.StrategicMergePatch,
        { subresource: 'status' },
      );
      this.versions.record(res);
      return res;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return undefined;
    }
  }

  /** State label + timestamp in one patch (plus extra labels/finalizers), then the not-ready mark it implies. */
  async setState(
    owner: LifecycleOwner,
    p: Pod,
    state: LifecycleState,
    extra: { labels?: Record<string, string>; finalizers?: string[] } = {},
  ): Promise<void> {
    const lifecycle = owner.spec.lifecycle as Lifecycle | undefined;
    const metadata: Record<string, unknown> = {
      resourceVersion: p.metadata.resourceVersion,
      labels: { ...(extra.labels ?? {}), [LABEL_LIFECYCLE_STATE]: state },
      annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: rfc3339() },
    };
    if (extra.finalizers) metadata.finalizers = extra.finalizers;
    // Finalizers is a plain list in strategic merge; a merge patch replaces it whole, which is what we want.
    const updated = await this.patchPod(p, { metadata }, extra.finalizers ? PatchStrategy.MergePatch : PatchStrategy.StrategicMergePatch);
    if (!updated) return;
    const change = notReadyChange(state, lifecycle);
    if (!change) return;
    if (missingGateForNotReady(p, change)) {
      this.ctx.events.emit(
        PODS,
        p,
        'Warning',
        'MarkPodNotReadyIgnored',
        `lifecycle markPodNotReady asks pod ${p.metadata.name} to be not ready (${change.key}) but it has no ${CONDITION_KRUISE_POD_READY} readiness gate`,
      );
      return;
    }
    if (!hasReadinessGate(p, CONDITION_KRUISE_POD_READY)) return;
    const c = kruisePodReadyWith(updated, change.key, change.present, rfc3339());
    if (!c) return;
    const conds: PodCondition[] = [c];
    if (c.status === 'False' && condition(updated, 'ContainersReady')?.status === 'True') {
      conds.push({ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', lastTransitionTime: rfc3339() });
    }
    await this.patchPodStatus(updated, conds);
  }
}

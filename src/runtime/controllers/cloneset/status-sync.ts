/**
 * CloneSet status, the I/O half (upstream's `cloneset_status.go`): writes the status status-decision.ts
 * computes when it differs from the stored one, and drops from `scaleStrategy.podsToDelete` the names of pods
 * that are gone or going.
 */
import { CLONESETS } from '../../../contracts/index.js';
import { isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext } from '../../core/controller.js';
import { rfc3339 } from '../../core/meta.js';
import { selectorString } from '../../core/selector.js';
import type { Pod } from '../../core/types.js';
import { isPodActive } from '../../control/workload-pods.js';
import type { CloneSetObject } from './pods.js';
import { nextCurrentRevision, progressingCondition, statusCounts, syncConditions, type CloneSetConditionLike } from './status-decision.js';

export class StatusSync {
  constructor(private readonly ctx: ControllerContext) {}

  /** Writes the status if it changed; returns when a progressing rollout's deadline falls due, if it can. */
  async write(
    cs: CloneSetObject,
    pods: Pod[],
    updateRevision: string,
    currentRevision: string,
    collisionCount: number,
    failures: { scale?: string; update?: string },
  ): Promise<number | undefined> {
    const replicas = cs.spec.replicas ?? 1;
    const counts = statusCounts(
      pods,
      updateRevision,
      replicas,
      cs.spec.updateStrategy?.partition,
      cs.spec.minReadySeconds ?? 0,
      Date.now(),
    );
    const old = (cs.status ?? {}) as Record<string, unknown>;
    const nowMs = Date.now();
    const nextCurrent = nextCurrentRevision(currentRevision, updateRevision, counts, replicas);
    // An unchanged Progressing condition comes back as the same object, so the comparison below only sees it
    // when its status or reason changed (upstream's hasProgressingConditionChanged).
    const progress = progressingCondition(
      {
        progressDeadlineSeconds: cs.spec.progressDeadlineSeconds,
        specReplicas: replicas,
        paused: cs.spec.updateStrategy?.paused === true,
        status: { ...counts, currentRevision: nextCurrent, updateRevision },
        conditions: syncConditions((old.conditions ?? []) as CloneSetConditionLike[], failures, rfc3339(nowMs)),
      },
      nowMs,
    );
    const conditions = progress.conditions;
    const status: Record<string, unknown> = {
      observedGeneration: cs.metadata.generation,
      ...counts,
      updateRevision,
      currentRevision: nextCurrent,
      collisionCount,
      labelSelector: selectorString((cs.spec.selector ?? {}) as never),
      conditions: conditions.length ? conditions : null,
    };
    const differs = Object.entries(status).some(([k, v]) => JSON.stringify(old[k] ?? null) !== JSON.stringify(v ?? null));
    if (!differs) return progress.requeueAfterMs;
    try {
      await this.ctx.client.patch(CLONESETS, cs.metadata.name!, cs.metadata.namespace, { status }, PatchStrategy.MergePatch, {
        subresource: 'status',
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return progress.requeueAfterMs;
  }

  /** Drops from `scaleStrategy.podsToDelete` the names no active pod has (deleted, or already being deleted). */
  async prunePodsToDelete(cs: CloneSetObject, owned: readonly Pod[]): Promise<void> {
    // A pod already being deleted is done with: its name goes too (it may terminate for a long time).
    const names = new Set(owned.filter(isPodActive).map((p) => p.metadata.name));
    const toDelete = cs.spec.scaleStrategy?.podsToDelete ?? [];
    const kept = toDelete.filter((n) => names.has(n));
    if (kept.length === toDelete.length) return;
    await this.ctx.client.patch(
      CLONESETS,
      cs.metadata.name!,
      cs.metadata.namespace!,
      { metadata: { resourceVersion: cs.metadata.resourceVersion }, spec: { scaleStrategy: { podsToDelete: kept } } },
      PatchStrategy.MergePatch,
    );
  }
}

/**
 * CloneSet Update, the I/O half (upstream's `sync/cloneset_update.go`): refreshes every pod (grace expiry,
 * lifecycle step, in-place readiness, the first KruisePodReady), then carries out the updates
 * update-decision.ts picks: a recreate mark, PreparingUpdate, or an in-place patch.
 */
import { CLONESETS, LABEL_SPECIFIED_DELETE } from '../../../contracts/index.js';
import type { ControllerContext } from '../../core/controller.js';
import { askBudget, isBudgetRefusal } from '../../control/pod-unavailable-budget-spend.js';
import { objectKey, type Pod } from '../../core/types.js';
import { templateOf, type Revision } from '../../control/controller-revision.js';
import { inPlaceSpec } from '../../control/inplace-update.js';
import { InPlaceWrites } from '../../control/inplace-writes.js';
import { forEachLimit, WRITE_CONCURRENCY, type PodWrites } from '../../control/pod-writes.js';
import { isPodAtRevision, type Lifecycle } from '../../control/workload-pods.js';
import type { CloneSetObject } from './pods.js';
import { vctsAllowInPlace } from './revision-decision.js';
import { calculateDiffs, type DiffInput } from './scale-decision.js';
import { planUpdate, type PodUpdate, type UpdateType } from './update-decision.js';

/** What a round asks of the queue (the soonest requeue any step wants). */
export interface RoundResult {
  requeueAfterMs?: number;
}

/** How soon a round held back by a budget looks again (upstream: 1 s). */
export const BUDGET_RETRY_MS = 1000;

export class UpdateSync {
  /** Gate PodUnavailableBudgetUpdateGate: updates ask the pods' budgets first. */
  private readonly budgetGate: boolean;
  /** Gate RecreatePodWhenChangeVCTInCloneSetGate: a volumeClaimTemplates change means a recreate. */
  private readonly recreateOnVctChange: boolean;
  /** In-place patches and the per-round pod refresh, shared with the Advanced StatefulSet and DaemonSet. */
  private readonly inPlace: InPlaceWrites;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly writes: PodWrites,
  ) {
    this.budgetGate = ctx.featureGates.get('PodUnavailableBudgetUpdateGate') === true;
    this.recreateOnVctChange = ctx.featureGates.get('RecreatePodWhenChangeVCTInCloneSetGate') === true;
    this.inPlace = new InPlaceWrites(ctx, writes);
  }

  async update(cs: CloneSetObject, d: DiffInput, all: Revision[], result: RoundResult): Promise<void> {
    const lifecycle = cs.spec.lifecycle as Lifecycle | undefined;
    let changed = false;
    const refreshErrors = await forEachLimit(d.pods, WRITE_CONCURRENCY, async (p) => {
      const r = await this.inPlace.refresh(cs, p, d.updateRevision, lifecycle);
      changed = changed || r.changed;
      if (r.requeueAfterMs !== undefined) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, r.requeueAfterMs);
    });
    if (refreshErrors.length) throw new Error(refreshErrors.join('; '));
    if (changed) return;
    const us = cs.spec.updateStrategy ?? {};
    const byName = new Map(all.map((r) => [r.metadata.name!, r]));
    const revOf = (p: Pod) => all.find((r) => isPodAtRevision(p, r.metadata.name!));
    const plan = planUpdate({
      pods: d.pods,
      diffs: calculateDiffs({ ...d, preparingUpdateAsUpdate: false }),
      updateRevision: d.updateRevision,
      currentRevision: d.currentRevision,
      type: (us.type ?? 'ReCreate') as UpdateType,
      paused: us.paused,
      minReadySeconds: d.minReadySeconds,
      lifecycle,
      priority: us.priorityStrategy as never,
      scatter: us.scatterStrategy,
      canInPlace: (p, target) => {
        const from = revOf(p);
        const to = byName.get(target);
        return (
          !!from &&
          !!to &&
          vctsAllowInPlace(from, to, { recreateOnChange: this.recreateOnVctChange, inPlaceOnly: us.type === 'InPlaceOnly' }) &&
          inPlaceSpec(templateOf(from), templateOf(to)) !== undefined
        );
      },
      nowMs: d.nowMs,
    });
    if (plan.length) {
      this.ctx.logger.debug(
        {
          cloneset: objectKey(cs),
          updateNum: calculateDiffs({ ...d, preparingUpdateAsUpdate: false }).updateNum,
          plan: plan.map((u) => `${u.pod.metadata.name}:${u.action}`),
        },
        'cloneset update',
      );
    }
    const admitted = this.budgetGate ? await this.withinBudgets(cs, plan, result) : plan;
    const errors = await forEachLimit(admitted, WRITE_CONCURRENCY, async (u) => {
      let delay: number | undefined;
      try {
        delay = await this.applyUpdate(cs, u, byName, revOf, lifecycle);
      } catch (err) {
        // The budget, asked through the webhook, said no (spent by another writer in between): a later round.
        if (!isBudgetRefusal(err)) throw err;
        delay = BUDGET_RETRY_MS;
      }
      if (delay !== undefined) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, delay);
    });
    if (errors.length) throw new Error(errors.join('; '));
  }

  /**
   * Upstream asks each pod's PodUnavailableBudget before updating it (gate PodUnavailableBudgetUpdateGate), in the
   * update order, and stops at the first refusal: the rest wait for a round a second later. Asked here, before the
   * InPlaceUpdateReady mark (a pods/status write no webhook sees), the recreate label or the PreparingUpdate step;
   * the budget records the pod it lets go, so the webhook lets the pod's patch or deletion through without spending
   * again, and two updates asking at once cannot both spend the last unit.
   */
  private async withinBudgets(cs: CloneSetObject, plan: readonly PodUpdate[], result: RoundResult): Promise<PodUpdate[]> {
    const admitted: PodUpdate[] = [];
    for (const u of plan) {
      if (u.action === 'in-place' || u.action === 'recreate' || u.action === 'prepare-update') {
        const a = await askBudget(this.ctx, u.pod, 'UPDATE');
        if (!a.allowed) {
          this.ctx.logger.debug({ cloneset: objectKey(cs), pod: u.pod.metadata.name, budget: a.budget }, 'update held by its budget');
          result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, BUDGET_RETRY_MS);
          break;
        }
      }
      admitted.push(u);
    }
    return admitted;
  }

  private async applyUpdate(
    cs: CloneSetObject,
    u: PodUpdate,
    byName: Map<string, Revision>,
    revOf: (p: Pod) => Revision | undefined,
    lifecycle: Lifecycle | undefined,
  ): Promise<number | undefined> {
    switch (u.action) {
      case 'wait':
        return undefined;
      case 'error':
        throw new Error(u.message);
      case 'recreate':
        await this.writes.patchPod(u.pod, { metadata: { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } } });
        return undefined;
      case 'prepare-update': {
        const hook = lifecycle?.inPlaceUpdate;
        const extra: { labels?: Record<string, string>; finalizers?: string[] } = {};
        if (u.readdHandlers && hook) {
          if (hook.labelsHandler) extra.labels = { ...hook.labelsHandler };
          if (hook.finalizersHandler?.length) {
            extra.finalizers = [...new Set([...(u.pod.metadata.finalizers ?? []), ...hook.finalizersHandler])];
          }
        }
        await this.writes.setState(cs, u.pod, 'PreparingUpdate', extra);
        return undefined;
      }
      case 'in-place': {
        const from = revOf(u.pod);
        const to = byName.get(u.target)!;
        const spec = inPlaceSpec(templateOf(from), templateOf(to), this.ctx.featureGates.get('InPlaceUpdateEnvFromMetadata') !== false)!;
        return this.inPlace.inPlaceUpdate(
          { resource: CLONESETS, object: cs },
          u.pod,
          to.metadata.name!,
          spec,
          cs.spec.updateStrategy?.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0,
        );
      }
    }
  }
}

/**
 * CloneSet Update, the I/O half (upstream's `sync/cloneset_update.go`): refreshes every pod (grace expiry,
 * lifecycle step, in-place readiness, the first KruisePodReady), then carries out the updates
 * update-decision.ts picks: a recreate mark, PreparingUpdate, or an in-place patch.
 */
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  CONDITION_KRUISE_POD_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  LABEL_SPECIFIED_DELETE,
  PODS,
} from '../../../contracts/index.js';
import type { ControllerContext } from '../../core/controller.js';
import { askBudget, isBudgetRefusal } from '../../control/pod-unavailable-budget-spend.js';
import { rfc3339 } from '../../core/meta.js';
import { objectKey, type Pod, type PodCondition } from '../../core/types.js';
import { templateOf, type Revision } from '../../control/controller-revision.js';
import {
  inPlaceCompleted,
  inPlaceSpec,
  nextBatchDue,
  parseJson,
  planInPlaceBatch,
  refMetadataOf,
  stateAfterBatch,
  shouldMarkInPlaceReady,
  type InPlaceUpdateGrace,
  type InPlaceUpdateState,
} from '../../control/inplace-update.js';
import { nextLifecycleState } from '../../control/pod-lifecycle.js';
import { forEachLimit, WRITE_CONCURRENCY, type PodWrites } from '../../control/pod-writes.js';
import { condition, hasReadinessGate, isPodAtRevision, shortHash, type Lifecycle } from '../../control/workload-pods.js';
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

  constructor(
    private readonly ctx: ControllerContext,
    private readonly writes: PodWrites,
  ) {
    this.budgetGate = ctx.featureGates.get('PodUnavailableBudgetUpdateGate') === true;
    this.recreateOnVctChange = ctx.featureGates.get('RecreatePodWhenChangeVCTInCloneSetGate') === true;
  }

  async update(cs: CloneSetObject, d: DiffInput, all: Revision[], result: RoundResult): Promise<void> {
    const lifecycle = cs.spec.lifecycle as Lifecycle | undefined;
    let changed = false;
    const refreshErrors = await forEachLimit(d.pods, WRITE_CONCURRENCY, async (p) => {
      const r = await this.refresh(cs, p, d.updateRevision, lifecycle);
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
        return this.inPlaceUpdate(cs, u.pod, to.metadata.name!, spec);
      }
    }
  }

  /** Marks InPlaceUpdateReady False, then one pod patch: revision labels, state Updating, state annotation, images (or the grace annotation). */
  private async inPlaceUpdate(
    cs: CloneSetObject,
    p: Pod,
    revision: string,
    spec: NonNullable<ReturnType<typeof inPlaceSpec>>,
  ): Promise<number | undefined> {
    const now = rfc3339();
    let resourceVersion = p.metadata.resourceVersion;
    if (hasReadinessGate(p, CONDITION_INPLACE_UPDATE_READY)) {
      const conds: PodCondition[] = [
        { type: CONDITION_INPLACE_UPDATE_READY, status: 'False', reason: 'StartInPlaceUpdate', lastTransitionTime: now },
      ];
      if (condition(p, 'ContainersReady')?.status === 'True') {
        conds.push({ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', lastTransitionTime: now });
      }
      // The pod patch below is conditional on the version this status write produced.
      resourceVersion = (await this.writes.patchPodStatus(p, conds))?.metadata.resourceVersion ?? resourceVersion;
    }
    const grace = cs.spec.updateStrategy?.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0;
    // The labels/annotations a container reads into its env change with that container's batch; the rest now.
    const containers = p.spec?.containers ?? [];
    const refMetadata = spec.updateEnvFromMetadata ? refMetadataOf(containers, spec.labels, spec.annotations) : {};
    const batch = planInPlaceBatch(containers, spec.containerImages, refMetadata);
    const deferred = { labels: new Set<string>(), annotations: new Set<string>() };
    for (const m of Object.values(batch.nextRefMetadata)) {
      for (const k of Object.keys(m.labels ?? {})) deferred.labels.add(k);
      for (const k of Object.keys(m.annotations ?? {})) deferred.annotations.add(k);
    }
    const notHeld = (diff: Readonly<Record<string, string | null>>, held: Set<string>) =>
      Object.fromEntries(Object.entries(diff).filter(([k]) => !held.has(k)));
    const state: InPlaceUpdateState = stateAfterBatch(p, undefined, revision, batch, now, spec.updateEnvFromMetadata);
    const annotations: Record<string, string | null> = {
      ...notHeld(spec.annotations, deferred.annotations),
      [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state),
      [ANNOTATION_LIFECYCLE_TIMESTAMP]: now,
    };
    const patch: Record<string, unknown> = {
      metadata: {
        resourceVersion,
        labels: {
          ...notHeld(spec.labels, deferred.labels),
          [LABEL_CONTROLLER_REVISION_HASH]: revision,
          [LABEL_POD_TEMPLATE_HASH]: shortHash(revision),
          [LABEL_LIFECYCLE_STATE]: 'Updating',
        },
        annotations,
      },
    };
    const images = Object.entries(batch.images).map(([name, image]) => ({ name, image }));
    if (grace > 0 && images.length) {
      const g: InPlaceUpdateGrace = { revision, containerImages: { ...batch.images }, graceSeconds: grace };
      annotations[ANNOTATION_INPLACE_UPDATE_GRACE] = JSON.stringify(g);
    } else if (images.length) {
      patch.spec = { containers: images };
    }
    const res = await this.writes.patchPod(p, patch);
    if (res) this.ctx.events.emit(PODS, p, 'Normal', 'SuccessfulUpdatePodInPlace', `successfully update pod ${p.metadata.name} in-place`);
    return grace > 0 && images.length ? grace * 1000 : undefined;
  }

  /** Patches the next batch of an in-place update (containers of lower launch priority) once the previous one is ready. */
  private async patchNextBatch(p: Pod, prev: InPlaceUpdateState): Promise<void> {
    const now = rfc3339();
    const batch = planInPlaceBatch(p.spec?.containers ?? [], prev.nextContainerImages ?? {}, prev.nextContainerRefMetadata ?? {});
    const state = stateAfterBatch(p, prev, prev.revision, batch, now, !!prev.updateEnvFromMetadata);
    const patch: Record<string, unknown> = {
      metadata: {
        resourceVersion: p.metadata.resourceVersion,
        labels: batch.labels,
        annotations: { ...batch.annotations, [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state) },
      },
    };
    const images = Object.entries(batch.images).map(([name, image]) => ({ name, image }));
    if (images.length) patch.spec = { containers: images };
    await this.writes.patchPod(p, patch);
  }

  /** The per-round refresh of one pod: grace expiry, lifecycle transition, in-place readiness, KruisePodReady init. */
  private async refresh(
    cs: CloneSetObject,
    p: Pod,
    updateRevision: string,
    lifecycle: Lifecycle | undefined,
  ): Promise<{ changed: boolean; requeueAfterMs?: number }> {
    const graceRaw = p.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_GRACE];
    if (graceRaw) {
      const g = parseJson<InPlaceUpdateGrace>(graceRaw);
      const st = parseJson<InPlaceUpdateState>(p.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE]);
      if (!g || !isPodAtRevision(p, g.revision)) {
        await this.writes.patchPod(p, { metadata: { annotations: { [ANNOTATION_INPLACE_UPDATE_GRACE]: null } } });
        return { changed: true };
      }
      const since = st?.updateTimestamp ? Date.parse(st.updateTimestamp) : Date.now();
      const left = since + g.graceSeconds * 1000 - Date.now();
      if (left > 0) return { changed: false, requeueAfterMs: Math.ceil(left / 1000) * 1000 };
      await this.writes.patchPod(p, {
        metadata: { resourceVersion: p.metadata.resourceVersion, annotations: { [ANNOTATION_INPLACE_UPDATE_GRACE]: null } },
        spec: { containers: Object.entries(g.containerImages).map(([name, image]) => ({ name, image })) },
      });
      return { changed: true };
    }
    const due = nextBatchDue(p);
    if (due) {
      await this.patchNextBatch(p, due);
      return { changed: true };
    }
    const next = nextLifecycleState({ pod: p, lifecycle, updateRevision, inPlaceCompleted: inPlaceCompleted(p) });
    if (next) {
      await this.writes.setState(cs, p, next);
      return { changed: true };
    }
    if (!p.metadata.labels?.[LABEL_POD_TEMPLATE_HASH] && p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH]) {
      await this.writes.patchPod(p, {
        metadata: { labels: { [LABEL_POD_TEMPLATE_HASH]: shortHash(p.metadata.labels[LABEL_CONTROLLER_REVISION_HASH]) } },
      });
      return { changed: true };
    }
    const conds: PodCondition[] = [];
    // The False write carried a reason; the True condition has none (a strategic merge keeps fields not set to null).
    if (shouldMarkInPlaceReady(p)) {
      conds.push({
        type: CONDITION_INPLACE_UPDATE_READY,
        status: 'True',
        reason: null,
        message: null,
        lastTransitionTime: rfc3339(),
      } as never);
    }
    // The pod webhook of upstream adds the KruisePodReady gate and its readiness controller sets it True;
    // we add the gate at creation, so the first True is ours too.
    if (hasReadinessGate(p, CONDITION_KRUISE_POD_READY) && !condition(p, CONDITION_KRUISE_POD_READY)) {
      conds.push({ type: CONDITION_KRUISE_POD_READY, status: 'True', lastTransitionTime: rfc3339() });
    }
    if (conds.length) await this.writes.patchPodStatus(p, conds);
    return { changed: false };
  }
}

/**
 * The in-place update writes of the workloads that update pods in place (CloneSet, Advanced StatefulSet, Advanced
 * DaemonSet): the patch of one update (InPlaceUpdateReady False first, then revision labels, state Updating, the
 * in-place state and the images, or the grace annotation), the next launch-priority batch, and the per-round refresh
 * of a pod (grace expiry, lifecycle step, InPlaceUpdateReady and the first KruisePodReady). inplace-update.ts decides.
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
  type ResourceType,
} from '../../contracts/index.js';
import type { ControllerContext } from '../core/controller.js';
import { rfc3339 } from '../core/meta.js';
import type { KubeObject, Pod, PodCondition } from '../core/types.js';
import {
  inPlaceCompleted,
  nextBatchDue,
  parseJson,
  planInPlaceBatch,
  refMetadataOf,
  shouldMarkInPlaceReady,
  stateAfterBatch,
  type InPlaceSpec,
  type InPlaceUpdateGrace,
  type InPlaceUpdateState,
} from './inplace-update.js';
import { nextLifecycleState } from './pod-lifecycle.js';
import type { LifecycleOwner, PodWrites } from './pod-writes.js';
import { condition, hasReadinessGate, isPodAtRevision, shortHash, type Lifecycle } from './workload-pods.js';

/** The workload whose pod is updated in place: its resource and object, for the event. */
export interface WorkloadRef {
  readonly resource: ResourceType;
  readonly object: KubeObject;
}

export class InPlaceWrites {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly writes: PodWrites,
  ) {}

  /**
   * Marks InPlaceUpdateReady False, then one pod patch: revision labels, state Updating, state annotation, images (or
   * the grace annotation). The event goes on the workload, as upstream's (`kubectl describe` of it lists its pods' updates).
   */
  async inPlaceUpdate(owner: WorkloadRef, p: Pod, revision: string, spec: InPlaceSpec, graceSeconds: number): Promise<number | undefined> {
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
    const grace = graceSeconds;
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
    if (res) {
      const message = `successfully update pod ${p.metadata.name} in-place(revision ${revision})`;
      this.ctx.events.emit(owner.resource, owner.object, 'Normal', 'SuccessfulUpdatePodInPlace', message);
    }
    return grace > 0 && images.length ? grace * 1000 : undefined;
  }

  /** Patches the next batch of an in-place update (containers of lower launch priority) once the previous one is ready. */
  async patchNextBatch(p: Pod, prev: InPlaceUpdateState): Promise<void> {
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
  async refresh(
    owner: LifecycleOwner,
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
      await this.writes.setState(owner, p, next);
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

/**
 * The Advanced StatefulSet reconcile, in upstream's order: wait for the cache to show our own writes, find the
 * revisions, refresh each pod's in-place and lifecycle state, then one scale step (replicas in ordinal order, then
 * the condemned pods) and, when it does not stop the round, the rolling update; then the status and the history.
 * Each phase is a pure decision file (identity-, scale-, update-, status-); this file reads the caches and applies
 * them. The caches are read through an index of the set's own pods, claims and revisions.
 */
import type { StatefulSetStatus } from '../../../api/kinds/statefulset.js';
import { ADVANCED_STATEFULSETS, ANNOTATION_CLAIM_OWNED_BY_STATEFULSET, PERSISTENT_VOLUME_CLAIMS, PODS } from '../../../contracts/index.js';
import {
  claimStanding,
  compatibleApartFromSize,
  matchesTemplate,
  resizeCompleted,
  VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE,
  type ClaimLike,
} from '../../control/volume-claim-resize.js';
import { templateOf, type Revision } from '../../control/controller-revision.js';
import { ImagePreDownloadWrites } from '../../control/image-predownload-writes.js';
import { inPlaceSpec } from '../../control/inplace-update.js';
import { InPlaceWrites } from '../../control/inplace-writes.js';
import { forEachLimit, PodWrites, WRITE_CONCURRENCY } from '../../control/pod-writes.js';
import { RevisionWrites } from '../../control/revision-writes.js';
import { availableInMs, isPodAtRevision, type Lifecycle } from '../../control/workload-pods.js';
import { isAlreadyExists, isConflict, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext, Reconciler } from '../../core/controller.js';
import { EXPECTATION_TIMEOUT_MS, ResourceVersionExpectations, ScaleExpectations } from '../../core/expectations.js';
import type { Informer } from '../../core/informer.js';
import { controllerOf, podOwnerReference, rfc3339 } from '../../core/meta.js';
import type { ProcessResult } from '../../core/queue.js';
import { selectorString } from '../../core/selector.js';
import type { KubeObject, Pod } from '../../core/types.js';
import {
  claimName,
  isCurrentRevisionNeeded,
  ordinalOf,
  newClaim,
  newStatefulPod,
  partitionPods,
  planClaims,
  type ClaimPlan,
  statefulSetOwnerReference,
  type Partitioned,
  type StatefulSetObject,
} from './identity-decision.js';
import { planScale, type ScaleAction } from './scale-decision.js';
import { computeStatus, statusChanged, volumeClaimCounts } from './status-decision.js';
import { planUpdate, statefulSetPreDownloadStrategy, type PodClaims, type PodUpdate, type PodUpdatePolicy } from './update-decision.js';

/** Requeue while a cache catches up with our own writes. */
const CACHE_WAIT_MS = 100;

/** Informer index names; prefixed because the informers are shared with other controllers. */
export const INDEX_CONTROLLER_UID = 'advancedstatefulset/controller-uid';

export const byControllerUid = (o: KubeObject): string[] => {
  const uid = controllerOf(o)?.uid;
  return uid ? [uid] : [];
};
/** The namespace of a pod no controller owns: a set of that namespace may adopt it. */
export const INDEX_ORPHANS_BY_NAMESPACE = 'advancedstatefulset/orphans-by-namespace';
export const orphanNamespace = (o: KubeObject): string[] => (controllerOf(o) ? [] : [o.metadata.namespace ?? '']);
/** The sets of a namespace, to offer an orphan to. */
export const INDEX_NAMESPACE = 'advancedstatefulset/namespace';
export const namespaceOf = (o: KubeObject): string[] => [o.metadata.namespace ?? ''];

/** Ints as-is; `"N%"` of `total`, rounded down (upstream's maxUnavailable); at least 1. */
export function resolveMaxUnavailable(v: number | string | undefined, total: number): number {
  if (v === undefined) return 1;
  if (typeof v === 'number') return Math.max(1, v);
  const m = /^(\d+)%$/.exec(v.trim());
  if (!m) throw new Error(`maxUnavailable "${v}" is neither a count nor a percentage`);
  return Math.max(1, Math.floor((Number(m[1]) * total) / 100));
}

export class StatefulSetReconciler implements Reconciler {
  readonly scaleExpectations = new ScaleExpectations();
  readonly writes: PodWrites;
  /** The version each claim resize returned: a round waits until the cache holds it (or it would resize again). */
  private readonly claimVersions = new ResourceVersionExpectations(undefined, Date.now, EXPECTATION_TIMEOUT_MS);
  private readonly inPlace: InPlaceWrites;
  private readonly revisionWrites: RevisionWrites;
  /** Gate PreDownloadImageForInPlaceUpdate (off without the daemon, by its cascade): ImagePullJobs ahead of an update. */
  private readonly preDownload?: ImagePreDownloadWrites;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly sets: Informer<StatefulSetObject>,
    private readonly pods: Informer<Pod>,
    private readonly pvcs: Informer<KubeObject>,
    private readonly revisions: Informer<Revision>,
    /** The ImagePullJob cache, only when image pre-download is on. */
    imagePullJobs?: Informer<KubeObject>,
    /** The StorageClass cache, only when claim resizing (gate StatefulSetAutoResizePVCGate) is on. */
    private readonly storageClasses?: Informer<KubeObject & { allowVolumeExpansion?: boolean }>,
  ) {
    pods.addIndex(INDEX_CONTROLLER_UID, byControllerUid);
    pods.addIndex(INDEX_ORPHANS_BY_NAMESPACE, orphanNamespace);
    sets.addIndex(INDEX_NAMESPACE, namespaceOf);
    revisions.addIndex(INDEX_CONTROLLER_UID, byControllerUid);
    this.writes = new PodWrites(ctx);
    this.inPlace = new InPlaceWrites(ctx, this.writes);
    this.revisionWrites = new RevisionWrites(ctx, ADVANCED_STATEFULSETS, 'statefulset');
    if (imagePullJobs) this.preDownload = new ImagePreDownloadWrites(ctx, ADVANCED_STATEFULSETS, imagePullJobs, 'statefulset');
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const set = this.sets.get(key);
    if (!set) {
      this.scaleExpectations.forget(key);
      return;
    }
    const exp = this.scaleExpectations.satisfied(key, this.pods.lastSyncResourceVersion);
    if (exp.leaked.length > 0) this.ctx.logger.warn({ statefulset: key, leaked: exp.leaked }, 'scale expectations timed out; dropped');
    if (!exp.ok) return { requeueAfterMs: CACHE_WAIT_MS * 5 };
    const ns = set.metadata.namespace!;
    const claims = planClaims(set, [
      ...this.pods.byIndex(INDEX_CONTROLLER_UID, set.metadata.uid ?? ''),
      ...this.pods.byIndex(INDEX_ORPHANS_BY_NAMESPACE, ns),
    ]);
    const owned = claims.owned;
    for (const p of owned) if (!this.writes.versions.satisfiedBy(p)) return { requeueAfterMs: CACHE_WAIT_MS };
    if (this.resizesClaims(set)) {
      for (const p of owned) {
        if (this.claimsOf(set, p).some(({ claim }) => !this.claimVersions.satisfiedBy(claim))) return { requeueAfterMs: CACHE_WAIT_MS };
      }
    }
    // Adopting or releasing a pod ends the round: the next one finds it in the cache under its new owner.
    if (claims.adopt.length > 0 || claims.release.length > 0) {
      await this.claim(set, claims);
      return { requeueAfterMs: CACHE_WAIT_MS };
    }

    const revisions = this.revisions.byIndex(INDEX_CONTROLLER_UID, set.metadata.uid ?? '').filter((r) => r.metadata.namespace === ns);
    const revs = await this.revisionWrites.sync(set, revisions, { ownerReference: statefulSetOwnerReference(set) });
    const updateRevision = revs.update.metadata.name!;
    const lifecycle = set.spec.lifecycle as Lifecycle | undefined;
    const rollingUpdate = set.spec.updateStrategy?.rollingUpdate;
    const minReadySeconds = rollingUpdate?.minReadySeconds ?? 0;
    const part = partitionPods(set, owned, this.ctx.featureGates.get('StatefulSetStartOrdinal') === true);
    let failure: string | undefined;
    let requeueAfterMs: number | undefined;
    const soon = (ms: number) => (requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, ms));

    if (!set.metadata.deletionTimestamp) {
      // Upstream's order: the new revision's images are sent for before this round's scale and update.
      if (this.preDownload) await this.preDownload.sync(this.preDownloadInput(set, revs));
      try {
        // Each pod's in-place batch, lifecycle step and readiness conditions first; a change is seen next round.
        let changed = false;
        const errors = await forEachLimit(owned, WRITE_CONCURRENCY, async (p) => {
          const r = await this.inPlace.refresh(set, p, updateRevision, lifecycle);
          changed ||= r.changed;
          if (r.requeueAfterMs !== undefined) soon(r.requeueAfterMs);
        });
        if (errors.length) throw new Error(errors.join('; '));
        if (changed) soon(CACHE_WAIT_MS);
        else await this.scaleAndUpdate(set, part, revs, lifecycle, minReadySeconds);
      } catch (err) {
        failure = (err as Error).message;
        this.ctx.logger.warn({ statefulset: key, err: failure }, 'statefulset sync failed');
      }
    }

    const fresh = this.sets.get(key) ?? set;
    const nowPods = owned.map((p) => this.pods.get(`${ns}/${p.metadata.name}`) ?? p);
    await this.writeStatus(fresh, nowPods, revs, minReadySeconds, failure);
    await this.revisionWrites.truncate(set, owned, revs);
    if (minReadySeconds > 0) {
      for (const p of nowPods) {
        const left = availableInMs(p, minReadySeconds, Date.now());
        if (left !== undefined) soon(left + 50);
      }
    }
    if (failure) throw new Error(failure);
    return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
  }

  private preDownloadInput(set: StatefulSetObject, revs: { update: Revision; current: Revision }) {
    const us = set.spec.updateStrategy;
    const replicas = set.spec.replicas ?? 1;
    let maxUnavailable = 1;
    try {
      maxUnavailable = resolveMaxUnavailable(us?.rollingUpdate?.maxUnavailable as number | string | undefined, replicas);
    } catch {
      // Refused by the validating webhook before it gets here; read as the default.
    }
    const envFromMetadata = this.ctx.featureGates.get('InPlaceUpdateEnvFromMetadata') !== false;
    return {
      workload: set,
      ownerReference: statefulSetOwnerReference(set),
      current: revs.current,
      update: revs.update,
      strategy: statefulSetPreDownloadStrategy(
        us as Parameters<typeof statefulSetPreDownloadStrategy>[0],
        maxUnavailable,
        () => inPlaceSpec(templateOf(revs.current), templateOf(revs.update), envFromMetadata) !== undefined,
      ),
    };
  }

  /** Adopts the orphans that belong to the set and releases the pods that no longer do (owner references merge by uid). */
  private async claim(set: StatefulSetObject, claims: ClaimPlan): Promise<void> {
    const uid = set.metadata.uid!;
    for (const p of claims.adopt) {
      await this.writes.patchPod(p, { metadata: { ownerReferences: [statefulSetOwnerReference(set)], uid: p.metadata.uid } });
    }
    for (const p of claims.release) {
      await this.writes.patchPod(p, { metadata: { ownerReferences: [{ $patch: 'delete', uid }], uid: p.metadata.uid } });
    }
  }

  private async scaleAndUpdate(
    set: StatefulSetObject,
    part: Partitioned,
    revs: { update: Revision; current: Revision; all: Revision[] },
    lifecycle: Lifecycle | undefined,
    minReadySeconds: number,
  ): Promise<void> {
    const replicas = set.spec.replicas ?? 1;
    const monotonic = (set.spec.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
    const scaleMax = set.spec.scaleStrategy?.maxUnavailable;
    // Upstream's processReplica: a pending pod gets back a claim deleted while it waited (it cannot start without it).
    if ((set.spec.volumeClaimTemplates ?? []).length > 0) {
      for (const [slot, p] of part.replicas.entries()) {
        if (p?.status?.phase === 'Pending' && !p.metadata.deletionTimestamp) await this.createClaims(set, part.start + slot);
      }
    }
    const plan = planScale({
      replicas: part.replicas,
      start: part.start,
      reserved: part.reserved,
      condemned: part.condemned,
      monotonic,
      ...(scaleMax !== undefined ? { scaleMaxUnavailable: resolveMaxUnavailable(scaleMax as number | string, replicas) } : {}),
      minReadySeconds,
      ...(lifecycle ? { lifecycle } : {}),
      nowMs: Date.now(),
    });
    const errors = await forEachLimit(plan.actions, WRITE_CONCURRENCY, (a) => this.applyScale(set, part, revs, a));
    if (errors.length) throw new Error(errors.join('; '));
    if (plan.stop || plan.actions.length > 0) return;
    if ((set.spec.updateStrategy?.type ?? 'RollingUpdate') === 'OnDelete') return;
    const ru = set.spec.updateStrategy?.rollingUpdate;
    if (ru?.paused) return;
    const byName = new Map(revs.all.map((r) => [r.metadata.name!, r]));
    const revOf = (p: Pod) => revs.all.find((r) => isPodAtRevision(p, r.metadata.name!));
    const envFromMetadata = this.ctx.featureGates.get('InPlaceUpdateEnvFromMetadata') !== false;
    const updates = planUpdate({
      replicas: part.replicas,
      replicaCount: replicas,
      updateRevision: revs.update.metadata.name!,
      partition: ru?.partition ?? 0,
      maxUnavailable: resolveMaxUnavailable(ru?.maxUnavailable as number | string | undefined, replicas),
      policy: (ru?.podUpdatePolicy ?? 'ReCreate') as PodUpdatePolicy,
      ...(ru?.unorderedUpdate ? { unordered: ru.unorderedUpdate as never } : {}),
      minReadySeconds,
      ...(lifecycle ? { lifecycle } : {}),
      canInPlace: (p) => {
        const from = revOf(p);
        return !!from && inPlaceSpec(templateOf(from), templateOf(revs.update), envFromMetadata) !== undefined;
      },
      ...(this.resizesClaims(set) ? { claims: (p: Pod) => this.podClaims(set, p) } : {}),
      nowMs: Date.now(),
    });
    const grace = ru?.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0;
    // Upstream updates one pod after another in this order; the plan already holds maxUnavailable.
    for (const u of updates) await this.applyUpdate(set, u, revOf, byName, revs.update, grace, envFromMetadata);
  }

  private async applyScale(
    set: StatefulSetObject,
    part: Partitioned,
    revs: { update: Revision; current: Revision },
    a: ScaleAction,
  ): Promise<void> {
    if (a.kind === 'create') {
      const useCurrent = isCurrentRevisionNeeded(set, revs.update.metadata.name!, a.ordinal, part, set.metadata.name!);
      await this.createPod(set, a.ordinal, useCurrent ? revs.current : revs.update);
      return;
    }
    if (a.kind === 'prepare-delete') {
      await this.writes.setState(set, a.pod, 'PreparingDelete');
      return;
    }
    if (a.condemned && this.retentionGate() && set.spec.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete') {
      await this.claimsToPod(set, a.pod);
    }
    await this.deletePod(set, a.pod);
  }

  private async applyUpdate(
    set: StatefulSetObject,
    u: PodUpdate,
    revOf: (p: Pod) => Revision | undefined,
    byName: Map<string, Revision>,
    update: Revision,
    grace: number,
    envFromMetadata: boolean,
  ): Promise<void> {
    const lifecycle = set.spec.lifecycle as Lifecycle | undefined;
    switch (u.action) {
      case 'error':
        throw new Error(u.message);
      case 'resize-claims':
        await this.resizeClaims(set, u.pod);
        return;
      case 'delete':
        await this.deletePod(set, u.pod);
        return;
      case 'prepare-delete':
        await this.writes.setState(set, u.pod, 'PreparingDelete');
        return;
      case 'prepare-update': {
        const hook = lifecycle?.inPlaceUpdate;
        const extra: { labels?: Record<string, string>; finalizers?: string[] } = {};
        if (u.readdHandlers && hook) {
          if (hook.labelsHandler) extra.labels = { ...hook.labelsHandler };
          if (hook.finalizersHandler?.length)
            extra.finalizers = [...new Set([...(u.pod.metadata.finalizers ?? []), ...hook.finalizersHandler])];
        }
        await this.writes.setState(set, u.pod, 'PreparingUpdate', extra);
        return;
      }
      case 'in-place': {
        const from = revOf(u.pod);
        const to = byName.get(update.metadata.name!) ?? update;
        const spec = inPlaceSpec(templateOf(from), templateOf(to), envFromMetadata);
        if (!spec) throw new Error(`pod ${u.pod.metadata.name} cannot be updated in place to ${to.metadata.name}`);
        await this.inPlace.inPlaceUpdate({ resource: ADVANCED_STATEFULSETS, object: set }, u.pod, to.metadata.name!, spec, grace);
        return;
      }
    }
  }

  /** Claims are grown with the rolling update: gate StatefulSetAutoResizePVCGate and OnPodRollingUpdate. */
  private resizesClaims(set: StatefulSetObject): boolean {
    return !!this.storageClasses && set.spec.volumeClaimUpdateStrategy?.type === VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE;
  }

  /** The pod's existing claims (not being deleted) with their templates. */
  private claimsOf(set: StatefulSetObject, p: Pod): Array<{ claim: KubeObject & ClaimLike; template: KubeObject & ClaimLike }> {
    const ordinal = ordinalOf(p, set.metadata.name!);
    const out: Array<{ claim: KubeObject & ClaimLike; template: KubeObject & ClaimLike }> = [];
    for (const template of (set.spec.volumeClaimTemplates ?? []) as Array<KubeObject & ClaimLike>) {
      const claim = this.pvcs.get(`${set.metadata.namespace}/${claimName(set, template, ordinal)}`) as (KubeObject & ClaimLike) | undefined;
      if (claim && !claim.metadata.deletionTimestamp) out.push({ claim, template });
    }
    return out;
  }

  private podClaims(set: StatefulSetObject, p: Pod): PodClaims {
    const claims = this.claimsOf(set, p);
    return {
      matched: claims.every(({ claim, template }) => matchesTemplate(claim, template)),
      ready: claims.every(({ claim, template }) => claimStanding(claim, template).ready),
      completed: claims.every(({ claim, template }) => resizeCompleted(claim, template)),
    };
  }

  /**
   * Raises each of the pod's claims that asks less than its template to the template's size (upstream's
   * TryPatchPVC): a claim whose class or access modes differ is left to be deleted by hand, and only claims of a
   * class that allows expansion are grown. The storage driver grows the volume; the claim's status says when.
   */
  private async resizeClaims(set: StatefulSetObject, p: Pod): Promise<void> {
    for (const { claim, template } of this.claimsOf(set, p)) {
      if (matchesTemplate(claim, template)) continue;
      const name = claim.metadata.name!;
      if (!compatibleApartFromSize(claim, template)) {
        const message = `failed to update pvc ${name}: contains diff other than spec resource, wait pvc to be deleted`;
        this.ctx.events.emit(ADVANCED_STATEFULSETS, set, 'Warning', 'FailedUpdatePVC', message);
        throw new Error(
          `can not patch pvc ${name}: its storageClassName or accessModes differ from template ${template.metadata?.name}; delete the claim (and its pod) to have it made again`,
        );
      }
      const className = claim.spec?.storageClassName;
      if (className) {
        const sc = this.storageClasses?.get(className);
        if (!sc) throw new Error(`could not get StorageClass ${className} of claim ${name} for pod ${p.metadata.name}`);
        if (sc.allowVolumeExpansion !== true)
          throw new Error(`storage class ${className} for ${p.metadata.name} does not support volume expansion`);
      }
      try {
        const written = await this.ctx.client.patch(
          PERSISTENT_VOLUME_CLAIMS,
          name,
          set.metadata.namespace,
          {
            metadata: {
              annotations: { [ANNOTATION_CLAIM_OWNED_BY_STATEFULSET]: set.metadata.name },
              resourceVersion: claim.metadata.resourceVersion,
            },
            spec: { resources: template.spec?.resources ?? {} },
          },
          PatchStrategy.MergePatch,
        );
        this.claimVersions.record(written as KubeObject);
      } catch (err) {
        // Written meanwhile (its status by the storage driver): the claim's update event brings the set back.
        if (isConflict(err)) return;
        const message = `resize Claim ${name} for Pod ${p.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${(err as Error).message}`;
        this.ctx.events.emit(ADVANCED_STATEFULSETS, set, 'Warning', 'FailedResize', message);
        throw err;
      }
      this.ctx.events.emit(
        ADVANCED_STATEFULSETS,
        set,
        'Normal',
        'SuccessfulResize',
        `resize Claim ${name} Pod ${p.metadata.name} in StatefulSet ${set.metadata.name} success`,
      );
    }
  }

  /** Gate StatefulSetAutoDeletePVC (on by default): persistentVolumeClaimRetentionPolicy is honoured. */
  private retentionGate(): boolean {
    return this.ctx.featureGates.get('StatefulSetAutoDeletePVC') !== false;
  }

  /** Creates the claims of `ordinal` that do not exist. */
  private async createClaims(set: StatefulSetObject, ordinal: number): Promise<void> {
    const ns = set.metadata.namespace!;
    for (const t of (set.spec.volumeClaimTemplates ?? []) as KubeObject[]) {
      if (this.pvcs.get(`${ns}/${claimName(set, t, ordinal)}`)) continue;
      try {
        await this.ctx.client.create(PERSISTENT_VOLUME_CLAIMS, newClaim(set, t, ordinal, this.retentionGate()), ns);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
  }

  private async createPod(set: StatefulSetObject, ordinal: number, revision: Revision): Promise<void> {
    const ns = set.metadata.namespace!;
    await this.createClaims(set, ordinal);
    const pod = newStatefulPod(set, ordinal, revision, rfc3339());
    const key = `${ns}/${set.metadata.name}`;
    this.scaleExpectations.expect(key, 'create', pod.metadata.name!);
    try {
      const created = await this.ctx.client.create(PODS, pod, ns);
      this.scaleExpectations.created(key, pod.metadata.name!, created.metadata.resourceVersion);
    } catch (err) {
      this.scaleExpectations.failed(key, 'create', pod.metadata.name!);
      this.ctx.events.emit(
        ADVANCED_STATEFULSETS,
        set,
        'Warning',
        'FailedCreate',
        `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${(err as Error).message}`,
      );
      throw err;
    }
    this.ctx.events.emit(
      ADVANCED_STATEFULSETS,
      set,
      'Normal',
      'SuccessfulCreate',
      `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`,
    );
  }

  private async deletePod(set: StatefulSetObject, p: Pod): Promise<void> {
    const key = `${set.metadata.namespace}/${set.metadata.name}`;
    this.scaleExpectations.expect(key, 'delete', p.metadata.name!, p.metadata.uid);
    try {
      await this.ctx.client.delete(PODS, p.metadata.name!, p.metadata.namespace);
    } catch (err) {
      this.scaleExpectations.failed(key, 'delete', p.metadata.name!);
      if (isNotFound(err)) return;
      throw err;
    }
    this.writes.versions.forget(p);
    this.ctx.events.emit(
      ADVANCED_STATEFULSETS,
      set,
      'Normal',
      'SuccessfulDelete',
      `delete Pod ${p.metadata.name} in StatefulSet ${set.metadata.name} successful`,
    );
  }

  /** whenScaled: Delete — the claims of a condemned pod are owned by the pod, so they go with it. */
  private async claimsToPod(set: StatefulSetObject, p: Pod): Promise<void> {
    const ns = set.metadata.namespace!;
    const ordinal = Number(p.metadata.name!.slice(set.metadata.name!.length + 1));
    for (const t of (set.spec.volumeClaimTemplates ?? []) as KubeObject[]) {
      const name = claimName(set, t, ordinal);
      const claim = this.pvcs.get(`${ns}/${name}`);
      if (!claim || claim.metadata.ownerReferences?.some((o) => o.uid === p.metadata.uid)) continue;
      try {
        await this.ctx.client.patch(
          PERSISTENT_VOLUME_CLAIMS,
          name,
          ns,
          { metadata: { ownerReferences: [...(claim.metadata.ownerReferences ?? []), podOwnerReference(p)] } },
          PatchStrategy.MergePatch,
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  private async writeStatus(
    set: StatefulSetObject,
    pods: readonly Pod[],
    revs: { update: Revision; current: Revision; collisionCount: number },
    minReadySeconds: number,
    failure: string | undefined,
  ): Promise<void> {
    const conditions = (set.status?.conditions ?? []).filter((c) => c.type !== 'FailedUpdatePod' && c.type !== 'FailedCreatePod');
    if (failure) conditions.push({ type: 'FailedUpdatePod', status: 'True', lastTransitionTime: rfc3339(), message: failure });
    const next = computeStatus({
      pods,
      ...(set.metadata.generation !== undefined ? { generation: set.metadata.generation } : {}),
      currentRevision: revs.current.metadata.name!,
      updateRevision: revs.update.metadata.name!,
      collisionCount: revs.collisionCount,
      labelSelector: selectorString((set.spec.selector ?? {}) as never),
      minReadySeconds,
      rollingUpdate: (set.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate',
      conditions,
      volumeClaims: volumeClaimCounts((set.spec.volumeClaimTemplates ?? []) as Array<KubeObject & ClaimLike>, pods, (t, p) =>
        this.pvcs.get(`${set.metadata.namespace}/${claimName(set, t as KubeObject, ordinalOf(p, set.metadata.name!))}`),
      ),
      nowMs: Date.now(),
    });
    if (!statusChanged(set.status as Partial<StatefulSetStatus> | undefined, next)) return;
    try {
      await this.ctx.client.patch(
        ADVANCED_STATEFULSETS,
        set.metadata.name!,
        set.metadata.namespace,
        { status: next },
        PatchStrategy.MergePatch,
        { subresource: 'status' },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

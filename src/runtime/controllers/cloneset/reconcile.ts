/**
 * The CloneSet reconcile, in upstream's order: wait for the cache to show our own writes, claim pods (adopt
 * orphans that match, release owned pods that no longer do), find the revisions, then one Scale step or, when
 * Scale changed nothing, the Update step; then the status and the history. Each phase is a pure decision file
 * beside its I/O file (scale-, update-, status-; the revisions are written by control/revision-writes.ts); this file
 * reads the caches and runs them in order.
 * The caches are read through indexes (the CloneSet's own pods, PVCs and revisions by controller uid, and the
 * orphan pods of its namespace), never by walking every object of the cluster.
 */
import {
  CLONESETS,
  isEmptySelector,
  LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE,
  PODS,
  selectorMatches,
} from '../../../contracts/index.js';
import type { ControllerContext, Reconciler } from '../../core/controller.js';
import { ScaleExpectations } from '../../core/expectations.js';
import type { Informer } from '../../core/informer.js';
import { controllerOf } from '../../core/meta.js';
import type { ProcessResult } from '../../core/queue.js';
import { selectorString } from '../../core/selector.js';
import type { KubeObject, Pod } from '../../core/types.js';
import type { Revision } from '../../control/controller-revision.js';
import { ImagePreDownloadWrites } from '../../control/image-predownload-writes.js';
import { PodWrites } from '../../control/pod-writes.js';
import { RevisionWrites } from '../../control/revision-writes.js';
import { availableInMs, isPodActive } from '../../control/workload-pods.js';
import type { CloneSetObject } from './pods.js';
import { cloneSetPreDownloadStrategy } from './predownload-decision.js';
import { cloneSetRevisionAnnotations } from './revision-decision.js';
import { cloneSetOwnerReference, type DiffInput } from './scale-decision.js';
import { ScaleSync } from './scale-sync.js';
import { StatusSync } from './status-sync.js';
import { UpdateSync, type RoundResult } from './update-sync.js';

export type { CloneSetObject } from './pods.js';

/** Requeue while a cache catches up with our own writes. */
const CACHE_WAIT_MS = 100;

/** Informer index names; prefixed because the informers are shared with other controllers. */
export const INDEX_CONTROLLER_UID = 'cloneset/controller-uid';
export const INDEX_ORPHANS_BY_NAMESPACE = 'cloneset/orphans-by-namespace';
export const INDEX_NAMESPACE = 'cloneset/namespace';

/** The uid of the object's controller (pods, PVCs and revisions are found by their CloneSet's uid). */
export const byControllerUid = (o: KubeObject): string[] => {
  const uid = controllerOf(o)?.uid;
  return uid ? [uid] : [];
};
/** The namespace of an object no controller owns: a CloneSet of that namespace may adopt it. */
export const orphanNamespace = (o: KubeObject): string[] => (controllerOf(o) ? [] : [o.metadata.namespace ?? '']);
export const namespaceOf = (o: KubeObject): string[] => [o.metadata.namespace ?? ''];

/** Reads caches, calls the decisions, applies them idempotently (the I/O half of the CloneSet controller). */
export class CloneSetReconciler implements Reconciler {
  /** Pod creates and deletes in flight per CloneSet, met by the pod informer's events (index.ts feeds them). */
  readonly scaleExpectations = new ScaleExpectations();
  private readonly writes: PodWrites;
  private readonly scaleSync: ScaleSync;
  private readonly updateSync: UpdateSync;
  private readonly statusSync: StatusSync;
  private readonly revisionWrites: RevisionWrites;
  /** Gate PreDownloadImageForInPlaceUpdate (off without the daemon, by its cascade): ImagePullJobs ahead of an update. */
  private readonly preDownload?: ImagePreDownloadWrites;
  /** CloneSets whose pods this process has checked against a consistent list once (restart/leader safety). */
  private readonly verified = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly sets: Informer<CloneSetObject>,
    private readonly pods: Informer<Pod>,
    private readonly pvcs: Informer<KubeObject>,
    private readonly revisions: Informer<Revision>,
    private readonly options: { excludePreparingDelete: boolean; partitionRollback: boolean },
    /** The ImagePullJob cache, only when image pre-download is on. */
    imagePullJobs?: Informer<KubeObject>,
  ) {
    pods.addIndex(INDEX_CONTROLLER_UID, byControllerUid);
    pods.addIndex(INDEX_ORPHANS_BY_NAMESPACE, orphanNamespace);
    pvcs.addIndex(INDEX_CONTROLLER_UID, byControllerUid);
    revisions.addIndex(INDEX_CONTROLLER_UID, byControllerUid);
    sets.addIndex(INDEX_NAMESPACE, namespaceOf);
    this.writes = new PodWrites(ctx);
    this.scaleSync = new ScaleSync(ctx, pods, pvcs, this.scaleExpectations, this.writes);
    this.updateSync = new UpdateSync(ctx, this.writes);
    this.statusSync = new StatusSync(ctx);
    this.revisionWrites = new RevisionWrites(ctx, CLONESETS, 'cloneset');
    if (imagePullJobs) this.preDownload = new ImagePreDownloadWrites(ctx, CLONESETS, imagePullJobs, 'cloneset');
  }

  /** The version each pod write of ours returned, by pod uid: a reconcile waits until the cache has it. */
  get podVersions() {
    return this.writes.versions;
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const cs = this.sets.get(key);
    if (!cs) {
      this.scaleExpectations.forget(key);
      this.verified.delete(key);
      return;
    }
    const ns = cs.metadata.namespace!;

    const exp = this.scaleExpectations.satisfied(key, this.pods.lastSyncResourceVersion);
    if (exp.leaked.length > 0) this.ctx.logger.warn({ cloneset: key, leaked: exp.leaked }, 'scale expectations timed out; dropped');
    if (!exp.ok) return { requeueAfterMs: CACHE_WAIT_MS * 5 };
    if (!this.verified.has(key)) {
      // A fresh process (restart, new leader) may hold a cache that misses pods another replica created
      // just before it stopped: compare it once with a consistent list before creating anything.
      if (!(await this.cacheHasAllPods(cs))) return { requeueAfterMs: CACHE_WAIT_MS * 2 };
      this.verified.add(key);
    }

    const owned = await this.claimPods(cs);
    if (owned === undefined) return { requeueAfterMs: CACHE_WAIT_MS };
    for (const p of owned) if (!this.podVersions.satisfiedBy(p)) return { requeueAfterMs: CACHE_WAIT_MS };
    const active = owned.filter(isPodActive);
    const pvcs = this.ownedBy(this.pvcs, cs);

    const revs = await this.revisionWrites.sync(cs, this.ownedBy(this.revisions, cs), {
      ownerReference: cloneSetOwnerReference(cs),
      extraAnnotations: cloneSetRevisionAnnotations(cs.spec.volumeClaimTemplates as KubeObject[] | undefined),
    });
    const { update, current, collisionCount, all } = revs;

    const failures: { scale?: string; update?: string } = {};
    const result: RoundResult = {};
    const nowMs = Date.now();
    if (!cs.metadata.deletionTimestamp) {
      // Upstream's order: the new revision's images are sent for before this round's scale and update.
      if (this.preDownload)
        await this.preDownload.sync({
          workload: cs,
          ownerReference: cloneSetOwnerReference(cs),
          current,
          update,
          strategy: cloneSetPreDownloadStrategy(cs, current, update, {
            recreateOnVctChange: this.ctx.featureGates.get('RecreatePodWhenChangeVCTInCloneSetGate') === true,
          }),
        });
      if (cs.spec.scaleStrategy?.disablePVCReuse) await this.scaleSync.cleanupPvcs(cs, pvcs, owned);
      const diffIn = this.diffInput(cs, active, update.metadata.name!, current.metadata.name!, nowMs);
      let scaled = false;
      try {
        scaled = await this.scaleSync.scale(cs, diffIn, pvcs, owned, update, current);
      } catch (err) {
        failures.scale = (err as Error).message;
        this.ctx.logger.warn({ cloneset: key, err: failures.scale }, 'scale failed');
      }
      if (!scaled && failures.scale === undefined) {
        try {
          await this.updateSync.update(cs, diffIn, all, result);
        } catch (err) {
          failures.update = (err as Error).message;
          this.ctx.logger.warn({ cloneset: key, err: failures.update }, 'update failed');
        }
      }
    }

    const fresh = this.sets.get(key) ?? cs;
    const nowPods = owned.map((p) => this.pods.get(`${ns}/${p.metadata.name}`) ?? p).filter(isPodActive);
    const deadlineIn = await this.statusSync.write(fresh, nowPods, update.metadata.name!, current.metadata.name!, collisionCount, failures);
    // A progressing rollout is looked at again when its deadline falls due, even if nothing else changes.
    if (deadlineIn !== undefined) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, deadlineIn);
    await this.statusSync.prunePodsToDelete(cs, owned);
    await this.revisionWrites.truncate(cs, owned, revs);

    const minReady = cs.spec.minReadySeconds ?? 0;
    if (minReady > 0) {
      for (const p of nowPods) {
        const left = availableInMs(p, minReady, Date.now());
        if (left !== undefined) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, left + 50);
      }
    }
    if (failures.scale || failures.update) throw new Error(failures.scale ?? failures.update);
    return result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : undefined;
  }

  /** The cached objects of `informer` whose controller is this CloneSet. */
  private ownedBy<T extends KubeObject>(informer: Informer<T>, cs: CloneSetObject): T[] {
    const ns = cs.metadata.namespace;
    return informer.byIndex(INDEX_CONTROLLER_UID, cs.metadata.uid ?? '').filter((o) => o.metadata.namespace === ns);
  }

  private diffInput(cs: CloneSetObject, active: Pod[], updateRevision: string, currentRevision: string, nowMs: number): DiffInput {
    const us = cs.spec.updateStrategy ?? {};
    return {
      replicas: cs.spec.replicas ?? 1,
      partition: us.partition,
      maxSurge: us.maxSurge,
      maxUnavailable: us.maxUnavailable,
      scaleMaxUnavailable: cs.spec.scaleStrategy?.maxUnavailable,
      paused: us.paused,
      minReadySeconds: cs.spec.minReadySeconds ?? 0,
      pods: active,
      updateRevision,
      currentRevision,
      podsToDelete: new Set(cs.spec.scaleStrategy?.podsToDelete ?? []),
      excludePreparingDelete:
        this.options.excludePreparingDelete || cs.metadata.labels?.[LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE] === 'true',
      partitionRollback: this.options.partitionRollback,
      preparingUpdateAsUpdate: this.ctx.featureGates.get('PreparingUpdateAsUpdate') ?? false,
      nowMs,
    };
  }

  private async cacheHasAllPods(cs: CloneSetObject): Promise<boolean> {
    const ns = cs.metadata.namespace!;
    const sel = cs.spec.selector ?? {};
    if (isEmptySelector(sel)) return true;
    const list = await this.ctx.client.list<Pod>(PODS, { namespace: ns, labelSelector: selectorString(sel as never) });
    return list.items.every((p) => controllerOf(p)?.uid !== cs.metadata.uid || this.pods.get(`${ns}/${p.metadata.name}`) !== undefined);
  }

  /**
   * Claim (adopt / release): the pods this CloneSet controls, or undefined after it adopted or released one (the
   * round waits for the cache). Only its own pods and the orphans of its namespace are looked at.
   */
  private async claimPods(cs: CloneSetObject): Promise<Pod[] | undefined> {
    const selector = cs.spec.selector ?? {};
    const ns = cs.metadata.namespace!;
    const uid = cs.metadata.uid!;
    const owned: Pod[] = [];
    let changed = false;
    const candidates = [...this.pods.byIndex(INDEX_CONTROLLER_UID, uid), ...this.pods.byIndex(INDEX_ORPHANS_BY_NAMESPACE, ns)];
    for (const p of candidates) {
      if (p.metadata.namespace !== ns) continue;
      const ref = controllerOf(p);
      const matches = !isEmptySelector(selector) && selectorMatches(selector, p.metadata.labels ?? {});
      if (ref?.uid === uid) {
        if (matches || cs.metadata.deletionTimestamp) {
          owned.push(p);
          continue;
        }
        // Release: the pod no longer matches the selector.
        await this.writes.patchPod(p, { metadata: { ownerReferences: [{ $patch: 'delete', uid }] } });
        changed = true;
        continue;
      }
      if (ref || !matches || cs.metadata.deletionTimestamp || p.metadata.deletionTimestamp) continue;
      // Adopt an orphan that matches (the owner reference merges by uid).
      await this.writes.patchPod(p, { metadata: { ownerReferences: [cloneSetOwnerReference(cs)], uid: p.metadata.uid } });
      changed = true;
    }
    return changed ? undefined : owned;
  }
}

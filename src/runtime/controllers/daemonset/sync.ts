/**
 * Advanced DaemonSet, the I/O half (upstream's `syncDaemonSet`): one round writes the update revision, sends for its
 * new images ahead of the rollout (gate PreDownloadImageForDaemonSetUpdate), refreshes each pod (lifecycle step, in-place readiness), carries out the placement (creates per node, deletes through the
 * preDelete hook), then, while the strategy is RollingUpdate and not paused, the rollout the update decision picks,
 * then the history beyond revisionHistoryLimit and the status. The decisions are placement-, update- and
 * status-decision.ts; the shared pod machinery is control/ (lifecycle, in-place update and its writes, revisions, pod writes).
 */
import { ADVANCED_DAEMONSETS, ADVANCED_DAEMONSETS_V1BETA1, LABEL_CONTROLLER_REVISION_HASH_KEY, PODS } from '../../../contracts/index.js';
import { isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext, Informer, ProcessResult, Reconciler } from '../../core/index.js';
import { EXPECTATION_TIMEOUT_MS, ResourceVersionExpectations, ScaleExpectations } from '../../core/expectations.js';
import { kruiseControllerOf } from '../../core/meta.js';
import type { KubeObject, Node, Pod } from '../../core/types.js';
import { templateOf, type Revision } from '../../control/controller-revision.js';
import { ImagePreDownloadWrites } from '../../control/image-predownload-writes.js';
import { inPlaceSpec } from '../../control/inplace-update.js';
import { InPlaceWrites } from '../../control/inplace-writes.js';
import { assignedNode } from '../../control/node-placement.js';
import { forEachLimit, PodWrites, WRITE_CONCURRENCY } from '../../control/pod-writes.js';
import { RevisionWrites } from '../../control/revision-writes.js';
import { condition, isHooked, isPodActive, isPodAtRevision, podState, type Lifecycle } from '../../control/workload-pods.js';
import { planPlacement, podFor, podsByNode, type DaemonSetObject } from './placement-decision.js';
import { daemonSetPreDownloadStrategy } from './predownload-decision.js';
import { computeStatus, statusChanged } from './status-decision.js';
import { planUpdate, replaceAction, splitNode } from './update-decision.js';

/** Pods and revisions by the uid of their DaemonSet controller. */
export const INDEX_DAEMONSET_UID = 'daemonset/controller-uid';
export function byDaemonSetUid(o: Pod | Revision): string[] {
  const ref = kruiseControllerOf(o, 'DaemonSet');
  return ref ? [ref.uid] : [];
}

/** Requeue while the caches have not yet shown our own writes. */
const CACHE_WAIT_MS = 500;

function ownerReference(ds: DaemonSetObject) {
  return {
    apiVersion: `${ADVANCED_DAEMONSETS.group}/${ADVANCED_DAEMONSETS.version}`,
    kind: 'DaemonSet',
    name: ds.metadata.name!,
    uid: ds.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export class DaemonSetSync implements Reconciler {
  /** Pod creates and deletes in flight per DaemonSet, by node name; met by the pod informer's events (index.ts). */
  readonly expectations = new ScaleExpectations();
  readonly writes: PodWrites;
  private readonly inPlace: InPlaceWrites;
  private readonly revisionWrites: RevisionWrites;
  /** The updateRevision this process last wrote per DaemonSet uid: v1alpha1, which the cache holds, does not show it. */
  private readonly writtenRevision = new Map<string, string | undefined>();
  /**
   * The version each status write returned, per DaemonSet uid: a round waits until the cache holds it. A round
   * from the copy before the write would read that copy's counts with the revision just written, and so call an
   * update that has just begun finished (pre-download would delete the jobs it has just created).
   */
  private readonly statusVersions = new ResourceVersionExpectations<DaemonSetObject>(
    (d) => d.metadata.uid,
    Date.now,
    EXPECTATION_TIMEOUT_MS,
  );
  /** Gate PreDownloadImageForDaemonSetUpdate (off without the daemon, by its cascade): ImagePullJobs ahead of an update. */
  private readonly preDownload?: ImagePreDownloadWrites;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly sets: Informer<DaemonSetObject>,
    private readonly pods: Informer<Pod>,
    private readonly nodes: Informer<Node>,
    private readonly revisions: Informer<Revision>,
    /** The ImagePullJob cache, only when image pre-download is on. */
    imagePullJobs?: Informer<KubeObject>,
  ) {
    this.writes = new PodWrites(ctx);
    this.inPlace = new InPlaceWrites(ctx, this.writes);
    this.revisionWrites = new RevisionWrites(ctx, ADVANCED_DAEMONSETS_V1BETA1, 'daemonset');
    pods.addIndex(INDEX_DAEMONSET_UID, byDaemonSetUid);
    revisions.addIndex(INDEX_DAEMONSET_UID, byDaemonSetUid);
    if (imagePullJobs) this.preDownload = new ImagePreDownloadWrites(ctx, ADVANCED_DAEMONSETS, imagePullJobs, 'daemonset');
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const ds = this.sets.get(key);
    if (!ds) {
      this.expectations.forget(key);
      for (const uid of this.writtenRevision.keys())
        if (!this.sets.list().some((d) => d.metadata.uid === uid)) {
          this.writtenRevision.delete(uid);
          this.statusVersions.forget({ metadata: { uid } } as DaemonSetObject);
        }
      return;
    }
    // Its pods and revisions go with it by owner reference.
    if (ds.metadata.deletionTimestamp) return;
    if (!this.statusVersions.satisfiedBy(ds)) return { requeueAfterMs: CACHE_WAIT_MS };
    const exp = this.expectations.satisfied(key, this.pods.lastSyncResourceVersion);
    if (exp.leaked.length > 0) this.ctx.logger.warn({ daemonset: key, leaked: exp.leaked }, 'pod expectations timed out; dropped');
    if (!exp.ok) return { requeueAfterMs: CACHE_WAIT_MS };
    const owned = this.pods.byIndex(INDEX_DAEMONSET_UID, ds.metadata.uid!);
    for (const p of owned) if (!this.writes.versions.satisfiedBy(p)) return { requeueAfterMs: CACHE_WAIT_MS };

    const revs = await this.revisionWrites.sync(ds, this.revisions.byIndex(INDEX_DAEMONSET_UID, ds.metadata.uid!), {
      ownerReference: ownerReference(ds),
    });
    const { update, all, collisionCount } = revs;
    const hash = update.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH_KEY] ?? '';
    // Upstream's order: the new revision's images are sent for before this round's placement and rollout.
    if (this.preDownload) {
      await this.preDownload.sync({
        workload: ds,
        ownerReference: ownerReference(ds),
        current: revs.current,
        update,
        strategy: daemonSetPreDownloadStrategy({ ds, update, all, statusHash: this.writtenRevision.get(ds.metadata.uid!) }),
      });
    }
    const lifecycle = ds.spec.lifecycle as Lifecycle | undefined;
    const nowMs = Date.now();
    let requeueAfterMs: number | undefined;
    const later = (ms: number | undefined) => {
      if (ms !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, ms);
    };

    // 1. Each pod's own step: lifecycle state, in-place readiness, the first KruisePodReady.
    let refreshed = false;
    const refreshErrors = await forEachLimit(owned.filter(isPodActive), WRITE_CONCURRENCY, async (p) => {
      const r = await this.inPlace.refresh(ds, p, hash, lifecycle);
      if (r.changed) refreshed = true;
      later(r.requeueAfterMs);
    });
    if (refreshErrors.length) throw new Error(refreshErrors.join('; '));

    // 2. Placement: a pod on every node that should run one, none elsewhere.
    const nodes = this.nodes.list();
    const placement = planPlacement({ ds, nodes, pods: owned, hash, surge: hasSurge(ds) });
    const errors: string[] = [];
    errors.push(...(await this.deletePods(ds, key, placement.deletePods, lifecycle)));
    errors.push(...(await this.createPods(ds, key, placement.createOn, hash)));

    // 3. The rollout, once the placement is settled this round.
    const ru = ds.spec.updateStrategy?.rollingUpdate;
    const rolling = (ds.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    if (rolling && !ru?.paused && !refreshed && placement.createOn.length === 0 && placement.deletePods.length === 0) {
      const { byNode } = podsByNode(owned.filter(isPodActive));
      const desired = new Set(placement.desired);
      const eligible = new Map([...byNode].filter(([n]) => desired.has(n)));
      const nodeLabels = new Map(nodes.map((n) => [n.metadata.name!, n.metadata.labels ?? {}]));
      const plan = planUpdate({ ds, byNode: eligible, nodeLabels, hash, desired: desired.size, nowMs });
      const byName = new Map(all.map((r) => [r.metadata.name!, r]));
      const revOf = (p: Pod) => all.find((r) => isPodAtRevision(p, r.metadata.name!));
      const inPlace = ru?.rollingUpdateType === 'InPlaceIfPossible';
      const toDelete: Pod[] = [...plan.retire];
      const errs = await forEachLimit(plan.replace, WRITE_CONCURRENCY, async (p) => {
        const spec = inPlace ? inPlaceSpec(templateOf(revOf(p)), templateOf(byName.get(update.metadata.name!))) : undefined;
        const action = replaceAction(p, spec !== undefined, lifecycle);
        if (action === 'delete') toDelete.push(p);
        else if (action === 'prepare-update') await this.writes.setState(ds, p, 'PreparingUpdate');
        else if (action === 'in-place') await this.inPlace.inPlaceUpdate({ resource: ADVANCED_DAEMONSETS, object: ds }, p, hash, spec!, 0);
      });
      errors.push(...errs);
      errors.push(...(await this.deletePods(ds, key, toDelete, lifecycle)));
      errors.push(...(await this.createPods(ds, key, plan.surgeOn, hash)));
      if (plan.replace.length || plan.surgeOn.length || plan.retire.length) {
        this.ctx.logger.debug(
          {
            daemonset: key,
            replace: plan.replace.map((p) => p.metadata.name),
            surgeOn: plan.surgeOn,
            retire: plan.retire.map((p) => p.metadata.name),
          },
          'daemonset rolling update',
        );
      }
      // A pod that is ready but not yet for minReadySeconds becomes available later: look again then.
      const minReady = ds.spec.minReadySeconds ?? 0;
      if (minReady > 0) {
        for (const pods of eligible.values()) {
          const { newPod } = splitNode(pods, hash);
          const ready = newPod && condition(newPod, 'Ready');
          if (ready?.status === 'True' && ready.lastTransitionTime) {
            const left = Date.parse(ready.lastTransitionTime) + minReady * 1000 - nowMs;
            if (left > 0) later(left + 50);
          }
        }
      }
    }

    // 4. History and status.
    await this.revisionWrites.truncate(ds, owned, revs);
    const { byNode } = podsByNode(this.pods.byIndex(INDEX_DAEMONSET_UID, ds.metadata.uid!).filter(isPodActive));
    const status = computeStatus({ ds, desired: placement.desired, byNode, hash, collisionCount, nowMs });
    if (statusChanged(ds.status, status, this.writtenRevision.get(ds.metadata.uid!))) {
      const written = await this.ctx.client.patch<DaemonSetObject>(
        ADVANCED_DAEMONSETS_V1BETA1,
        ds.metadata.name!,
        ds.metadata.namespace,
        { status },
        PatchStrategy.MergePatch,
        {
          subresource: 'status',
        },
      );
      this.statusVersions.record(written);
      this.writtenRevision.set(ds.metadata.uid!, status.updateRevision);
    }
    if (errors.length) throw new Error(errors.join('; '));
    if (placement.heldBack > 0) later(CACHE_WAIT_MS);
    return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
  }

  /** Deletes pods; with a preDelete hook a hooked pod goes to PreparingDelete instead and stays until released. */
  private async deletePods(ds: DaemonSetObject, key: string, pods: readonly Pod[], lifecycle: Lifecycle | undefined): Promise<string[]> {
    const seen = new Set<string>();
    const unique = pods.filter((p) => !seen.has(p.metadata.uid!) && seen.add(p.metadata.uid!));
    return forEachLimit(unique, WRITE_CONCURRENCY, async (p) => {
      if (lifecycle?.preDelete && isHooked(lifecycle.preDelete, p)) {
        if (podState(p) !== 'PreparingDelete') await this.writes.setState(ds, p, 'PreparingDelete');
        return;
      }
      const node = assignedNode(p) ?? '';
      this.expectations.expect(key, 'delete', node, p.metadata.uid);
      try {
        await this.ctx.client.delete(PODS, p.metadata.name!, p.metadata.namespace);
        this.ctx.events.emit(ADVANCED_DAEMONSETS, ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
      } catch (err) {
        this.expectations.failed(key, 'delete', node);
        if (!isNotFound(err)) throw err;
      }
    });
  }

  private async createPods(ds: DaemonSetObject, key: string, nodes: readonly string[], hash: string): Promise<string[]> {
    return forEachLimit(nodes, WRITE_CONCURRENCY, async (node) => {
      this.expectations.expect(key, 'create', node);
      try {
        const created = await this.ctx.client.create<Pod>(PODS, podFor(ds, node, hash), ds.metadata.namespace);
        this.expectations.created(key, node, created.metadata.resourceVersion);
        this.ctx.events.emit(ADVANCED_DAEMONSETS, ds, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
      } catch (err) {
        this.expectations.failed(key, 'create', node);
        this.ctx.events.emit(ADVANCED_DAEMONSETS, ds, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`);
        throw err;
      }
    });
  }
}

function hasSurge(ds: DaemonSetObject): boolean {
  const ru = ds.spec.updateStrategy?.type === 'OnDelete' ? undefined : ds.spec.updateStrategy?.rollingUpdate;
  if (ru?.rollingUpdateType === 'InPlaceIfPossible') return false;
  const v = ru?.maxSurge;
  return v !== undefined && v !== 0 && v !== '0' && v !== '0%';
}

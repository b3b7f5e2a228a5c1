import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import {
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  sidecarSetMatches,
  sidecarSetRevisionHash,
  sidecarSetRevisionName,
  sidecarSetRevisionData,
} from '../../control/sidecarset-pod.js';
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  CONTROLLER_REVISIONS,
  LABEL_SIDECARSET_CUSTOM_VERSION,
  LABEL_SIDECARSET_NAME,
  PODS,
  SIDECARSETS,
} from '../../../contracts/index.js';
import { askBudget, isBudgetRefusal } from '../../control/pod-unavailable-budget-spend.js';
import { revisionsToPrune, type SidecarSetRevision } from './history.js';
import { isAlreadyExists, isConflict, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext, Reconciler } from '../../core/controller.js';
import type { Informer } from '../../core/informer.js';
import { kruiseOwnerReference, rfc3339 } from '../../core/meta.js';
import type { ProcessResult } from '../../core/queue.js';
import { objectKey, type KubeObject, type Pod } from '../../core/types.js';
import { PODS_BY_INJECTED_SIDECARSET } from './pod-index.js';
import {
  CONDITION_ROLLOUT_STUCK,
  decide,
  PodFactsBySet,
  STUCK_AFTER_MS,
  type PodUpgrade,
  type SetHashes,
  type StuckCondition,
  upgradableCondition,
} from './decision.js';

type Set = SidecarSet & KubeObject;

/** The hashes of a cached set object (cache objects are replaced, never edited, on every change). */
const hashesOfSet = new WeakMap<Set, SetHashes & { readonly revision: string }>();
function hashesOf(set: Set): SetHashes & { readonly revision: string } {
  let h = hashesOfSet.get(set);
  if (!h) {
    h = { hash: sidecarSetHash(set), withoutImage: sidecarSetHashWithoutImage(set), revision: sidecarSetRevisionHash(set) };
    hashesOfSet.set(set, h);
  }
  return h;
}

export class SidecarSetReconciler implements Reconciler {
  /** Pods patched and the hash each must show in the cache before the next decision (expectations). */
  private readonly expected = new Map<string, Map<string, string>>();
  /** UIDs of revisions deleted but maybe still cached: not counted again (they would push out one more). */
  private readonly deletedRevisions = new Set<string>();
  private readonly podFacts = new PodFactsBySet();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly sets: Informer<Set>,
    private readonly pods: Informer<Pod>,
    private readonly namespaces: Informer<KubeObject>,
    private readonly revisions: Informer<SidecarSetRevision>,
    private readonly revisionNamespace: string,
  ) {}

  /** Upstream's gate for budgets on in-place updates: on, a sidecar update asks the pod's budget first. */
  private get budgetGate(): boolean {
    return this.ctx.featureGates.get('PodUnavailableBudgetUpdateGate') === true;
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const set = this.sets.get(key);
    if (!set || set.metadata.deletionTimestamp) {
      this.expected.delete(key);
      this.podFacts.forget(key);
      return;
    }
    // Never decide from a cache older than our own last writes: wait until patched pods show their new hash.
    const pending = this.expected.get(key);
    if (pending) {
      for (const [podKey, hash] of pending) {
        const p = this.pods.get(podKey);
        if (!p || p.metadata.annotations?.[ANNOTATION_SIDECARSET_HASH]?.includes(hash)) pending.delete(podKey);
      }
      if (pending.size > 0) return { requeueAfterMs: 1000 };
      this.expected.delete(key);
    }

    // The pods that name the set in their injected list: the only ones it counts, upgrades or keeps revisions for.
    const setPods = this.pods.byIndex(PODS_BY_INJECTED_SIDECARSET, key);
    const pods = setPods.filter((p) =>
      sidecarSetMatches(set, {
        namespace: p.metadata.namespace!,
        namespaceLabels: this.namespaces.get(p.metadata.namespace!)?.metadata.labels,
        labels: p.metadata.labels ?? {},
      }),
    );
    const { name: revision, created } = await this.ensureRevision(set);
    await this.pruneRevisions(set, revision, setPods, created);
    await this.ensureHashAnnotations(set);
    const nowMs = Date.now();
    const hashes = hashesOf(set);
    const d = decide({ set, pods, nowMs, revision, hashes, podFacts: this.podFacts.for(key, hashes.hash) });

    for (const h of d.handovers ?? []) await this.handOver(set, h);
    if ((d.handovers ?? []).length > 0) return { requeueAfterMs: 1000 };
    const upgraded: Pod[] = [];
    for (const u of d.upgrades) {
      // Upstream's webhook asks the pod's PodUnavailableBudget on this update; asked here first, a pod the budget
      // holds back waits for the next round (a second later) instead of failing the round, and its status, on the
      // refusal.
      if (this.budgetGate && !(await askBudget(this.ctx, u.pod, 'UPDATE')).allowed) continue;
      if (await this.upgrade(set, u)) upgraded.push(u.pod);
    }
    if (upgraded.length > 0) {
      const { hash } = hashesOf(set);
      this.expected.set(key, new Map(upgraded.map((p) => [objectKey(p), hash])));
    }
    if (d.notUpgradable.length > 0) await this.markNotUpgradable(set, d.notUpgradable);
    await this.writeStatus(set, d.status, revision, d.stuck, nowMs);

    if (d.upgrades.length > 0) return { requeueAfterMs: 1000 };
    // While pods wait for their upgrade, look again later too: the stuck condition depends on time.
    if (d.status.updatedPods < d.status.matchedPods) return { requeueAfterMs: STUCK_AFTER_MS / 5 };
    return undefined;
  }

  /** The name of the revision of the set's version, and the revision when this call created it. */
  private async ensureRevision(set: Set): Promise<{ name: string; created?: SidecarSetRevision }> {
    const name = sidecarSetRevisionName(set, hashesOf(set).revision);
    if (set.status?.latestRevision === name) return { name };
    const body = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: this.revisionNamespace,
        labels: {
          [LABEL_SIDECARSET_NAME]: set.metadata.name!,
          // injectionStrategy.revision.customVersion pins new pods to the revision carrying this label. The set is
          // read at v1beta1 (spec.customVersion); the label is v1alpha1's place for it.
          ...(customVersionOf(set) ? { [LABEL_SIDECARSET_CUSTOM_VERSION]: customVersionOf(set) } : {}),
        },
        ownerReferences: [kruiseOwnerReference(set, 'SidecarSet', { controller: true })],
      },
      revision: set.metadata.generation ?? 1,
      data: sidecarSetRevisionData(set),
    };
    try {
      return {
        name,
        created: await this.ctx.client.create<SidecarSetRevision>(CONTROLLER_REVISIONS, body as KubeObject, this.revisionNamespace),
      };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // The set went back to an earlier version: its revision becomes the newest again (as upstream renumbers
      // it), so the history limit prunes around it and a customVersion pin picks it as the newest of its version.
      const existing = this.revisions.get(`${this.revisionNamespace}/${name}`);
      if (existing && (existing.revision ?? 0) < body.revision) {
        try {
          await this.ctx.client.patch(
            CONTROLLER_REVISIONS,
            name,
            this.revisionNamespace,
            { revision: body.revision },
            PatchStrategy.MergePatch,
          );
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    }
    return { name };
  }

  /**
   * Deletes the set's revisions beyond revisionHistoryLimit that nothing uses (read from the caches, with the
   * revision this reconcile `created`, which the cache may not hold yet: the limit holds when the status says so).
   */
  private async pruneRevisions(set: Set, latest: string, setPods: readonly Pod[], created?: SidecarSetRevision): Promise<void> {
    const name = set.metadata.name!;
    const listed = this.revisions.list();
    const cached = created && !listed.some((r) => r.metadata.uid === created.metadata.uid) ? [...listed, created] : listed;
    const live = new Set(cached.map((r) => r.metadata.uid));
    for (const uid of this.deletedRevisions) if (!live.has(uid)) this.deletedRevisions.delete(uid);
    const mine = cached.filter((r) => r.metadata.labels?.[LABEL_SIDECARSET_NAME] === name && !this.deletedRevisions.has(r.metadata.uid!));
    // Every pod of the set, matched or not any more: a pod whose labels changed still runs its revision.
    const doomed = revisionsToPrune({ set, revisions: mine, latest, pods: setPods });
    for (const r of doomed) {
      try {
        await this.ctx.client.delete(CONTROLLER_REVISIONS, r, this.revisionNamespace);
        this.deletedRevisions.add(mine.find((m) => m.metadata.name === r)!.metadata.uid!);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (doomed.length > 0) {
      this.ctx.logger.info({ sidecarSet: name, deleted: doomed }, 'pruned ControllerRevisions beyond revisionHistoryLimit');
    }
  }

  /** The set carries its own hashes, as upstream's SidecarSet webhook writes them (tools compare pods to them). */
  private async ensureHashAnnotations(set: Set): Promise<void> {
    const { hash, withoutImage } = hashesOf(set);
    const want = { [ANNOTATION_SIDECARSET_HASH]: hash, [ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE]: withoutImage };
    const a = set.metadata.annotations ?? {};
    if (Object.entries(want).every(([k, v]) => a[k] === v)) return;
    await this.ctx.client.patch(SIDECARSETS, set.metadata.name!, undefined, { metadata: { annotations: want } }, PatchStrategy.MergePatch);
  }

  /** The patch of a PodUpgrade: its images and annotations, conditional on the pod version decided from. */
  private podPatch(u: PodUpgrade): object {
    const list = Object.entries(u.images).map(([name, image]) => ({ name, image }));
    return {
      // Conditional on the version we decided from: a pod changed meanwhile is decided again.
      metadata: { resourceVersion: u.pod.metadata.resourceVersion, annotations: u.annotations },
      ...(list.length > 0 ? { spec: u.native ? { initContainers: list } : { containers: list } } : {}),
    };
  }

  /** HotUpgrade handover: the old version's container back to the empty image, once the new one serves. */
  private async handOver(set: Set, h: PodUpgrade): Promise<void> {
    try {
      await this.ctx.client.patch(
        PODS,
        h.pod.metadata.name!,
        h.pod.metadata.namespace,
        this.podPatch(h),
        PatchStrategy.StrategicMergePatch,
      );
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
    this.ctx.events.emit(
      PODS,
      h.pod,
      'Normal',
      'ResetContainerSucceed',
      `SidecarSet ${set.metadata.name}: hot upgrade handed over; ${Object.keys(h.images).join(', ')} back to the empty image`,
    );
  }

  /** Patches the pod's sidecars; false when it was not patched (gone, changed meanwhile, or refused by its budget). */
  private async upgrade(set: Set, u: PodUpgrade): Promise<boolean> {
    const list = Object.entries(u.images).map(([name, image]) => ({ name, image }));
    const body = this.podPatch(u);
    let patched: Pod;
    try {
      patched = await this.ctx.client.patch<Pod>(
        PODS,
        u.pod.metadata.name!,
        u.pod.metadata.namespace,
        body,
        PatchStrategy.StrategicMergePatch,
      );
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      // The pod's budget said no through the webhook (spent by someone else in between): decided again next round.
      if (isBudgetRefusal(err)) {
        this.ctx.logger.info(
          { sidecarSet: set.metadata.name, pod: objectKey(u.pod), err: (err as Error).message },
          'sidecar upgrade refused',
        );
        return false;
      }
      throw err;
    }
    this.ctx.events.emit(
      PODS,
      u.pod,
      'Normal',
      'SidecarSetUpgrade',
      `SidecarSet ${set.metadata.name} upgrades ${list.map((c) => `${c.name} to ${c.image}`).join(', ')} in place`,
    );
    // Upgraded: this set may upgrade the pod (upstream records it in the SidecarSetUpgradable condition).
    await this.setUpgradable(set, patched, true);
    return true;
  }

  /**
   * Records in the pod's SidecarSetUpgradable condition whether this set can upgrade it. The condition
   * holds every set's verdict, so the patch is conditional on the pod version it was computed from and is
   * computed again from a fresh read when another writer got in between. Returns whether it was written.
   */
  private async setUpgradable(set: Set, pod: Pod, upgradable: boolean): Promise<boolean> {
    let current: Pod = pod;
    for (let attempt = 0; ; attempt++) {
      const condition = upgradableCondition(current.status?.conditions, set.metadata.name!, upgradable, rfc3339(Date.now()));
      if (!condition) return false;
      try {
        await this.ctx.client.patch(
          PODS,
          current.metadata.name!,
          current.metadata.namespace,
          { metadata: { resourceVersion: current.metadata.resourceVersion }, status: { conditions: [condition] } },
          PatchStrategy.StrategicMergePatch,
          { subresource: 'status' },
        );
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        if (!isConflict(err) || attempt >= 4) throw err;
      }
      try {
        current = await this.ctx.client.get<Pod>(PODS, pod.metadata.name!, pod.metadata.namespace);
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    }
  }

  private async markNotUpgradable(set: Set, pods: readonly Pod[]): Promise<void> {
    let marked = 0;
    for (const p of pods) if (await this.setUpgradable(set, p, false)) marked++;
    if (marked > 0) {
      this.ctx.events.emit(
        SIDECARSETS,
        set,
        'Warning',
        'NotUpgradablePods',
        `${marked} pods cannot be upgraded in place (more than the sidecar images changed): ${pods
          .slice(0, 5)
          .map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
          .join(', ')}`,
      );
    }
  }

  private async writeStatus(
    set: Set,
    counts: { matchedPods: number; updatedPods: number; readyPods: number; updatedReadyPods: number },
    revision: string,
    stuck: StuckCondition | undefined,
    nowMs: number,
  ): Promise<void> {
    const old = set.status ?? ({} as NonNullable<Set['status']>);
    const oldStuck = old.conditions?.find((c) => c.type === CONDITION_ROLLOUT_STUCK);
    const condition = stuck
      ? {
          type: CONDITION_ROLLOUT_STUCK,
          status: 'True',
          reason: stuck.reason,
          message: stuck.message,
          lastTransitionTime: oldStuck?.status === 'True' ? oldStuck.lastTransitionTime : rfc3339(nowMs),
        }
      : oldStuck && oldStuck.status !== 'False'
        ? {
            type: CONDITION_ROLLOUT_STUCK,
            status: 'False',
            reason: 'Progressing',
            message: 'no pod is stuck',
            lastTransitionTime: rfc3339(nowMs),
          }
        : oldStuck;
    const status = {
      ...counts,
      observedGeneration: set.metadata.generation,
      latestRevision: revision,
      collisionCount: old.collisionCount ?? 0,
      ...(condition ? { conditions: [condition] } : {}),
    };
    const same =
      old.matchedPods === status.matchedPods &&
      old.updatedPods === status.updatedPods &&
      old.readyPods === status.readyPods &&
      old.updatedReadyPods === status.updatedReadyPods &&
      old.observedGeneration === status.observedGeneration &&
      old.latestRevision === status.latestRevision &&
      JSON.stringify(old.conditions?.find((c) => c.type === CONDITION_ROLLOUT_STUCK)) === JSON.stringify(condition);
    if (same) return;
    try {
      await this.ctx.client.patch(SIDECARSETS, set.metadata.name!, undefined, { status }, PatchStrategy.MergePatch, {
        subresource: 'status',
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** The set's custom version: v1beta1's spec field, else v1alpha1's label. */
function customVersionOf(set: SidecarSet): string | undefined {
  return set.spec.customVersion || set.metadata.labels?.[LABEL_SIDECARSET_CUSTOM_VERSION] || undefined;
}

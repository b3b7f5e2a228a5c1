import { randomInt } from 'node:crypto';
import type { CloneSet } from '../../../api/kinds/cloneset.js';
import type { LifecycleState } from '../../../api/pod-contracts.js';
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CLONESETS,
  CONDITION_INPLACE_UPDATE_READY,
  CONDITION_KRUISE_POD_READY,
  CONTROLLER_REVISIONS,
  LABEL_CLONESET_INSTANCE_ID,
  LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  LABEL_SPECIFIED_DELETE,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  selectorMatches,
  isEmptySelector,
} from '../../../contracts/index.js';
import { isAlreadyExists, isConflict, isInvalid, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext, Reconciler } from '../../core/controller.js';
import type { Informer } from '../../core/informer.js';
import type { ProcessResult } from '../../core/queue.js';
import { objectKey, type KubeObject, type OwnerReference, type Pod, type PodCondition } from '../../core/types.js';
import {
  calculateDiffs,
  deleteStep,
  inPlaceCompleted,
  inPlaceState,
  kruisePodReadyWith,
  missingGateForNotReady,
  nextCurrentRevision,
  nextLifecycleState,
  notReadyChange,
  parseJson,
  planScale,
  planUpdate,
  progressingCondition,
  selectorString,
  shouldMarkInPlaceReady,
  statusCounts,
  syncConditions,
  type CloneSetConditionLike,
  type DiffInput,
  type InPlaceUpdateGrace,
  type InPlaceUpdateState,
  type PodUpdate,
  type UpdateType,
} from './decision.js';
import { EXPECTATION_TIMEOUT_MS, ResourceVersionExpectations, ScaleExpectations } from '../../core/expectations.js';
import { availableInMs, condition, hasReadinessGate, isPodActive, isPodAtRevision, shortHash, type Lifecycle } from './pods.js';
import { inPlaceSpec, newRevision, planUpdateRevision, revisionsToTruncate, templateOf, type Revision } from './revision.js';

export type CloneSetObject = CloneSet & KubeObject;

const API_VERSION = 'apps.kruise.io/v1alpha1';
const ID_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const ID_LENGTH = 5;
/** Requeue while a cache catches up with our own writes. */
const CACHE_WAIT_MS = 100;

const rfc3339 = (ms = Date.now()) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function randomId(): string {
  let s = '';
  for (let i = 0; i < ID_LENGTH; i++) s += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return s;
}

function controllerRef(o: KubeObject): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller);
}

function ownerRefOf(cs: CloneSetObject): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: 'CloneSet',
    name: cs.metadata.name!,
    uid: cs.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Pod writes of one round run this many at a time (a 1,000-pod ReCreate is not 1,000 round trips in a row). */
const WRITE_CONCURRENCY = 16;

/** Runs `fn` over `items`, at most `limit` at once; resolves with the errors' messages (none thrown). */
async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<string[]> {
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

interface RoundResult {
  requeueAfterMs?: number;
}

/** Reads caches, calls the decisions, applies them idempotently (the I/O half of the CloneSet controller). */
export class CloneSetReconciler implements Reconciler {
  /** Pod creates and deletes in flight per CloneSet, met by the pod informer's events (index.ts feeds them). */
  readonly scaleExpectations = new ScaleExpectations();
  /** The version each pod write of ours returned, by pod uid: a reconcile waits until the cache has it. */
  readonly podVersions = new ResourceVersionExpectations<Pod>((p) => p.metadata.uid, Date.now, EXPECTATION_TIMEOUT_MS);
  /** CloneSets whose pods this process has checked against a consistent list once (restart/leader safety). */
  private readonly verified = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly sets: Informer<CloneSetObject>,
    private readonly pods: Informer<Pod>,
    private readonly pvcs: Informer<KubeObject>,
    private readonly revisions: Informer<Revision>,
    private readonly options: { excludePreparingDelete: boolean; partitionRollback: boolean },
  ) {}

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

    const selector = cs.spec.selector ?? {};
    const owned = await this.claimPods(cs, selector);
    if (owned === undefined) return { requeueAfterMs: CACHE_WAIT_MS };
    for (const p of owned) if (!this.podVersions.satisfiedBy(p)) return { requeueAfterMs: CACHE_WAIT_MS };
    const active = owned.filter(isPodActive);
    const pvcs = this.pvcs.list().filter((c) => c.metadata.namespace === ns && controllerRef(c)?.uid === cs.metadata.uid);

    const revs = await this.syncRevisions(cs);
    if (!revs) return { requeueAfterMs: CACHE_WAIT_MS };
    const { update, current, collisionCount, all } = revs;

    const failures: { scale?: string; update?: string } = {};
    const result: RoundResult = {};
    const nowMs = Date.now();
    if (!cs.metadata.deletionTimestamp) {
      if (cs.spec.scaleStrategy?.disablePVCReuse) await this.cleanupPvcs(cs, pvcs, owned);
      const diffIn = this.diffInput(cs, active, update.metadata.name!, current.metadata.name!, nowMs);
      let scaled = false;
      try {
        scaled = await this.scale(cs, diffIn, pvcs, owned, update, current);
      } catch (err) {
        failures.scale = (err as Error).message;
        this.ctx.logger.warn({ cloneset: key, err: failures.scale }, 'scale failed');
      }
      if (!scaled && failures.scale === undefined) {
        try {
          await this.update(cs, diffIn, all, result);
        } catch (err) {
          failures.update = (err as Error).message;
          this.ctx.logger.warn({ cloneset: key, err: failures.update }, 'update failed');
        }
      }
    }

    const fresh = this.sets.get(key) ?? cs;
    const nowPods = owned.map((p) => this.pods.get(`${ns}/${p.metadata.name}`) ?? p).filter(isPodActive);
    const deadlineIn = await this.writeStatus(fresh, nowPods, update.metadata.name!, current.metadata.name!, collisionCount, failures);
    // A progressing rollout is looked at again when its deadline falls due, even if nothing else changes.
    if (deadlineIn !== undefined) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, deadlineIn);
    await this.housekeeping(cs, owned, all, update, current);

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

  private async cacheHasAllPods(cs: CloneSetObject): Promise<boolean> {
    const ns = cs.metadata.namespace!;
    const sel = cs.spec.selector ?? {};
    if (isEmptySelector(sel)) return true;
    const list = await this.ctx.client.list<Pod>(PODS, { namespace: ns, labelSelector: selectorString(sel as never) });
    return list.items.every((p) => controllerRef(p)?.uid !== cs.metadata.uid || this.pods.get(`${ns}/${p.metadata.name}`) !== undefined);
  }

  // ------------------------------------------------------------------------------------------
  // Claim (adopt / release)
  // ------------------------------------------------------------------------------------------

  private async claimPods(cs: CloneSetObject, selector: CloneSetObject['spec']['selector']): Promise<Pod[] | undefined> {
    const ns = cs.metadata.namespace!;
    const uid = cs.metadata.uid!;
    const owned: Pod[] = [];
    let changed = false;
    for (const p of this.pods.list()) {
      if (p.metadata.namespace !== ns) continue;
      const ref = controllerRef(p);
      const matches = !isEmptySelector(selector) && selectorMatches(selector, p.metadata.labels ?? {});
      if (ref?.uid === uid) {
        if (matches || cs.metadata.deletionTimestamp) {
          owned.push(p);
          continue;
        }
        // Release: the pod no longer matches the selector.
        await this.patchPod(p, { metadata: { ownerReferences: [{ $patch: 'delete', uid }] } });
        changed = true;
        continue;
      }
      if (ref || !matches || cs.metadata.deletionTimestamp || p.metadata.deletionTimestamp) continue;
      // Adopt an orphan that matches (the owner reference merges by uid).
      await this.patchPod(p, { metadata: { ownerReferences: [ownerRefOf(cs)], uid: p.metadata.uid } });
      changed = true;
    }
    return changed ? undefined : owned;
  }

  // ------------------------------------------------------------------------------------------
  // Revisions
  // ------------------------------------------------------------------------------------------

  private async syncRevisions(
    cs: CloneSetObject,
  ): Promise<{ update: Revision; current: Revision; collisionCount: number; all: Revision[] } | undefined> {
    const ns = cs.metadata.namespace!;
    const all = this.revisions.list().filter((r) => r.metadata.namespace === ns && controllerRef(r)?.uid === cs.metadata.uid);
    let collisionCount = cs.status?.collisionCount ?? 0;
    const template = cs.spec.template as Record<string, unknown>;
    const build = (cc: number, revision: number) =>
      newRevision({
        parentName: cs.metadata.name!,
        namespace: ns,
        template,
        templateLabels: ((template.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<string, string>,
        parentAnnotations: cs.metadata.annotations ?? {},
        vcts: cs.spec.volumeClaimTemplates as KubeObject[] | undefined,
        collisionCount: cc,
        revision,
        ownerReference: ownerRefOf(cs),
      });
    const plan = planUpdateRevision(all, build(collisionCount, 0));
    // The revision written this round is used at once (not after the revisions cache shows it): the
    // decision never waits on a watch, and a stale cache only repeats an idempotent write.
    const persistCollisionCount = () =>
      this.ctx.client.patch(CLONESETS, cs.metadata.name!, ns, { status: { collisionCount } }, PatchStrategy.MergePatch, {
        subresource: 'status',
      });
    let update: Revision | undefined;
    let createAs = plan.revision.revision ?? 1;
    if (plan.action === 'reuse') {
      update = plan.revision;
    } else if (plan.action === 'bump') {
      try {
        update = await this.ctx.client.patch<Revision>(
          CONTROLLER_REVISIONS,
          plan.revision.metadata.name!,
          ns,
          { revision: plan.to },
          PatchStrategy.MergePatch,
        );
        this.ctx.logger.info(
          { cloneset: objectKey(cs), revision: update.metadata.name, number: plan.to },
          'update revision: an older revision again',
        );
      } catch (err) {
        if (!isInvalid(err)) throw err;
        // The API server refuses to renumber a revision whose stored data no longer equals itself once
        // it re-encodes it (written with a literal `&`, `<` or `>` before requests were encoded the Go
        // way): a new revision under the next collision count takes its place instead of a stall.
        this.ctx.logger.warn(
          { cloneset: objectKey(cs), revision: plan.revision.metadata.name, err: (err as Error).message },
          'update revision: the older equal revision cannot be renumbered; creating a new one',
        );
        collisionCount++;
        await persistCollisionCount();
        createAs = plan.to;
      }
    }
    for (let attempt = 0; !update; attempt++) {
      const wanted = { ...build(collisionCount, createAs) };
      try {
        update = await this.ctx.client.create<Revision>(CONTROLLER_REVISIONS, wanted, ns);
        this.ctx.logger.info({ cloneset: objectKey(cs), revision: update.metadata.name }, 'update revision: created');
      } catch (err) {
        if (!isAlreadyExists(err) || attempt > 10) throw err;
        const existing = await this.ctx.client.get<Revision>(CONTROLLER_REVISIONS, wanted.metadata.name!, ns);
        if (controllerRef(existing)?.uid === cs.metadata.uid && planUpdateRevision([existing], wanted).action !== 'create') {
          update = existing;
          break;
        }
        // A different revision holds the name: count the collision (persisted in status) and rehash.
        collisionCount++;
        await persistCollisionCount();
      }
    }
    const revisions = [...all.filter((r) => r.metadata.name !== update.metadata.name), update];
    const current = revisions.find((r) => r.metadata.name === cs.status?.currentRevision) ?? update;
    return { update, current, collisionCount, all: revisions };
  }

  // ------------------------------------------------------------------------------------------
  // Scale
  // ------------------------------------------------------------------------------------------

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
      nowMs,
    };
  }

  /** One Scale step; true when it changed anything (the round then ends, as upstream's). */
  private async scale(
    cs: CloneSetObject,
    d: DiffInput,
    pvcs: KubeObject[],
    owned: Pod[],
    update: Revision,
    current: Revision,
  ): Promise<boolean> {
    const lifecycle = cs.spec.lifecycle as Lifecycle | undefined;
    const plan = planScale({ ...d, lifecycle });
    switch (plan.action) {
      case 'none':
        return false;
      case 'undelete':
        for (const p of plan.pods) await this.setState(cs, p, 'PreparingNormal');
        return true;
      case 'create':
        if (plan.count < plan.wanted) {
          this.ctx.events.emit(
            CLONESETS,
            cs,
            'Warning',
            'ScaleUpLimited',
            `scaleUp is limited because of scaleStrategy.maxUnavailable, limit: ${plan.count}`,
          );
        }
        if (plan.count === 0) return false;
        await this.createPods(cs, plan.count, plan.oldRevisionCount, pvcs, owned, update, current);
        return true;
      case 'delete': {
        let changed = false;
        const errors = await forEachLimit(plan.pods, WRITE_CONCURRENCY, async (p) => {
          if (await this.deletePod(cs, p, pvcs)) changed = true;
        });
        if (errors.length) throw new Error(errors.join('; '));
        return changed;
      }
    }
  }

  /** Instance ids: free ones (an owned PVC, no active pod, no pod of that name left) first, unless PVC reuse is off. */
  private instanceIds(cs: CloneSetObject, count: number, pvcs: KubeObject[], owned: Pod[]): string[] {
    const ns = cs.metadata.namespace!;
    const name = cs.metadata.name!;
    const activeIds = new Set(owned.filter(isPodActive).map((p) => p.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID]));
    const ids: string[] = [];
    if (!cs.spec.scaleStrategy?.disablePVCReuse) {
      const free = new Set<string>();
      for (const c of pvcs) {
        const id = c.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID];
        // A pod of that name still terminating would make the create fail with AlreadyExists and stall
        // the CloneSet, as upstream does: such an id is not free yet.
        if (id && !activeIds.has(id) && !this.pods.get(`${ns}/${name}-${id}`)) free.add(id);
      }
      ids.push(...[...free].sort().slice(0, count));
    }
    const taken = new Set([...pvcs.map((c) => c.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID]), ...activeIds, ...ids]);
    while (ids.length < count) {
      const id = randomId();
      if (taken.has(id) || this.pods.get(`${ns}/${name}-${id}`)) continue;
      taken.add(id);
      ids.push(id);
    }
    return ids;
  }

  private async createPods(
    cs: CloneSetObject,
    count: number,
    oldCount: number,
    pvcs: KubeObject[],
    owned: Pod[],
    update: Revision,
    current: Revision,
  ): Promise<void> {
    const key = `${cs.metadata.namespace}/${cs.metadata.name}`;
    const ids = this.instanceIds(cs, count, pvcs, owned);
    const jobs = ids.map((id, i) => ({ id, revision: i < oldCount ? current : update }));
    // Slow start (1, 2, 4…): a systematic failure (quota, admission) costs one call, not `count`.
    let batch = 1;
    let done = 0;
    const errors: string[] = [];
    while (done < jobs.length && errors.length === 0) {
      const slice = jobs.slice(done, done + batch);
      await Promise.all(
        slice.map(async (j) => {
          try {
            await this.createOne(cs, key, j.id, j.revision, pvcs);
          } catch (err) {
            errors.push((err as Error).message);
          }
        }),
      );
      done += slice.length;
      batch *= 2;
    }
    if (errors.length) throw new Error(`failed to create pods: ${errors[0]}`);
  }

  private async createOne(cs: CloneSetObject, key: string, id: string, revision: Revision, pvcs: KubeObject[]): Promise<void> {
    const ns = cs.metadata.namespace!;
    const name = `${cs.metadata.name}-${id}`;
    const claims: Record<string, string> = {};
    for (const vct of (cs.spec.volumeClaimTemplates ?? []) as KubeObject[]) {
      const vname = vct.metadata?.name ?? '';
      const claimName = `${vname}-${name}`;
      claims[vname] = claimName;
      if (pvcs.some((c) => c.metadata.name === claimName) || this.pvcs.get(`${ns}/${claimName}`)) continue;
      const pvc: KubeObject = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: claimName,
          namespace: ns,
          labels: {
            ...(vct.metadata?.labels ?? {}),
            ...((cs.spec.selector?.matchLabels ?? {}) as Record<string, string>),
            [LABEL_CLONESET_INSTANCE_ID]: id,
          },
          ...(vct.metadata?.annotations ? { annotations: vct.metadata.annotations } : {}),
          ownerReferences: [ownerRefOf(cs)],
        },
        spec: vct.spec,
      };
      try {
        await this.ctx.client.create(PERSISTENT_VOLUME_CLAIMS, pvc, ns);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
    const pod = this.newPod(cs, name, id, revision, claims);
    this.scaleExpectations.expect(key, 'create', name);
    try {
      const created = await this.ctx.client.create(PODS, pod, ns);
      this.scaleExpectations.created(key, name, created.metadata.resourceVersion);
    } catch (err) {
      this.scaleExpectations.failed(key, 'create', name);
      this.ctx.events.emit(CLONESETS, cs, 'Warning', 'FailedCreate', `failed to create pod ${name}: ${(err as Error).message}`);
      throw err;
    }
    this.ctx.events.emit(CLONESETS, cs, 'Normal', 'SuccessfulCreate', `succeed to create pod ${name}`);
  }

  /** The pod of one instance: template of its revision, our labels, owner, gates, PVC volumes. */
  newPod(cs: CloneSetObject, name: string, id: string, revision: Revision, claims: Record<string, string>): Pod {
    const t = (templateOf(revision) ?? (cs.spec.template as Record<string, unknown>)) as {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] };
      spec?: Record<string, unknown>;
    };
    const revName = revision.metadata.name!;
    const spec = structuredClone(t.spec ?? {}) as NonNullable<Pod['spec']> & {
      readinessGates?: Array<{ conditionType: string }>;
      volumes?: Array<Record<string, unknown> & { name: string }>;
    };
    const gates = spec.readinessGates ?? [];
    for (const g of [CONDITION_INPLACE_UPDATE_READY, CONDITION_KRUISE_POD_READY]) {
      if (!gates.some((x) => x.conditionType === g)) gates.push({ conditionType: g });
    }
    spec.readinessGates = gates;
    if (Object.keys(claims).length) {
      const volumes = (spec.volumes ?? []).filter((v) => !(v.name in claims));
      for (const [vname, claimName] of Object.entries(claims)) volumes.push({ name: vname, persistentVolumeClaim: { claimName } });
      spec.volumes = volumes;
    }
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        generateName: `${cs.metadata.name}-`,
        namespace: cs.metadata.namespace,
        labels: {
          ...(t.metadata?.labels ?? {}),
          [LABEL_CONTROLLER_REVISION_HASH]: revName,
          [LABEL_POD_TEMPLATE_HASH]: shortHash(revName),
          [LABEL_CLONESET_INSTANCE_ID]: id,
          [LABEL_LIFECYCLE_STATE]: 'PreparingNormal',
        },
        annotations: { ...(t.metadata?.annotations ?? {}), [ANNOTATION_LIFECYCLE_TIMESTAMP]: rfc3339() },
        ...(t.metadata?.finalizers?.length ? { finalizers: [...t.metadata.finalizers] } : {}),
        ownerReferences: [ownerRefOf(cs)],
      },
      spec,
    };
  }

  /** Deletes a pod and its PVCs, or holds it in PreparingDelete while the preDelete hook holds. */
  private async deletePod(cs: CloneSetObject, p: Pod, pvcs: KubeObject[]): Promise<boolean> {
    const lifecycle = cs.spec.lifecycle as Lifecycle | undefined;
    const step = deleteStep(p, lifecycle);
    if (step === 'wait') return false;
    if (step === 'prepare') {
      await this.setState(cs, p, 'PreparingDelete');
      return true;
    }
    const key = `${cs.metadata.namespace}/${cs.metadata.name}`;
    const ns = cs.metadata.namespace!;
    this.scaleExpectations.expect(key, 'delete', p.metadata.name!, p.metadata.uid);
    try {
      await this.ctx.client.delete(PODS, p.metadata.name!, ns);
    } catch (err) {
      this.scaleExpectations.failed(key, 'delete', p.metadata.name!);
      if (isNotFound(err)) return true;
      this.ctx.events.emit(CLONESETS, cs, 'Warning', 'FailedDelete', `failed to delete pod ${p.metadata.name}: ${(err as Error).message}`);
      throw err;
    }
    this.podVersions.forget(p);
    this.ctx.events.emit(CLONESETS, cs, 'Normal', 'SuccessfulDelete', `succeed to delete pod ${p.metadata.name}`);
    const id = p.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID];
    for (const c of pvcs) {
      if (!id || c.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID] !== id) continue;
      try {
        await this.ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, c.metadata.name!, ns);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return true;
  }

  /**
   * disablePVCReuse: a PVC whose instance has no active pod is handed to the dead pod of that id (GC
   * removes both) or, without one, deleted; it is never reused.
   */
  private async cleanupPvcs(cs: CloneSetObject, pvcs: KubeObject[], owned: Pod[]): Promise<void> {
    const ns = cs.metadata.namespace!;
    const active = new Set(owned.filter(isPodActive).map((p) => p.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID]));
    for (const c of pvcs) {
      const id = c.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID];
      if (!id || active.has(id) || c.metadata.deletionTimestamp) continue;
      const dead = owned.find((p) => !isPodActive(p) && p.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID] === id);
      try {
        if (dead) {
          const podRef: OwnerReference = {
            apiVersion: 'v1',
            kind: 'Pod',
            name: dead.metadata.name!,
            uid: dead.metadata.uid!,
            controller: true,
            blockOwnerDeletion: true,
          };
          await this.ctx.client.patch(
            PERSISTENT_VOLUME_CLAIMS,
            c.metadata.name!,
            ns,
            { metadata: { ownerReferences: [podRef], resourceVersion: c.metadata.resourceVersion } },
            PatchStrategy.MergePatch,
          );
        } else {
          await this.ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, c.metadata.name!, ns);
        }
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Update (refresh every pod, then update the chosen ones)
  // ------------------------------------------------------------------------------------------

  private async update(cs: CloneSetObject, d: DiffInput, all: Revision[], result: RoundResult): Promise<void> {
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
      diffs: calculateDiffs(d),
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
        return !!from && !!to && inPlaceSpec(templateOf(from), templateOf(to)) !== undefined;
      },
      nowMs: d.nowMs,
    });
    if (plan.length) {
      this.ctx.logger.debug(
        { cloneset: objectKey(cs), updateNum: calculateDiffs(d).updateNum, plan: plan.map((u) => `${u.pod.metadata.name}:${u.action}`) },
        'cloneset update',
      );
    }
    const errors = await forEachLimit(plan, WRITE_CONCURRENCY, async (u) => {
      const delay = await this.applyUpdate(cs, u, byName, revOf, lifecycle);
      if (delay !== undefined) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, delay);
    });
    if (errors.length) throw new Error(errors.join('; '));
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
        await this.patchPod(u.pod, { metadata: { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } } });
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
        await this.setState(cs, u.pod, 'PreparingUpdate', extra);
        return undefined;
      }
      case 'in-place': {
        const from = revOf(u.pod);
        const to = byName.get(u.target)!;
        const spec = inPlaceSpec(templateOf(from), templateOf(to))!;
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
      resourceVersion = (await this.patchPodStatus(p, conds))?.metadata.resourceVersion ?? resourceVersion;
    }
    const grace = cs.spec.updateStrategy?.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0;
    const state: InPlaceUpdateState = inPlaceState(p, revision, spec.containerImages, now);
    const annotations: Record<string, string | null> = {
      ...spec.annotations,
      [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state),
      [ANNOTATION_LIFECYCLE_TIMESTAMP]: now,
    };
    const patch: Record<string, unknown> = {
      metadata: {
        resourceVersion,
        labels: {
          ...spec.labels,
          [LABEL_CONTROLLER_REVISION_HASH]: revision,
          [LABEL_POD_TEMPLATE_HASH]: shortHash(revision),
          [LABEL_LIFECYCLE_STATE]: 'Updating',
        },
        annotations,
      },
    };
    const images = Object.entries(spec.containerImages).map(([name, image]) => ({ name, image }));
    if (grace > 0 && images.length) {
      const g: InPlaceUpdateGrace = { revision, containerImages: { ...spec.containerImages }, graceSeconds: grace };
      annotations[ANNOTATION_INPLACE_UPDATE_GRACE] = JSON.stringify(g);
    } else if (images.length) {
      patch.spec = { containers: images };
    }
    const res = await this.patchPod(p, patch);
    if (res) this.ctx.events.emit(PODS, p, 'Normal', 'SuccessfulUpdatePodInPlace', `successfully update pod ${p.metadata.name} in-place`);
    return grace > 0 && images.length ? grace * 1000 : undefined;
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
        await this.patchPod(p, { metadata: { annotations: { [ANNOTATION_INPLACE_UPDATE_GRACE]: null } } });
        return { changed: true };
      }
      const since = st?.updateTimestamp ? Date.parse(st.updateTimestamp) : Date.now();
      const left = since + g.graceSeconds * 1000 - Date.now();
      if (left > 0) return { changed: false, requeueAfterMs: Math.ceil(left / 1000) * 1000 };
      await this.patchPod(p, {
        metadata: { resourceVersion: p.metadata.resourceVersion, annotations: { [ANNOTATION_INPLACE_UPDATE_GRACE]: null } },
        spec: { containers: Object.entries(g.containerImages).map(([name, image]) => ({ name, image })) },
      });
      return { changed: true };
    }
    const next = nextLifecycleState({ pod: p, lifecycle, updateRevision, inPlaceCompleted: inPlaceCompleted(p) });
    if (next) {
      await this.setState(cs, p, next);
      return { changed: true };
    }
    if (!p.metadata.labels?.[LABEL_POD_TEMPLATE_HASH] && p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH]) {
      await this.patchPod(p, {
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
    if (conds.length) {
      await this.patchPodStatus(p, conds);
      return { changed: false };
    }
    return { changed: false };
  }

  /** State label + timestamp in one patch (plus extra labels/finalizers), then the not-ready mark it implies. */
  private async setState(
    cs: CloneSetObject,
    p: Pod,
    state: LifecycleState,
    extra: { labels?: Record<string, string>; finalizers?: string[] } = {},
  ): Promise<void> {
    const lifecycle = cs.spec.lifecycle as Lifecycle | undefined;
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

  private async patchPod(
    p: Pod,
    patch: unknown,
    type: (typeof PatchStrategy)[keyof typeof PatchStrategy] = PatchStrategy.StrategicMergePatch,
  ) {
    try {
      const res = await this.ctx.client.patch<Pod>(PODS, p.metadata.name!, p.metadata.namespace, patch, type);
      this.podVersions.record(res);
      return res;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async patchPodStatus(p: Pod, conditions: PodCondition[]): Promise<Pod | undefined> {
    try {
      const res = await this.ctx.client.patch<Pod>(
        PODS,
        p.metadata.name!,
        p.metadata.namespace,
        { status: { conditions } },
        PatchStrategy.StrategicMergePatch,
        { subresource: 'status' },
      );
      this.podVersions.record(res);
      return res;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return undefined;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Status and housekeeping
  // ------------------------------------------------------------------------------------------

  private async writeStatus(
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

  private async housekeeping(cs: CloneSetObject, owned: Pod[], all: Revision[], update: Revision, current: Revision): Promise<void> {
    const ns = cs.metadata.namespace!;
    // A pod already being deleted is done with: its name goes too (it may terminate for a long time).
    const names = new Set(owned.filter(isPodActive).map((p) => p.metadata.name));
    const toDelete = cs.spec.scaleStrategy?.podsToDelete ?? [];
    const kept = toDelete.filter((n) => names.has(n));
    if (kept.length !== toDelete.length) {
      await this.ctx.client.patch(
        CLONESETS,
        cs.metadata.name!,
        ns,
        { metadata: { resourceVersion: cs.metadata.resourceVersion }, spec: { scaleStrategy: { podsToDelete: kept } } },
        PatchStrategy.MergePatch,
      );
    }
    const podRevs = new Set(owned.map((p) => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? ''));
    const keep = new Set([update.metadata.name!, current.metadata.name!]);
    for (const r of revisionsToTruncate(all, keep, podRevs, cs.spec.revisionHistoryLimit ?? 10)) {
      try {
        await this.ctx.client.delete(CONTROLLER_REVISIONS, r.metadata.name!, ns);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

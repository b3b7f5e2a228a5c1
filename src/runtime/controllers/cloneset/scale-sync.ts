/**
 * CloneSet Scale, the I/O half (upstream's `sync/cloneset_scale.go`): carries out the step scale-decision.ts
 * plans — take PreparingDelete pods back, create pods (and their PVCs) with fresh or freed instance ids,
 * delete pods (and their PVCs) — and, with `disablePVCReuse`, hands the PVCs of dead instances away.
 */
import { randomInt } from 'node:crypto';
import { CLONESETS, LABEL_CLONESET_INSTANCE_ID, PERSISTENT_VOLUME_CLAIMS, PODS } from '../../../contracts/index.js';
import { isAlreadyExists, isConflict, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext } from '../../core/controller.js';
import type { ScaleExpectations } from '../../core/expectations.js';
import type { Informer } from '../../core/informer.js';
import { podOwnerReference, rfc3339 } from '../../core/meta.js';
import type { KubeObject, Pod } from '../../core/types.js';
import type { Revision } from '../../control/controller-revision.js';
import { forEachLimit, WRITE_CONCURRENCY, type PodWrites } from '../../control/pod-writes.js';
import { isPodActive, type Lifecycle } from '../../control/workload-pods.js';
import type { CloneSetObject } from './pods.js';
import { cloneSetOwnerReference, deleteStep, newPod, planScale, type DiffInput } from './scale-decision.js';

const ID_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const ID_LENGTH = 5;

function randomId(): string {
  let s = '';
  for (let i = 0; i < ID_LENGTH; i++) s += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return s;
}

export class ScaleSync {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly pods: Informer<Pod>,
    private readonly pvcs: Informer<KubeObject>,
    private readonly expectations: ScaleExpectations,
    private readonly writes: PodWrites,
  ) {}

  /** One Scale step; true when it changed anything (the round then ends, as upstream's). */
  async scale(cs: CloneSetObject, d: DiffInput, pvcs: KubeObject[], owned: Pod[], update: Revision, current: Revision): Promise<boolean> {
    const lifecycle = cs.spec.lifecycle as Lifecycle | undefined;
    const plan = planScale({ ...d, lifecycle });
    switch (plan.action) {
      case 'none':
        return false;
      case 'undelete':
        for (const p of plan.pods) await this.writes.setState(cs, p, 'PreparingNormal');
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

  /**
   * Instance ids: free ones first (an owned PVC not being deleted, no active pod), unless PVC reuse is off,
   * then fresh ones. A free id whose pod of that name is still terminating is kept for it, as upstream
   * does (its PVCs are the instance's data); `createPods` waits for that pod to go. An id whose pod of that
   * name stays (finished, not deleted) is never free: its create could only fail.
   */
  private instanceIds(cs: CloneSetObject, count: number, pvcs: KubeObject[], owned: Pod[]): string[] {
    const activeIds = new Set(owned.filter(isPodActive).map((p) => p.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID]));
    const ids: string[] = [];
    if (!cs.spec.scaleStrategy?.disablePVCReuse) {
      const free = new Set<string>();
      for (const c of pvcs) {
        const id = c.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID];
        if (!id || c.metadata.deletionTimestamp || activeIds.has(id)) continue;
        const namesake = this.podOfInstance(cs, id);
        if (!namesake || namesake.metadata.deletionTimestamp) free.add(id);
      }
      ids.push(...[...free].sort().slice(0, count));
    }
    const taken = new Set([...pvcs.map((c) => c.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID]), ...activeIds, ...ids]);
    while (ids.length < count) {
      const id = randomId();
      if (taken.has(id) || this.podOfInstance(cs, id)) continue;
      taken.add(id);
      ids.push(id);
    }
    return ids;
  }

  /** The cached pod named for an instance of this CloneSet, whoever owns it now. */
  private podOfInstance(cs: CloneSetObject, id: string): Pod | undefined {
    return this.pods.get(`${cs.metadata.namespace}/${cs.metadata.name}-${id}`);
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
    // An instance whose previous pod still terminates is created once that pod is gone (its deletion
    // requeues this CloneSet); creating it now could only fail with AlreadyExists.
    const jobs = ids.map((id, i) => ({ id, revision: i < oldCount ? current : update })).filter((j) => !this.podOfInstance(cs, j.id));
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
          ownerReferences: [cloneSetOwnerReference(cs)],
        },
        spec: vct.spec,
      };
      try {
        await this.ctx.client.create(PERSISTENT_VOLUME_CLAIMS, pvc, ns);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
    const pod = newPod(cs, name, id, revision, claims, rfc3339());
    this.expectations.expect(key, 'create', name);
    try {
      const created = await this.ctx.client.create(PODS, pod, ns);
      this.expectations.created(key, name, created.metadata.resourceVersion);
    } catch (err) {
      this.expectations.failed(key, 'create', name);
      this.ctx.events.emit(CLONESETS, cs, 'Warning', 'FailedCreate', `failed to create pod ${name}: ${(err as Error).message}`);
      throw err;
    }
    this.ctx.events.emit(CLONESETS, cs, 'Normal', 'SuccessfulCreate', `succeed to create pod ${name}`);
  }

  /** Deletes a pod and its PVCs, or holds it in PreparingDelete while the preDelete hook holds. */
  private async deletePod(cs: CloneSetObject, p: Pod, pvcs: KubeObject[]): Promise<boolean> {
    const lifecycle = cs.spec.lifecycle as Lifecycle | undefined;
    const step = deleteStep(p, lifecycle);
    if (step === 'wait') return false;
    if (step === 'prepare') {
      await this.writes.setState(cs, p, 'PreparingDelete');
      return true;
    }
    const key = `${cs.metadata.namespace}/${cs.metadata.name}`;
    const ns = cs.metadata.namespace!;
    this.expectations.expect(key, 'delete', p.metadata.name!, p.metadata.uid);
    try {
      await this.ctx.client.delete(PODS, p.metadata.name!, ns);
    } catch (err) {
      this.expectations.failed(key, 'delete', p.metadata.name!);
      if (isNotFound(err)) return true;
      this.ctx.events.emit(CLONESETS, cs, 'Warning', 'FailedDelete', `failed to delete pod ${p.metadata.name}: ${(err as Error).message}`);
      throw err;
    }
    this.writes.versions.forget(p);
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
  async cleanupPvcs(cs: CloneSetObject, pvcs: KubeObject[], owned: Pod[]): Promise<void> {
    const ns = cs.metadata.namespace!;
    const active = new Set(owned.filter(isPodActive).map((p) => p.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID]));
    for (const c of pvcs) {
      const id = c.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID];
      if (!id || active.has(id) || c.metadata.deletionTimestamp) continue;
      const dead = owned.find((p) => !isPodActive(p) && p.metadata.labels?.[LABEL_CLONESET_INSTANCE_ID] === id);
      try {
        if (dead) {
          await this.ctx.client.patch(
            PERSISTENT_VOLUME_CLAIMS,
            c.metadata.name!,
            ns,
            {
              metadata: {
                ownerReferences: [podOwnerReference(dead, { controller: true, blockOwnerDeletion: true })],
                resourceVersion: c.metadata.resourceVersion,
              },
            },
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
}

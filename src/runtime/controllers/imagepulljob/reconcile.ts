import {
  ANNOTATION_PULL_SECRET_REFERENCES,
  ANNOTATION_PULL_SECRET_SOURCE,
  FINALIZER_DELETION_PROTECTION,
  selectorMatches,
} from '../../../contracts/index.js';
import {
  IMAGE_PULL_JOBS,
  NODE_IMAGES,
  PODS,
  SECRETS,
  PatchStrategy,
  isNotFound,
  type ControllerContext,
  type Informer,
  type Pod,
  type ProcessResult,
  type Reconciler,
  type Secret,
} from '../../core/index.js';
import {
  decideJob,
  pullSecretCopyRefusal,
  pullSecretReferences,
  secretCopiesReleaseAtMs,
  secretCopyName,
  type JobStatus,
  type SecretCopyRef,
} from './decision.js';

export type { ImagePullJobObject, NodeImageObject } from '../../core/types.js';
import type { ImagePullJobObject, NodeImageObject } from '../../core/types.js';

/** Label on pull-secret copies, naming the job namespace they came from. */
export const SECRET_SOURCE_NAMESPACE_LABEL = 'imagepulljobs.apps.kruise.io/source-namespace';

const STATUS_FIELDS = ['startTime', 'completionTime', 'desired', 'active', 'succeeded', 'failed', 'message', 'failedNodes'] as const;

function sameStatus(a: Partial<JobStatus> | undefined, b: JobStatus): boolean {
  if (!a) return false;
  return STATUS_FIELDS.every((k) => JSON.stringify(a[k] ?? null) === JSON.stringify(b[k] ?? null));
}

/** I/O half of the ImagePullJob controller: targets, secret copies, NodeImage tag writes, job status, TTL. */
export class ImagePullJobReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly jobs: Informer<ImagePullJobObject>,
    private readonly nodeImages: Informer<NodeImageObject>,
    private readonly configNamespace: string,
  ) {}

  /** NodeImages of the nodes the job targets: podSelector -> nodes of active pods; selector -> names/labels; none -> all. */
  private async targets(job: ImagePullJobObject): Promise<NodeImageObject[]> {
    const all = this.nodeImages.list();
    const ps = job.spec.podSelector;
    if (ps) {
      const pods = await this.ctx.client.list<Pod>(PODS, { namespace: job.metadata.namespace });
      const nodes = new Set(
        pods.items
          .filter(
            (p) => p.spec?.nodeName && !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
          )
          .filter((p) => selectorMatches(ps as Record<string, unknown>, p.metadata.labels ?? {}))
          .map((p) => p.spec!.nodeName!),
      );
      return all.filter((ni) => nodes.has(ni.metadata.name!));
    }
    const sel = job.spec.selector;
    if (!sel) return all;
    return all.filter((ni) => {
      if (sel.names?.length && !sel.names.includes(ni.metadata.name!)) return false;
      return selectorMatches(sel as Record<string, unknown>, ni.metadata.labels ?? {});
    });
  }

  /**
   * Copies the job's pull secrets into the daemon-config namespace (create, or update when the data changed) and
   * records the job in each copy's references, as upstream does: the copy lives as long as an unfinished job uses it.
   */
  private async copySecrets(job: ImagePullJobObject): Promise<SecretCopyRef[]> {
    const refs: SecretCopyRef[] = [];
    const ns = job.metadata.namespace!;
    const key = `${ns}/${job.metadata.name}`;
    for (const name of job.spec.pullSecrets ?? []) {
      let source: Secret;
      try {
        source = await this.ctx.client.get<Secret>(SECRETS, name, ns);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.ctx.logger.warn(
          { job: key, secret: name },
          `ImagePullJob ${key}: spec.pullSecrets names Secret "${name}", which does not exist in namespace ${ns}; create it or fix the name`,
        );
        continue;
      }
      const refusal = pullSecretCopyRefusal(source);
      if (refusal) {
        this.ctx.logger.warn(
          { job: key, secret: `${ns}/${name}`, type: source.type },
          'pull secret is not a registry credential; not copied',
        );
        this.ctx.events.emit(IMAGE_PULL_JOBS, job, 'Warning', 'PullSecretRefused', refusal);
        continue;
      }
      const copyName = secretCopyName(ns, name);
      let existing: Secret | undefined;
      try {
        existing = await this.ctx.client.get<Secret>(SECRETS, copyName, this.configNamespace);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const references = pullSecretReferences(existing?.metadata.annotations?.[ANNOTATION_PULL_SECRET_REFERENCES], key, true);
      const body: Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: copyName,
          namespace: this.configNamespace,
          labels: { [SECRET_SOURCE_NAMESPACE_LABEL]: ns },
          annotations: { [ANNOTATION_PULL_SECRET_SOURCE]: `${ns}/${name}`, [ANNOTATION_PULL_SECRET_REFERENCES]: references },
        },
        type: source.type,
        data: source.data ?? {},
      };
      if (!existing) await this.ctx.client.create(SECRETS, body, this.configNamespace);
      else if (
        JSON.stringify(existing.data ?? {}) !== JSON.stringify(body.data) ||
        existing.type !== body.type ||
        existing.metadata.annotations?.[ANNOTATION_PULL_SECRET_REFERENCES] !== references ||
        existing.metadata.annotations?.[ANNOTATION_PULL_SECRET_SOURCE] !== `${ns}/${name}`
      )
        // resourceVersion: two jobs adding themselves to one copy at once conflict, and the loser retries.
        await this.ctx.client.update(SECRETS, {
          ...body,
          metadata: { ...body.metadata, resourceVersion: existing.metadata.resourceVersion },
        });
      refs.push({ namespace: this.configNamespace, name: copyName });
    }
    return refs;
  }

  /** Removes job `key` from the references of the copies it used; a copy no job references any more is deleted. */
  private async releaseSecretCopies(key: string): Promise<void> {
    const ns = key.slice(0, key.indexOf('/'));
    const copies = await this.ctx.client.list<Secret>(SECRETS, {
      namespace: this.configNamespace,
      labelSelector: `${SECRET_SOURCE_NAMESPACE_LABEL}=${ns}`,
    });
    for (const copy of copies.items) {
      const before = copy.metadata.annotations?.[ANNOTATION_PULL_SECRET_REFERENCES];
      if (!(before ?? '').split(',').includes(key)) continue;
      const after = pullSecretReferences(before, key, false);
      if (after === '') {
        // Another job may have added itself since the list: delete only the copy as it was listed. A job that adds
        // itself in the moment between this read and the delete recreates the copy on its next reconcile.
        const current = await this.ctx.client.get<Secret>(SECRETS, copy.metadata.name!, this.configNamespace).catch((err) => {
          if (isNotFound(err)) return undefined;
          throw err;
        });
        if (current === undefined) continue;
        if (current.metadata.resourceVersion !== copy.metadata.resourceVersion)
          throw new Error(`pull secret copy ${this.configNamespace}/${copy.metadata.name} changed while ${key} let go of it; retrying`);
        this.ctx.logger.info({ job: key, secret: copy.metadata.name }, 'deleting pull secret copy no unfinished job uses');
        await this.ctx.client.delete(SECRETS, copy.metadata.name!, this.configNamespace).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
      } else {
        await this.ctx.client.update(SECRETS, {
          ...copy,
          metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, [ANNOTATION_PULL_SECRET_REFERENCES]: after } },
        });
      }
    }
  }

  /**
   * Adds or removes the protection finalizer by a merge patch made conditional on the cached resourceVersion (the
   * list is replaced whole, so a stale cache must get 409 and a retry rather than drop someone else's finalizer).
   */
  private async setProtection(job: ImagePullJobObject, on: boolean): Promise<void> {
    const finalizers = job.metadata.finalizers ?? [];
    if (finalizers.includes(FINALIZER_DELETION_PROTECTION) === on) return;
    const next = on ? [...finalizers, FINALIZER_DELETION_PROTECTION] : finalizers.filter((f) => f !== FINALIZER_DELETION_PROTECTION);
    await this.ctx.client.patch(
      IMAGE_PULL_JOBS,
      job.metadata.name!,
      job.metadata.namespace,
      { metadata: { finalizers: next, resourceVersion: job.metadata.resourceVersion } },
      PatchStrategy.MergePatch,
    );
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const job = this.jobs.get(key);
    if (!job) return this.releaseSecretCopies(key);
    if (job.metadata.deletionTimestamp) {
      // The finalizer holds a deleted job until its pull-secret copies are let go of, as upstream's does, so no
      // copy of a credential outlives its jobs even when the manager was down at the deletion.
      await this.releaseSecretCopies(key);
      return this.setProtection(job, false);
    }
    const finished = !!job.status?.completionTime;
    let holdCopiesMs: number | undefined;
    if (finished) {
      // A finished job is reconciled again on every report of its tags: only one that had pull secrets lists copies.
      if ((job.spec.pullSecrets?.length ?? 0) > 0) {
        const wait = secretCopiesReleaseAtMs(job.status!) - Date.now();
        if (wait > 0) holdCopiesMs = wait;
        else await this.releaseSecretCopies(key);
      }
      // The finalizer stays while copies are held: a deletion meanwhile still lets go of them first.
      await this.setProtection(job, holdCopiesMs !== undefined);
    } else await this.setProtection(job, true);
    const decision = decideJob({
      job,
      targets: finished ? [] : await this.targets(job),
      secretCopies: finished ? [] : await this.copySecrets(job),
      nowMs: Date.now(),
    });
    for (const w of decision.writes) {
      const patch = {
        // resourceVersion makes the merge patch conditional: a stale cache gets 409 and a retry.
        metadata: w.resourceVersion ? { resourceVersion: w.resourceVersion } : {},
        spec: {
          images: {
            [w.image]: { tags: w.tags, pullSecrets: w.pullSecrets, ...(w.sandboxConfig ? { sandboxConfig: w.sandboxConfig } : {}) },
          },
        },
      };
      await this.ctx.client.patch(NODE_IMAGES, w.nodeImage, undefined, patch, PatchStrategy.MergePatch);
      this.ctx.logger.info({ job: key, node: w.nodeImage, image: w.image }, 'image tag requested on node');
    }
    if (decision.deleteJob) {
      this.ctx.logger.info({ job: key }, 'deleting finished ImagePullJob after ttlSecondsAfterFinished');
      await this.ctx.client.delete(IMAGE_PULL_JOBS, job.metadata.name!, job.metadata.namespace).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
      return;
    }
    if (!sameStatus(job.status, decision.status)) {
      const status = { ...decision.status, ...(decision.status.message === undefined ? { message: null } : {}) };
      // Written only over the status it was computed from: a reconcile from a cache that has not seen the completed
      // status would complete the job again, with a later completionTime (its TTL restarted) and a second event; the
      // conflict requeues it until the cache has the write.
      const body = { metadata: { resourceVersion: job.metadata.resourceVersion }, status };
      await this.ctx.client.patch(IMAGE_PULL_JOBS, job.metadata.name!, job.metadata.namespace, body, PatchStrategy.MergePatch, {
        subresource: 'status',
      });
      if (decision.status.completionTime && !job.status?.completionTime) {
        this.ctx.events.emit(
          IMAGE_PULL_JOBS,
          job,
          decision.status.failed > 0 ? 'Warning' : 'Normal',
          decision.status.failed > 0 ? 'PullFailed' : 'Completed',
          decision.status.message ?? '',
        );
      }
    }
    const requeue = Math.min(decision.requeueAfterMs ?? Infinity, holdCopiesMs ?? Infinity);
    return Number.isFinite(requeue) ? { requeueAfterMs: requeue } : undefined;
  }
}

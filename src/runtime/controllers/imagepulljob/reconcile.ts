import { selectorMatches } from '../../../contracts/index.js';
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
import { decideJob, pullSecretCopyRefusal, secretCopyName, type JobStatus, type SecretCopyRef } from './decision.js';

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

  /** Copies the job's pull secrets into the daemon-config namespace (create, or update when the data changed). */
  private async copySecrets(job: ImagePullJobObject): Promise<SecretCopyRef[]> {
    const refs: SecretCopyRef[] = [];
    for (const name of job.spec.pullSecrets ?? []) {
      const ns = job.metadata.namespace!;
      let source: Secret;
      try {
        source = await this.ctx.client.get<Secret>(SECRETS, name, ns);
      } catch (err) {
        if (isNotFound(err))
          throw new Error(
            `ImagePullJob ${ns}/${job.metadata.name}: spec.pullSecrets names Secret "${name}", which does not exist in namespace ${ns}; create it or fix the name`,
            { cause: err },
          );
        throw err;
      }
      const refusal = pullSecretCopyRefusal(source);
      if (refusal) {
        // Not retried: the job pulls without it, and its owner sees why.
        this.ctx.logger.warn(
          { job: `${ns}/${job.metadata.name}`, secret: `${ns}/${name}`, type: source.type },
          'pull secret is not a registry credential; not copied',
        );
        this.ctx.events.emit(IMAGE_PULL_JOBS, job, 'Warning', 'PullSecretRefused', refusal);
        continue;
      }
      const copyName = secretCopyName(ns, name);
      const body: Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: copyName, namespace: this.configNamespace, labels: { [SECRET_SOURCE_NAMESPACE_LABEL]: ns } },
        type: source.type,
        data: source.data ?? {},
      };
      try {
        const existing = await this.ctx.client.get<Secret>(SECRETS, copyName, this.configNamespace);
        if (JSON.stringify(existing.data ?? {}) !== JSON.stringify(body.data) || existing.type !== body.type) {
          await this.ctx.client.update(SECRETS, {
            ...body,
            metadata: { ...body.metadata, resourceVersion: existing.metadata.resourceVersion },
          });
        }
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await this.ctx.client.create(SECRETS, body, this.configNamespace);
      }
      refs.push({ namespace: this.configNamespace, name: copyName });
    }
    return refs;
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const job = this.jobs.get(key);
    if (!job || job.metadata.deletionTimestamp) return;
    const finished = !!job.status?.completionTime;
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
      await this.ctx.client.patch(IMAGE_PULL_JOBS, job.metadata.name!, job.metadata.namespace, { status }, PatchStrategy.MergePatch, {
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
    return decision.requeueAfterMs !== undefined ? { requeueAfterMs: decision.requeueAfterMs } : undefined;
  }
}

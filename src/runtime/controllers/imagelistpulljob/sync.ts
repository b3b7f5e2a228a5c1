import {
  IMAGE_LIST_PULL_JOBS,
  IMAGE_PULL_JOBS,
  PatchStrategy,
  isNotFound,
  type ControllerContext,
  type Informer,
  type ProcessResult,
  type Reconciler,
} from '../../core/index.js';
import { kruiseControllerOf } from '../../core/meta.js';
import { ScaleExpectations } from '../../core/expectations.js';
import { childFor, decide, statusChanged, templateHash, type ChildJob, type ImageListPullJobObject } from './decision.js';

/** ImagePullJobs by the uid of the ImageListPullJob controlling them. */
export const INDEX_LIST_UID = 'imagelistpulljob/controller-uid';
export const byListUid = (j: ChildJob): string[] => {
  const ref = kruiseControllerOf(j, 'ImageListPullJob');
  return ref ? [ref.uid] : [];
};

/** Requeue while the ImagePullJob cache has not yet shown our own creates and deletes. */
const EXPECTATION_WAIT_MS = 500;

/**
 * I/O half of the ImageListPullJob controller: reads the caches, calls the decision and applies it (child creates and
 * deletes under scale expectations keyed by image, as upstream: a child's name is generated, its image is its
 * identity), then the status and the TTL deletion.
 */
export class ImageListPullJobSync implements Reconciler {
  /** Child creates and deletes in flight per list job, by image; met by the ImagePullJob informer's events. */
  readonly expectations = new ScaleExpectations();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly lists: Informer<ImageListPullJobObject>,
    private readonly children: Informer<ChildJob>,
  ) {
    children.addIndex(INDEX_LIST_UID, byListUid);
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const list = this.lists.get(key);
    if (!list) {
      // Its ImagePullJobs go with it by owner reference (the garbage collector's work, as for upstream's).
      this.expectations.forget(key);
      return;
    }
    if (list.metadata.deletionTimestamp) return;
    const exp = this.expectations.satisfied(key, this.children.lastSyncResourceVersion);
    if (exp.leaked.length > 0)
      this.ctx.logger.warn({ imagelistpulljob: key, leaked: exp.leaked }, 'ImagePullJob expectations timed out; dropped');
    if (!exp.ok) return { requeueAfterMs: EXPECTATION_WAIT_MS };

    const ns = list.metadata.namespace!;
    const children = this.children.byIndex(INDEX_LIST_UID, list.metadata.uid!).filter((c) => !c.metadata.deletionTimestamp);
    const d = decide({ list, children, nowMs: Date.now() });

    if (d.deleteJob) {
      this.ctx.logger.info({ imagelistpulljob: key }, 'deleting finished ImageListPullJob after ttlSecondsAfterFinished');
      await this.ctx.client.delete(IMAGE_LIST_PULL_JOBS, list.metadata.name!, ns).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
      return;
    }

    const errors: Error[] = [];
    for (const c of d.delete) {
      this.expectations.expect(key, 'delete', c.image, c.uid);
      try {
        await this.ctx.client.delete(IMAGE_PULL_JOBS, c.name, ns);
        this.ctx.logger.info({ imagelistpulljob: key, imagepulljob: c.name, image: c.image, reason: c.reason }, 'deleted ImagePullJob');
      } catch (err) {
        this.expectations.failed(key, 'delete', c.image);
        if (!isNotFound(err)) errors.push(err as Error);
      }
    }
    if (d.delete.length > 0 && errors.length === 0)
      this.ctx.events.emit(IMAGE_LIST_PULL_JOBS, list, 'Normal', 'SuccessfulDelete', `Deleted ${d.delete.length} ImagePullJob(s)`);

    const hash = templateHash(list);
    let created = 0;
    for (const image of d.create) {
      this.expectations.expect(key, 'create', image);
      try {
        const child = await this.ctx.client.create(IMAGE_PULL_JOBS, childFor(list, image, hash), ns);
        this.expectations.created(key, image, child.metadata.resourceVersion);
        created++;
      } catch (err) {
        this.expectations.failed(key, 'create', image);
        this.ctx.events.emit(IMAGE_LIST_PULL_JOBS, list, 'Warning', 'FailedCreate', `ImagePullJob for ${image}: ${(err as Error).message}`);
        errors.push(err as Error);
      }
    }
    if (created > 0) this.ctx.events.emit(IMAGE_LIST_PULL_JOBS, list, 'Normal', 'SuccessfulCreate', `Created ${created} ImagePullJob(s)`);

    if (d.status && statusChanged(list.status, d.status)) {
      const status = { ...d.status, ...(d.status.failedImageStatuses ? {} : { failedImageStatuses: null }) };
      // Written only over the status it was computed from: a reconcile from a cache that has not seen the last write
      // (the list completed, its ImagePullJobs deleted by their TTL since) would count again and overwrite the final
      // counts; the conflict requeues it until the cache has the write.
      const body = { metadata: { resourceVersion: list.metadata.resourceVersion }, status };
      await this.ctx.client.patch(IMAGE_LIST_PULL_JOBS, list.metadata.name!, ns, body, PatchStrategy.MergePatch, { subresource: 'status' });
    }
    // A failed write is retried with the queue's backoff, after the status that counts what did happen.
    if (errors.length > 0) throw errors[0]!;
    return d.requeueAfterMs !== undefined ? { requeueAfterMs: d.requeueAfterMs } : undefined;
  }
}

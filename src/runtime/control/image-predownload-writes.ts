/**
 * Image pre-download writes, the I/O half of image-predownload.ts, for every workload kind that pre-downloads
 * (CloneSet, Advanced StatefulSet, Advanced DaemonSet): creates the plan's ImagePullJobs (one that exists already is
 * fine), labels the update revision created or ignored, and deletes the workload's jobs once its rollout is over. A
 * failure is logged and never fails the workload's round: pre-download only speeds an update up (upstream logs and
 * goes on too).
 */
import {
  CONTROLLER_REVISIONS,
  IMAGE_PULL_JOBS,
  LABEL_IMAGE_PREDOWNLOAD_CREATED,
  LABEL_IMAGE_PREDOWNLOAD_IGNORED,
  type ResourceType,
} from '../../contracts/index.js';
import { isAlreadyExists, isNotFound, PatchStrategy } from '../core/client.js';
import type { ControllerContext } from '../core/controller.js';
import type { Informer } from '../core/informer.js';
import { controllerOf } from '../core/meta.js';
import type { KubeObject } from '../core/types.js';
import type { Revision } from './controller-revision.js';
import { planPreDownload, preDownloadLabel, rolloutDone, type PreDownloadInput, type PreDownloadPlan } from './image-predownload.js';

/** ImagePullJobs by the uid of their controller (any kind: the uid is the workload's). */
export const INDEX_PREDOWNLOAD_OWNER_UID = 'image-predownload/controller-uid';
export const byControllerUid = (o: KubeObject): string[] => {
  const uid = controllerOf(o)?.uid;
  return uid ? [uid] : [];
};

/** What a workload controller reads of ImagePullJobs for pre-download (its cache plan entry). */
export const PREDOWNLOAD_JOB_FIELDS = ['metadata.ownerReferences'] as const;

export class ImagePreDownloadWrites {
  /**
   * Update revisions labelled by this process whose label the revisions cache does not show yet, by uid: a round
   * that runs in between does not plan the same revision again.
   */
  private readonly labelled = new Set<string>();

  /**
   * @param owners the workload's resource (its events name the jobs created)
   * @param logKey the field that names the workload in log lines
   */
  constructor(
    private readonly ctx: ControllerContext,
    private readonly owners: ResourceType,
    private readonly jobs: Informer<KubeObject>,
    private readonly logKey: string,
  ) {
    jobs.addIndex(INDEX_PREDOWNLOAD_OWNER_UID, byControllerUid);
  }

  /** Plans and carries out this round's pre-download for the workload; returns the plan (for logs and tests). */
  async sync(i: PreDownloadInput): Promise<PreDownloadPlan> {
    const uid = i.update.metadata.uid;
    const labels = i.update.metadata.labels ?? {};
    // The cache shows our label now: nothing to remember.
    if (uid && (LABEL_IMAGE_PREDOWNLOAD_CREATED in labels || LABEL_IMAGE_PREDOWNLOAD_IGNORED in labels)) this.labelled.delete(uid);
    const plan: PreDownloadPlan = uid && this.labelled.has(uid) && !rolloutDone(i) ? { action: 'none' } : planPreDownload(i);
    const w = i.workload;
    const log = { [this.logKey]: `${w.metadata.namespace}/${w.metadata.name}`, revision: i.update.metadata.name };
    try {
      switch (plan.action) {
        case 'delete-jobs':
          await this.deleteJobsOf(w);
          break;
        case 'ignore':
          this.ctx.logger.debug({ ...log, reason: plan.reason, why: plan.message }, 'image pre-download not needed for this revision');
          await this.label(i.update, preDownloadLabel(plan)!);
          break;
        case 'create':
          for (const job of plan.jobs) {
            try {
              await this.ctx.client.create(IMAGE_PULL_JOBS, job);
              this.ctx.events.emit(
                this.owners,
                w,
                'Normal',
                'CreatedImagePullJob',
                `created ImagePullJob ${job.metadata.name} for image: ${job.spec.image}`,
              );
            } catch (err) {
              if (isAlreadyExists(err)) continue;
              // As upstream: a job that could not be created is reported and not retried (the revision is labelled below).
              this.ctx.events.emit(
                this.owners,
                w,
                'Normal',
                'FailedCreateImagePullJob',
                `failed to create ImagePullJob ${job.metadata.name}: ${(err as Error).message}`,
              );
            }
          }
          await this.label(i.update, preDownloadLabel(plan)!);
          break;
        default:
          break;
      }
    } catch (err) {
      this.ctx.logger.warn({ ...log, err: (err as Error).message }, 'image pre-download failed');
    }
    return plan;
  }

  /** Deletes the ImagePullJobs this workload controls (found in the cache by its uid). */
  async deleteJobsOf(w: KubeObject): Promise<number> {
    const ns = w.metadata.namespace;
    const mine = this.jobs
      .byIndex(INDEX_PREDOWNLOAD_OWNER_UID, w.metadata.uid ?? '')
      .filter((j) => j.metadata.namespace === ns && !j.metadata.deletionTimestamp);
    let deleted = 0;
    for (const j of mine) {
      try {
        await this.ctx.client.delete(IMAGE_PULL_JOBS, j.metadata.name!, ns);
        deleted++;
        this.ctx.logger.info(
          { [this.logKey]: `${ns}/${w.metadata.name}`, imagepulljob: j.metadata.name },
          'deleted pre-download ImagePullJob',
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return deleted;
  }

  private async label(revision: Revision, key: string): Promise<void> {
    await this.ctx.client.patch(
      CONTROLLER_REVISIONS,
      revision.metadata.name!,
      revision.metadata.namespace,
      { metadata: { labels: { [key]: 'true' } } },
      PatchStrategy.MergePatch,
    );
    if (revision.metadata.uid) this.labelled.add(revision.metadata.uid);
  }
}

/**
 * Advanced DaemonSet image pre-download, pure (gate PreDownloadImageForDaemonSetUpdate): how a DaemonSet reads for the
 * shared pre-download rules (control/image-predownload.ts), as upstream's DaemonSet controller reads it.
 *
 * - Any update counts, Standard or InPlaceIfPossible: a recreated daemon pod comes back on the same node, so the
 *   image pulled there serves it as well as an in-place update.
 * - The pods counted are the nodes that should run the pod as the status last counted them (desiredNumberScheduled):
 *   no replica threshold, and min-updated-ready-pods is not read (upstream parses it and leaves it unused).
 * - Every pod in one batch (partition 0, maxUnavailable at least the desired pods) is not worth it: partition is
 *   rounded down, maxUnavailable (default 1) rounded up, as upstream; maxSurge, pause and the node selector are not
 *   looked at (images pulled during a pause are ready when it ends).
 * - The rollout is over once the status counts every desired pod updated, at the update revision's hash.
 * - The new images are those of the update revision that some older revision runs otherwise, or none runs. A first
 *   revision (no older one) is ignored: its pods are created at it. Upstream ignores it too when its first round
 *   counts 0 desired pods, but not under a partition, where its jobs, whose selector excludes no pod, pull the first
 *   images on every node.
 */
import type { Revision } from '../../control/controller-revision.js';
import type { PreDownloadStrategy } from '../../control/image-predownload.js';
import { LABEL_CONTROLLER_REVISION_HASH_KEY } from '../../../contracts/index.js';
import { scaled, type DaemonSetObject } from './placement-decision.js';

export interface DaemonSetPreDownloadInput {
  readonly ds: DaemonSetObject;
  readonly update: Revision;
  /** The DaemonSet's revisions, the update revision included. */
  readonly all: readonly Revision[];
  /**
   * The revision hash the status names (v1beta1 `updateRevision`, which the v1alpha1 cache prunes: the one this
   * process last wrote). Unknown, after a restart, it reads as the update revision's: the counts alone decide.
   */
  readonly statusHash: string | undefined;
}

export function daemonSetPreDownloadStrategy(i: DaemonSetPreDownloadInput): PreDownloadStrategy {
  const { ds, update } = i;
  const desired = ds.status?.desiredNumberScheduled ?? 0;
  const ru = ds.spec.updateStrategy?.rollingUpdate;
  const hash = update.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH_KEY] ?? '';
  const settled = (ds.status?.updatedNumberScheduled ?? 0) === desired && (i.statusHash ?? hash) === hash;
  return {
    recreate: false,
    partition: scaled(ru?.partition, desired, false, 0),
    maxUnavailable: scaled(ru?.maxUnavailable, desired, true, 1),
    canUpdateInPlace: () => true,
    replicas: desired,
    replicaConditions: false,
    rolloutDone: settled,
    baseline: i.all.filter((r) => r.metadata.name !== update.metadata.name),
  };
}

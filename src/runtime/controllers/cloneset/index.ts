import type { ControllerDefinition } from '../../core/controller.js';
import { CLONESETS, CONTROLLER_REVISIONS, IMAGE_PULL_JOBS, PERSISTENT_VOLUME_CLAIMS, PODS } from '../../../contracts/index.js';
import type { KubeObject, Pod } from '../../core/types.js';
import { EXCLUDE_PREPARING_DELETE_OPTION } from './options.js';
import type { CloneSetObject } from './pods.js';
import { CloneSetReconciler, INDEX_NAMESPACE } from './reconcile.js';
import type { Revision } from '../../control/controller-revision.js';
import { PREDOWNLOAD_JOB_FIELDS } from '../../control/image-predownload-writes.js';
import { addClaimingWorkloadHandlers } from '../../control/workload-pod-events.js';
import { WORKLOAD_POD_FIELDS } from '../../control/workload-pods.js';

/**
 * CloneSet controller (no gate, upstream `cloneset-controller`): pods, PVCs and revisions of every
 * CloneSet; scale, lifecycle hooks, in-place and recreate updates, status.
 */
export const cloneSetController: ControllerDefinition = {
  name: 'cloneset',
  // Upstream runs 3 workers; one key is never reconciled by two workers at once.
  defaultWorkers: 3,
  reads: [
    { resource: CLONESETS, fields: ['*'] },
    {
      resource: PODS,
      fields: [
        ...WORKLOAD_POD_FIELDS,
        // Launch-priority batches (the barrier env's key); scale-in ranks pods by their restarts.
        'spec.containers[].env[name^=KRUISE_].valueFrom.configMapKeyRef.key',
        'status.containerStatuses[].restartCount',
      ],
    },
    { resource: PERSISTENT_VOLUME_CLAIMS, fields: ['metadata.labels', 'metadata.ownerReferences'] },
    // Annotations: each revision's volumeClaimTemplates hash (gate RecreatePodWhenChangeVCTInCloneSetGate).
    { resource: CONTROLLER_REVISIONS, fields: ['metadata.labels', 'metadata.annotations', 'metadata.ownerReferences', 'data', 'revision'] },
    // Image pre-download (gate PreDownloadImageForInPlaceUpdate): the jobs a CloneSet controls, deleted after its update.
    { resource: IMAGE_PULL_JOBS, fields: [...PREDOWNLOAD_JOB_FIELDS] },
  ],
  setup(ctx, enqueue) {
    const sets = ctx.informers.for<CloneSetObject>(CLONESETS);
    const pods = ctx.informers.for<Pod>(PODS);
    const pvcs = ctx.informers.for<KubeObject>(PERSISTENT_VOLUME_CLAIMS);
    const revisions = ctx.informers.for<Revision>(CONTROLLER_REVISIONS);
    // Its cache is started only when the gate is on (the ImagePullJob CRD need not be served otherwise).
    const jobs =
      ctx.featureGates.get('PreDownloadImageForInPlaceUpdate') === true ? ctx.informers.for<KubeObject>(IMAGE_PULL_JOBS) : undefined;
    const reconciler = new CloneSetReconciler(
      ctx,
      sets,
      pods,
      pvcs,
      revisions,
      {
        excludePreparingDelete: ctx.options.get(EXCLUDE_PREPARING_DELETE_OPTION),
        partitionRollback: ctx.featureGates.get('CloneSetPartitionRollback') ?? false,
      },
      jobs,
    );
    const { toOwner } = addClaimingWorkloadHandlers({
      kind: 'CloneSet',
      workloads: sets,
      pods,
      namespaceIndex: INDEX_NAMESPACE,
      expectations: reconciler.scaleExpectations,
      forget: (p) => reconciler.podVersions.forget(p),
      enqueue,
    });
    pvcs.addHandlers({ add: toOwner, update: toOwner, delete: toOwner });
    revisions.addHandlers({ add: toOwner, update: toOwner, delete: toOwner });
    return reconciler;
  },
};

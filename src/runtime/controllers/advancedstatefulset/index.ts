import {
  ADVANCED_STATEFULSETS,
  CONTROLLER_REVISIONS,
  IMAGE_PULL_JOBS,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  STORAGE_CLASSES,
} from '../../../contracts/index.js';
import type { Revision } from '../../control/controller-revision.js';
import { PREDOWNLOAD_JOB_FIELDS } from '../../control/image-predownload-writes.js';
import { addClaimingWorkloadHandlers } from '../../control/workload-pod-events.js';
import { WORKLOAD_POD_FIELDS } from '../../control/workload-pods.js';
import type { ControllerDefinition } from '../../core/controller.js';
import type { KubeObject, Pod } from '../../core/types.js';
import type { StatefulSetObject } from './identity-decision.js';
import { INDEX_NAMESPACE, StatefulSetReconciler } from './reconcile.js';

/**
 * Advanced StatefulSet controller (no gate, upstream `statefulset-controller` of apps.kruise.io): ordered pods with
 * stable identities and claims, reserved ordinals, OrderedReady or Parallel scaling, rolling update by recreate or
 * in place with partition, maxUnavailable and pause, lifecycle hooks, claim resizing (gate
 * StatefulSetAutoResizePVCGate), status.
 */
export const advancedStatefulSetController: ControllerDefinition = {
  name: 'advancedstatefulset',
  // Upstream runs 3 workers; one key is never reconciled by two workers at once.
  defaultWorkers: 3,
  reads: [
    { resource: ADVANCED_STATEFULSETS, fields: ['*'] },
    {
      resource: PODS,
      fields: [
        ...WORKLOAD_POD_FIELDS,
        'metadata.deletionTimestamp',
        // Launch-priority batches: the barrier env's key.
        'spec.containers[].env[name^=KRUISE_].valueFrom.configMapKeyRef.key',
      ],
    },
    {
      resource: PERSISTENT_VOLUME_CLAIMS,
      fields: [
        'metadata.labels',
        'metadata.ownerReferences',
        'metadata.deletionTimestamp',
        // Claim counts in status and claim resizing compare a claim with its template.
        'spec.storageClassName',
        'spec.accessModes',
        'spec.resources',
        'status.capacity',
        'status.conditions',
      ],
    },
    // Claim resizing (gate StatefulSetAutoResizePVCGate) grows only claims of a class that allows expansion.
    { resource: STORAGE_CLASSES, fields: ['allowVolumeExpansion'] },
    { resource: CONTROLLER_REVISIONS, fields: ['metadata.labels', 'metadata.ownerReferences', 'data', 'revision'] },
    // Image pre-download (gate PreDownloadImageForInPlaceUpdate): the jobs a set controls, deleted after its update.
    { resource: IMAGE_PULL_JOBS, fields: [...PREDOWNLOAD_JOB_FIELDS] },
  ],
  setup(ctx, enqueue) {
    const sets = ctx.informers.for<StatefulSetObject>(ADVANCED_STATEFULSETS);
    const pods = ctx.informers.for<Pod>(PODS);
    const pvcs = ctx.informers.for<KubeObject>(PERSISTENT_VOLUME_CLAIMS);
    const revisions = ctx.informers.for<Revision>(CONTROLLER_REVISIONS);
    // Its cache is started only when the gate is on (the ImagePullJob CRD need not be served otherwise).
    const jobs =
      ctx.featureGates.get('PreDownloadImageForInPlaceUpdate') === true ? ctx.informers.for<KubeObject>(IMAGE_PULL_JOBS) : undefined;
    const storageClasses =
      ctx.featureGates.get('StatefulSetAutoResizePVCGate') === true
        ? ctx.informers.for<KubeObject & { allowVolumeExpansion?: boolean }>(STORAGE_CLASSES)
        : undefined;
    const reconciler = new StatefulSetReconciler(ctx, sets, pods, pvcs, revisions, jobs, storageClasses);
    const { toOwner, toMatching } = addClaimingWorkloadHandlers({
      kind: 'StatefulSet',
      workloads: sets,
      pods,
      namespaceIndex: INDEX_NAMESPACE,
      expectations: reconciler.scaleExpectations,
      forget: (p) => reconciler.writes.versions.forget(p),
      enqueue,
    });
    // A claim concerns the sets its labels (the set's selector) match: a deleted one is made again for a pending pod,
    // and a grown one counts in status and lets a waiting rolling update go on.
    pvcs.addHandlers({ update: toMatching, delete: toMatching });
    revisions.addHandlers({ add: toOwner, update: toOwner, delete: toOwner });
    return reconciler;
  },
};

import type { ControllerDefinition } from '../../core/controller.js';
import { scaleExpectationHandlers } from '../../core/expectations.js';
import { CLONESETS, CONTROLLER_REVISIONS, PERSISTENT_VOLUME_CLAIMS, PODS, selectorMatches } from '../../../contracts/index.js';
import { controllerOf, kruiseControllerKey } from '../../core/meta.js';
import { objectKey, type KubeObject, type Pod } from '../../core/types.js';
import { EXCLUDE_PREPARING_DELETE_OPTION } from './options.js';
import type { CloneSetObject } from './pods.js';
import { CloneSetReconciler, INDEX_NAMESPACE } from './reconcile.js';
import type { Revision } from '../../control/controller-revision.js';
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
  ],
  setup(ctx, enqueue) {
    const sets = ctx.informers.for<CloneSetObject>(CLONESETS);
    const pods = ctx.informers.for<Pod>(PODS);
    const pvcs = ctx.informers.for<KubeObject>(PERSISTENT_VOLUME_CLAIMS);
    const revisions = ctx.informers.for<Revision>(CONTROLLER_REVISIONS);
    const reconciler = new CloneSetReconciler(ctx, sets, pods, pvcs, revisions, {
      excludePreparingDelete: ctx.options.get(EXCLUDE_PREPARING_DELETE_OPTION),
      partitionRollback: ctx.featureGates.get('CloneSetPartitionRollback') ?? false,
    });
    sets.addHandlers({ add: (c) => enqueue(objectKey(c)), update: (c) => enqueue(objectKey(c)), delete: (c) => enqueue(objectKey(c)) });
    /** The CloneSet key of an object whose controller is a CloneSet. */
    const ownerKey = (o: KubeObject): string | undefined => kruiseControllerKey(o, 'CloneSet');
    const toOwner = (o: KubeObject) => {
      const key = ownerKey(o);
      if (key) {
        enqueue(key);
        return true;
      }
      return controllerOf(o) !== undefined;
    };
    // Registered before the handlers that enqueue: a reconcile started by a pod's event finds it observed.
    pods.addHandlers(scaleExpectationHandlers(reconciler.scaleExpectations, ownerKey));
    // An orphan is offered to every CloneSet of its namespace whose selector matches (adoption).
    const onPod = (p: Pod) => {
      if (toOwner(p)) return;
      for (const c of sets.byIndex(INDEX_NAMESPACE, p.metadata.namespace ?? '')) {
        if (selectorMatches(c.spec.selector ?? {}, p.metadata.labels ?? {})) enqueue(objectKey(c));
      }
    };
    pods.addHandlers({
      add: onPod,
      update: (p, old) => {
        onPod(p);
        // A pod released (owner changed) still concerns its previous owner.
        if (old !== p) toOwner(old);
      },
      delete: (p) => {
        reconciler.podVersions.forget(p);
        onPod(p);
      },
    });
    pvcs.addHandlers({ add: toOwner, update: toOwner, delete: toOwner });
    revisions.addHandlers({ add: toOwner, update: toOwner, delete: toOwner });
    return reconciler;
  },
};

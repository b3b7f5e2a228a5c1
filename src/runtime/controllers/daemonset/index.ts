import type { ControllerDefinition } from '../../core/controller.js';
import { ADVANCED_DAEMONSETS, CONTROLLER_REVISIONS, IMAGE_PULL_JOBS, NODES, PODS } from '../../../contracts/index.js';
import { kruiseControllerKey } from '../../core/meta.js';
import { objectKey, type KubeObject, type Node, type Pod } from '../../core/types.js';
import type { Revision } from '../../control/controller-revision.js';
import { PREDOWNLOAD_JOB_FIELDS } from '../../control/image-predownload-writes.js';
import { nodePlacementHandlers, nodePodHandlers } from '../../control/node-pod-events.js';
import { WORKLOAD_POD_FIELDS } from '../../control/workload-pods.js';
import type { DaemonSetObject } from './placement-decision.js';
import { DaemonSetSync } from './sync.js';

/** The `namespace/name` of the Advanced DaemonSet controlling `o`, if one does. */
const ownerKey = (o: Pod | Revision): string | undefined => kruiseControllerKey(o, 'DaemonSet');

/**
 * Advanced DaemonSet controller (no gate, upstream `daemonset-controller`): one pod per eligible node, burst
 * creation, rolling update (Standard or InPlaceIfPossible) with maxUnavailable, maxSurge, node selector, partition
 * and pause, lifecycle hooks (preDelete as upstream; preNormal and inPlaceUpdate beyond it), revisions and status;
 * with gate PreDownloadImageForDaemonSetUpdate, ImagePullJobs for an update's new images.
 */
export const daemonSetController: ControllerDefinition = {
  name: 'daemonset',
  // Upstream runs 3 workers; one key is never reconciled by two workers at once.
  defaultWorkers: 3,
  reads: [
    { resource: ADVANCED_DAEMONSETS, fields: ['*'] },
    {
      resource: PODS,
      // Whether a pod still fits its node: the affinity that binds it there.
      fields: [...WORKLOAD_POD_FIELDS, 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution'],
    },
    { resource: NODES, fields: ['metadata.labels', 'spec.taints', 'spec.unschedulable'] },
    { resource: CONTROLLER_REVISIONS, fields: ['metadata.labels', 'metadata.ownerReferences', 'data', 'revision'] },
    // Image pre-download (gate PreDownloadImageForDaemonSetUpdate): the jobs a set controls, deleted after its update.
    { resource: IMAGE_PULL_JOBS, fields: [...PREDOWNLOAD_JOB_FIELDS] },
  ],
  setup(ctx, enqueue) {
    const sets = ctx.informers.for<DaemonSetObject>(ADVANCED_DAEMONSETS);
    const pods = ctx.informers.for<Pod>(PODS);
    const nodes = ctx.informers.for<Node>(NODES);
    const revisions = ctx.informers.for<Revision>(CONTROLLER_REVISIONS);
    // Its cache is started only when the gate is on (the ImagePullJob CRD need not be served otherwise).
    const jobs =
      ctx.featureGates.get('PreDownloadImageForDaemonSetUpdate') === true ? ctx.informers.for<KubeObject>(IMAGE_PULL_JOBS) : undefined;
    const sync = new DaemonSetSync(ctx, sets, pods, nodes, revisions, jobs);
    sets.addHandlers({ add: (d) => enqueue(objectKey(d)), update: (d) => enqueue(objectKey(d)), delete: (d) => enqueue(objectKey(d)) });
    pods.addHandlers(nodePodHandlers(sync.expectations, ownerKey, enqueue));
    revisions.addHandlers({
      add: (r) => {
        const key = ownerKey(r);
        if (key) enqueue(key);
      },
      delete: (r) => {
        const key = ownerKey(r);
        if (key) enqueue(key);
      },
    });
    // A node added, removed or changed in what decides eligibility or the rollout's selection concerns every set.
    nodes.addHandlers(nodePlacementHandlers(() => sets.list().forEach((d) => enqueue(objectKey(d)))));
    return sync;
  },
};

import type { ControllerDefinition } from '../../core/controller.js';
import { BROADCAST_JOBS, NODES, PODS } from '../../../contracts/index.js';
import { kruiseControllerKey } from '../../core/meta.js';
import { objectKey, type Node, type Pod } from '../../core/types.js';
import { nodePlacementHandlers, nodePodHandlers } from '../../control/node-pod-events.js';
import type { BroadcastJobObject } from './decision.js';
import { BroadcastJobSync } from './sync.js';

/** The `namespace/name` of the BroadcastJob controlling `pod`, if one does. */
const jobKeyOf = (pod: Pod): string | undefined => kruiseControllerKey(pod, 'BroadcastJob');

/**
 * BroadcastJob controller (no gate, upstream `broadcastjob-controller`): one pod of the template per eligible node,
 * parallelism, completion and failure policies, pause, status and the TTL after the job finished.
 */
export const broadcastJobController: ControllerDefinition = {
  name: 'broadcastjob',
  // Upstream runs 3 workers; one key is never reconciled by two workers at once.
  defaultWorkers: 3,
  reads: [
    { resource: BROADCAST_JOBS, fields: ['*'] },
    {
      resource: PODS,
      fields: [
        'metadata.labels',
        'metadata.ownerReferences',
        // Where a pod may run: a pod whose node stops fitting is deleted.
        'spec.nodeName',
        'spec.nodeSelector',
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution',
        'spec.tolerations',
        'spec.restartPolicy',
        'status.phase',
        // restartPolicy OnFailure: restarts beyond failurePolicy.restartLimit make the pod a failure.
        'status.containerStatuses[].restartCount',
        'status.initContainerStatuses[].restartCount',
      ],
    },
    { resource: NODES, fields: ['metadata.labels', 'spec.taints', 'spec.unschedulable'] },
  ],
  setup(ctx, enqueue) {
    const jobs = ctx.informers.for<BroadcastJobObject>(BROADCAST_JOBS);
    const pods = ctx.informers.for<Pod>(PODS);
    const nodes = ctx.informers.for<Node>(NODES);
    const sync = new BroadcastJobSync(ctx, jobs, pods, nodes);
    jobs.addHandlers({ add: (j) => enqueue(objectKey(j)), update: (j) => enqueue(objectKey(j)), delete: (j) => enqueue(objectKey(j)) });
    pods.addHandlers(nodePodHandlers(sync.expectations, jobKeyOf, enqueue));
    // A node added, removed or changed in what decides eligibility concerns every unfinished job.
    const open = () => jobs.list().filter((j) => !j.status?.completionTime);
    nodes.addHandlers(nodePlacementHandlers(() => open().forEach((j) => enqueue(objectKey(j)))));
    return sync;
  },
};

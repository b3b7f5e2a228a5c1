import type { ControllerDefinition } from '../../core/controller.js';
import { PODS } from '../../../contracts/index.js';
import { objectKey, type Pod } from '../../core/types.js';
import { conditionsToInitialise } from './decision.js';
import { PodReadinessReconciler } from './reconcile.js';

/** Sets the pod webhook's readiness gates True on pods that have no such condition yet. */
export const podReadinessController: ControllerDefinition = {
  name: 'podreadiness',
  // One status patch per new Kruise pod; 5 workers keep a 50-pod scale-out from queueing behind itself.
  defaultWorkers: 5,
  reads: [
    {
      resource: PODS,
      fields: ['spec.readinessGates[].conditionType', 'status.phase', 'status.conditions[].type', 'status.conditions[].status'],
    },
  ],
  setup(ctx, enqueue) {
    const pods = ctx.informers.for<Pod>(PODS);
    const onPod = (p: Pod) => {
      if (conditionsToInitialise(p).length > 0) enqueue(objectKey(p));
    };
    pods.addHandlers({ add: onPod, update: onPod });
    return new PodReadinessReconciler(ctx, pods);
  },
};

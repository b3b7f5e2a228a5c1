import { PODS, type Pod } from '../../core/index.js';
import type { ControllerDefinition } from '../../core/controller.js';
import type { DaemonContext } from '../context.js';
import { criContainerEvents } from '../cri-events.js';
import { ExitPriorityEndpoint } from './endpoint.js';
import { EXIT_PRIORITY_ADDR, MAX_EXIT_PRIORITY_WAITS } from './options.js';

/**
 * Container exit priority on this node (gate ContainerExitPriority; cdk8s-kruise only, never shipped
 * upstream): serves the preStop hooks the pod webhook gave prioritised containers and answers each once the
 * lower exit levels of its pod have exited. Watches only this node's pods.
 */
export const exitPriorityController: ControllerDefinition<DaemonContext> = {
  name: 'daemon-exitpriority',
  featureGate: 'ContainerExitPriority',
  // A reconcile is one CRI ListContainers per waiting pod; four keep up with a node's worth of deletions.
  defaultWorkers: 4,
  reads: [
    {
      resource: PODS,
      fields: [
        'metadata.annotations',
        'metadata.deletionGracePeriodSeconds',
        'spec.nodeName',
        'spec.terminationGracePeriodSeconds',
        'spec.containers[].name',
        'spec.containers[].ports',
        'spec.containers[].lifecycle.preStop',
        'status.podIP',
      ],
    },
  ],
  setup(ctx, enqueue) {
    const pods = ctx.informers.for<Pod>(PODS, { fieldSelector: `spec.nodeName=${ctx.nodeName}` });
    const endpoint = new ExitPriorityEndpoint(
      ctx,
      pods,
      enqueue,
      ctx.options.get(MAX_EXIT_PRIORITY_WAITS),
      criContainerEvents(ctx.cri, ctx.logger),
    );
    ctx.onStart(async () => {
      await endpoint.listen(ctx.options.get(EXIT_PRIORITY_ADDR));
    });
    ctx.onStop(() => endpoint.close());
    return endpoint;
  },
};

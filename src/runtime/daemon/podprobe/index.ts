import { NODE_POD_PROBES } from '../../core/index.js';
import type { ControllerDefinition } from '../../core/controller.js';
import type { DaemonContext } from '../context.js';
import { MAX_CONCURRENT_PROBES } from './options.js';
import { NodePodProbeReconciler, type NodePodProbe } from './reconcile.js';

/**
 * PodProbeMarker probes (upstream kruise-daemon `podprobe`): each daemon watches only its own NodePodProbe (field
 * selector on the name), runs the probes it lists and writes their results to its status.
 */
export const podProbeController: ControllerDefinition<DaemonContext> = {
  name: 'daemon-podprobe',
  featureGate: 'PodProbeMarkerGate',
  // One key (the node): one worker writes the status, so two writes never race.
  defaultWorkers: 1,
  reads: [{ resource: NODE_POD_PROBES, fields: ['*'] }],
  setup(ctx, enqueue) {
    const nodePodProbes = ctx.informers.for<NodePodProbe>(NODE_POD_PROBES, { fieldSelector: `metadata.name=${ctx.nodeName}` });
    const onNpp = () => enqueue(ctx.nodeName);
    nodePodProbes.addHandlers({ add: onNpp, update: onNpp, delete: onNpp });
    return new NodePodProbeReconciler(ctx, nodePodProbes, ctx.options.get(MAX_CONCURRENT_PROBES), enqueue);
  },
};

import { DAEMON_CONFIG_NAMESPACE } from '../../../contracts/index.js';
import { NODE_IMAGES } from '../../core/index.js';
import type { DaemonControllerDefinition } from '../context.js';
import { NodeImageReconciler, type NodeImage } from './reconcile.js';

/**
 * Image pulls for ImagePullJobs (upstream kruise-daemon `imagepuller`). Each daemon watches exactly
 * one object, its own NodeImage (field selector on the name), which is what lets it scale.
 */
export const imagePullController: DaemonControllerDefinition = {
  name: 'daemon-imagepuller',
  featureGate: 'ImagePullJobGate',
  defaultWorkers: 1,
  reads: [{ resource: NODE_IMAGES, fields: ['*'] }],
  setup(ctx, enqueue) {
    const nodeImages = ctx.informers.for<NodeImage>(NODE_IMAGES, {
      fieldSelector: `metadata.name=${ctx.nodeName}`,
    });
    const onNi = () => enqueue(ctx.nodeName);
    nodeImages.addHandlers({ add: onNi, update: onNi });
    const maxWorkers = Number(ctx.options.maxPullWorkers ?? 2);
    const configNamespace = typeof ctx.options.configNamespace === 'string' ? ctx.options.configNamespace : DAEMON_CONFIG_NAMESPACE;
    return new NodeImageReconciler(ctx, nodeImages, maxWorkers, configNamespace, enqueue);
  },
};

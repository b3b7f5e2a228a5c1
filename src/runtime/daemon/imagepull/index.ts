import { SHARED_OPTIONS } from '../../core/options.js';
import { MAX_PULL_WORKERS } from './options.js';
export { MAX_PULL_WORKERS };
import { NODE_IMAGES } from '../../core/index.js';
import type { ControllerDefinition } from '../../core/controller.js';
import type { DaemonContext } from '../context.js';
import { NodeImageReconciler, type NodeImage } from './reconcile.js';

/**
 * Image pulls for ImagePullJobs (upstream kruise-daemon `imagepuller`). Each daemon watches exactly
 * one object, its own NodeImage (field selector on the name), which is what lets it scale.
 */
export const imagePullController: ControllerDefinition<DaemonContext> = {
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
    const maxWorkers = ctx.options.get(MAX_PULL_WORKERS);
    const configNamespace = ctx.options.get(SHARED_OPTIONS.daemonConfigNamespace);
    return new NodeImageReconciler(ctx, nodeImages, maxWorkers, configNamespace, enqueue);
  },
};

import type { ControllerDefinition } from '../../core/controller.js';
import { IMAGE_PULL_JOBS, NODE_IMAGES, NODES } from '../../../contracts/index.js';
import { ownedBy } from '../../core/meta.js';
import type { ImagePullJobObject, Node, NodeImageObject } from '../../core/types.js';
import { NodeImageReconciler } from './reconcile.js';

/** NodeImage controller (gate ImagePullJobGate, upstream `nodeimage-controller`). */
export const nodeImageController: ControllerDefinition = {
  name: 'nodeimage',
  featureGate: 'ImagePullJobGate',
  defaultWorkers: 2,
  reads: [
    // One NodeImage per Ready node, created with the node's labels, deleted with the node.
    { resource: NODES, fields: ['metadata.labels', 'status.conditions[type=Ready].type', 'status.conditions[type=Ready].status'] },
    { resource: NODE_IMAGES, fields: ['*'] },
    { resource: IMAGE_PULL_JOBS, fields: ['*'] },
  ],
  setup(ctx, enqueue) {
    const nodes = ctx.informers.for<Node>(NODES);
    const nodeImages = ctx.informers.for<NodeImageObject>(NODE_IMAGES);
    const jobs = ctx.informers.for<ImagePullJobObject>(IMAGE_PULL_JOBS);
    const byName = (o: { metadata: { name?: string } }) => enqueue(o.metadata.name!);
    nodes.addHandlers({ add: byName, update: byName, delete: byName });
    nodeImages.addHandlers({ add: byName, update: byName, delete: byName });
    // A job going away orphans its tags on every node that has one.
    jobs.addHandlers({
      delete: (job) => {
        for (const ni of nodeImages.list()) {
          const owned = Object.values(ni.spec?.images ?? {}).some((s) => s.tags.some((t) => ownedBy(t.ownerReferences, job.metadata.uid!)));
          if (owned) enqueue(ni.metadata.name!);
        }
      },
    });
    return new NodeImageReconciler(ctx, nodes, nodeImages, jobs);
  },
};

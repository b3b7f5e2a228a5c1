import type { ControllerDefinition } from '../../core/controller.js';
import { IMAGE_PULL_JOBS, NODE_IMAGES } from '../../../contracts/index.js';
import { SHARED_OPTIONS } from '../../core/options.js';
import { objectKey } from '../../core/index.js';
import { ImagePullJobReconciler, type ImagePullJobObject, type NodeImageObject } from './reconcile.js';

/** ImagePullJob controller (gate ImagePullJobGate, upstream `imagepulljob-controller`). */
export const imagePullJobController: ControllerDefinition = {
  name: 'imagepulljob',
  featureGate: 'ImagePullJobGate',
  defaultWorkers: 3,
  reads: [
    { resource: IMAGE_PULL_JOBS, fields: ['*'] },
    { resource: NODE_IMAGES, fields: ['*'] },
  ],
  setup(ctx, enqueue) {
    const jobs = ctx.informers.for<ImagePullJobObject>(IMAGE_PULL_JOBS);
    const nodeImages = ctx.informers.for<NodeImageObject>(NODE_IMAGES);
    jobs.addHandlers({
      add: (j) => enqueue(objectKey(j)),
      update: (j) => enqueue(objectKey(j)),
      // A deleted job lets go of its pull-secret copies.
      delete: (j) => enqueue(objectKey(j)),
    });
    const open = () => jobs.list().filter((j) => !j.status?.completionTime);
    nodeImages.addHandlers({
      // A new node may be a target of any running job.
      add: () => open().forEach((j) => enqueue(objectKey(j))),
      // A status change matters to the jobs owning its tags; a label change to every running job.
      update: (ni, old) => {
        if (JSON.stringify(ni.metadata.labels ?? {}) !== JSON.stringify(old.metadata.labels ?? {}))
          return open().forEach((j) => enqueue(objectKey(j)));
        for (const spec of Object.values(ni.spec?.images ?? {})) {
          for (const tag of spec.tags)
            for (const o of tag.ownerReferences ?? [])
              if (o.kind === 'ImagePullJob' && o.namespace && o.name) enqueue(`${o.namespace}/${o.name}`);
        }
      },
      delete: () => open().forEach((j) => enqueue(objectKey(j))),
    });
    return new ImagePullJobReconciler(ctx, jobs, nodeImages, ctx.options.get(SHARED_OPTIONS.daemonConfigNamespace));
  },
};

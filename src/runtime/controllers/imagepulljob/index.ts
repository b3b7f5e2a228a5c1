import type { ControllerDefinition } from '../../core/controller.js';
import { IMAGE_PULL_JOBS, NODE_IMAGES } from '../../../contracts/index.js';
import { SHARED_OPTIONS } from '../../core/options.js';
import { SECRETS, objectKey, type KubeObject } from '../../core/index.js';
import { IMAGE_PULL_JOB_PULL_SECRET_INDEX, imagePullJobPullSecrets } from '../../core/indexes.js';
import { PULL_SECRET_TYPES } from './decision.js';
import { ImagePullJobReconciler, type ImagePullJobObject, type NodeImageObject } from './reconcile.js';

/** ImagePullJob controller (gate ImagePullJobGate, upstream `imagepulljob-controller`). */
export const imagePullJobController: ControllerDefinition = {
  name: 'imagepulljob',
  featureGate: 'ImagePullJobGate',
  defaultWorkers: 3,
  reads: [
    { resource: IMAGE_PULL_JOBS, fields: ['*'] },
    { resource: NODE_IMAGES, fields: ['*'] },
    // Source pull secrets: only their identity is read from the cache (the copy is made from a fresh get); the
    // informers are narrowed to registry-credential types, the only ones ever copied.
    { resource: SECRETS, fields: ['type'] },
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
    jobs.addIndex(IMAGE_PULL_JOB_PULL_SECRET_INDEX, imagePullJobPullSecrets);
    // A change of a source Secret reaches its copy in the daemon-config namespace at once, not at the next event
    // of a job that may sit still for days (a Never job), as upstream's Secret event handler does.
    const onSecret = (s: KubeObject) => {
      for (const j of jobs.byIndex(IMAGE_PULL_JOB_PULL_SECRET_INDEX, `${s.metadata.namespace}/${s.metadata.name}`))
        if (!j.status?.completionTime) enqueue(objectKey(j));
    };
    // A field selector holds one type, so one informer per registry-credential type; a Secret's type is immutable.
    for (const type of PULL_SECRET_TYPES)
      ctx.informers.for(SECRETS, { fieldSelector: `type=${type}` }).addHandlers({ add: onSecret, update: onSecret, delete: onSecret });
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

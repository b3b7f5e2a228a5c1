import type { ControllerDefinition } from '../../core/controller.js';
import { IMAGE_LIST_PULL_JOBS, IMAGE_PULL_JOBS } from '../../../contracts/index.js';
import { kruiseControllerKey } from '../../core/meta.js';
import { objectKey } from '../../core/types.js';
import type { ChildJob, ImageListPullJobObject } from './decision.js';
import { ImageListPullJobSync } from './sync.js';

/** The `namespace/name` of the ImageListPullJob controlling `job`, if one does. */
const listKeyOf = (job: ChildJob): string | undefined => kruiseControllerKey(job, 'ImageListPullJob');

/**
 * ImageListPullJob controller (gate ImagePullJobGate, upstream `imagelistpulljob-controller`): one ImagePullJob per
 * image of the list with the list's template, replaced when the template changes and deleted when its image leaves
 * the list; the list's status aggregated from them; the TTL after the list finished.
 */
export const imageListPullJobController: ControllerDefinition = {
  name: 'imagelistpulljob',
  featureGate: 'ImagePullJobGate',
  // Upstream runs 3 workers; one key is never reconciled by two workers at once.
  defaultWorkers: 3,
  reads: [
    { resource: IMAGE_LIST_PULL_JOBS, fields: ['*'] },
    // Children: the owner reference, the hash label, the image and template, and the counters of the status.
    { resource: IMAGE_PULL_JOBS, fields: ['*'] },
  ],
  setup(ctx, enqueue) {
    const lists = ctx.informers.for<ImageListPullJobObject>(IMAGE_LIST_PULL_JOBS);
    const children = ctx.informers.for<ChildJob>(IMAGE_PULL_JOBS);
    const sync = new ImageListPullJobSync(ctx, lists, children);
    lists.addHandlers({ add: (j) => enqueue(objectKey(j)), update: (j) => enqueue(objectKey(j)), delete: (j) => enqueue(objectKey(j)) });
    // Expectations first: a reconcile started by a child's event finds the event observed. The image is a child's identity.
    const observe = (c: ChildJob, deleted: boolean) => {
      const key = listKeyOf(c);
      if (!key) return;
      sync.expectations.observe(key, 'create', c.spec.image);
      if (deleted || c.metadata.deletionTimestamp) sync.expectations.observe(key, 'delete', c.spec.image, c.metadata.uid);
    };
    const toList = (c: ChildJob) => {
      const key = listKeyOf(c);
      if (key) enqueue(key);
    };
    children.addHandlers({
      add: (c) => {
        observe(c, false);
        toList(c);
      },
      update: (c, old) => {
        if (c !== old) observe(c, false);
        toList(c);
      },
      delete: (c) => {
        observe(c, true);
        toList(c);
      },
    });
    return sync;
  },
};

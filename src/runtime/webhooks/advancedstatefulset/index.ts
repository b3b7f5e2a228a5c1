import { kruiseResource, STORAGE_CLASSES } from '../../../contracts/index.js';
import { workloadAdmissionHandlers } from '../../control/workload-admission.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { KubeObject } from '../../core/types.js';
import { defaultStatefulSet, validateStatefulSet, validateStatefulSetUpdate, type StorageClassLike } from './decision.js';

/**
 * Advanced StatefulSet defaulting (mutate) and upstream's checks beyond the schema (validate, chained after the
 * rules of `kruisevalidation` on the same path).
 */
export const advancedStatefulSetWebhook: WebhookDefinition = {
  name: 'advancedstatefulset',
  // Claim resizing (gate StatefulSetAutoResizePVCGate) reads whether a template's StorageClass allows expansion;
  // its cache is started only when the gate is on.
  reads: [{ resource: STORAGE_CLASSES, fields: ['metadata.annotations', 'metadata.creationTimestamp', 'allowVolumeExpansion'] }],
  setup(ctx) {
    const enabled = ctx.featureGates.get('StatefulSetAutoResizePVCGate') === true;
    const classes = enabled ? ctx.informers.for<KubeObject & StorageClassLike>(STORAGE_CLASSES) : undefined;
    const resize = { enabled, storageClasses: () => classes?.list() ?? [] };
    return workloadAdmissionHandlers({
      name: 'statefulset',
      resource: kruiseResource('StatefulSet'),
      // Upstream defaults the StatefulSet on updates too.
      defaultOn: ['CREATE', 'UPDATE'],
      defaults: defaultStatefulSet,
      validate: validateStatefulSet,
      validateUpdate: (obj, old) => validateStatefulSetUpdate(obj, old, resize),
    });
  },
};

import { kruiseResource } from '../../../contracts/index.js';
import { workloadAdmissionHandlers } from '../../control/workload-admission.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { defaultStatefulSet, validateStatefulSet, validateStatefulSetUpdate } from './decision.js';

/**
 * Advanced StatefulSet defaulting (mutate) and upstream's checks beyond the schema (validate, chained after the
 * rules of `kruisevalidation` on the same path).
 */
export const advancedStatefulSetWebhook: WebhookDefinition = {
  name: 'advancedstatefulset',
  // Reads no cache: every admission request carries the objects it is about.
  reads: [],
  setup() {
    return workloadAdmissionHandlers({
      name: 'statefulset',
      resource: kruiseResource('StatefulSet'),
      // Upstream defaults the StatefulSet on updates too.
      defaultOn: ['CREATE', 'UPDATE'],
      defaults: defaultStatefulSet,
      validate: validateStatefulSet,
      validateUpdate: validateStatefulSetUpdate,
    });
  },
};

import { ADVANCED_DAEMONSETS } from '../../../contracts/index.js';
import { workloadAdmissionHandlers } from '../../control/workload-admission.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { defaultDaemonSet, validateDaemonSet, validateDaemonSetUpdate } from './decision.js';

/**
 * Advanced DaemonSet defaulting (mutate) and upstream's checks beyond the schema (validate, chained after the rules of
 * `kruisevalidation` on the same path).
 */
export const daemonSetWebhook: WebhookDefinition = {
  name: 'daemonset',
  // Reads no cache: every admission request carries the objects it is about.
  reads: [],
  setup() {
    return workloadAdmissionHandlers({
      name: 'daemonset',
      resource: ADVANCED_DAEMONSETS,
      defaultOn: ['CREATE'],
      defaults: defaultDaemonSet,
      validate: validateDaemonSet,
      validateUpdate: validateDaemonSetUpdate,
    });
  },
};

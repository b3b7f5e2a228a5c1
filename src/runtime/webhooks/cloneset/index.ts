import { CLONESETS } from '../../../contracts/index.js';
import { workloadAdmissionHandlers } from '../../control/workload-admission.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { defaultCloneSet, validateCloneSetUpdate, validateStrategy } from './decision.js';

/**
 * CloneSet defaulting (mutate) and the checks beyond the policy rules (validate, chained after the
 * rules of `kruisevalidation` on the same path).
 */
export const cloneSetWebhook: WebhookDefinition = {
  name: 'cloneset',
  // Reads no cache: every admission request carries the objects it is about.
  reads: [],
  setup() {
    return workloadAdmissionHandlers({
      name: 'cloneset',
      resource: CLONESETS,
      defaultOn: ['CREATE'],
      defaults: defaultCloneSet,
      validate: validateStrategy,
      validateUpdate: validateCloneSetUpdate,
    });
  },
};

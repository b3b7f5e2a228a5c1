import { CLONESETS, kindWebhookPath } from '../../../contracts/index.js';
import { VALIDATING_CHAIN_ORDER } from '../../control/admission-order.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { KubeObject } from '../../core/types.js';
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
    return [
      {
        name: 'mcloneset',
        path: kindWebhookPath('mutate', CLONESETS),
        type: 'mutating',
        async handle(req) {
          if (req.operation !== 'CREATE' || !req.object) return { allowed: true };
          const patch = defaultCloneSet(req.object as KubeObject);
          return { allowed: true, ...(patch.length ? { patch } : {}) };
        },
      },
      {
        name: 'vcloneset',
        path: kindWebhookPath('validate', CLONESETS),
        type: 'validating',
        order: VALIDATING_CHAIN_ORDER.kindChecks,
        async handle(req) {
          if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
          const obj = req.object as KubeObject;
          const bad =
            validateStrategy(obj) ??
            (req.operation === 'UPDATE' && req.oldObject ? validateCloneSetUpdate(obj, req.oldObject as KubeObject) : undefined);
          return bad ?? { allowed: true };
        },
      },
    ];
  },
};

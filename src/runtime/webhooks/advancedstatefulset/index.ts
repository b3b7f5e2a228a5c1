import { kindWebhookPath, kruiseResource } from '../../../contracts/index.js';
import { VALIDATING_CHAIN_ORDER } from '../../control/admission-order.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { KubeObject } from '../../core/types.js';
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
    return [
      {
        name: 'mstatefulset',
        path: kindWebhookPath('mutate', kruiseResource('StatefulSet')),
        type: 'mutating',
        async handle(req) {
          if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
          const patch = defaultStatefulSet(req.object as KubeObject);
          return { allowed: true, ...(patch.length ? { patch } : {}) };
        },
      },
      {
        name: 'vstatefulset',
        path: kindWebhookPath('validate', kruiseResource('StatefulSet')),
        type: 'validating',
        order: VALIDATING_CHAIN_ORDER.kindChecks,
        async handle(req) {
          if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
          const obj = req.object as KubeObject;
          const bad =
            validateStatefulSet(obj) ??
            (req.operation === 'UPDATE' && req.oldObject ? validateStatefulSetUpdate(obj, req.oldObject as KubeObject) : undefined);
          return bad ?? { allowed: true };
        },
      },
    ];
  },
};

import { ADVANCED_DAEMONSETS, kindWebhookPath } from '../../../contracts/index.js';
import { VALIDATING_CHAIN_ORDER } from '../../control/admission-order.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { KubeObject } from '../../core/types.js';
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
    return [
      {
        name: 'mdaemonset',
        path: kindWebhookPath('mutate', ADVANCED_DAEMONSETS),
        type: 'mutating',
        async handle(req) {
          if (req.operation !== 'CREATE' || !req.object) return { allowed: true };
          const patch = defaultDaemonSet(req.object as KubeObject);
          return { allowed: true, ...(patch.length ? { patch } : {}) };
        },
      },
      {
        name: 'vdaemonset',
        path: kindWebhookPath('validate', ADVANCED_DAEMONSETS),
        type: 'validating',
        order: VALIDATING_CHAIN_ORDER.kindChecks,
        async handle(req) {
          if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
          const obj = req.object as KubeObject;
          const bad =
            validateDaemonSet(obj) ??
            (req.operation === 'UPDATE' && req.oldObject ? validateDaemonSetUpdate(obj, req.oldObject as KubeObject) : undefined);
          return bad ?? { allowed: true };
        },
      },
    ];
  },
};

import { KINDS } from '../../../api/registry.js';
import { kindWebhookPath } from '../../../install/webhooks.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { AdmissionHandler } from '../../core/webhook/server.js';
import type { KubeObject } from '../../core/types.js';
import { validateWithPolicy } from './decision.js';

/** `/validate-apps-kruise-io-v1alpha1-<kind>` for every kind of src/api except CRR (its own webhook). */
export const kruiseValidationWebhook: WebhookDefinition = {
  name: 'kruisevalidation',
  setup() {
    return KINDS.filter((k) => k.kind !== 'ContainerRecreateRequest').map(
      (k): AdmissionHandler => ({
        name: `v${k.kind.toLowerCase()}`,
        path: kindWebhookPath('validate', k),
        type: 'validating',
        async handle(req) {
          if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
          return validateWithPolicy(req.object as KubeObject);
        },
      }),
    );
  },
};

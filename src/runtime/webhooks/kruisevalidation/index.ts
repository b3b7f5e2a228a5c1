import { KINDS } from '../../../api/registry.js';
import { kindWebhookPath } from '../../../contracts/index.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { OrderedAdmissionHandler } from '../../core/webhook/compose.js';
import type { KubeObject } from '../../core/types.js';
import { schemaOnlyValidator, validateWith } from './decision.js';

/** `/validate-apps-kruise-io-v1alpha1-<kind>` for every kind of src/api except CRR (its own webhook). */
export const kruiseValidationWebhook: WebhookDefinition = {
  name: 'kruisevalidation',
  // Reads no cache: every admission request carries the object it is about.
  reads: [],
  setup(ctx) {
    const validator = ctx.objectValidator ?? schemaOnlyValidator;
    return KINDS.filter((k) => k.kind !== 'ContainerRecreateRequest').map((k): OrderedAdmissionHandler => ({
      name: `v${k.kind.toLowerCase()}`,
      path: kindWebhookPath('validate', k),
      type: 'validating',
      // First on its path: kinds with their own checks (CloneSet) chain after the shared rules.
      order: 100,
      async handle(req) {
        if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
        return validateWith(validator, req.object as KubeObject);
      },
    }));
  },
};

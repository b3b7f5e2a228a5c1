import type { WebhookDefinition } from '../../core/controller.js';
import { POD_MUTATOR_ORDER } from '../../control/admission-order.js';
import { podMutator } from '../../core/webhook/pod-mutator.js';
import { enhanceLiveness } from './decision.js';

/**
 * Pod webhook step: enhanced liveness (gate EnhancedLivenessProbe), last in the chain so that the liveness probes of
 * injected sidecars move too, as upstream's step runs after its SidecarSet injection.
 */
export const enhancedLivenessWebhook: WebhookDefinition = {
  name: 'enhancedliveness',
  featureGate: 'EnhancedLivenessProbe',
  // Reads no cache: the probes are on the pod under admission.
  reads: [],
  setup() {
    return [
      podMutator('enhancedliveness', POD_MUTATOR_ORDER.enhancedLiveness, (pod) => {
        const step = enhanceLiveness(pod);
        return step && 'warnings' in step ? { warnings: step.warnings } : undefined;
      }),
    ];
  },
};

import type { WebhookDefinition } from '../../core/controller.js';
import { POD_MUTATOR_ORDER } from '../../control/admission-order.js';
import { podMutator } from '../../core/webhook/pod-mutator.js';
import { enhanceLiveness, PROBES_NOT_RUN } from './decision.js';

/**
 * Pod webhook step: enhanced liveness (gate EnhancedLivenessProbe), last in the chain so that the liveness probes of
 * injected sidecars move too, as upstream's step runs after its SidecarSet injection.
 */
export const enhancedLivenessWebhook: WebhookDefinition = {
  name: 'enhancedliveness',
  featureGate: 'EnhancedLivenessProbe',
  // Reads no cache: the probes are on the pod under admission.
  reads: [],
  setup(ctx) {
    // The moved probes run through the node's NodePodProbe: with PodProbeMarkerGate off nothing would run them. The
    // step still moves them, as upstream's does (the annotation asks for it), and says so on every pod it moves.
    const unrun = ctx.featureGates.get('PodProbeMarkerGate') === false;
    return [
      podMutator('enhancedliveness', POD_MUTATOR_ORDER.enhancedLiveness, (pod) => {
        const step = enhanceLiveness(pod);
        if (!step) return undefined;
        if ('warnings' in step) return { warnings: step.warnings };
        return unrun ? { warnings: [PROBES_NOT_RUN] } : undefined;
      }),
    ];
  },
};

import type { WebhookDefinition } from '../../core/controller.js';
import { POD_MUTATOR_ORDER } from '../../control/admission-order.js';
import { podMutator } from '../../core/webhook/pod-mutator.js';
import { addReadinessGates } from './decision.js';

/** Pod webhook step: readiness gates of pods owned by `apps.kruise.io` workloads (after SidecarSet injection). */
export const podReadinessGatesWebhook: WebhookDefinition = {
  name: 'podreadinessgates',
  featureGate: 'PodWebhook',
  // Reads no cache: the owner references are on the pod under admission.
  reads: [],
  setup(ctx) {
    const allPods = ctx.featureGates.get('KruisePodReadinessGate') === true;
    return [
      podMutator('readinessgates', POD_MUTATOR_ORDER.readinessGates, (pod) => {
        addReadinessGates(pod, allPods);
      }),
    ];
  },
};

import type { WebhookDefinition } from '../../core/controller.js';
import { POD_MUTATOR_ORDER } from '../../control/admission-order.js';
import { podMutator } from '../../core/webhook/pod-mutator.js';
import { wireLaunchPriority } from './decision.js';

/** Pod webhook step: container launch priority (after SidecarSet injection and readiness gates, as upstream). */
export const launchPriorityWebhook: WebhookDefinition = {
  name: 'launchpriority',
  featureGate: 'PodWebhook',
  // Reads no cache: everything is on the pod under admission.
  reads: [],
  setup() {
    return [podMutator('launchpriority', POD_MUTATOR_ORDER.launchPriority, (pod) => wireLaunchPriority(pod))];
  },
};

import { randomBytes } from 'node:crypto';
import { ANNOTATION_CONTAINER_EXIT_PRIORITY, ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS } from '../../../contracts/index.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { POD_MUTATOR_ORDER } from '../../control/admission-order.js';
import { podMutator } from '../../core/webhook/pod-mutator.js';
import { wireExitPriority } from './decision.js';

/**
 * Pod webhook step: container exit priority (last: it wires every container, injected sidecars included).
 * Gate ContainerExitPriority; off, the annotation is left inert as before.
 */
export const exitPriorityWebhook: WebhookDefinition = {
  name: 'exitpriority',
  featureGate: 'ContainerExitPriority',
  // Reads no cache: everything is on the pod under admission.
  reads: [],
  setup() {
    return [
      podMutator('exitpriority', POD_MUTATOR_ORDER.exitPriority, (pod, req) =>
        // Most pods carry no exit priority: no token is drawn for them (the decision ignores them too).
        pod.metadata.annotations?.[ANNOTATION_CONTAINER_EXIT_PRIORITY] === undefined &&
        pod.metadata.annotations?.[ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS] === undefined
          ? undefined
          : // A pod under generateName has no name yet: a random token names it in its hooks instead.
            wireExitPriority(pod, req.namespace ?? pod.metadata.namespace ?? 'default', randomBytes(10).toString('hex')),
      ),
    ];
  },
};

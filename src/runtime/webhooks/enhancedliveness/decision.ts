/**
 * Pod webhook step of enhanced liveness (upstream's `enhancedLivenessProbeWhenPodCreate`): a pod annotated
 * `apps.kruise.io/using-enhanced-liveness: "true"` has its containers' liveness probes moved into
 * `apps.kruise.io/container-probe-context`, so the kubelet no longer runs them and the runtime does.
 *
 * Unlike upstream, the step is not limited to pods of Kruise workloads: the restart budget also covers Deployments'
 * pods, and a pod that asks for the behaviour by its annotation gets it whoever owns it.
 */
import type { Pod } from '../../core/types.js';
import { moveLivenessProbes, usesEnhancedLiveness } from '../../control/enhanced-liveness.js';

export type LivenessStep = { readonly moved: readonly string[] } | { readonly warnings: readonly string[] } | undefined;

/** Moves the probes of an opted-in pod (in place); a warning when it opts in with no liveness probe to move. */
export function enhanceLiveness(pod: Pod): LivenessStep {
  if (!usesEnhancedLiveness(pod)) return undefined;
  const moved = moveLivenessProbes(pod);
  if (moved.length > 0) return { moved: moved.map((m) => m.name) };
  return {
    warnings: [
      'apps.kruise.io/using-enhanced-liveness is "true" but no container declares a livenessProbe: the runtime has no liveness probe to run for this pod',
    ],
  };
}

/** The warning on a moved pod when the runtime's PodProbeMarkerGate is off (its NodePodProbe path does not run). */
export const PROBES_NOT_RUN =
  'gate PodProbeMarkerGate is off in this runtime: the liveness probes moved into apps.kruise.io/container-probe-context are not run by anything, so no container of this pod is restarted on a failing probe';

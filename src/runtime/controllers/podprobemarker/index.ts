import type { ControllerDefinition } from '../../core/controller.js';
import { NODE_POD_PROBES, PODS, POD_PROBE_MARKERS, selectorMatches } from '../../../contracts/index.js';
import { NAMESPACE_INDEX, objectNamespace } from '../../core/indexes.js';
import { objectKey, type Pod } from '../../core/types.js';
import { probeTarget, type NodePodProbeObject, type PodProbeMarkerObject } from './decision.js';
import { PodProbeMarkerReconciler } from './reconcile.js';

/** What of a pod decides whether and how a marker probes it. */
function targetFacts(p: Pod): string {
  return JSON.stringify(probeTarget(p) ?? null);
}

/**
 * PodProbeMarker controller (gate PodProbeMarkerGate, upstream `podprobemarker-controller`): lists each marker's
 * probes, per selected pod, in the NodePodProbe of the pod's node; keeps the marker's finalizer until its probes
 * are gone from every NodePodProbe; status observedGeneration and matchedPods.
 */
export const podProbeMarkerController: ControllerDefinition = {
  name: 'podprobemarker',
  featureGate: 'PodProbeMarkerGate',
  // Upstream runs 3 workers; one key is never reconciled by two workers at once.
  defaultWorkers: 3,
  reads: [
    { resource: POD_PROBE_MARKERS, fields: ['*'] },
    {
      resource: PODS,
      fields: [
        'metadata.labels',
        'spec.nodeName',
        'spec.containers[].name',
        // Named ports of httpGet/tcpSocket probes are resolved against the container's ports.
        'spec.containers[].ports',
        'status.phase',
        'status.podIP',
        'status.conditions[type=Initialized]',
      ],
    },
    { resource: NODE_POD_PROBES, fields: ['*'] },
  ],
  setup(ctx, enqueue) {
    const markers = ctx.informers.for<PodProbeMarkerObject>(POD_PROBE_MARKERS);
    const pods = ctx.informers.for<Pod>(PODS);
    const nodePodProbes = ctx.informers.for<NodePodProbeObject>(NODE_POD_PROBES);
    pods.addIndex(NAMESPACE_INDEX, objectNamespace);
    const byKey = (m: PodProbeMarkerObject) => enqueue(objectKey(m));
    markers.addHandlers({ add: byKey, update: byKey, delete: byKey });
    // A pod concerns the markers of its namespace that select it now or selected it before.
    const toMarkers = (p: Pod, old?: Pod) => {
      for (const m of markers.list()) {
        if (m.metadata.namespace !== p.metadata.namespace) continue;
        const sel = m.spec?.selector ?? {};
        if (selectorMatches(sel, p.metadata.labels ?? {}) || (old && selectorMatches(sel, old.metadata.labels ?? {}))) byKey(m);
      }
    };
    pods.addHandlers({
      add: (p) => toMarkers(p),
      update: (p, old) => {
        if (p !== old && targetFacts(p) !== targetFacts(old)) toMarkers(p, old);
      },
      delete: (p) => toMarkers(p),
    });
    // A node's NodePodProbe appearing (its node became Ready) takes the probes of the pods already there.
    nodePodProbes.addHandlers({ add: () => markers.list().forEach(byKey) });
    return new PodProbeMarkerReconciler(ctx, markers, pods, nodePodProbes);
  },
};

import type { ControllerDefinition } from '../../core/controller.js';
import { NODES, NODE_POD_PROBES, PODS, POD_PROBE_MARKERS } from '../../../contracts/index.js';
import type { Node, Pod } from '../../core/types.js';
import type { NodePodProbeObject, PodProbeMarkerObject } from './decision.js';
import { markedPodView, NodePodProbeReconciler } from './reconcile.js';

/**
 * NodePodProbe controller (gate PodProbeMarkerGate, upstream `nodepodprobe-controller`): one NodePodProbe per Ready
 * node; prunes the entries of pods gone; writes each probe result in its status to the pod as the marker asks
 * (condition, labels, annotations).
 */
export const nodePodProbeController: ControllerDefinition = {
  name: 'nodepodprobe',
  featureGate: 'PodProbeMarkerGate',
  defaultWorkers: 3,
  reads: [
    {
      resource: NODES,
      fields: ['metadata.labels', 'status.conditions[type=Ready].type', 'status.conditions[type=Ready].status'],
    },
    { resource: NODE_POD_PROBES, fields: ['*'] },
    // The pod's own labels, annotations and conditions, to write only what differs.
    { resource: PODS, fields: ['metadata.labels', 'metadata.annotations', 'spec.nodeName', 'status.phase', 'status.conditions'] },
    { resource: POD_PROBE_MARKERS, fields: ['spec.probes', 'metadata.deletionTimestamp'] },
  ],
  setup(ctx, enqueue) {
    const nodes = ctx.informers.for<Node>(NODES);
    const nodePodProbes = ctx.informers.for<NodePodProbeObject>(NODE_POD_PROBES);
    const pods = ctx.informers.for<Pod>(PODS);
    const markers = ctx.informers.for<PodProbeMarkerObject>(POD_PROBE_MARKERS);
    const byName = (o: { metadata: { name?: string } }) => enqueue(o.metadata.name!);
    nodes.addHandlers({ add: byName, update: byName, delete: byName });
    nodePodProbes.addHandlers({ add: byName, update: byName, delete: byName });
    // A pod gone or finished leaves its node's NodePodProbe; a pod whose labels, annotations or conditions changed
    // may need them written again (someone else edited what a marker owns).
    const listed = (p: Pod) =>
      !!p.spec?.nodeName && !!nodePodProbes.get(p.spec.nodeName)?.spec?.podProbes?.some((e) => e.uid === p.metadata.uid);
    const facts = (p: Pod) => JSON.stringify(markedPodView(p));
    pods.addHandlers({
      update: (p, old) => {
        if (p !== old && facts(p) !== facts(old) && listed(p)) enqueue(p.spec!.nodeName!);
      },
      delete: (p) => {
        if (listed(p)) enqueue(p.spec!.nodeName!);
      },
    });
    // A marker's policy changed: every node whose results name it.
    markers.addHandlers({
      update: (m) => {
        for (const npp of nodePodProbes.list())
          if (npp.spec?.podProbes?.some((e) => e.namespace === m.metadata.namespace)) enqueue(npp.metadata.name!);
      },
    });
    return new NodePodProbeReconciler(ctx, nodes, nodePodProbes, pods, markers);
  },
};

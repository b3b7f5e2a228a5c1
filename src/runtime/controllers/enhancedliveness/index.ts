import {
  ANNOTATION_CONTAINER_PROBE_CONTEXT,
  CLONESETS,
  CONTAINER_RECREATE_REQUESTS,
  LABEL_LIVENESS_RESTART,
  NODE_POD_PROBES,
  PODS,
  POD_DISRUPTION_BUDGETS,
  POD_UNAVAILABLE_BUDGETS,
} from '../../../contracts/index.js';
import type { PubObject } from '../../control/pod-unavailable-budget.js';
import type { ControllerDefinition } from '../../core/controller.js';
import type { IndexFunc } from '../../core/informer.js';
import { NAMESPACE_INDEX, objectNamespace } from '../../core/indexes.js';
import type { KubeObject, Pod } from '../../core/types.js';
import { livenessProbeContainer, usesEnhancedLiveness } from '../../control/enhanced-liveness.js';
import type { NodePodProbeObject } from './decision.js';
import { EnhancedLivenessReconciler, LIVENESS_NAMESPACE_INDEX, LIVENESS_NODE_INDEX, namespaceKey, nodeKey } from './reconcile.js';

// Opted in and admitted by the webhook step (the probes moved): both annotations, as upstream's tools read them.
const opted = (p: Pod) => usesEnhancedLiveness(p) && p.metadata.annotations?.[ANNOTATION_CONTAINER_PROBE_CONTEXT] !== undefined;
const byNamespace: IndexFunc<Pod> = (p) => (opted(p) && p.metadata.namespace ? [p.metadata.namespace] : []);
const byNode: IndexFunc<Pod> = (p) => (opted(p) && p.spec?.nodeName ? [p.spec.nodeName] : []);

/**
 * Enhanced liveness (gate EnhancedLivenessProbe; ours beyond upstream, which only moves the probes): lists the liveness
 * probes the pod webhook moved into each node's NodePodProbe, so that node's daemon runs them; reads their results and
 * restarts a failing container through a ContainerRecreateRequest (preStop first, as the daemon runs every CRR) only
 * while the pod's budget allows: its PodUnavailableBudget, else a PodDisruptionBudget selecting it, else its CloneSet's
 * or Deployment's maxUnavailable, else one at a time. A restart that waits sets the pod's LivenessRestartPending
 * condition and an event; most of a group failing at once raises one ClusterWideLivenessFailure event.
 */
export const enhancedLivenessController: ControllerDefinition = {
  name: 'enhancedliveness',
  featureGate: 'EnhancedLivenessProbe',
  // Keys are nodes and namespaces: one worker per key at a time, so one namespace's admissions never race.
  defaultWorkers: 2,
  reads: [
    {
      resource: PODS,
      fields: [
        'metadata.labels',
        'metadata.annotations',
        'metadata.ownerReferences',
        'metadata.deletionTimestamp',
        'spec.nodeName',
        'status.phase',
        'status.podIP',
        'status.conditions',
        'status.containerStatuses[].name',
        'status.containerStatuses[].containerID',
        'status.containerStatuses[].state',
      ],
    },
    { resource: NODE_POD_PROBES, fields: ['*'] },
    { resource: CONTAINER_RECREATE_REQUESTS, fields: ['metadata.labels', 'metadata.annotations', 'metadata.ownerReferences'] },
    {
      resource: POD_UNAVAILABLE_BUDGETS,
      fields: ['metadata.deletionTimestamp', 'spec', 'status.totalReplicas', 'status.desiredAvailable'],
    },
    { resource: POD_DISRUPTION_BUDGETS, fields: ['metadata.deletionTimestamp', 'spec', 'status.expectedPods', 'status.desiredHealthy'] },
    { resource: CLONESETS, fields: ['spec.replicas', 'spec.updateStrategy.maxUnavailable'] },
  ],
  setup(ctx, enqueue) {
    if (ctx.featureGates.get('PodProbeMarkerGate') === false)
      ctx.logger.error(
        { gate: 'PodProbeMarkerGate' },
        'enhanced liveness lists its probes in NodePodProbes, which nothing creates or runs with PodProbeMarkerGate off: no liveness probe moved by the pod webhook runs',
      );
    const pods = ctx.informers.for<Pod>(PODS);
    const nodePodProbes = ctx.informers.for<NodePodProbeObject>(NODE_POD_PROBES);
    const crrs = ctx.informers.for<KubeObject>(CONTAINER_RECREATE_REQUESTS);
    const pubs = ctx.informers.for<PubObject & KubeObject>(POD_UNAVAILABLE_BUDGETS);
    const pdbs = ctx.informers.for<KubeObject>(POD_DISRUPTION_BUDGETS);
    const cloneSets = ctx.informers.for<KubeObject>(CLONESETS);
    pods.addIndex(LIVENESS_NAMESPACE_INDEX, byNamespace);
    // A namespace's pods, restart requests and budgets are looked up, not walked for (one cache each, cluster-wide).
    pods.addIndex(NAMESPACE_INDEX, objectNamespace);
    crrs.addIndex(NAMESPACE_INDEX, objectNamespace);
    pdbs.addIndex(NAMESPACE_INDEX, objectNamespace);
    pods.addIndex(LIVENESS_NODE_INDEX, byNode);
    const nsHasOptedIn = (ns: string | undefined) => !!ns && pods.byIndex(LIVENESS_NAMESPACE_INDEX, ns).length > 0;
    // Any pod of a namespace with opted-in pods may change a budget's count (readiness, deletion).
    const onPod = (p: Pod, old?: Pod) => {
      for (const x of old && old !== p ? [p, old] : [p]) {
        if (opted(x) && x.spec?.nodeName) enqueue(nodeKey(x.spec.nodeName));
      }
      if (nsHasOptedIn(p.metadata.namespace)) enqueue(namespaceKey(p.metadata.namespace!));
    };
    pods.addHandlers({ add: (p) => onPod(p), update: (p, old) => onPod(p, old), delete: (p) => onPod(p) });
    const onNpp = (npp: NodePodProbeObject) => {
      enqueue(nodeKey(npp.metadata.name!));
      const namespaces = new Set<string>();
      for (const st of npp.status?.podProbeStatuses ?? [])
        if ((st.probeStates ?? []).some((s) => livenessProbeContainer(s.name) !== undefined)) namespaces.add(st.namespace);
      for (const ns of namespaces) enqueue(namespaceKey(ns));
    };
    nodePodProbes.addHandlers({ add: onNpp, update: onNpp });
    const onCrr = (c: KubeObject) => {
      if (c.metadata.labels?.[LABEL_LIVENESS_RESTART] !== undefined) enqueue(namespaceKey(c.metadata.namespace!));
    };
    crrs.addHandlers({ add: onCrr, update: onCrr, delete: onCrr });
    const onBudget = (b: KubeObject) => {
      if (nsHasOptedIn(b.metadata.namespace)) enqueue(namespaceKey(b.metadata.namespace!));
    };
    pubs.addHandlers({ add: onBudget, update: onBudget, delete: onBudget });
    pdbs.addHandlers({ add: onBudget, update: onBudget, delete: onBudget });
    cloneSets.addHandlers({ update: onBudget });
    return new EnhancedLivenessReconciler(ctx, pods, nodePodProbes, crrs, pubs, pdbs as never, cloneSets as never);
  },
};

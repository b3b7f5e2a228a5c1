import {
  NODE_POD_PROBES,
  POD_PROBE_MARKERS,
  PatchStrategy,
  isNotFound,
  type ControllerContext,
  type Informer,
  type Pod,
  type ProcessResult,
  type Reconciler,
} from '../../core/index.js';
import { FINALIZER_NODE_POD_PROBE_CLEANUP } from '../../../contracts/index.js';
import { NAMESPACE_INDEX } from '../../core/indexes.js';
import { splitKey } from '../../core/types.js';
import { decidePodProbeMarker, probeTarget, type NodePodProbeObject, type PodProbeMarkerObject, type ProbePodView } from './decision.js';

/** I/O half of the PodProbeMarker controller. Key: `namespace/name` of the marker. */
export class PodProbeMarkerReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly markers: Informer<PodProbeMarkerObject>,
    private readonly pods: Informer<Pod>,
    private readonly nodePodProbes: Informer<NodePodProbeObject>,
  ) {}

  async reconcile(key: string): Promise<ProcessResult> {
    const marker = this.markers.get(key);
    if (!marker) return;
    const { namespace } = splitKey(key);
    const targets = this.pods
      .byIndex(NAMESPACE_INDEX, namespace ?? '')
      .map(probeTarget)
      .filter((p): p is ProbePodView => !!p);
    const d = decidePodProbeMarker({ marker, pods: targets, nodePodProbes: this.nodePodProbes.list() });
    const { client } = this.ctx;
    if (d.finalizer === 'add') {
      await client.patch(
        POD_PROBE_MARKERS,
        marker.metadata.name!,
        namespace,
        {
          metadata: {
            resourceVersion: marker.metadata.resourceVersion,
            finalizers: [...(marker.metadata.finalizers ?? []), FINALIZER_NODE_POD_PROBE_CLEANUP],
          },
        },
        PatchStrategy.MergePatch,
      );
    }
    // Conditional on the NodePodProbe's resourceVersion: markers of other namespaces write the same object; a
    // conflict fails this reconcile, which runs again on the fresh cache.
    for (const w of d.writes) {
      await client
        .patch(
          NODE_POD_PROBES,
          w.name,
          undefined,
          { metadata: { resourceVersion: w.resourceVersion }, spec: { podProbes: w.podProbes } },
          PatchStrategy.MergePatch,
        )
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
    if (d.problems.length)
      this.ctx.events.emit(POD_PROBE_MARKERS, marker, 'Warning', 'ProbeNotResolved', d.problems.slice(0, 5).join('; '));
    if (d.status) {
      await client.patch(POD_PROBE_MARKERS, marker.metadata.name!, namespace, { status: d.status }, PatchStrategy.MergePatch, {
        subresource: 'status',
      });
    }
    if (d.finalizer === 'remove') {
      await client
        .patch(
          POD_PROBE_MARKERS,
          marker.metadata.name!,
          namespace,
          {
            metadata: {
              resourceVersion: marker.metadata.resourceVersion,
              finalizers: (marker.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_NODE_POD_PROBE_CLEANUP),
            },
          },
          PatchStrategy.MergePatch,
        )
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
  }
}

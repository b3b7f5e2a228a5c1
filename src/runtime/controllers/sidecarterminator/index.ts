import type { ControllerDefinition } from '../../core/controller.js';
import { CONTAINER_RECREATE_REQUESTS, NODES, PODS, SIDECAR_TERMINATION_CRR_PREFIX } from '../../../contracts/index.js';
import { podNodeName, POD_NODE_NAME_INDEX } from '../../core/indexes.js';
import { ownerOfKind } from '../../core/meta.js';
import { objectKey, type KubeObject, type Node, type Pod } from '../../core/types.js';
import { isCandidate } from '../../control/sidecar-termination.js';
import { SidecarTerminatorReconciler } from './reconcile.js';

/** Job Sidecar Terminator (gate SidecarTerminator, upstream `sidecarterminator-controller`). */
export const sidecarTerminator: ControllerDefinition = {
  name: 'sidecarterminator',
  featureGate: 'SidecarTerminator',
  // Upstream runs 3. A reconcile here is one API write that Node overlaps cheaply; in
  // bench/sidecarterminator.bench.ts (1,000 pods finishing with 50 status writes in flight) 10 workers
  // left CRRs ~2 s behind (p50), 50 kept pace with the writes (p50 0.35 s). Writes to one pod stay serial.
  // Each CRR create waits on our CRR webhooks, which the API server calls over HTTP/1.1 (always, for a
  // Service-addressed webhook) keeping at most 25 idle connections per host: past 25 creates in flight it
  // opens new TLS connections (bench/terminator-peer.bench.ts: ~4,500 in the burst with 50 workers, under
  // 100 with 20, ~10% less manager CPU). Fewer workers still lost: the webhook wait per CRR stayed the same,
  // so throughput halved and the burst queued (bench/terminator-peer.bench.ts, 2026-11-24).
  defaultWorkers: 50,
  reads: [
    {
      resource: PODS,
      fields: [
        // The exit-priority annotation orders the sidecars in the CRR.
        'metadata.annotations',
        'spec.nodeName',
        'spec.restartPolicy',
        'spec.containers[].name',
        'spec.containers[].image',
        // Only the sidecar markers: other env can be large and is never read.
        'spec.containers[].env[name^=KRUISE_].name',
        'spec.containers[].env[name^=KRUISE_].value',
        'status.phase',
        'status.conditions[].type',
        'status.conditions[].status',
        'status.containerStatuses[].name',
        'status.containerStatuses[].containerID',
        'status.containerStatuses[].restartCount',
        'status.containerStatuses[].state',
        // The previous instance's exit code only: a kubelet restart after a failed exit (OnFailure) tells a
        // sidecar that failed on our stop from one that never stopped.
        'status.containerStatuses[].lastState.terminated.exitCode',
      ],
    },
    // virtual-kubelet detection (label type=virtual-kubelet)
    { resource: NODES, fields: ['metadata.labels'] },
    { resource: CONTAINER_RECREATE_REQUESTS, fields: ['metadata.ownerReferences'] },
  ],
  setup(ctx, enqueue) {
    const pods = ctx.informers.for<Pod>(PODS);
    const nodes = ctx.informers.for<Node>(NODES);
    const crrs = ctx.informers.for<KubeObject>(CONTAINER_RECREATE_REQUESTS);
    // A node event looks at that node's pods only, not at every cached pod of the cluster
    // (bench/terminator-node-event.bench.ts).
    pods.addIndex(POD_NODE_NAME_INDEX, podNodeName);
    const onPod = (p: Pod) => {
      if (isCandidate(p)) enqueue(objectKey(p));
    };
    pods.addHandlers({ add: onPod, update: onPod });
    // A node turning (or ceasing to be) virtual-kubelet changes the path for its pods.
    nodes.addHandlers({
      update: (n, old) => {
        if (n.metadata.labels?.type === old.metadata.labels?.type) return;
        for (const p of pods.byIndex(POD_NODE_NAME_INDEX, n.metadata.name ?? '')) if (isCandidate(p)) enqueue(objectKey(p));
      },
    });
    crrs.addHandlers({
      delete: (crr) => {
        const name = crr.metadata.name ?? '';
        if (!name.startsWith(SIDECAR_TERMINATION_CRR_PREFIX)) return;
        const owner = ownerOfKind(crr, 'Pod');
        if (owner) enqueue(`${crr.metadata.namespace}/${owner.name}`);
      },
    });
    return new SidecarTerminatorReconciler(ctx, pods, nodes, crrs);
  },
};

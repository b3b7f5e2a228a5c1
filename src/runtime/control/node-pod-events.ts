/**
 * The pod and node events of the per-node workloads (BroadcastJob, Advanced DaemonSet). A pod's node is its identity
 * in the scale expectations (its name is generated): each pod event is observed there first, so a reconcile the
 * event starts finds it observed, then concerns the pod's owner. A node concerns the workloads again only when what
 * decides where their pods run changes (labels, taints, cordon).
 */
import type { ScaleExpectations } from '../core/expectations.js';
import type { InformerHandlers } from '../core/informer.js';
import type { Node, Pod } from '../core/types.js';
import { assignedNode } from './node-placement.js';

/** Pod handlers: the expectations by node, then the owner's key (undefined: not one of ours) enqueued. */
export function nodePodHandlers(
  expectations: ScaleExpectations,
  ownerKey: (p: Pod) => string | undefined,
  enqueue: (key: string) => void,
): InformerHandlers<Pod> {
  const observe = (p: Pod, deleted: boolean) => {
    const key = ownerKey(p);
    const node = assignedNode(p);
    if (!key || node === undefined) return;
    expectations.observe(key, 'create', node);
    if (deleted || p.metadata.deletionTimestamp) expectations.observe(key, 'delete', node, p.metadata.uid);
  };
  const toOwner = (p: Pod) => {
    const key = ownerKey(p);
    if (key) enqueue(key);
  };
  return {
    add: (p) => {
      observe(p, false);
      toOwner(p);
    },
    update: (p, old) => {
      if (p !== old) observe(p, false);
      toOwner(p);
    },
    delete: (p) => {
      observe(p, true);
      toOwner(p);
    },
  };
}

/** Node handlers calling `concerned` on a node added or removed, or changed in its labels, taints or cordon. */
export function nodePlacementHandlers(concerned: () => void): InformerHandlers<Node> {
  return {
    add: concerned,
    update: (n, old) => {
      if (n !== old && placementOf(n) !== placementOf(old)) concerned();
    },
    delete: concerned,
  };
}

/** The scheduling facts of a node that decide which pods it runs, and the labels a rollout selects nodes by. */
function placementOf(n: Node): string {
  const spec = (n.spec ?? {}) as { taints?: unknown; unschedulable?: boolean };
  return JSON.stringify([n.metadata.labels ?? {}, spec.taints ?? [], spec.unschedulable ?? false]);
}

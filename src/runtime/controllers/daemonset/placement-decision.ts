/**
 * Advanced DaemonSet placement, pure (upstream's `manage` phase, which follows the native DaemonSet controller):
 * which nodes should run a daemon pod, the pod a node gets, and the pods to create and delete this round.
 *
 * - A node should run the pod when the template, with the tolerations every native DaemonSet pod gets, fits it
 *   (control/node-placement.ts). Each pod is bound to its node by a required node affinity on `metadata.name`.
 * - A node that should run the pod and has none gets one; a failed pod is deleted (the next round replaces it); a
 *   node with more pods than it may keep loses the extras (with maxSurge, one old and one new pod may share a node
 *   while the new one becomes available); a node that should not run the pod loses its pods; a pod bound to a node
 *   that no longer exists is deleted.
 * - With a partition and partitionedScaling (v1alpha1: annotation `daemonset.kruise.io/progressive-create-pod`),
 *   pods are created only on as many nodes as the partition leaves to the update revision, first by node name.
 * - burstReplicas bounds the creates and the deletes of one round (percentages of the desired pods, rounded up).
 */
import type { DaemonSet } from '../../../api/kinds/daemonset.js';
import {
  ADVANCED_DAEMONSETS,
  ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD,
  apiVersionOf,
  CONDITION_INPLACE_UPDATE_READY,
  CONDITION_KRUISE_POD_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
} from '../../../contracts/index.js';
import { assignedNode, bindToNode, misfit, type PlacementSpec, type Toleration } from '../../control/node-placement.js';
import { isPodAtRevision, isPodActive, podState } from '../../control/workload-pods.js';
import type { KubeObject, Node, Pod } from '../../core/types.js';

/** An Advanced DaemonSet as read from the API. */
export type DaemonSetObject = DaemonSet & KubeObject;

/** Upstream's default of spec.burstReplicas. */
export const DEFAULT_BURST_REPLICAS = 250;

/**
 * The tolerations the native DaemonSet controller adds to every daemon pod (so a node that is not ready, unreachable,
 * under pressure or cordoned keeps its daemon), plus network-unavailable for host-network pods.
 */
export function daemonTolerations(spec: { hostNetwork?: boolean }): Toleration[] {
  const t: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork) t.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  return t;
}

/** `tolerations` plus the daemon tolerations it lacks (an equal key and effect counts as present). */
export function withDaemonTolerations(tolerations: readonly Toleration[] | undefined, hostNetwork: boolean | undefined): Toleration[] {
  const out = [...(tolerations ?? [])];
  for (const t of daemonTolerations({ hostNetwork })) {
    if (!out.some((x) => x.key === t.key && x.effect === t.effect)) out.push(t);
  }
  return out;
}

/**
 * Why the daemon pod should not run on `node`, or undefined when it should. With `keepRunning`, whether a pod already
 * there may stay (native: a NoSchedule taint or a cordon does not evict a daemon pod, a NoExecute taint does).
 */
export function nodeMisfit(ds: DaemonSetObject, node: Node, keepRunning = false): string | undefined {
  const spec = (ds.spec.template.spec ?? {}) as PlacementSpec & { hostNetwork?: boolean };
  return misfit({ ...spec, tolerations: withDaemonTolerations(spec.tolerations, spec.hostNetwork) }, node, keepRunning);
}

/** A count or percentage of `total` (rounded up or down), `dflt` when unset; a malformed value counts as `dflt`. */
export function scaled(v: number | string | undefined, total: number, roundUp: boolean, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v === 'number') return Math.max(0, Math.trunc(v));
  const m = /^(\d+)%$/.exec(v);
  if (!m) return /^\d+$/.test(v) ? Number(v) : dflt;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/** The pod's revision hash (label `controller-revision-hash`). */
export function podHash(p: Pod): string | undefined {
  return p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH];
}

/** The daemon pod for `node` at revision `hash`: the template, bound to the node, with the daemon tolerations. */
export function podFor(ds: DaemonSetObject, node: string, hash: string): Pod {
  const tpl = ds.spec.template;
  const spec = { ...((tpl.spec ?? {}) as Record<string, unknown>) };
  spec.affinity = bindToNode(spec.affinity as Record<string, unknown> | undefined, node);
  spec.tolerations = withDaemonTolerations(spec.tolerations as Toleration[] | undefined, spec.hostNetwork as boolean | undefined);
  const gates = [...((spec.readinessGates as Array<{ conditionType: string }> | undefined) ?? [])];
  const us = ds.spec.updateStrategy;
  const lifecycle = ds.spec.lifecycle;
  // InPlaceUpdateReady keeps a pod out of Services while the kubelet swaps its images (upstream injects it for
  // InPlaceIfPossible); KruisePodReady is what markPodNotReady turns False.
  const wanted: string[] = [];
  if (us?.rollingUpdate?.rollingUpdateType === 'InPlaceIfPossible') wanted.push(CONDITION_INPLACE_UPDATE_READY);
  if (lifecycle && [lifecycle.preDelete, lifecycle.inPlaceUpdate].some((h) => h?.markPodNotReady)) wanted.push(CONDITION_KRUISE_POD_READY);
  for (const g of wanted) if (!gates.some((x) => x.conditionType === g)) gates.push({ conditionType: g });
  if (gates.length) spec.readinessGates = gates;
  const md = (tpl.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] };
  const labels: Record<string, string> = { ...(md.labels ?? {}), [LABEL_CONTROLLER_REVISION_HASH]: hash };
  // Beyond upstream: a preNormal hook holds a new pod in PreparingNormal until the user's hook operator has put
  // every handler on it (as CloneSet's). The handlers are not added here: a pod born with them would be Normal at
  // once and the hook would hold nothing.
  if (lifecycle?.preNormal) labels[LABEL_LIFECYCLE_STATE] = 'PreparingNormal';
  const finalizers = [...(md.finalizers ?? [])];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${ds.metadata.name}-`,
      namespace: ds.metadata.namespace,
      labels,
      ...(md.annotations ? { annotations: { ...md.annotations } } : {}),
      ...(finalizers.length ? { finalizers } : {}),
      ownerReferences: [
        {
          apiVersion: apiVersionOf(ADVANCED_DAEMONSETS),
          kind: 'DaemonSet',
          name: ds.metadata.name!,
          uid: ds.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: spec as Pod['spec'],
  };
}

/** Active pods by the node they are bound to; pods bound to no node under `unbound`. */
export function podsByNode(pods: readonly Pod[]): { byNode: Map<string, Pod[]>; unbound: Pod[] } {
  const byNode = new Map<string, Pod[]>();
  const unbound: Pod[] = [];
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) continue;
    const n = assignedNode(p);
    if (n === undefined) unbound.push(p);
    else byNode.set(n, [...(byNode.get(n) ?? []), p]);
  }
  return { byNode, unbound };
}

function createdMs(p: Pod): number {
  const t = p.metadata.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : NaN;
  return Number.isFinite(t) ? t : 0;
}

/** Oldest first, then by name: the pod a node keeps is the one that has run longest. */
export function byAge(a: Pod, b: Pod): number {
  return createdMs(a) - createdMs(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

export interface PlacementInput {
  readonly ds: DaemonSetObject;
  readonly nodes: readonly Node[];
  /** The pods the DaemonSet controls (deleted ones included; they are skipped). */
  readonly pods: readonly Pod[];
  /** The update revision's hash. */
  readonly hash: string;
  /** maxSurge resolved for this round (0: a node keeps one pod). */
  readonly surge: boolean;
}

export interface Placement {
  /** Nodes that should run the pod, by name. */
  readonly desired: readonly string[];
  readonly createOn: readonly string[];
  readonly deletePods: readonly Pod[];
  /** Nodes that should run the pod where creates were held back by partitionedScaling or burstReplicas. */
  readonly heldBack: number;
}

/** Whether creation follows the partition (v1beta1 field, or v1alpha1's annotation). */
export function partitionedScaling(ds: DaemonSetObject): boolean {
  return (
    ds.spec.scaleStrategy?.partitionedScaling === true || ds.metadata.annotations?.[ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD] === 'true'
  );
}

/** The manage phase: pods to create (by node) and to delete, bounded by burstReplicas. */
export function planPlacement(i: PlacementInput): Placement {
  const { ds, hash } = i;
  const { byNode, unbound } = podsByNode(i.pods);
  const nodeNames = new Set(i.nodes.map((n) => n.metadata.name!));
  const desired: string[] = [];
  let createOn: string[] = [];
  const deletePods: Pod[] = [];
  let newPods = 0;
  for (const node of [...i.nodes].sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!))) {
    const name = node.metadata.name!;
    const pods = [...(byNode.get(name) ?? [])].sort(byAge);
    const shouldRun = nodeMisfit(ds, node) === undefined;
    if (shouldRun) desired.push(name);
    if (!shouldRun && (pods.length === 0 || nodeMisfit(ds, node, true) !== undefined)) {
      deletePods.push(...pods);
      continue;
    }
    // Failed pods go (the next round replaces them); a pod in PreparingDelete goes too, once its preDelete hook lets
    // it (the deletion step keeps it while hooked), and no longer counts as the node's pod.
    const live: Pod[] = [];
    for (const p of pods) {
      if (p.status?.phase === 'Failed' || podState(p) === 'PreparingDelete') deletePods.push(p);
      else if (isPodActive(p)) live.push(p);
    }
    if (live.some((p) => isPodAtRevision(p, hash))) newPods++;
    if (live.length === 0) {
      // Without surge, a pod on its way out keeps the node's replacement back (preDelete holds both).
      if (shouldRun && (i.surge || pods.length === 0 || pods.every((p) => p.status?.phase === 'Failed'))) createOn.push(name);
      continue;
    }
    if (i.surge) {
      // One old pod (the oldest) and one new pod (the oldest at the update revision) may share the node.
      const newest = live.filter((p) => isPodAtRevision(p, hash));
      const old = live.filter((p) => !isPodAtRevision(p, hash));
      deletePods.push(...newest.slice(1), ...old.slice(1));
    } else {
      deletePods.push(...live.slice(1));
    }
  }
  // A pod bound to no node, or to a node that is gone, never runs: the scheduler cannot place it.
  deletePods.push(...unbound);
  for (const [node, pods] of byNode) if (!nodeNames.has(node)) deletePods.push(...pods);

  let heldBack = 0;
  const ru = ds.spec.updateStrategy?.type !== 'OnDelete' ? ds.spec.updateStrategy?.rollingUpdate : undefined;
  if (ru?.partition !== undefined && partitionedScaling(ds)) {
    const partition = Math.min(scaled(ru.partition, desired.length, false, 0), desired.length);
    if (partition > 0) {
      const max = Math.max(desired.length - newPods - partition, 0);
      heldBack += Math.max(createOn.length - max, 0);
      createOn = createOn.slice(0, max);
    }
  }
  const burst = Math.max(scaled(ds.spec.burstReplicas, desired.length, true, DEFAULT_BURST_REPLICAS), 1);
  heldBack += Math.max(createOn.length - burst, 0);
  return { desired, createOn: createOn.slice(0, burst), deletePods: deletePods.slice(0, burst), heldBack };
}

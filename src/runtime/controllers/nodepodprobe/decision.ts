/**
 * NodePodProbe (upstream `nodepodprobe-controller`, gate PodProbeMarkerGate): one NodePodProbe per Ready node (same
 * name), deleted with the node; entries of pods that are gone, finished or replaced (another uid) pruned from its
 * spec; and each probe result in its status written to the pod: the probe's podConditionType as a condition (True
 * when Succeeded, False otherwise) and the labels/annotations of its marker policy for that state, those of the
 * other state removed.
 *
 * Unlike upstream, an Unknown result (a container not probed yet) changes no label or annotation: upstream removes
 * the keys of whichever policy it saw last, which depends on the order the policies are written in.
 */
import type { NodePodProbe, PodProbe, PodProbeMarker, PodProbeStatus, ProbeMarkerPolicy } from '../../../api/kinds/podprobemarker.js';
import { splitNodeProbeName } from '../../control/pod-probe.js';
import type { KubeObject, PodCondition } from '../../core/types.js';

export type NodePodProbeObject = NodePodProbe & KubeObject;
export type PodProbeMarkerObject = PodProbeMarker & KubeObject;

/** Node labelled as a virtual kubelet: no daemon runs there, so it gets no NodePodProbe (as upstream). */
export const VIRTUAL_KUBELET_LABEL = { key: 'type', value: 'virtual-kubelet' } as const;

export interface NodeView {
  readonly name: string;
  readonly ready: boolean;
  readonly deleting: boolean;
  readonly virtual: boolean;
}

/** What the decision needs of a pod named in the NodePodProbe. */
export interface MarkedPodView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly active: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly conditions: readonly PodCondition[];
}

export interface PodMarking {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** Merge-patch maps: a value to set, null to remove. Absent when nothing changes. */
  readonly labels?: Record<string, string | null>;
  readonly annotations?: Record<string, string | null>;
  /** Conditions to set (whole conditions, merged by type). */
  readonly conditions?: PodCondition[];
}

export type NodePodProbeAction =
  | { readonly type: 'create'; readonly name: string }
  | { readonly type: 'delete'; readonly name: string }
  | { readonly type: 'prune'; readonly name: string; readonly resourceVersion?: string; readonly podProbes: PodProbe[] }
  | ({ readonly type: 'mark' } & PodMarking);

export interface NodePodProbeInput {
  readonly node: NodeView | null;
  readonly nodePodProbe: NodePodProbeObject | null;
  readonly pod: (namespace: string, name: string) => MarkedPodView | undefined;
  readonly marker: (namespace: string, name: string) => PodProbeMarkerObject | undefined;
}

/** The labels, annotations and conditions the results of one pod ask for, as changes against the pod. */
export function podMarking(pod: MarkedPodView, status: PodProbeStatus, marker: NodePodProbeInput['marker']): PodMarking | undefined {
  const labels: Record<string, string | null> = {};
  const annotations: Record<string, string | null> = {};
  const conditions = new Map<string, PodCondition>();
  for (const st of status.probeStates ?? []) {
    const names = splitNodeProbeName(st.name);
    if (!names) continue;
    const m = marker(pod.namespace, names.marker);
    if (!m || m.metadata.deletionTimestamp) continue;
    const probe = (m.spec?.probes ?? []).find((p) => p.name === names.probe);
    if (!probe) continue;
    // The first probe naming a condition type writes it (upstream's order).
    if (probe.podConditionType && !conditions.has(probe.podConditionType)) {
      conditions.set(probe.podConditionType, {
        type: probe.podConditionType,
        status: st.state === 'Succeeded' ? 'True' : 'False',
        ...(st.lastProbeTime ? { lastProbeTime: st.lastProbeTime } : {}),
        ...(st.lastTransitionTime ? { lastTransitionTime: st.lastTransitionTime } : {}),
        ...(st.message ? { message: st.message } : {}),
      });
    }
    if (st.state === 'Unknown') continue;
    const policies: readonly ProbeMarkerPolicy[] = probe.markerPolicy ?? [];
    for (const p of policies.filter((x) => x.state !== st.state)) {
      for (const k of Object.keys(p.labels ?? {})) labels[k] = null;
      for (const k of Object.keys(p.annotations ?? {})) annotations[k] = null;
    }
    for (const p of policies.filter((x) => x.state === st.state)) {
      Object.assign(labels, p.labels ?? {});
      Object.assign(annotations, p.annotations ?? {});
    }
  }
  const diff = (want: Record<string, string | null>, have: Readonly<Record<string, string>>) => {
    const out: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(want)) if (v === null ? k in have : have[k] !== v) out[k] = v;
    return Object.keys(out).length ? out : undefined;
  };
  const labelPatch = diff(labels, pod.labels);
  const annotationPatch = diff(annotations, pod.annotations);
  // As upstream: a condition is rewritten when its status or message changed.
  const conditionPatch = [...conditions.values()].filter((c) => {
    const cur = pod.conditions.find((x) => x.type === c.type);
    return !cur || cur.status !== c.status || (cur.message ?? '') !== (c.message ?? '');
  });
  if (!labelPatch && !annotationPatch && !conditionPatch.length) return undefined;
  return {
    namespace: pod.namespace,
    name: pod.name,
    uid: pod.uid,
    ...(labelPatch ? { labels: labelPatch } : {}),
    ...(annotationPatch ? { annotations: annotationPatch } : {}),
    ...(conditionPatch.length ? { conditions: conditionPatch } : {}),
  };
}

export function decideNodePodProbe(input: NodePodProbeInput): NodePodProbeAction[] {
  const { node, nodePodProbe: npp } = input;
  if (!node || node.deleting) return npp ? [{ type: 'delete', name: npp.metadata.name! }] : [];
  if (!npp) return node.ready && !node.virtual ? [{ type: 'create', name: node.name }] : [];

  const actions: NodePodProbeAction[] = [];
  const live = new Map<string, MarkedPodView>();
  const current = npp.spec?.podProbes ?? [];
  for (const e of current) {
    const pod = input.pod(e.namespace, e.name);
    if (pod && pod.active && pod.uid === e.uid) live.set(e.uid, pod);
  }
  const kept = current.filter((e) => live.has(e.uid));
  if (kept.length !== current.length)
    actions.push({
      type: 'prune',
      name: npp.metadata.name!,
      ...(npp.metadata.resourceVersion ? { resourceVersion: npp.metadata.resourceVersion } : {}),
      podProbes: kept,
    });
  for (const st of npp.status?.podProbeStatuses ?? []) {
    const pod = live.get(st.uid);
    if (!pod) continue;
    const marking = podMarking(pod, st, input.marker);
    if (marking) actions.push({ type: 'mark', ...marking });
  }
  return actions;
}

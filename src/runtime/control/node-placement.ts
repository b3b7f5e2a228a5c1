/**
 * Where a pod of a per-node workload may run (BroadcastJob, Advanced DaemonSet), pure: whether a pod spec fits a
 * node (nodeName, nodeSelector, required node affinity, NoSchedule/NoExecute taints, a cordoned node), the node a
 * pod is bound to, and the required node affinity on `metadata.name` both controllers bind their pods with (the
 * scheduler still admits the pod). Node resources are not checked: the scheduler leaves such a pod Pending.
 */
import type { Node, Pod } from '../core/types.js';

/** The node field a pod's required node affinity binds it by. */
export const NODE_NAME_FIELD = 'metadata.name';

/** The parts of a pod spec that decide which nodes it may run on. */
export interface PlacementSpec {
  readonly nodeName?: string;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly affinity?: { readonly nodeAffinity?: { readonly requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector } };
  readonly tolerations?: readonly Toleration[];
}

export interface NodeSelector {
  readonly nodeSelectorTerms?: readonly NodeSelectorTerm[];
}
export interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeSelectorRequirement[];
  readonly matchFields?: readonly NodeSelectorRequirement[];
}
export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}
export interface Toleration {
  readonly key?: string;
  readonly operator?: string;
  readonly value?: string;
  readonly effect?: string;
}
export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
}

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0]!)) return false;
      const [have, want] = [BigInt(value), BigInt(values[0]!)];
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  // An empty term selects no node (as Kubernetes reads it).
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  if (!exprs.every((r) => requirementMatches(r, labels[r.key]))) return false;
  return fields.every((r) => r.key === NODE_NAME_FIELD && requirementMatches(r, node.metadata.name));
}

function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.operator === 'Exists') return !t.key || t.key === taint.key;
  return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
}

/**
 * Why a pod with `spec` cannot run on `node`, or undefined when it fits. With `keepRunning`, whether a pod already there
 * may stay: NoSchedule taints and a cordon keep new pods away but do not evict (a DaemonSet's pods stay).
 */
export function misfit(spec: PlacementSpec, node: Node, keepRunning = false): string | undefined {
  const name = node.metadata.name;
  if (spec.nodeName && spec.nodeName !== name) return `the pod names node ${spec.nodeName}`;
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) if (labels[k] !== v) return `node label ${k} is not ${v}`;
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required && !(required.nodeSelectorTerms ?? []).some((t) => termMatches(t, node))) return 'required node affinity does not match';
  const nodeSpec = (node.spec ?? {}) as { taints?: Taint[]; unschedulable?: boolean };
  const tolerations = spec.tolerations ?? [];
  for (const taint of nodeSpec.taints ?? []) {
    if (taint.effect !== 'NoExecute' && (keepRunning || taint.effect !== 'NoSchedule')) continue;
    if (!tolerations.some((t) => tolerates(t, taint))) return `untolerated taint ${taint.key}=${taint.value ?? ''}:${taint.effect}`;
  }
  const cordon: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
  if (!keepRunning && nodeSpec.unschedulable && !tolerations.some((t) => tolerates(t, cordon))) return 'the node is cordoned';
  return undefined;
}

/** The node a pod is bound to: its nodeName, else the single name of a `metadata.name In [x]` affinity field. */
export function assignedNode(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = (pod.spec as PlacementSpec | undefined)?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
    ?.nodeSelectorTerms;
  for (const t of terms ?? [])
    for (const f of t.matchFields ?? []) if (f.key === NODE_NAME_FIELD && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  return undefined;
}

/** `affinity` with its required node affinity replaced by one term binding to `node` (the other parts kept). */
export function bindToNode(affinity: Record<string, unknown> | undefined, node: string): Record<string, unknown> {
  const nodeAffinity = (affinity?.nodeAffinity ?? {}) as Record<string, unknown>;
  return {
    ...(affinity ?? {}),
    nodeAffinity: {
      ...nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchFields: [{ key: NODE_NAME_FIELD, operator: 'In', values: [node] }] }],
      },
    },
  };
}

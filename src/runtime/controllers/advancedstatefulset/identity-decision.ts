/**
 * Advanced StatefulSet identities, pure (upstream's `stateful_set_utils.go`): reserved ordinals, the ordinal range
 * the replicas occupy, pod and claim names, which pods are replicas and which are condemned, and the pod a missing
 * ordinal gets (identity, storage, revision, lifecycle state).
 */
import type { AdvancedStatefulSet } from '../../../api/kinds/statefulset.js';
import type { LifecycleState } from '../../../api/pod-contracts.js';
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  CONDITION_KRUISE_POD_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  isEmptySelector,
  selectorMatches,
} from '../../../contracts/index.js';
import { templateOf, type Revision } from '../../control/controller-revision.js';
import { isAllHooked, isPodAtRevision, type Lifecycle } from '../../control/workload-pods.js';
import { controllerOf, ownerReference } from '../../core/meta.js';
import type { KubeObject, OwnerReference, Pod } from '../../core/types.js';

/** An Advanced StatefulSet as the informer caches it. */
export type StatefulSetObject = AdvancedStatefulSet & KubeObject;

/** Native StatefulSet labels upstream's controller puts on each pod. */
export const LABEL_STATEFULSET_POD_NAME = 'statefulset.kubernetes.io/pod-name';
export const LABEL_POD_INDEX = 'apps.kubernetes.io/pod-index';

/** The owner reference of the set's pods and revisions (upstream writes v1beta1, its storage version). */
export function statefulSetOwnerReference(set: StatefulSetObject): OwnerReference {
  return ownerReference(set, 'apps.kruise.io/v1beta1', 'StatefulSet', { controller: true, blockOwnerDeletion: true });
}

/** `reserveOrdinals` as a set: ints and `"a-b"` ranges (inclusive). Throws on a malformed entry (the webhook refuses it first). */
export function reservedOrdinals(items: ReadonlyArray<number | string> | undefined): Set<number> {
  const out = new Set<number>();
  for (const item of items ?? []) {
    if (typeof item === 'number') {
      if (!Number.isInteger(item) || item < 0) throw new Error(`reserveOrdinals: ${item} is not a non-negative integer`);
      out.add(item);
      continue;
    }
    const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(item);
    const single = /^\s*(\d+)\s*$/.exec(item);
    if (single) {
      out.add(Number(single[1]));
      continue;
    }
    if (!m) throw new Error(`reserveOrdinals: "${item}" is neither an ordinal nor a range like "3-5"`);
    const a = Number(m[1]);
    const b = Number(m[2]);
    if (a > b) throw new Error(`reserveOrdinals: range "${item}" starts after it ends`);
    for (let i = a; i <= b; i++) out.add(i);
  }
  return out;
}

/**
 * Upstream's `getStatefulSetReplicasRange`: [start, end) holds `replicas` ordinals that are not reserved. The start
 * ordinal counts only under gate StatefulSetStartOrdinal, as upstream.
 */
export function replicasRange(set: StatefulSetObject, startOrdinalGate = true): { start: number; end: number; reserved: Set<number> } {
  const reserved = reservedOrdinals(set.spec.reserveOrdinals as Array<number | string> | undefined);
  const start = startOrdinalGate ? (set.spec.ordinals?.start ?? 0) : 0;
  const replicas = set.spec.replicas ?? 1;
  let end = start;
  for (let count = 0; count < replicas; end++) if (!reserved.has(end)) count++;
  return { start, end, reserved };
}

/** `<set>-<ordinal>` → ordinal, or -1 when the name is not of that form. */
export function ordinalOf(pod: Pod, setName: string): number {
  const name = pod.metadata.name ?? '';
  if (!name.startsWith(`${setName}-`)) return -1;
  const rest = name.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

export function podName(set: StatefulSetObject, ordinal: number): string {
  return `${set.metadata.name}-${ordinal}`;
}

export function claimName(set: StatefulSetObject, template: KubeObject, ordinal: number): string {
  return `${template.metadata?.name}-${set.metadata.name}-${ordinal}`;
}

/** What claiming a set's pods does (upstream's ClaimPods): the pods it keeps, the orphans it adopts and the pods it lets go. */
export interface ClaimPlan {
  readonly owned: Pod[];
  readonly adopt: Pod[];
  readonly release: Pod[];
}

/**
 * Upstream's ClaimPods for a StatefulSet: a pod belongs to the set when the set's (non-empty) selector matches its
 * labels and its name is `<set>-<ordinal>`. An owned pod that no longer belongs is released (unless the set is being
 * deleted); an orphan that belongs is adopted (unless the set or the pod is being deleted); pods another controller
 * owns are left alone. `candidates` are the set's own pods and the orphans of its namespace.
 */
export function planClaims(set: StatefulSetObject, candidates: readonly Pod[]): ClaimPlan {
  const plan: ClaimPlan = { owned: [], adopt: [], release: [] };
  const selector = set.spec.selector ?? {};
  const deleting = !!set.metadata.deletionTimestamp;
  const seen = new Set<string>();
  for (const p of candidates) {
    if (p.metadata.namespace !== set.metadata.namespace || seen.has(p.metadata.uid ?? p.metadata.name!)) continue;
    seen.add(p.metadata.uid ?? p.metadata.name!);
    const belongs =
      !isEmptySelector(selector) && selectorMatches(selector, p.metadata.labels ?? {}) && ordinalOf(p, set.metadata.name!) >= 0;
    const ref = controllerOf(p);
    if (ref?.uid === set.metadata.uid) {
      if (belongs || deleting) plan.owned.push(p);
      else plan.release.push(p);
    } else if (!ref && belongs && !deleting && !p.metadata.deletionTimestamp) plan.adopt.push(p);
  }
  return plan;
}

/** Replicas by slot (`ordinal - start`; undefined for a missing or reserved ordinal) and the condemned pods, highest ordinal first. */
export interface Partitioned {
  readonly start: number;
  readonly end: number;
  readonly reserved: Set<number>;
  readonly replicas: Array<Pod | undefined>;
  readonly condemned: Pod[];
}

export function partitionPods(set: StatefulSetObject, pods: readonly Pod[], startOrdinalGate = true): Partitioned {
  const { start, end, reserved } = replicasRange(set, startOrdinalGate);
  const replicas = Array.from<Pod | undefined>({ length: end - start });
  const condemned: Pod[] = [];
  for (const p of pods) {
    const ord = ordinalOf(p, set.metadata.name!);
    if (ord < 0) continue;
    if (ord >= start && ord < end && !reserved.has(ord)) replicas[ord - start] = p;
    else condemned.push(p);
  }
  condemned.sort((a, b) => ordinalOf(b, set.metadata.name!) - ordinalOf(a, set.metadata.name!));
  return { start, end, reserved, replicas, condemned };
}

/**
 * Upstream's `isCurrentRevisionNeeded`: a new pod at `ordinal` gets the current revision while the partition still
 * asks for old pods below it (ordered update), or while fewer than `partition` pods are not updated (unordered).
 */
export function isCurrentRevisionNeeded(
  set: StatefulSetObject,
  updateRevision: string,
  ordinal: number,
  part: Pick<Partitioned, 'start' | 'replicas'>,
  setName: string,
): boolean {
  const us = set.spec.updateStrategy;
  if ((us?.type ?? 'RollingUpdate') !== 'RollingUpdate') return false;
  const ru = us?.rollingUpdate;
  if (!ru) return ordinal < part.start + (set.status?.currentReplicas ?? 0);
  const partition = ru.partition ?? 0;
  if (!ru.unorderedUpdate) {
    let before = 0;
    for (let i = 0; i < ordinal - part.start; i++) if (part.replicas[i]) before++;
    return before + 1 <= partition;
  }
  let notUpdated = 0;
  for (const p of part.replicas) {
    if (!p || ordinalOf(p, setName) === ordinal) continue;
    if (!isPodAtRevision(p, updateRevision)) notUpdated++;
  }
  return notUpdated < partition;
}

/** The state a new pod starts in: Normal unless a preNormal hook is not yet satisfied by the template. */
export function initialState(lifecycle: Lifecycle | undefined, pod: Pod): LifecycleState {
  return !lifecycle?.preNormal || isAllHooked(lifecycle.preNormal, pod) ? 'Normal' : 'PreparingNormal';
}

/** The pod of `ordinal` at `revision`: template, identity (name, hostname, subdomain, labels), claims as volumes. */
export function newStatefulPod(set: StatefulSetObject, ordinal: number, revision: Revision, now: string): Pod {
  const t = (templateOf(revision) ?? (set.spec.template as Record<string, unknown>)) as {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] };
    spec?: Record<string, unknown>;
  };
  const name = podName(set, ordinal);
  const spec = structuredClone(t.spec ?? {}) as NonNullable<Pod['spec']> & {
    readinessGates?: Array<{ conditionType: string }>;
    volumes?: Array<Record<string, unknown> & { name: string }>;
    hostname?: string;
    subdomain?: string;
  };
  // Without upstream's pod webhook the controller adds the gates its in-place update and lifecycle hooks use.
  const gates = spec.readinessGates ?? [];
  for (const g of [CONDITION_INPLACE_UPDATE_READY, CONDITION_KRUISE_POD_READY]) {
    if (!gates.some((x) => x.conditionType === g)) gates.push({ conditionType: g });
  }
  spec.readinessGates = gates;
  const vcts = (set.spec.volumeClaimTemplates ?? []) as KubeObject[];
  if (vcts.length) {
    const names = new Set(vcts.map((v) => v.metadata?.name));
    const volumes = (spec.volumes ?? []).filter((v) => !names.has(v.name));
    for (const v of vcts) volumes.push({ name: v.metadata!.name!, persistentVolumeClaim: { claimName: claimName(set, v, ordinal) } });
    spec.volumes = volumes;
  }
  spec.hostname = name;
  if (set.spec.serviceName) spec.subdomain = set.spec.serviceName;
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: set.metadata.namespace,
      labels: {
        ...(t.metadata?.labels ?? {}),
        [LABEL_CONTROLLER_REVISION_HASH]: revision.metadata.name!,
        [LABEL_STATEFULSET_POD_NAME]: name,
        [LABEL_POD_INDEX]: String(ordinal),
      },
      annotations: { ...(t.metadata?.annotations ?? {}), [ANNOTATION_LIFECYCLE_TIMESTAMP]: now },
      ...(t.metadata?.finalizers?.length ? { finalizers: [...t.metadata.finalizers] } : {}),
      ownerReferences: [statefulSetOwnerReference(set)],
    },
    spec,
  };
  pod.metadata.labels![LABEL_LIFECYCLE_STATE] = initialState(set.spec.lifecycle as Lifecycle | undefined, pod);
  return pod;
}

/** The claim of one volumeClaimTemplate for `ordinal`: the template with the set's selector labels, owned per the retention policy. */
export function newClaim(set: StatefulSetObject, template: KubeObject, ordinal: number, retentionGate = true): KubeObject {
  const whenDeleted = retentionGate ? (set.spec.persistentVolumeClaimRetentionPolicy?.whenDeleted ?? 'Retain') : 'Retain';
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(set, template, ordinal),
      namespace: set.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}), ...((set.spec.selector?.matchLabels as Record<string, string> | undefined) ?? {}) },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ...(whenDeleted === 'Delete' ? { ownerReferences: [statefulSetOwnerReference(set)] } : {}),
    },
    spec: structuredClone((template as { spec?: unknown }).spec ?? {}),
  } as KubeObject;
}

/**
 * What a PodUnavailableBudget counts, shared by its controller (the status counts), the pod webhook and the
 * workload controllers that update pods in place or recreate them (which pods the budget may let go): upstream
 * v1.9's availability of a pod, the budget's own records, the operations it protects and the decision to spend.
 */
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_PUB_NO_PROTECT,
  ANNOTATION_PUB_PROTECT_OPERATIONS,
  ANNOTATION_RELATED_PUB,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE,
  ENV_IS_INJECTED,
  UNAVAILABLE_POD_LABEL_PREFIX,
} from '../../contracts/index.js';
import type { Pod } from '../core/types.js';

/** The operations a budget can hold back (upstream `PubOperation`). */
export type PubOperation = 'DELETE' | 'UPDATE' | 'EVICT';

/** The status fields the webhook and the controller both write. */
export interface PubStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  unavailablePods?: Record<string, string>;
  unavailableAllowed: number;
  currentAvailable: number;
  desiredAvailable: number;
  totalReplicas: number;
}

/** The part of a PodUnavailableBudget both units read. */
export interface PubObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: {
    selector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
    targetRef?: { apiVersion?: string; kind?: string; name?: string };
    maxUnavailable?: number | string;
    minAvailable?: number | string;
  };
  status?: PubStatus;
}

/** Running, Ready and not marked with an `unavailable-pod.kruise.io/` label. */
export function isPodReady(pod: Pod): boolean {
  if (pod.metadata.deletionTimestamp || pod.status?.phase !== 'Running') return false;
  if (!pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return false;
  return !Object.keys(pod.metadata.labels ?? {}).some((k) => k.startsWith(UNAVAILABLE_POD_LABEL_PREFIX));
}

interface InPlaceRecord {
  lastContainerStatuses?: Record<string, { imageID?: string; containerID?: string }>;
  nextContainerImages?: Record<string, string>;
}

/** `repo:tag` as the kubelet reports it: the default registry and library prefixes off, `:latest` on a bare name. */
function normalImage(image: string): string {
  const last = image.slice(image.lastIndexOf('/') + 1);
  const tagged = last.includes(':') || last.includes('@') ? image : `${image}:latest`;
  return tagged.replace(/^docker\.io\/(library\/)?/, '');
}

/**
 * Whether every sidecar a SidecarSet updated in place runs its new image (upstream's
 * IsSidecarContainerUpdateCompleted): a sidecar (env `IS_INJECTED=true`) whose image ID is still the one recorded
 * before the update, while its status image differs from the spec's, is mid-update. The kubelet may keep the old
 * container running and Ready through its grace period after the spec changed, so Ready alone does not show it.
 */
export function sidecarUpdateCompleted(pod: Pod): boolean {
  const a = pod.metadata.annotations ?? {};
  const raw = a[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE];
  if (!raw) return true;
  let states: Record<string, { lastContainerStatuses?: Record<string, { imageID?: string }> } | undefined>;
  try {
    states = JSON.parse(raw) as typeof states;
  } catch {
    return false;
  }
  if (!states || typeof states !== 'object') return false;
  const last: Record<string, { imageID?: string }> = {};
  for (const set of (a[ANNOTATION_SIDECARSET_INJECTED_LIST] ?? '').split(',')) {
    Object.assign(last, states[set.trim()]?.lastContainerStatuses ?? {});
  }
  for (const c of pod.spec?.containers ?? []) {
    if (!c.env?.some((e) => e.name === ENV_IS_INJECTED && e.value === 'true')) continue;
    const s = pod.status?.containerStatuses?.find((x) => x.name === c.name);
    const before = last[c.name];
    if (!s || !before) continue;
    if (before.imageID === s.imageID && normalImage(c.image ?? '') !== normalImage(s.image ?? '')) return false;
  }
  return true;
}

/**
 * Whether the pod runs what its spec asks: no in-place update under way, of the workload's containers (an update
 * recorded in the in-place state is done once each recorded container has a new image ID or a new container ID and
 * no batch is pending) or of a SidecarSet's sidecars.
 */
export function isPodStateConsistent(pod: Pod): boolean {
  if (!sidecarUpdateCompleted(pod)) return false;
  const a = pod.metadata.annotations ?? {};
  if (a[ANNOTATION_INPLACE_UPDATE_GRACE]) return false;
  const raw = a[ANNOTATION_INPLACE_UPDATE_STATE];
  if (!raw) return true;
  let state: InPlaceRecord;
  try {
    state = JSON.parse(raw) as InPlaceRecord;
  } catch {
    return true;
  }
  if (Object.keys(state.nextContainerImages ?? {}).length > 0) return false;
  for (const [name, last] of Object.entries(state.lastContainerStatuses ?? {})) {
    const s = pod.status?.containerStatuses?.find((c) => c.name === name);
    if (!s) return false;
    const imageChanged = !!s.imageID && s.imageID !== last.imageID;
    const restarted = !!last.containerID && !!s.containerID && s.containerID !== last.containerID;
    if (!imageChanged && !restarted) return false;
  }
  return true;
}

/** Available for a budget: ready and consistent. */
export function isPodAvailable(pod: Pod): boolean {
  return isPodReady(pod) && isPodStateConsistent(pod);
}

/** Not terminated and not being deleted (upstream `IsPodActive`). */
export function isPodActive(pod: Pod): boolean {
  return !pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

/** Whether the budget protects `op`: DELETE, UPDATE and EVICT by default, else those its annotation lists. */
export function protectsOperation(pub: PubObject, op: PubOperation): boolean {
  const v = pub.metadata.annotations?.[ANNOTATION_PUB_PROTECT_OPERATIONS];
  if (!v) return true;
  return v
    .split(',')
    .map((s) => s.trim())
    .includes(op);
}

/** Upstream's bound on the records (disruptedPods + unavailablePods) one budget may hold. */
export const MAX_RECORDED_PODS = 2000;

/** Upstream's Forbidden error text for a budget. */
export function forbidden(pubName: string, why: string): string {
  return `podunavailablebudgets.policy.kruise.io "${pubName}" is forbidden: ${why}`;
}

/**
 * The budget to ask before `pod` is made unavailable, or undefined when none need be asked: the pod names none
 * (the budget's controller has not annotated it), opted out with `pub.kruise.io/no-protect`, or is not ready or
 * mid-update, so taking it down costs nothing it still counts.
 */
export function budgetNameOf(pod: Pod): string | undefined {
  const a = pod.metadata.annotations ?? {};
  const name = a[ANNOTATION_RELATED_PUB];
  if (!name || a[ANNOTATION_PUB_NO_PROTECT] === 'true') return undefined;
  if (!isPodAvailable(pod)) return undefined;
  return name;
}

/** A budget's answer: let go without spending, refuse, or spend (the status to write before letting go). */
export type Judgement =
  | { readonly allowed: true; readonly spend?: undefined }
  | { readonly allowed: false; readonly message: string }
  | { readonly allowed: true; readonly spend: PubStatus };

/**
 * Whether `pub` lets `podName` go by `operation` at `now` (RFC 3339), and what it spends (upstream's
 * checkAndDecrement): a budget that wants none available, does not protect the operation or already recorded the
 * pod lets it go for free; otherwise one unit of `unavailableAllowed` is spent and the pod recorded, an update in
 * `unavailablePods` and a deletion or eviction in `disruptedPods`, so the next asker sees the unit gone before the
 * pod's own state shows it.
 */
export function judge(pub: PubObject, podName: string, operation: PubOperation, now: string): Judgement {
  const st = pub.status;
  if (!st || st.desiredAvailable === 0) return { allowed: true };
  if (!protectsOperation(pub, operation)) return { allowed: true };
  if (st.disruptedPods?.[podName] !== undefined || st.unavailablePods?.[podName] !== undefined) return { allowed: true };
  const name = pub.metadata.name ?? '';
  if (st.unavailableAllowed <= 0) return { allowed: false, message: forbidden(name, 'pub unavailable allowed is negative') };
  if (Object.keys(st.disruptedPods ?? {}).length + Object.keys(st.unavailablePods ?? {}).length > MAX_RECORDED_PODS) {
    return {
      allowed: false,
      message: forbidden(name, 'DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller'),
    };
  }
  const spend: PubStatus = {
    ...st,
    unavailableAllowed: st.unavailableAllowed - 1,
    disruptedPods: { ...(st.disruptedPods ?? {}) },
    unavailablePods: { ...(st.unavailablePods ?? {}) },
  };
  if (operation === 'UPDATE') spend.unavailablePods![podName] = now;
  else spend.disruptedPods![podName] = now;
  return { allowed: true, spend };
}

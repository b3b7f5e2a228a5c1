/**
 * What a PodUnavailableBudget counts, shared by its controller (the status counts) and the pod webhook (which pods
 * it may let go): upstream v1.9's availability of a pod, the budget's own records and the operations it protects.
 */
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_PUB_PROTECT_OPERATIONS,
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

/**
 * Whether the pod runs what its spec asks: no in-place update under way. An update recorded in the in-place state
 * is done once each recorded container has a new image ID or a new container ID and no batch is pending.
 */
export function isPodStateConsistent(pod: Pod): boolean {
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

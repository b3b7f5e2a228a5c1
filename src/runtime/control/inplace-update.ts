/**
 * In-place update of the workloads that update pods in place (CloneSet, Advanced StatefulSet, Advanced
 * DaemonSet), pure (upstream's in-place update utilities): what may change in place between two templates, the
 * state recorded on a pod, the batches by launch priority, and when an update has completed. One hole of
 * upstream's closed: completion also accepts a new container ID, so a re-tag to the same digest cannot hang.
 */
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_RUNTIME_CONTAINERS_META,
  CONDITION_INPLACE_UPDATE_READY,
  ENV_CONTAINER_BARRIER,
} from '../../contracts/index.js';
import { envFromMetadataConsistent, parseRuntimeContainerMeta, readsMetadata, type MetadataField } from './env-from-metadata.js';
import type { Container, Pod } from '../core/types.js';
import { sortedJson } from './controller-revision.js';
import { condition, hasReadinessGate } from './workload-pods.js';

/** `apps.kruise.io/inplace-update-state`, upstream's fields plus the container IDs we compare. */
export interface InPlaceUpdateState {
  revision: string;
  updateTimestamp: string;
  lastContainerStatuses?: Record<string, { imageID?: string; containerID?: string }>;
  updateImages?: boolean;
  /** The patch changed a label/annotation a container reads into its env: the node daemon must restart it. */
  updateEnvFromMetadata?: boolean;
  /** Upstream's record of which containers each patch changed, one entry per batch. */
  containerBatchesRecord?: Array<{ timestamp: string; containers: string[] }>;
  /** Held for a later batch (containers of lower launch priority): their images and the metadata their env reads. */
  nextContainerImages?: Record<string, string>;
  nextContainerRefMetadata?: Record<string, RefMetadata>;
  /** The next batch waits until these containers are ready. */
  preCheckBeforeNext?: { containersRequiredReady: string[] };
}

/** The labels/annotations one container reads into its env, as changed by an update. */
export interface RefMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** `apps.kruise.io/inplace-update-grace`: the patch held back for the grace period. */
export interface InPlaceUpdateGrace {
  revision: string;
  containerImages: Record<string, string>;
  graceSeconds: number;
}

export function parseJson<T>(raw: string | undefined): T | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

/** The state recorded when images are patched: the pre-update image and container IDs of changed containers. */
export function inPlaceState(
  pod: Pod,
  revision: string,
  images: Readonly<Record<string, string>>,
  now: string,
  updateEnvFromMetadata = false,
): InPlaceUpdateState {
  const last: Record<string, { imageID?: string; containerID?: string }> = {};
  for (const name of Object.keys(images)) {
    const s = pod.status?.containerStatuses?.find((c) => c.name === name);
    last[name] = { imageID: (s?.imageID as string | undefined) ?? '', ...(s?.containerID ? { containerID: s.containerID } : {}) };
  }
  const names = Object.keys(images);
  return {
    revision,
    updateTimestamp: now,
    lastContainerStatuses: last,
    ...(updateEnvFromMetadata ? { updateEnvFromMetadata: true } : {}),
    ...(names.length ? { updateImages: true, containerBatchesRecord: [{ timestamp: now, containers: names }] } : {}),
  };
}

function withLatest(image: string): string {
  const slash = image.lastIndexOf('/');
  return image.indexOf('@') < 0 && image.lastIndexOf(':') <= slash ? `${image}:latest` : image;
}

/**
 * Completion of an in-place update. Upstream's rule: every recorded container is in status and its
 * imageID changed or its status image equals the spec image. A re-tag to the same digest keeps the
 * imageID and may keep the old tag in status, so that rule can wait for ever; a new container ID for
 * the recorded container (the kubelet recreated it after our patch) completes it too.
 */
export function inPlaceCompleted(pod: Pod): boolean {
  if (pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_GRACE]) return false;
  const state = parseJson<InPlaceUpdateState>(pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE]);
  if (!state) return true;
  if (hasNextBatch(state)) return false;
  return batchUpdated(pod, state);
}

export function hasNextBatch(state: InPlaceUpdateState): boolean {
  return Object.keys(state.nextContainerImages ?? {}).length > 0 || Object.keys(state.nextContainerRefMetadata ?? {}).length > 0;
}

/**
 * The next batch is due: the containers patched so far run their update, and each container the state
 * names for the pre-check is ready (upstream's Refresh, which checks the containers and not the pending batch).
 */
export function nextBatchDue(pod: Pod): InPlaceUpdateState | undefined {
  if (pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_GRACE]) return undefined;
  const state = parseJson<InPlaceUpdateState>(pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE]);
  if (!state || !hasNextBatch(state) || !batchUpdated(pod, state)) return undefined;
  for (const name of state.preCheckBeforeNext?.containersRequiredReady ?? []) {
    if (!pod.status?.containerStatuses?.find((c) => c.name === name)?.ready) return undefined;
  }
  return state;
}

/** Whether the containers patched so far run their update (images and env from metadata). */
function batchUpdated(pod: Pod, state: InPlaceUpdateState): boolean {
  // Env from metadata: done once the daemon reports every container running with the env the pod now asks for.
  if (
    state.updateEnvFromMetadata &&
    !envFromMetadataConsistent(pod, parseRuntimeContainerMeta(pod.metadata.annotations?.[ANNOTATION_RUNTIME_CONTAINERS_META]))
  ) {
    return false;
  }
  for (const [name, last] of Object.entries(state.lastContainerStatuses ?? {})) {
    const s = pod.status?.containerStatuses?.find((c) => c.name === name);
    if (!s) return false;
    const spec = pod.spec?.containers.find((c) => c.name === name);
    const imageChanged = !!s.imageID && s.imageID !== last.imageID;
    const restarted = !!last.containerID && !!s.containerID && s.containerID !== last.containerID;
    const sameImage = !!spec?.image && !!s.image && withLatest(spec.image) === withLatest(s.image);
    if (!imageChanged && !restarted && !(sameImage && !last.containerID)) return false;
  }
  return true;
}

/** A container's launch priority, from the barrier env the pod webhook gave it (`p_<priority>`); none without it. */
export function launchPriority(c: Pick<Container, 'env'>): number | undefined {
  const e = c.env?.find((x) => x.name === ENV_CONTAINER_BARRIER);
  if (!e) return undefined;
  const key = e.valueFrom?.configMapKeyRef?.key ?? '';
  const n = Number.parseInt(key.slice(2), 10);
  return Number.isFinite(n) ? n : 0;
}

/** Which labels/annotations each container reads into its env among the added/changed keys of an update. */
export function refMetadataOf(
  containers: readonly Container[],
  labels: Readonly<Record<string, string | null>>,
  annotations: Readonly<Record<string, string | null>>,
): Record<string, RefMetadata> {
  const out: Record<string, RefMetadata> = {};
  for (const c of containers) {
    const m: RefMetadata = {};
    for (const [k, v] of Object.entries(labels)) if (v !== null && readsMetadata(c, 'labels', k)) (m.labels ??= {})[k] = v;
    for (const [k, v] of Object.entries(annotations)) if (v !== null && readsMetadata(c, 'annotations', k)) (m.annotations ??= {})[k] = v;
    if (m.labels || m.annotations) out[c.name] = m;
  }
  return out;
}

/** One in-place patch: what changes now and what waits for the next batch. */
export interface InPlaceBatch {
  /** The containers this patch updates, sorted. */
  readonly containers: string[];
  readonly images: Record<string, string>;
  /** The metadata the batch's containers read (merged into the pod's labels/annotations now). */
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly nextImages: Record<string, string>;
  readonly nextRefMetadata: Record<string, RefMetadata>;
}

/**
 * Upstream's batches by launch priority: a patch updates every changed container without a priority and the
 * changed containers of the highest priority, plus (transitively) those reading a label/annotation one of them
 * reads; the rest wait for the next batch, which starts once this batch's containers are ready.
 */
export function planInPlaceBatch(
  containers: readonly Container[],
  images: Readonly<Record<string, string>>,
  refMetadata: Readonly<Record<string, RefMetadata>>,
): InPlaceBatch {
  const batch = new Set<string>();
  let highest: number | undefined;
  let top: string[] = [];
  for (const c of containers) {
    if (!(c.name in images) && !(c.name in refMetadata)) continue;
    const p = launchPriority(c);
    if (p === undefined) batch.add(c.name);
    else if (highest === undefined || p > highest) {
      highest = p;
      top = [c.name];
    } else if (p === highest) top.push(c.name);
  }
  for (const n of top) batch.add(n);
  // A key shared with a container of the batch changes now, so every container reading it restarts now too.
  for (let grew = true; grew;) {
    grew = false;
    const keys = { labels: new Set<string>(), annotations: new Set<string>() };
    for (const n of batch) {
      for (const k of Object.keys(refMetadata[n]?.labels ?? {})) keys.labels.add(k);
      for (const k of Object.keys(refMetadata[n]?.annotations ?? {})) keys.annotations.add(k);
    }
    for (const [n, m] of Object.entries(refMetadata)) {
      if (batch.has(n)) continue;
      if (
        Object.keys(m.labels ?? {}).some((k) => keys.labels.has(k)) ||
        Object.keys(m.annotations ?? {}).some((k) => keys.annotations.has(k))
      ) {
        batch.add(n);
        grew = true;
      }
    }
  }
  const out: InPlaceBatch = { containers: [...batch].sort(), images: {}, labels: {}, annotations: {}, nextImages: {}, nextRefMetadata: {} };
  for (const [n, image] of Object.entries(images)) (batch.has(n) ? out.images : out.nextImages)[n] = image;
  for (const [n, m] of Object.entries(refMetadata)) {
    if (!batch.has(n)) out.nextRefMetadata[n] = m;
    else {
      Object.assign(out.labels, m.labels ?? {});
      Object.assign(out.annotations, m.annotations ?? {});
    }
  }
  return out;
}

/**
 * The state after a batch's patch: the batch's pre-update image and container IDs added to those recorded,
 * the batch appended to the record, and what is left for the next batch.
 */
export function stateAfterBatch(
  pod: Pod,
  prev: InPlaceUpdateState | undefined,
  revision: string,
  batch: InPlaceBatch,
  now: string,
  updateEnvFromMetadata: boolean,
): InPlaceUpdateState {
  const first = inPlaceState(pod, revision, batch.images, now, updateEnvFromMetadata);
  const hasNext = Object.keys(batch.nextImages).length > 0 || Object.keys(batch.nextRefMetadata).length > 0;
  const images = Object.keys(batch.images).length > 0 || !!prev?.updateImages;
  return {
    revision,
    updateTimestamp: prev?.updateTimestamp ?? now,
    lastContainerStatuses: { ...prev?.lastContainerStatuses, ...first.lastContainerStatuses },
    ...(updateEnvFromMetadata || prev?.updateEnvFromMetadata ? { updateEnvFromMetadata: true } : {}),
    ...(images ? { updateImages: true } : {}),
    containerBatchesRecord: [...(prev?.containerBatchesRecord ?? []), { timestamp: now, containers: batch.containers }],
    ...(hasNext
      ? {
          nextContainerImages: batch.nextImages,
          nextContainerRefMetadata: batch.nextRefMetadata,
          preCheckBeforeNext: { containersRequiredReady: batch.containers },
        }
      : {}),
  };
}

/** InPlaceUpdateReady should be set True: the pod has the gate, no update is pending, it is not True yet. */
export function shouldMarkInPlaceReady(pod: Pod): boolean {
  if (!hasReadinessGate(pod, CONDITION_INPLACE_UPDATE_READY)) return false;
  if (condition(pod, CONDITION_INPLACE_UPDATE_READY)?.status === 'True') return false;
  return inPlaceCompleted(pod);
}

/** What an in-place update changes: container images by name, and a metadata patch. */
export interface InPlaceSpec {
  readonly containerImages: Readonly<Record<string, string>>;
  /** Labels/annotations to set (string) or remove (null). */
  readonly labels: Readonly<Record<string, string | null>>;
  readonly annotations: Readonly<Record<string, string | null>>;
  /** A label/annotation a container of the new template reads into its env is added or changed. */
  readonly updateEnvFromMetadata: boolean;
}

interface TemplateLike {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  spec?: { containers?: Array<{ name: string; image?: string; [k: string]: unknown }>; [k: string]: unknown };
}

function mapDiff(from: Record<string, string> = {}, to: Record<string, string> = {}): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(to)) if (from[k] !== v) out[k] = v;
  for (const k of Object.keys(from)) if (!(k in to)) out[k] = null;
  return out;
}

/**
 * Upstream's rule: under the pod spec only `containers[i].image` may change (same containers, same
 * order); metadata labels and annotations may change freely; anything else means no in-place update.
 * Volume claim templates are not part of the pod template: whether their change forbids it is the workload's rule.
 */
export function inPlaceSpec(oldTemplate: unknown, newTemplate: unknown, envFromMetadata = true): InPlaceSpec | undefined {
  const a = (oldTemplate ?? {}) as TemplateLike;
  const b = (newTemplate ?? {}) as TemplateLike;
  const ac = a.spec?.containers ?? [];
  const bc = b.spec?.containers ?? [];
  if (ac.length !== bc.length) return undefined;
  const images: Record<string, string> = {};
  for (let i = 0; i < ac.length; i++) {
    const x = ac[i]!;
    const y = bc[i]!;
    if (x.name !== y.name) return undefined;
    if (x.image !== y.image) images[y.name] = y.image ?? '';
  }
  const stripImages = (t: TemplateLike) => ({
    ...t.spec,
    containers: (t.spec?.containers ?? []).map((c) => ({ ...c, image: undefined })),
  });
  if (sortedJson(stripImages(a)) !== sortedJson(stripImages(b))) return undefined;
  // Other metadata fields (name, finalizers…) are not carried to pods by an in-place update either way.
  const labels = mapDiff(a.metadata?.labels, b.metadata?.labels);
  const annotations = mapDiff(a.metadata?.annotations, b.metadata?.annotations);
  // Gate InPlaceUpdateEnvFromMetadata: only an added or changed key counts (a removed one leaves the env as it was).
  const reads = (field: MetadataField, diff: Record<string, string | null>) =>
    Object.entries(diff).some(([k, v]) => v !== null && bc.some((c) => readsMetadata(c as Container, field, k)));
  return {
    containerImages: images,
    labels,
    annotations,
    updateEnvFromMetadata: envFromMetadata && (reads('labels', labels) || reads('annotations', annotations)),
  };
}

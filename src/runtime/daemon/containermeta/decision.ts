/**
 * The containermeta decision, pure (upstream kruise-daemon's containermeta controller): from a pod, what the
 * CRI runtime says of its containers and the record the pod carries, the new `runtime-containers-meta` record,
 * the containers whose env must be read, and the containers to restart because the labels/annotations their
 * env reads changed during an in-place update.
 */
import { ANNOTATION_SIDECARSET_INJECTED_LIST, CONDITION_INPLACE_UPDATE_READY, KRUISE_GROUP } from '../../../contracts/index.js';
import {
  envMetadataRefs,
  expectedEnvHash,
  type RuntimeContainerMeta,
  type RuntimeContainerMetaSet,
} from '../../control/env-from-metadata.js';
import type { Pod } from '../../core/types.js';

/** What the runtime says of one of the pod's containers (by the ID in pod status). */
export interface ObservedContainer {
  readonly name: string;
  /** `<scheme>://<id>` as pod status has it. */
  readonly containerID: string;
  readonly running: boolean;
  /** The kubelet's container hash (its container annotation), 0 when absent. */
  readonly plainHash: number;
  readonly restartCount: number;
  /** The hash of the env the container has now, when read this round. */
  readonly currentEnvHash?: number;
}

export interface MetaDecision {
  /** The record the pod should carry (undefined: write nothing). */
  readonly record?: RuntimeContainerMetaSet;
  /** Running containers whose env must be read (their hash is not known yet). */
  readonly readEnv: readonly string[];
  /** Container IDs (`<scheme>://<id>`) to stop so the kubelet starts them again with the new env. */
  readonly restart: readonly string[];
  /** A container is due a restart once the metadata it reads has settled: look again after this long. */
  readonly waitMs?: number;
}

/**
 * How long the metadata a container reads into its env must have been the pod's before the daemon stops the
 * container for it. The kubelet learns of the change through its own watch, which can lag the daemon's under load;
 * a container it starts again before then gets the old values and has to be stopped a second time. Upstream's
 * daemon gives the kubelet the same margin (its restart queue acts 3 s after the decision).
 */
export const METADATA_SETTLE_MS = 3_000;

/**
 * Per container name, how long the daemon has seen the pod's current values of the labels/annotations it reads
 * (absent: as long as the daemon has known the pod, i.e. settled).
 */
export type MetadataAges = ReadonlyMap<string, number>;

/**
 * Whether the daemon looks after this pod: one a Kruise workload owns (or a SidecarSet injected into, as upstream)
 * with a container that reads a label or annotation into its env. Other pods get no record: nothing waits for it.
 */
export function watchesPod(pod: Pod): boolean {
  const kruiseOwned = (pod.metadata.ownerReferences ?? []).some((r) => r.apiVersion.startsWith(`${KRUISE_GROUP}/`));
  const injected = !!pod.metadata.annotations?.[ANNOTATION_SIDECARSET_INJECTED_LIST];
  if (!kruiseOwned && !injected) return false;
  return (pod.spec?.containers ?? []).some((c) => envMetadataRefs(c).length > 0);
}

/** What the daemon has seen of a pod's env metadata: per container reading some, its expected env hash and since when. */
export type MetadataSeen = ReadonlyMap<string, { readonly hash: number; readonly sinceMs: number }>;

/** `seen` brought up to the pod's current labels/annotations at `nowMs`: a container whose values changed starts again at `nowMs`. */
export function noteMetadata(seen: MetadataSeen | undefined, pod: Pod, nowMs: number): MetadataSeen {
  const next = new Map<string, { hash: number; sinceMs: number }>();
  for (const c of pod.spec?.containers ?? []) {
    if (envMetadataRefs(c).length === 0) continue;
    const hash = expectedEnvHash(c, pod.metadata);
    const prev = seen?.get(c.name);
    next.set(c.name, prev?.hash === hash ? prev : { hash, sinceMs: nowMs });
  }
  return next;
}

/** The ages {@link decideContainerMeta} takes, from what was seen. */
export function metadataAges(seen: MetadataSeen | undefined, nowMs: number): MetadataAges {
  return new Map([...(seen ?? new Map<string, { sinceMs: number }>())].map(([name, s]) => [name, nowMs - s.sinceMs]));
}

export function decideContainerMeta(
  pod: Pod,
  observed: readonly ObservedContainer[],
  old: RuntimeContainerMetaSet | undefined,
  ages: MetadataAges = new Map(),
): MetaDecision {
  const containers: RuntimeContainerMeta[] = [];
  const readEnv: string[] = [];
  const restart: string[] = [];
  let waitMs: number | undefined;
  const updating = (pod.status?.conditions ?? []).some((c) => c.type === CONDITION_INPLACE_UPDATE_READY && c.status === 'False');
  for (const o of observed) {
    const spec = pod.spec?.containers.find((c) => c.name === o.name);
    if (!spec) continue;
    const kept = old?.containers.find((m) => m.containerID === o.containerID);
    const meta: RuntimeContainerMeta = kept
      ? { ...kept, hashes: { ...kept.hashes } }
      : { name: o.name, containerID: o.containerID, restartCount: o.restartCount, hashes: { plainHash: o.plainHash } };
    // The env a container started with is read once per container ID; a restart gives a new ID.
    if (!meta.hashes.extractedEnvFromMetadataHash && o.running) {
      if (o.currentEnvHash === undefined) readEnv.push(o.name);
      else meta.hashes.extractedEnvFromMetadataHash = o.currentEnvHash;
    }
    // Restart only while an in-place update is under way (InPlaceUpdateReady False), as upstream: a user editing a
    // label by hand restarts nothing.
    const have = meta.hashes.extractedEnvFromMetadataHash ?? 0;
    if (updating && o.running && have > 0 && have !== expectedEnvHash(spec, pod.metadata)) {
      const left = METADATA_SETTLE_MS - (ages.get(o.name) ?? METADATA_SETTLE_MS);
      if (left <= 0) restart.push(o.containerID);
      else waitMs = Math.min(waitMs ?? left, left);
    }
    containers.push(meta);
  }
  const record = { containers };
  const same = old !== undefined && JSON.stringify(old) === JSON.stringify(record);
  return { ...(same || readEnv.length ? {} : { record }), readEnv, restart, ...(waitMs !== undefined ? { waitMs } : {}) };
}

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
}

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

export function decideContainerMeta(
  pod: Pod,
  observed: readonly ObservedContainer[],
  old: RuntimeContainerMetaSet | undefined,
): MetaDecision {
  const containers: RuntimeContainerMeta[] = [];
  const readEnv: string[] = [];
  const restart: string[] = [];
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
    if (updating && o.running && have > 0 && have !== expectedEnvHash(spec, pod.metadata)) restart.push(o.containerID);
    containers.push(meta);
  }
  const record = { containers };
  const same = old !== undefined && JSON.stringify(old) === JSON.stringify(record);
  return { ...(same || readEnv.length ? {} : { record }), readEnv, restart };
}

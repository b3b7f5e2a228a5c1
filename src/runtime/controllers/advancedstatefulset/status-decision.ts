/**
 * Advanced StatefulSet status, pure (upstream's `computeReplicaStatus`, `completeRollingUpdate`, `updatePVCStatus`
 * and `inconsistentStatus`): the counts over the replicas and the condemned pods, the current revision once every
 * pod is updated and ready, the claim counts per template, and whether the stored status differs.
 */
import type { StatefulSetStatus } from '../../../api/kinds/statefulset.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../../contracts/index.js';
import { claimStanding, type ClaimLike } from '../../control/volume-claim-resize.js';
import type { Pod } from '../../core/types.js';
import { isRunningAndAvailable, isRunningAndReady, isTerminating } from './scale-decision.js';

export interface StatusInput {
  readonly pods: readonly Pod[];
  readonly generation?: number;
  readonly currentRevision: string;
  readonly updateRevision: string;
  readonly collisionCount: number;
  readonly labelSelector: string;
  readonly minReadySeconds: number;
  readonly rollingUpdate: boolean;
  readonly conditions?: StatefulSetStatus['conditions'];
  /** Per claim template, how many pods' claims are compatible with it and grown (empty without templates). */
  readonly volumeClaims?: StatefulSetStatus['volumeClaims'];
  readonly nowMs: number;
}

/** The status a round writes (counts over every pod of the set, by the revision label as upstream compares it). */
export function computeStatus(i: StatusInput): StatefulSetStatus {
  const s = {
    observedGeneration: i.generation,
    replicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    currentReplicas: 0,
    updatedReplicas: 0,
    updatedReadyReplicas: 0,
    updatedAvailableReplicas: 0,
    currentRevision: i.currentRevision,
    updateRevision: i.updateRevision,
    collisionCount: i.collisionCount,
    labelSelector: i.labelSelector,
    ...(i.conditions?.length ? { conditions: i.conditions } : {}),
    ...(i.volumeClaims?.length ? { volumeClaims: i.volumeClaims } : {}),
  } satisfies StatefulSetStatus;
  for (const p of i.pods) {
    const rev = p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH];
    if (p.status?.phase) s.replicas++;
    if (isRunningAndReady(p)) {
      s.readyReplicas++;
      const available = isRunningAndAvailable(p, i.minReadySeconds, i.nowMs);
      if (rev === i.updateRevision) {
        s.updatedReadyReplicas++;
        if (available) s.updatedAvailableReplicas++;
      }
      if (available) s.availableReplicas++;
    }
    if (p.status?.phase && !isTerminating(p)) {
      if (rev === i.currentRevision) s.currentReplicas++;
      if (rev === i.updateRevision) s.updatedReplicas++;
    }
  }
  // Upstream's completeRollingUpdate: every pod updated and ready makes the update revision current.
  if (i.rollingUpdate && s.updatedReplicas === s.replicas && s.readyReplicas === s.replicas) {
    s.currentReplicas = s.updatedReplicas;
    s.currentRevision = s.updateRevision;
  }
  return s;
}

const COMPARED = [
  'observedGeneration',
  'replicas',
  'readyReplicas',
  'availableReplicas',
  'currentReplicas',
  'updatedReplicas',
  'updatedReadyReplicas',
  'updatedAvailableReplicas',
  'currentRevision',
  'updateRevision',
  'collisionCount',
  'labelSelector',
] as const;

/** Whether the stored status differs from the computed one in any field the controller writes. */
export function statusChanged(stored: Partial<StatefulSetStatus> | undefined, next: StatefulSetStatus): boolean {
  if (COMPARED.some((k) => (stored?.[k] ?? undefined) !== (next[k] ?? undefined))) return true;
  if (JSON.stringify(stored?.volumeClaims ?? []) !== JSON.stringify(next.volumeClaims ?? [])) return true;
  return JSON.stringify(stored?.conditions ?? []) !== JSON.stringify(next.conditions ?? []);
}

/**
 * Upstream's `updatePVCStatus`: per claim template, the pods (replicas and condemned) whose claim is compatible
 * with it (class, access modes, at least its size) and of those the ones grown to what they ask. A claim missing
 * or being deleted is not counted.
 */
export function volumeClaimCounts(
  templates: readonly ClaimLike[],
  pods: readonly Pod[],
  claimOf: (template: ClaimLike, pod: Pod) => ClaimLike | undefined,
): NonNullable<StatefulSetStatus['volumeClaims']> {
  return templates.map((t) => {
    let compatibleReplicas = 0;
    let compatibleReadyReplicas = 0;
    for (const p of pods) {
      const claim = claimOf(t, p);
      if (!claim || claim.metadata?.deletionTimestamp) continue;
      const { compatible, ready } = claimStanding(claim, t);
      if (!compatible) continue;
      compatibleReplicas++;
      if (ready) compatibleReadyReplicas++;
    }
    return { volumeClaimName: t.metadata?.name ?? '', compatibleReplicas, compatibleReadyReplicas };
  });
}

/**
 * CloneSet status, pure (upstream's `cloneset_status.go`): the replica counts, the FailedScale/FailedUpdate
 * conditions, when the current revision moves, and the Progressing condition of `progressDeadlineSeconds`.
 */
import { rfc3339 } from '../../core/meta.js';
import type { Pod } from '../../core/types.js';
import { isPodAtRevision, isPodAvailable, isPodUpdateReady } from '../../control/workload-pods.js';
import { partitionReplicas } from './scale-decision.js';

// ---------------------------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------------------------

export interface StatusCounts {
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  updatedReplicas: number;
  updatedReadyReplicas: number;
  updatedAvailableReplicas: number;
  expectedUpdatedReplicas: number;
}

/** Counts over the active, claimed pods. readyReplicas ignores lifecycle; availableReplicas needs Normal. */
export function statusCounts(
  pods: readonly Pod[],
  updateRevision: string,
  replicas: number,
  partition: number | string | undefined,
  minReadySeconds: number,
  nowMs: number,
): StatusCounts {
  let ready = 0,
    available = 0,
    updated = 0,
    updatedReady = 0,
    updatedAvailable = 0;
  for (const p of pods) {
    const r = isPodUpdateReady(p, 0, nowMs);
    const a = isPodAvailable(p, minReadySeconds, nowMs);
    const u = isPodAtRevision(p, updateRevision);
    if (r) ready++;
    if (a) available++;
    if (u) updated++;
    if (u && r) updatedReady++;
    if (u && a) updatedAvailable++;
  }
  return {
    replicas: pods.length,
    readyReplicas: ready,
    availableReplicas: available,
    updatedReplicas: updated,
    updatedReadyReplicas: updatedReady,
    updatedAvailableReplicas: updatedAvailable,
    expectedUpdatedReplicas: replicas - partitionReplicas(partition, replicas),
  };
}

export interface CloneSetConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
}

/**
 * FailedScale/FailedUpdate after a sync: set (True, the error) when the step failed, removed once it
 * succeeded (upstream never clears them).
 */
export function syncConditions(
  existing: readonly CloneSetConditionLike[],
  failures: { scale?: string; update?: string },
  now: string,
): CloneSetConditionLike[] {
  const out = existing.filter((c) => c.type !== 'FailedScale' && c.type !== 'FailedUpdate');
  const put = (type: string, message: string | undefined) => {
    if (message === undefined) return;
    const old = existing.find((c) => c.type === type);
    out.push({
      type,
      status: 'True',
      message,
      lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : now,
    });
  };
  put('FailedScale', failures.scale);
  put('FailedUpdate', failures.update);
  return out;
}

/** currentRevision becomes the update revision once every pod is updated and the count is right. */
export function nextCurrentRevision(current: string | undefined, update: string, counts: StatusCounts, specReplicas: number): string {
  if (!current) return update;
  if (counts.updatedReplicas === counts.replicas && counts.replicas === specReplicas) return update;
  return current;
}

// ---------------------------------------------------------------------------------------------
// The Progressing condition (spec.progressDeadlineSeconds)
// ---------------------------------------------------------------------------------------------

/** Condition type and reasons, in upstream's spelling (users and upstream's e2e match on them). */
export const CONDITION_PROGRESSING = 'Progressing';
export const PROGRESS_DEADLINE_EXCEEDED = 'ProgressDeadlineExceeded';
export const PROGRESS_PAUSED = 'CloneSetPaused';
export const PROGRESS_UPDATED = 'CloneSetUpdated';
export const PROGRESS_PARTITION_AVAILABLE = 'ProgressPartitionAvailable';
export const PROGRESS_AVAILABLE = 'CloneSetAvailable';

/** A deadline of MaxInt32 means "no deadline", as for Deployments. */
const NO_DEADLINE = 2147483647;

export interface ProgressInput {
  progressDeadlineSeconds: number | undefined;
  /** spec.replicas with its default (1). */
  specReplicas: number;
  paused: boolean;
  /** The status this round computed, including the next currentRevision. */
  status: Pick<StatusCounts, 'replicas' | 'updatedReplicas' | 'updatedAvailableReplicas' | 'expectedUpdatedReplicas'> & {
    currentRevision: string;
    updateRevision: string;
  };
  /** The conditions carried over from the stored status (the Progressing one is the clock of the deadline). */
  conditions: readonly CloneSetConditionLike[];
}

export interface ProgressResult {
  conditions: CloneSetConditionLike[];
  /** When the deadline of a progressing rollout falls due, if it can. */
  requeueAfterMs?: number;
}

/**
 * Upstream's calculateProgressingStatus: the first of available, paused, partition available, deadline
 * exceeded, else progressing. A condition with the same status and reason is kept as it is (times included),
 * so the deadline runs from when the rollout was first seen progressing; note upstream also measures it from
 * an older Available/Paused condition's lastUpdateTime, so a rollout that starts long after the last one
 * settled is reported as exceeded at once. Without a deadline (unset or MaxInt32) the condition is removed.
 */
export function progressingCondition(input: ProgressInput, nowMs: number): ProgressResult {
  const { progressDeadlineSeconds: pds, specReplicas: want, status: s } = input;
  const existing = input.conditions.find((c) => c.type === CONDITION_PROGRESSING);
  if (pds === undefined || pds === null || pds === NO_DEADLINE) {
    return { conditions: input.conditions.filter((c) => c.type !== CONDITION_PROGRESSING) };
  }
  const set = (status: 'True' | 'False', reason: string, message: string): CloneSetConditionLike[] => {
    if (existing && existing.status === status && existing.reason === reason) return [...input.conditions];
    const now = rfc3339(nowMs);
    const next: CloneSetConditionLike = {
      type: CONDITION_PROGRESSING,
      status,
      reason,
      message,
      lastUpdateTime: now,
      lastTransitionTime: existing?.status === status && existing.lastTransitionTime ? existing.lastTransitionTime : now,
    };
    // Replaced in place: a moving position would read as a status change in the next round's comparison.
    return existing ? input.conditions.map((c) => (c === existing ? next : c)) : [...input.conditions, next];
  };

  const available =
    s.currentRevision === s.updateRevision && s.replicas === want && s.updatedReplicas === want && s.updatedAvailableReplicas === want;
  if (available) return { conditions: set('True', PROGRESS_AVAILABLE, 'CloneSet is available') };
  if (input.paused) return { conditions: set('True', PROGRESS_PAUSED, 'CloneSet is paused') };
  // expectedUpdatedReplicas below spec.replicas means a partition holds pods back.
  if (s.expectedUpdatedReplicas < want && s.expectedUpdatedReplicas <= s.updatedAvailableReplicas) {
    return { conditions: set('True', PROGRESS_PARTITION_AVAILABLE, 'CloneSet has been paused due to partition ready') };
  }
  const since = existing?.lastUpdateTime ? Date.parse(existing.lastUpdateTime) : NaN;
  if (existing && (existing.reason === PROGRESS_DEADLINE_EXCEEDED || since + pds * 1000 < nowMs)) {
    return { conditions: set('False', PROGRESS_DEADLINE_EXCEEDED, `CloneSet revision ${s.updateRevision} has timed out progressing`) };
  }
  const conditions = set('True', PROGRESS_UPDATED, 'CloneSet is progressing');
  const cond = conditions.find((c) => c.type === CONDITION_PROGRESSING)!;
  const left = Date.parse(cond.lastUpdateTime ?? '') + pds * 1000 - nowMs;
  if (Number.isNaN(left)) return { conditions };
  // Past one second, one more avoids waking a hair before the deadline (the times are whole seconds).
  return { conditions, requeueAfterMs: left < 1000 ? Math.max(left, 1) : left + 1000 };
}

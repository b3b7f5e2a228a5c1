/**
 * BroadcastJob: the pure decision (upstream's `broadcastjob-controller` semantics). Given a job, the pods it controls
 * and the cached nodes, it says which nodes get a pod now, which pods go, what the status becomes and when to look
 * again. Table-tested in test/unit/runtime/controllers/broadcastjob/decision.test.ts.
 *
 * - One pod per eligible node: a node is eligible when a pod of the template fits it (nodeName, nodeSelector,
 *   required node affinity, NoSchedule/NoExecute taints, cordoned nodes). A pod is bound to its node by a required
 *   node affinity on `metadata.name` (the scheduler still admits it), as upstream does by default. A pod whose node no
 *   longer fits is deleted. Unlike upstream, node resources are not checked: the scheduler leaves such a pod Pending.
 * - Unset fields mean what upstream's defaulting webhook writes: completionPolicy.type Always, parallelism unlimited,
 *   failurePolicy.type FailFast.
 */
import type { BroadcastJob, BroadcastJobCondition, BroadcastJobStatus } from '../../../api/kinds/broadcastjob.js';
import { KRUISE_API_VERSION } from '../../../contracts/index.js';
import type { KubeObject, Node, Pod } from '../../core/types.js';
import { assignedNode, bindToNode, misfit, type PlacementSpec } from '../../control/node-placement.js';

/** A BroadcastJob as read from the API. */
export type BroadcastJobObject = BroadcastJob & KubeObject;

/** Labels on every pod of a job (upstream's keys): the job's name and uid. */
export const LABEL_JOB_NAME = 'broadcastjob-name';
export const LABEL_CONTROLLER_UID = 'broadcastjob-controller-uid';

const MAX_INT32 = 2 ** 31 - 1;

/** Whether the pod still counts as running (Kubernetes' IsPodActive). */
export function isActive(pod: Pod): boolean {
  return pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

/** restartPolicy OnFailure: containers restarted more often than `restartLimit` make the pod a failure. */
function restartedTooOften(pod: Pod, restartLimit: number): boolean {
  if (pod.spec?.restartPolicy !== 'OnFailure') return false;
  const statuses = [
    ...(((pod.status as { initContainerStatuses?: { restartCount?: number }[] } | undefined)?.initContainerStatuses ?? []) as {
      restartCount?: number;
    }[]),
    ...(pod.status?.containerStatuses ?? []),
  ];
  return statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0) > restartLimit;
}

/** Pods by outcome: active, failed (phase, or too many restarts), succeeded; pods being deleted are in none. */
export function classifyPods(pods: readonly Pod[], restartLimit: number): { active: Pod[]; failed: Pod[]; succeeded: Pod[] } {
  const out = { active: [] as Pod[], failed: [] as Pod[], succeeded: [] as Pod[] };
  for (const p of pods) {
    if (p.status?.phase === 'Succeeded') out.succeeded.push(p);
    else if (p.status?.phase === 'Failed') out.failed.push(p);
    else if (!p.metadata.deletionTimestamp) (restartedTooOften(p, restartLimit) ? out.failed : out.active).push(p);
  }
  return out;
}

/**
 * Pods allowed to run at once: an integer, or a percentage of `desired` rounded up; unset = no limit. Throws on a
 * string that is neither.
 */
export function parallelismOf(value: number | string | undefined, desired: number): number {
  if (value === undefined) return MAX_INT32;
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (m) return Math.ceil((Number(m[1]) * desired) / 100);
  if (/^\d+$/.test(value)) return Number(value);
  throw new Error(`spec.parallelism "${value}" is neither an integer nor a percentage such as "50%"`);
}

/** Whether the job has finished (a Complete or Failed condition True); a Never job never finishes. */
export function isFinished(job: BroadcastJobObject): boolean {
  if (job.spec.completionPolicy?.type === 'Never') return false;
  return (job.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

export interface JobEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface DecisionInput {
  readonly job: BroadcastJobObject;
  /** The pods this job controls. */
  readonly pods: readonly Pod[];
  readonly nodes: readonly Node[];
  readonly nowMs: number;
}

export interface Decision {
  /** The job finished longer ago than ttlSecondsAfterFinished: delete it (its pods go with it). */
  readonly deleteJob: boolean;
  /** Nodes to create a pod on now. */
  readonly createOn: readonly string[];
  /** Pods to delete (active pods of a failed job, pods whose node no longer fits). */
  readonly deletePods: readonly Pod[];
  /** The status to write (undefined: leave it). */
  readonly status?: BroadcastJobStatus;
  readonly events: readonly JobEvent[];
  readonly requeueAfterMs?: number;
  /** Why each node without a pod of the job is not eligible (for the log). */
  readonly ineligible?: Readonly<Record<string, string>>;
}

function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function condition(type: 'Complete' | 'Failed', message: string, now: string): BroadcastJobCondition {
  return { type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason: type, message };
}

const NOTHING = { deleteJob: false, createOn: [], deletePods: [], events: [] } as const;

/** One reconcile of a BroadcastJob. */
export function decide(input: DecisionInput): Decision {
  const { job, nowMs } = input;
  const completion = job.spec.completionPolicy ?? {};
  const ttlMs = completion.ttlSecondsAfterFinished !== undefined ? completion.ttlSecondsAfterFinished * 1000 : undefined;

  if (isFinished(job)) {
    const done = job.status?.completionTime ? Date.parse(job.status.completionTime) : NaN;
    if (ttlMs === undefined || Number.isNaN(done)) return NOTHING;
    const left = done + ttlMs - nowMs;
    return left <= 0 ? { ...NOTHING, deleteJob: true } : { ...NOTHING, requeueAfterMs: left };
  }

  const now = rfc3339(nowMs);
  const events: JobEvent[] = [];
  const prev = job.status ?? {};
  const startTime = prev.startTime ?? now;
  let phase = prev.phase || 'running';
  let requeueAfterMs: number | undefined;
  const deadlineMs =
    completion.type !== 'Never' && completion.activeDeadlineSeconds !== undefined
      ? Date.parse(startTime) + completion.activeDeadlineSeconds * 1000
      : undefined;
  // Upstream requeues once for the deadline when it sets startTime; a requeue at every reconcile also survives a restart.
  if (deadlineMs !== undefined && deadlineMs > nowMs) requeueAfterMs = deadlineMs - nowMs;

  const failurePolicy = job.spec.failurePolicy ?? {};
  const { active, failed, succeeded } = classifyPods(input.pods, failurePolicy.restartLimit ?? 0);

  // One pod per node: the node each pod is bound to.
  const byNode = new Map<string, Pod>();
  for (const p of input.pods) {
    const node = assignedNode(p) ?? '';
    if (byNode.has(node))
      events.push({
        type: 'Warning',
        reason: 'DuplicatePodCreatedOnSameNode',
        message: `Duplicated pod ${p.metadata.name} found on same node ${node}`,
      });
    byNode.set(node, p);
  }
  const template = (job.spec.template.spec ?? {}) as PlacementSpec;
  const desiredNodes = new Map<string, Pod | undefined>();
  const restNodes: string[] = [];
  const misplaced: Pod[] = [];
  const ineligible: Record<string, string> = {};
  for (const node of [...input.nodes].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1))) {
    const name = node.metadata.name!;
    const pod = byNode.get(name);
    if (pod) {
      if (misfit((pod.spec ?? {}) as PlacementSpec, node) !== undefined && !pod.metadata.deletionTimestamp) {
        misplaced.push(pod);
        continue;
      }
      desiredNodes.set(name, pod);
    } else {
      const why = misfit(template, node);
      if (why !== undefined) ineligible[name] = why;
      else {
        restNodes.push(name);
        desiredNodes.set(name, undefined);
      }
    }
  }

  let nActive = active.length;
  let nFailed = failed.length;
  const status = (over: Partial<BroadcastJobStatus> = {}): BroadcastJobStatus => ({
    ...(prev.conditions ? { conditions: prev.conditions } : {}),
    startTime,
    ...(prev.completionTime ? { completionTime: prev.completionTime } : {}),
    active: nActive,
    succeeded: succeeded.length,
    failed: nFailed,
    desired: desiredNodes.size,
    phase,
    ...over,
  });
  const result = (over: Partial<Decision>): Decision => ({
    ...NOTHING,
    events,
    ineligible,
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
    ...over,
  });

  if (phase === 'failed') return result({ status: status() });
  if (job.spec.paused && (phase === 'running' || phase === 'paused')) {
    phase = 'paused';
    return result({ status: status() });
  }
  if (!job.spec.paused && phase === 'paused') {
    phase = 'running';
    events.push({ type: 'Normal', reason: 'Continue', message: 'continue to process job' });
  }

  let failure: { reason: string; message: string } | undefined;
  if (nFailed > 0) {
    const policy = failurePolicy.type ?? 'FailFast';
    if (policy === 'Pause') {
      // Upstream pauses in its status write only (the spec stays unpaused); a paused phase with no new pods is what it
      // settles on while a failed pod remains, so it is written once instead of flipping at every reconcile.
      if (prev.phase !== 'paused') events.push({ type: 'Warning', reason: 'Paused', message: 'job is paused, due to failed pod' });
      phase = 'paused';
      return result({ status: status() });
    }
    if (policy === 'FailFast')
      failure = {
        reason: 'failed pod is found',
        message: 'failure policy is FailurePolicyTypeFailFast and failed pod is found',
      };
  }
  if (!failure && deadlineMs !== undefined && nowMs >= deadlineMs)
    failure = {
      reason: 'DeadlineExceeded',
      message: `Job ${job.metadata.namespace}/${job.metadata.name} was active longer than specified deadline`,
    };

  const finish = (type: 'Complete' | 'Failed', message: string): Partial<BroadcastJobStatus> => {
    requeueAfterMs = ttlMs !== undefined ? ttlMs + 1000 : undefined;
    return { conditions: [...(prev.conditions ?? []), condition(type, message, now)], completionTime: now };
  };

  if (failure) {
    // The active pods of a failed job are deleted and count as failed.
    nFailed += active.length;
    nActive -= active.length;
    phase = 'failed';
    const fin = finish('Failed', failure.message);
    events.push({
      type: 'Warning',
      reason: failure.reason,
      message: `${failure.message}: ${succeeded.length} pods succeeded, ${nFailed} pods failed`,
    });
    return result({ deletePods: active, status: status(fin) });
  }

  nFailed += misplaced.length;
  nActive -= misplaced.filter(isActive).length;
  let createOn: string[] = [];
  if (!job.metadata.deletionTimestamp && restNodes.length > 0) {
    let parallelism: number | undefined;
    try {
      parallelism = parallelismOf(job.spec.parallelism, desiredNodes.size);
    } catch (err) {
      events.push({ type: 'Warning', reason: 'InvalidParallelism', message: (err as Error).message });
    }
    if (parallelism !== undefined) {
      if (nActive > parallelism)
        events.push({ type: 'Warning', reason: 'TooManyActivePods', message: 'Number of active pods exceed parallelism limit' });
      else if (nActive < parallelism) createOn = restNodes.slice(0, Math.min(parallelism - nActive, restNodes.length));
      nActive += createOn.length;
    }
  }

  let over: Partial<BroadcastJobStatus> = {};
  const complete =
    completion.type !== 'Never' && desiredNodes.size > 0 && [...desiredNodes.values()].every((p) => p !== undefined && !isActive(p));
  if (complete) {
    phase = 'completed';
    over = finish('Complete', `Job completed, ${succeeded.length} pods succeeded, ${nFailed} pods failed`);
    events.push({
      type: 'Normal',
      reason: 'JobComplete',
      message: `Job ${job.metadata.namespace}/${job.metadata.name} is completed, ${succeeded.length} pods succeeded, ${nFailed} pods failed`,
    });
  }
  return result({ createOn, deletePods: misplaced, status: status(over) });
}

/** Whether two statuses differ in what the controller writes (probe times aside). */
export function statusChanged(before: BroadcastJobStatus | undefined, after: BroadcastJobStatus): boolean {
  const norm = (s: BroadcastJobStatus | undefined) =>
    JSON.stringify([
      s?.startTime ?? null,
      s?.completionTime ?? null,
      s?.active ?? 0,
      s?.succeeded ?? 0,
      s?.failed ?? 0,
      s?.desired ?? 0,
      s?.phase ?? '',
      (s?.conditions ?? []).map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '']),
    ]);
  return norm(before) !== norm(after);
}

/** The pod a job runs on `node`: the template, the job's labels, the job as controller, bound to the node. */
export function podFor(job: BroadcastJobObject, node: string): Pod {
  const tpl = job.spec.template;
  const spec = { ...((tpl.spec ?? {}) as Record<string, unknown>) };
  spec.affinity = bindToNode(spec.affinity as Record<string, unknown> | undefined, node);
  const md = (tpl.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${job.metadata.name}-`,
      namespace: job.metadata.namespace,
      labels: { ...(md.labels ?? {}), [LABEL_JOB_NAME]: job.metadata.name!, [LABEL_CONTROLLER_UID]: job.metadata.uid! },
      ...(md.annotations ? { annotations: { ...md.annotations } } : {}),
      ...(md.finalizers ? { finalizers: [...md.finalizers] } : {}),
      ownerReferences: [
        {
          apiVersion: KRUISE_API_VERSION,
          kind: 'BroadcastJob',
          name: job.metadata.name!,
          uid: job.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: spec as Pod['spec'],
  };
}

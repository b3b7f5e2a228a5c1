/**
 * ContainerRecreateRequest execution on the node: pure decisions, following upstream kruise-daemon
 * (pkg/daemon/containerrecreate): one CRR per pod at a time, picked by phase then age; the picked
 * one goes Recreating, waits out the unready grace period, then containers are killed one per step
 * (preStop, then CRI StopContainer with the grace period) and tracked until the kubelet has
 * restarted them (Succeeded once the new instance is ready for minStartedSeconds).
 *
 * Upstream splits the work with the manager (deadline, TTL, pod gone, unready acquisition); this
 * runtime has no manager-side CRR controller, so the daemon owns those parts too.
 */
import type { ContainerRecreateRequest } from '../../../api/kinds/containerrecreaterequest.js';
import { sidecarTerminationCrrName } from '../../../contracts/names.js';

export type CrrPhase = 'Pending' | 'Recreating' | 'Succeeded' | 'Failed' | 'Completed';

export interface ContainerRecreateState {
  name: string;
  phase: CrrPhase;
  message?: string;
  isKilled?: boolean;
}

/** Label and annotation keys shared with upstream. */
export const CrrKeys = {
  podUid: 'crr.apps.kruise.io/pod-uid',
  podName: 'crr.apps.kruise.io/pod-name',
  nodeName: 'crr.apps.kruise.io/node-name',
  active: 'crr.apps.kruise.io/active',
  /** RFC 3339 time at which the pod was made not-ready for this CRR. */
  unreadyAcquired: 'crr.apps.kruise.io/unready-acquired',
} as const;

/** Readiness gate a pod declares so that CRRs can take it out of service first. */
export const KRUISE_POD_READY = 'KruisePodReady';

/** The newest runtime instance of one container of the pod, as CRI reports it. */
export interface ObservedContainer {
  readonly name: string;
  /** `<runtime>://<id>`, the pod-status form. */
  readonly containerID: string;
  readonly running: boolean;
  readonly exited: boolean;
  /** Epoch ms; 0 when never started. */
  readonly startedAtMs: number;
  /** Attempt number, the kubelet's restart count. */
  readonly restartCount: number;
}

/** What the pod's status (the kubelet's report) says about a container. */
export interface PodContainerView {
  readonly containerID?: string;
  readonly ready: boolean;
}

export interface PodView {
  readonly uid: string;
  readonly phase?: string;
  readonly deleting: boolean;
  readonly containers: ReadonlyMap<string, PodContainerView>;
  /** Whether spec.readinessGates lists KruisePodReady. */
  readonly hasKruiseReadinessGate: boolean;
  /** Current status of the KruisePodReady condition, if any. */
  readonly kruiseReadyCondition?: string;
}

const ms = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : 0);

function previousState(crr: ContainerRecreateRequest, name: string): ContainerRecreateState | undefined {
  return crr.status?.containerRecreateStates?.find((s) => s.name === name) as ContainerRecreateState | undefined;
}

/**
 * Per-container states from what the node shows now (upstream getCurrentCRRContainersRecreateStates).
 * Without a statusContext (no webhook filled it), only "started after the CRR was created" counts
 * as a restart: comparing against a missing ID would call every container restarted.
 */
export function currentStates(
  crr: ContainerRecreateRequest,
  observed: ReadonlyMap<string, ObservedContainer>,
  pod: PodView,
  nowMs: number,
): ContainerRecreateState[] {
  const minStartedMs = (crr.spec.strategy?.minStartedSeconds ?? 0) * 1000;
  const createdMs = ms(crr.metadata.creationTimestamp);
  return crr.spec.containers.map((c) => {
    const prev = previousState(crr, c.name);
    if (prev && (prev.phase === 'Failed' || prev.phase === 'Succeeded')) return { ...prev };
    const wasKilled = prev?.isKilled ?? false;
    const seen = observed.get(c.name);
    if (!seen) return { name: c.name, phase: 'Pending', isKilled: wasKilled, message: 'not found container on Node' };
    if (seen.exited) return { name: c.name, phase: 'Recreating', isKilled: wasKilled };
    if (crr.spec.strategy?.forceRecreate && !wasKilled) return { name: c.name, phase: 'Pending', isKilled: false };
    const ctx = c.statusContext;
    const restarted =
      (ctx !== undefined && (seen.containerID !== ctx.containerID || seen.restartCount > ctx.restartCount)) ||
      // creationTimestamp has whole seconds: an instance started in the CRR's own second predates it.
      Math.floor(seen.startedAtMs / 1000) * 1000 > createdMs;
    if (!restarted) return { name: c.name, phase: 'Pending', isKilled: wasKilled };
    const podSide = pod.containers.get(c.name);
    const ready = podSide?.containerID === seen.containerID && podSide.ready && nowMs - seen.startedAtMs > minStartedMs;
    return { name: c.name, phase: ready ? 'Succeeded' : 'Recreating', isKilled: wasKilled };
  });
}

const PHASE_WEIGHT: Record<string, number> = { Completed: 1, Recreating: 2, Pending: 3 };

/** Order in which a pod's CRRs are considered: finished, in progress, pending, new; then oldest first. */
export function sortForPick(crrs: readonly ContainerRecreateRequest[]): ContainerRecreateRequest[] {
  return [...crrs].sort((a, b) => {
    const pa = a.status?.phase ?? '';
    const pb = b.status?.phase ?? '';
    if (pa === pb)
      return (
        ms(a.metadata.creationTimestamp) - ms(b.metadata.creationTimestamp) ||
        String(a.metadata.name).localeCompare(String(b.metadata.name))
      );
    return (PHASE_WEIGHT[pa] ?? 4) - (PHASE_WEIGHT[pb] ?? 4);
  });
}

export const isFinished = (crr: ContainerRecreateRequest): boolean => !!crr.status?.completionTime || crr.status?.phase === 'Completed';

/** Actions a pod's CRRs need, applied in order by the controller. */
export type CrrAction =
  | { readonly type: 'delete'; readonly crr: string }
  | { readonly type: 'setPhase'; readonly crr: string; readonly phase: 'Pending' | 'Recreating' }
  | { readonly type: 'acquireUnready'; readonly crr: string; readonly setPodCondition: boolean }
  | { readonly type: 'releaseUnready' }
  | { readonly type: 'patchStates'; readonly crr: string; readonly states: ContainerRecreateState[] }
  | {
      readonly type: 'kill';
      readonly crr: string;
      readonly container: string;
      readonly containerID: string;
      readonly index: number;
      readonly states: ContainerRecreateState[];
    }
  | { readonly type: 'complete'; readonly crr: string; readonly message: string };

export interface CrrDecision {
  readonly actions: CrrAction[];
  /** Look at this pod again after this long (a wait, not a failure). */
  readonly requeueAfterMs?: number;
}

export interface PodCrrInput {
  /** Every CRR of the pod known to the daemon (any phase). */
  readonly crrs: readonly ContainerRecreateRequest[];
  /** The pod, or null if it is gone. */
  readonly pod: PodView | null;
  readonly observed: ReadonlyMap<string, ObservedContainer>;
  readonly nowMs: number;
}

const minRequeue = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/** The completion message of a CRR whose activeDeadlineSeconds passed (upstream's words). */
export const DEADLINE_EXCEEDED = 'recreating has exceeded the activeDeadlineSeconds';

/** Milliseconds left before `crr`'s activeDeadlineSeconds (counted from its creation) pass; undefined without one. */
export function deadlineLeftMs(crr: ContainerRecreateRequest, nowMs: number): number | undefined {
  const deadline = crr.spec.activeDeadlineSeconds;
  return deadline === undefined ? undefined : ms(crr.metadata.creationTimestamp) + deadline * 1000 - nowMs;
}

/** TTL handling of finished CRRs: delete when due, else look again when it will be. */
function ttlActions(crrs: readonly ContainerRecreateRequest[], nowMs: number): { actions: CrrAction[]; requeueAfterMs?: number } {
  const actions: CrrAction[] = [];
  let requeueAfterMs: number | undefined;
  for (const crr of crrs) {
    const ttl = crr.spec.ttlSecondsAfterFinished;
    if (!isFinished(crr) || ttl === undefined || crr.metadata.deletionTimestamp) continue;
    const dueMs = ms(crr.status?.completionTime) + ttl * 1000;
    if (dueMs <= nowMs) actions.push({ type: 'delete', crr: crr.metadata.name! });
    else requeueAfterMs = minRequeue(requeueAfterMs, dueMs - nowMs);
  }
  return { actions, requeueAfterMs };
}

/** Whether `crr` is the sidecar terminator's CRR of this pod and one of its containers still runs. */
function stopsRunningSidecar(crr: ContainerRecreateRequest, podUid: string, observed: ReadonlyMap<string, ObservedContainer>): boolean {
  if (crr.metadata.name !== sidecarTerminationCrrName(podUid)) return false;
  return crr.spec.containers.some((c) => observed.get(c.name)?.running === true);
}

/**
 * The next steps for one pod's CRRs. At most one CRR is worked on; the others that are new are
 * marked Pending. Each call returns the steps up to the first write of the picked CRR: the
 * controller applies them and the resulting watch event brings the pod back here.
 */
export function decidePodCrrs(input: PodCrrInput): CrrDecision {
  const { pod, observed, nowMs } = input;
  const ttl = ttlActions(input.crrs, nowMs);
  const actions: CrrAction[] = [...ttl.actions];
  let requeueAfterMs = ttl.requeueAfterMs;
  const open = sortForPick(input.crrs.filter((c) => !isFinished(c) && !c.metadata.deletionTimestamp));
  const picked = open[0];
  if (!picked) {
    // Nothing in progress: give back readiness we took for a CRR that has finished.
    if (
      pod &&
      pod.hasKruiseReadinessGate &&
      pod.kruiseReadyCondition === 'False' &&
      input.crrs.some((c) => c.metadata.annotations?.[CrrKeys.unreadyAcquired])
    ) {
      actions.push({ type: 'releaseUnready' });
    }
    return { actions, requeueAfterMs };
  }
  for (const other of open.slice(1))
    if (!other.status?.phase) actions.push({ type: 'setPhase', crr: other.metadata.name!, phase: 'Pending' });
  const name = picked.metadata.name!;
  const done = (message: string): CrrDecision => ({ actions: [...actions, { type: 'complete', crr: name, message }], requeueAfterMs });

  const podUid = picked.metadata.labels?.[CrrKeys.podUid];
  if (!pod || pod.deleting || (podUid && podUid !== pod.uid)) return done('pod has gone');
  // A Job pod whose sidecars ignore their exit code is marked Succeeded by the sidecar terminator before its CRR
  // exists; that CRR still stops the sidecars that run (through their declared shutdown) rather than leaving them to
  // the kubelet's later SIGTERM. Any other CRR of a finished pod has nothing left to do.
  if ((pod.phase === 'Succeeded' || pod.phase === 'Failed') && !stopsRunningSidecar(picked, pod.uid, observed))
    return done(`pod is not active (phase ${pod.phase})`);
  const leftMs = deadlineLeftMs(picked, nowMs);
  if (leftMs !== undefined) {
    if (leftMs <= 0) return done(DEADLINE_EXCEEDED);
    requeueAfterMs = minRequeue(requeueAfterMs, leftMs);
  }

  if (picked.status?.phase !== 'Recreating') {
    return { actions: [...actions, { type: 'setPhase', crr: name, phase: 'Recreating' }], requeueAfterMs };
  }

  const unreadyGrace = picked.spec.strategy?.unreadyGracePeriodSeconds;
  if (unreadyGrace !== undefined) {
    const acquired = picked.metadata.annotations?.[CrrKeys.unreadyAcquired];
    if (!acquired) {
      return { actions: [...actions, { type: 'acquireUnready', crr: name, setPodCondition: pod.hasKruiseReadinessGate }], requeueAfterMs };
    }
    const acquiredMs = Date.parse(acquired);
    if (Number.isNaN(acquiredMs)) return done(`failed to parse unready time ${acquired}`);
    const leftMs = acquiredMs + unreadyGrace * 1000 - nowMs;
    if (leftMs > 0) return { actions, requeueAfterMs: minRequeue(requeueAfterMs, leftMs + 100) };
  }

  const states = currentStates(picked, observed, pod, nowMs);
  const previous = picked.status?.containerRecreateStates ?? [];
  if (!sameStates(previous as ContainerRecreateState[], states)) {
    return { actions: [...actions, { type: 'patchStates', crr: name, states }], requeueAfterMs };
  }

  const ordered = picked.spec.strategy?.orderedRecreate ?? false;
  const ignore = picked.spec.strategy?.failurePolicy === 'Ignore';
  let completed = 0;
  for (let i = 0; i < states.length; i++) {
    const state = states[i]!;
    if (state.phase === 'Succeeded') {
      completed++;
      continue;
    }
    if (state.phase === 'Failed') {
      completed++;
      if (ignore) continue;
      return done('');
    }
    if (state.phase === 'Recreating') {
      if (ordered) break;
      continue;
    }
    const seen = observed.get(state.name);
    if (!seen) break;
    return {
      actions: [...actions, { type: 'kill', crr: name, container: state.name, containerID: seen.containerID, index: i, states }],
      requeueAfterMs,
    };
  }
  if (completed === states.length) return done('');
  const minStarted = picked.spec.strategy?.minStartedSeconds ?? 0;
  // Readiness and minStartedSeconds are time-based: poll while containers are coming back.
  return { actions, requeueAfterMs: minRequeue(requeueAfterMs, minStarted > 0 ? minStarted * 1000 : 1000) };
}

/**
 * States after a kill attempt: Recreating+isKilled on success; on error Failed with the message,
 * and with failurePolicy Fail the CRR completes.
 */
export function afterKill(states: readonly ContainerRecreateState[], index: number, error: string | undefined): ContainerRecreateState[] {
  return states.map((s, i) => {
    if (i !== index) return { ...s };
    if (error === undefined) return { ...s, phase: 'Recreating', isKilled: true, message: undefined };
    return { ...s, phase: 'Failed', message: `kill container error: ${error}` };
  });
}

export function sameStates(a: readonly ContainerRecreateState[], b: readonly ContainerRecreateState[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((x, i) => {
    const y = b[i]!;
    return x.name === y.name && x.phase === y.phase && (x.message ?? '') === (y.message ?? '') && !!x.isKilled === !!y.isKilled;
  });
}

/**
 * Grace period for a kill, as the kubelet computes it: the CRR's (else 30 s), minus what preStop
 * used, never below 2 s.
 */
export function stopTimeoutSeconds(gracePeriodSeconds: number | undefined, preStopElapsedMs: number): number {
  const grace = gracePeriodSeconds ?? 30;
  return Math.max(2, Math.ceil(grace - preStopElapsedMs / 1000));
}

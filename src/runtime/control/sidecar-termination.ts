/**
 * Job Sidecar Terminator: the pure decision (upstream's sidecar terminator semantics: kill-mode sidecars
 * are stopped through a CRR once every main container has finished, by the Never/OnFailure rules). No I/O: given the pod,
 * its node's kind and whether our CRR exists, it says what one reconcile must do. It is a shared agreement (`control/`)
 * because two units act on it: the manager's controller (pod status as the kubelet reported it) and the node daemon's
 * node-local terminator (the same pod with container states read from CRI). Table-tested in
 * test/unit/runtime/control/sidecar-termination.test.ts and, through the daemon, test/unit/runtime/daemon/crr/node-local-terminator.test.ts.
 *
 * A sidecar is a container with upstream's env marker, or one the pod's `kruise.cdk8s.io/terminate-sidecars`
 * annotation declares by name or pattern (containers another webhook injected carry no marker): both units read the
 * declaration here, through the one matcher of `api/container-patterns.ts`, so they agree on which containers it means.
 */
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  parseExitPriority,
  CONDITION_SIDECAR_TERMINATED,
  ignoresExitCode,
  isKillSidecar,
  quickExitImage,
  sidecarTerminationCrrName,
} from '../../api/pod-contracts.js';
import { declaredTerminatedSidecars, type SidecarShutdown, type TerminationDecl } from '../../api/container-patterns.js';
import { KRUISE_API_VERSION } from '../../contracts/index.js';
import { podOwnerReference } from '../core/meta.js';
import type { Container, ContainerStatus, KubeObject, Pod } from '../core/types.js';

export type NodeKind = 'normal' | 'virtual-kubelet';

/** A pod whose node is not cached yet is looked at again when the node arrives (node handler) or after this. */
export const NODE_UNKNOWN_REQUEUE_MS = 5_000;

export interface DecisionInput {
  readonly pod: Pod;
  /** Kind of the pod's node; undefined when the node is not (yet) known. */
  readonly nodeKind: NodeKind | undefined;
  /** Our CRR `sidecar-termination-<uid>` already exists. */
  readonly crrExists: boolean;
}

export interface ImageSwap {
  readonly container: string;
  readonly image: string;
}

export type Decision =
  | { readonly action: 'skip'; readonly reason: string }
  | {
      readonly action: 'wait';
      readonly reason: string;
      /** Look again after this long even if no watched object changes (e.g. a node not cached yet). */
      readonly requeueAfterMs?: number;
    }
  | {
      readonly action: 'act';
      /** Step 1 (virtual-kubelet node): swap these sidecars' images to their quick-exit image. */
      readonly swapImages: readonly ImageSwap[];
      /** Step 2 (normal node): create this CRR (absent when it exists or nothing is left to kill). */
      readonly createCrr?: { readonly name: string; readonly containers: readonly string[] };
      /** Step 3: set condition SidecarTerminated and, unless already terminal, this phase. */
      readonly markTerminated?: { readonly phase?: 'Succeeded' | 'Failed' };
    };

interface Sidecar {
  readonly name: string;
  readonly kill: boolean;
  readonly ignoreExitCode: boolean;
  readonly quickExitImage?: string;
  readonly terminated: boolean;
  /** Not terminated now, but its previous instance exited non-zero: the kubelet restarted it (OnFailure). */
  readonly restartedAfterFailure: boolean;
}

function statusOf(statuses: readonly ContainerStatus[], name: string): ContainerStatus | undefined {
  return statuses.find((s) => s.name === name);
}

/** The containers the pod's terminate-sidecars annotation declares (name → how to stop it); empty without it. */
export function declaredSidecars(pod: Pod): ReadonlyMap<string, TerminationDecl> {
  return declaredTerminatedSidecars(pod.metadata.annotations, pod.spec?.containers ?? []);
}

/** The clean shutdown the pod declares for `container` (tried before SIGTERM), if any. */
export function sidecarShutdownOf(pod: Pod, container: string): SidecarShutdown | undefined {
  return declaredSidecars(pod).get(container)?.shutdown;
}

/** Whether the sidecar's exit code is to be ignored: its env marker, or its declaration. */
export function ignoresSidecarExitCode(pod: Pod, container: Container): boolean {
  return (isKillSidecar(container) && ignoresExitCode(container)) || declaredSidecars(pod).get(container.name)?.ignoreExitCode === true;
}

function classify(pod: Pod, containers: readonly Container[], statuses: readonly ContainerStatus[]) {
  const sidecars: Sidecar[] = [];
  const mains: Container[] = [];
  const declared = declaredSidecars(pod);
  for (const c of containers) {
    const decl = declared.get(c.name);
    const kill = isKillSidecar(c) || decl !== undefined;
    const image = quickExitImage(c);
    if (!kill && image === undefined) {
      mains.push(c);
      continue;
    }
    sidecars.push({
      name: c.name,
      kill,
      ignoreExitCode: kill && (ignoresExitCode(c) || decl?.ignoreExitCode === true),
      ...(image !== undefined ? { quickExitImage: image } : {}),
      terminated: statusOf(statuses, c.name)?.state?.terminated !== undefined,
      restartedAfterFailure: restartedAfterFailure(statusOf(statuses, c.name)),
    });
  }
  return { sidecars, mains };
}

function restartedAfterFailure(status: ContainerStatus | undefined): boolean {
  if (!status || status.state?.terminated) return false;
  const last = status.lastState?.terminated;
  return last !== undefined && last.exitCode !== 0;
}

/** Cheap pre-filter for informer events: pods that can ever need the terminator. */
export function isCandidate(pod: Pod): boolean {
  const rp = pod.spec?.restartPolicy;
  if (rp !== 'Never' && rp !== 'OnFailure') return false;
  return (pod.spec?.containers ?? []).some((c) => isKillSidecar(c) || quickExitImage(c) !== undefined) || declaredSidecars(pod).size > 0;
}

export function decide({ pod, nodeKind, crrExists }: DecisionInput): Decision {
  const spec = pod.spec;
  const status = pod.status ?? {};
  const rp = spec?.restartPolicy ?? 'Always';
  if (pod.metadata.deletionTimestamp) return { action: 'skip', reason: 'pod is being deleted' };
  if (rp !== 'Never' && rp !== 'OnFailure') return { action: 'skip', reason: `restartPolicy ${rp}` };
  if (status.phase === 'Pending' || status.phase === undefined) return { action: 'skip', reason: 'pod is pending' };
  const containers = spec?.containers ?? [];
  const statuses = status.containerStatuses ?? [];
  const { sidecars, mains } = classify(pod, containers, statuses);
  if (sidecars.length === 0) return { action: 'skip', reason: 'no sidecars' };
  if (sidecars.every((s) => s.terminated)) return { action: 'skip', reason: 'all sidecars terminated' };
  if (statuses.length < containers.length) return { action: 'wait', reason: 'not every container has a status yet' };

  const mainStates = mains.map((c) => statusOf(statuses, c.name)?.state?.terminated);
  if (rp === 'Never' && mainStates.some((t) => t === undefined)) {
    return { action: 'wait', reason: 'main containers still running' };
  }
  if (rp === 'OnFailure' && mainStates.some((t) => t === undefined || t.exitCode !== 0)) {
    return { action: 'wait', reason: 'main containers have not all exited 0' };
  }
  if (!spec?.nodeName) return { action: 'wait', reason: 'pod has no node' };
  if (nodeKind === undefined)
    return { action: 'wait', reason: `node ${spec.nodeName} not known yet`, requeueAfterMs: NODE_UNKNOWN_REQUEUE_MS };

  const uid = pod.metadata.uid ?? '';
  const crrName = sidecarTerminationCrrName(uid);
  const allMainsSucceeded = mainStates.every((t) => t?.exitCode === 0);

  if (nodeKind === 'virtual-kubelet') {
    const swapImages: ImageSwap[] = [];
    for (const s of sidecars) {
      if (s.quickExitImage === undefined || s.terminated) continue;
      const current = containers.find((c) => c.name === s.name)?.image;
      if (current !== s.quickExitImage) swapImages.push({ container: s.name, image: s.quickExitImage });
    }
    if (swapImages.length === 0) return { action: 'skip', reason: 'quick-exit images already set' };
    return { action: 'act', swapImages };
  }

  // OnFailure: a kill-mode sidecar that exited non-zero on our stop is restarted by the kubelet, and
  // our CRR (already there) never stops it again, so the pod would run forever. End the pod the way
  // the kubelet ends it under restartPolicy Never for a non-zero sidecar exit: Failed (a sidecar whose
  // exit code should not count is marked ignore-exit-code and takes the branch below instead).
  if (rp === 'OnFailure' && crrExists && sidecars.some((s) => s.kill && !s.ignoreExitCode && s.restartedAfterFailure)) {
    const terminal = status.phase === 'Succeeded' || status.phase === 'Failed';
    if (terminal) return { action: 'skip', reason: 'pod already terminal after a sidecar restarted by the kubelet' };
    return { action: 'act', swapImages: [], markTerminated: { phase: 'Failed' } };
  }

  const killNow = sidecars.filter((s) => s.kill && !s.ignoreExitCode && !s.terminated).map((s) => s.name);
  const ignoring = sidecars.filter((s) => s.ignoreExitCode && !s.terminated).map((s) => s.name);
  const othersDone = sidecars.filter((s) => !s.ignoreExitCode).every((s) => s.terminated);

  let markTerminated: { phase?: 'Succeeded' | 'Failed' } | undefined;
  let crrContainers: string[] = killNow;
  if (ignoring.length > 0 && othersDone) {
    const already = (status.conditions ?? []).some((c) => c.type === CONDITION_SIDECAR_TERMINATED && c.status === 'True');
    const terminal = status.phase === 'Succeeded' || status.phase === 'Failed';
    if (!already || !terminal) {
      markTerminated = terminal ? {} : { phase: allMainsSucceeded ? 'Succeeded' : 'Failed' };
    }
    crrContainers = ignoring;
  }
  // The daemon stops a CRR's containers one after another in list order, each waiting for the previous one to
  // exit: listing the sidecars by exit priority (lowest first, spec order within a level) stops them in that order.
  const exitOrder = exitPriorityOf(pod);
  crrContainers = crrContainers
    .map((name, index) => ({ name, index }))
    .sort((a, b) => (exitOrder[a.name] ?? 0) - (exitOrder[b.name] ?? 0) || a.index - b.index)
    .map((c) => c.name);
  const createCrr = !crrExists && crrContainers.length > 0 ? { name: crrName, containers: crrContainers } : undefined;
  if (!createCrr && !markTerminated) {
    return {
      action: 'skip',
      reason: crrExists ? `CRR ${crrName} exists` : 'no kill-mode sidecar to stop on this node',
    };
  }
  return {
    action: 'act',
    swapImages: [],
    ...(createCrr ? { createCrr } : {}),
    ...(markTerminated ? { markTerminated } : {}),
  };
}

/** The pod's valid exit priorities (a hostile annotation counts as none: the spec order is kept). */
function exitPriorityOf(pod: Pod): Readonly<Record<string, number>> {
  const raw = pod.metadata.annotations?.[ANNOTATION_CONTAINER_EXIT_PRIORITY];
  return typeof raw === 'string' ? (parseExitPriority(raw).value ?? {}) : {};
}

/**
 * The CRR that stops a pod's sidecars: one name per pod (`sidecar-termination-<uid>`), owned by the pod. The manager
 * creates it to have the node's daemon stop them; the node daemon creates the same object to record that it stopped
 * them itself (then the manager, finding it, does nothing).
 */
export function sidecarTerminationCrr(pod: Pod, name: string, containers: readonly string[]): KubeObject {
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'ContainerRecreateRequest',
    metadata: {
      name,
      namespace: pod.metadata.namespace!,
      ownerReferences: [podOwnerReference(pod, { controller: true, blockOwnerDeletion: true })],
    },
    spec: {
      podName: pod.metadata.name,
      containers: containers.map((c) => ({ name: c })),
      strategy: { forceRecreate: true, failurePolicy: 'Ignore' },
    },
  };
}

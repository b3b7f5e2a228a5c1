/**
 * Container exit priority on the node: the pure decisions. The kubelet stops every container of a deleted
 * pod at once, but first runs each one's preStop hook and waits for it. The pod webhook gave every container
 * above level 0 a preStop `httpGet` to this daemon; holding that request holds the container's SIGTERM. A
 * hook is answered when every container of the lower levels has exited (CRI state on this node) or when its
 * level's share of the grace period is spent, so the pod still ends within its grace period.
 *
 * Table-tested in test/unit/runtime/exit-priority.test.ts.
 */
import {
  DEFAULT_TERMINATION_GRACE_SECONDS,
  exitLevelDeadlineMs,
  exitLevels,
  parseExitPriority,
  readExitPriorityHook,
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  type ExitLevel,
  type ExitPriorityHook,
  type ExitPriorityHookTarget,
} from '../../../api/pod-contracts.js';
import type { Container, Pod } from '../../core/types.js';

/**
 * How often the CRI state of a waiting pod is looked at even without a container change: the safety net for a
 * missed change (the changes themselves arrive through `cri-events.ts` within milliseconds).
 */
export const EXIT_POLL_MS = 50;

/** What a pod says about its exit order, read from the cached pod. */
export interface PodExitPlan {
  readonly levels: readonly ExitLevel[];
  /** The grace period the kubelet uses: the deletion's, else the pod's, else 30 s. */
  readonly graceSeconds: number;
  readonly deleting: boolean;
}

export function podExitPlan(pod: Pod): PodExitPlan {
  const raw = pod.metadata.annotations?.[ANNOTATION_CONTAINER_EXIT_PRIORITY];
  // Only the valid entries count: the webhook refused pods with invalid ones, so anything else is hostile.
  const priorities = typeof raw === 'string' ? (parseExitPriority(raw).value ?? {}) : {};
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  const deletionGrace = (pod.metadata as { deletionGracePeriodSeconds?: unknown }).deletionGracePeriodSeconds;
  const specGrace = pod.spec?.terminationGracePeriodSeconds;
  const graceSeconds =
    typeof deletionGrace === 'number' ? deletionGrace : typeof specGrace === 'number' ? specGrace : DEFAULT_TERMINATION_GRACE_SECONDS;
  return { levels: exitLevels(names, priorities), graceSeconds, deleting: deletingFrom(pod) };
}

function deletingFrom(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp;
}

/**
 * The pod and container a hook request names, from pods on this node only: the container's own spec must
 * carry exactly this hook (namespace, token, container), so a request can only trigger what the pod's
 * admitted spec declares.
 */
export function findHookPod(
  pods: readonly Pod[],
  target: ExitPriorityHookTarget,
): { readonly pod: Pod; readonly container: Container; readonly hook: ExitPriorityHook } | undefined {
  for (const pod of pods) {
    if (pod.metadata.namespace !== target.namespace) continue;
    const container = pod.spec?.containers?.find((c) => c.name === target.container);
    if (!container) continue;
    const hook = readExitPriorityHook((container.lifecycle as { preStop?: unknown } | undefined)?.preStop);
    if (hook && hook.token === target.token && hook.container === target.container && hook.namespace === target.namespace) {
      return { pod, container, hook };
    }
  }
  return undefined;
}

export interface HookView {
  readonly container: string;
  readonly plan: PodExitPlan;
  /** Time since the kubelet's request arrived (its grace-period clock for this container started then). */
  readonly waitedMs: number;
  /** Containers of the pod with a running instance on this node (CRI). */
  readonly running: ReadonlySet<string>;
  /** How often to look again while waiting; EXIT_POLL_MS unless exits are pushed (then a slower safety net). */
  readonly pollMs?: number;
}

export type HookDecision =
  | { readonly release: true; readonly reason: string }
  | { readonly release: false; readonly waitingFor: readonly string[]; readonly checkAgainMs: number };

/** Whether a waiting hook may be answered now. */
export function decideHook(v: HookView): HookDecision {
  const index = v.plan.levels.findIndex((l) => l.containers.includes(v.container));
  if (index <= 0) return { release: true, reason: index === 0 ? 'lowest exit level' : 'container has no exit level' };
  const waitingFor = v.plan.levels
    .slice(0, index)
    .flatMap((l) => l.containers)
    .filter((c) => v.running.has(c));
  if (waitingFor.length === 0) return { release: true, reason: 'lower levels exited' };
  const deadline = exitLevelDeadlineMs(index, v.plan.levels.length, v.plan.graceSeconds);
  if (v.waitedMs >= deadline)
    return { release: true, reason: `level's share of the grace period spent (still running: ${waitingFor.join(', ')})` };
  return { release: false, waitingFor, checkAgainMs: Math.max(1, Math.min(v.pollMs ?? EXIT_POLL_MS, deadline - v.waitedMs)) };
}

/** Time left for the container's own preStop after the wait: up to where the kubelet's 2-second minimum would start. */
export function ownPreStopBudgetMs(plan: PodExitPlan, waitedMs: number): number {
  return Math.max(0, plan.graceSeconds * 1000 - 2000 - waitedMs);
}

/**
 * Whether the CRI runtime delivers a container's stop signal once however many StopContainer calls with a timeout
 * it gets: containerd's CRI plugin flags the container at the first such call and skips the signal at the next
 * (present in 1.6.20, the release checked, and every later one). Only then may the daemon stop a released container
 * itself, ahead of the kubelet's own StopContainer after the hook's answer, without the container seeing its stop
 * signal twice (many programs take a second SIGTERM as "quit now").
 */
export function runtimeSignalsOnce(runtimeName: string, runtimeVersion: string): boolean {
  if (runtimeName !== 'containerd') return false;
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(runtimeVersion);
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return major > 1 || (major === 1 && (minor > 6 || (minor === 6 && patch >= 20)));
}

/** The StopContainer timeout the kubelet gives a container after its preStop: the grace period left, at least 2 s. */
export function stopTimeoutAfterHookSeconds(graceSeconds: number, hookElapsedMs: number): number {
  return Math.max(2, Math.ceil(graceSeconds - hookElapsedMs / 1000));
}

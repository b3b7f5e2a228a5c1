/**
 * The node-local sidecar terminator's pure half. The daemon does not wait for the kubelet to report a main
 * container's exit (up to its next relist, about a second): it reads the pod's containers over CRI, writes them into
 * the pod's status the way the kubelet will report them, and asks the manager's own decision (`decide`, one table for
 * both) whether the sidecars must stop now.
 *
 * No double action, one CRR name (`sidecar-termination-<pod uid>`):
 * - the daemon stops sidecars only while no CRR of that name is in its cache and it has not stopped them before for
 *   this pod (both count as "the CRR exists" for `decide`, which then never asks for a stop again);
 * - the stop and the CRR execution of the same pod run in one work queue under one key, never at once, and a CRR
 *   kills only containers CRI shows running, so a manager CRR that arrives after the daemon's stop kills nothing;
 * - the daemon records its stop by creating the CRR itself (with the states of a CRR whose kill step ran), so the
 *   manager, finding the CRR, creates none; when the record cannot be written (the CRR webhook down) the stopped
 *   sidecars are already terminated in the status the manager reads, and `decide` skips such a pod.
 *
 * Sidecars whose exit code is ignored are the exception: they stop after the manager has made the pod's phase terminal
 * (upstream's order), never before, or their non-zero exit would make the kubelet report the pod Failed first.
 */
import { decide, isCandidate } from '../../control/sidecar-termination.js';
import type { ContainerStatus, Pod } from '../../core/types.js';

/** One runtime instance of a pod's container, as CRI reports it. */
export interface CriInstance {
  readonly name: string;
  readonly id: string;
  readonly attempt: number;
  readonly state: 'created' | 'running' | 'exited' | 'unknown';
  readonly exitCode: number;
}

export type NodeLocalStep =
  | { readonly action: 'none'; readonly reason: string }
  | {
      readonly action: 'stop';
      /** The CRR name the stop is recorded under. */
      readonly crr: string;
      /** Sidecars to stop, in order (lowest exit priority first), each with its running instance. */
      readonly containers: readonly { readonly name: string; readonly id: string }[];
    };

/**
 * The instances with the exits containerd has published but CRI does not show yet (CRI still says running until
 * containerd's CRI plugin has deleted the task): such an instance is exited, with the published code. Pure.
 */
export function withPublishedExits(
  instances: readonly CriInstance[],
  exitOf: (containerId: string) => { readonly exitCode: number } | undefined,
): CriInstance[] {
  return instances.map((i) => {
    if (i.state !== 'running') return i;
    const exit = exitOf(i.id);
    return exit ? { ...i, state: 'exited', exitCode: exit.exitCode } : i;
  });
}

/** Whether the kubelet restarts an exited container under this restart policy (it then reports it waiting). */
function restarts(restartPolicy: string, exitCode: number): boolean {
  return restartPolicy === 'Always' || (restartPolicy === 'OnFailure' && exitCode !== 0);
}

/**
 * The pod with `status.containerStatuses` as CRI shows them now, in the kubelet's terms: the newest instance per
 * container (highest attempt) gives the state, the one before it `lastState`; an exited container the kubelet will
 * restart is `waiting` with the exit in `lastState`, as the kubelet reports a back-off.
 */
export function podWithCriStatus(pod: Pod, instances: readonly CriInstance[], scheme: string): Pod {
  const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
  const byName = new Map<string, CriInstance[]>();
  for (const i of instances) byName.set(i.name, [...(byName.get(i.name) ?? []), i]);
  const statuses: ContainerStatus[] = (pod.spec?.containers ?? []).map((c) => {
    const all = (byName.get(c.name) ?? []).sort((a, b) => b.attempt - a.attempt);
    const newest = all[0];
    if (!newest) return { name: c.name, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } };
    const previous = all.find((i) => i.attempt < newest.attempt && i.state === 'exited');
    const base = { name: c.name, containerID: `${scheme}://${newest.id}`, restartCount: newest.attempt };
    const last = previous ? { lastState: { terminated: { exitCode: previous.exitCode } } } : {};
    switch (newest.state) {
      case 'running':
        return { ...base, state: { running: {} }, ...last };
      case 'exited':
        return restarts(restartPolicy, newest.exitCode)
          ? { ...base, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: newest.exitCode } } }
          : { ...base, state: { terminated: { exitCode: newest.exitCode } }, ...last };
      default:
        return { ...base, state: { waiting: { reason: 'ContainerCreating' } }, ...last };
    }
  });
  const reported = pod.status?.phase;
  // The kubelet may not have reported Running yet although CRI runs the containers: CRI is the fresher truth.
  const phase = reported === 'Succeeded' || reported === 'Failed' ? reported : instances.length > 0 ? 'Running' : reported;
  return { ...pod, status: { ...pod.status, ...(phase ? { phase } : {}), containerStatuses: statuses } };
}

export interface NodeLocalInput {
  /** The pod from the daemon's cache (spec, phase, annotations). */
  readonly pod: Pod;
  readonly instances: readonly CriInstance[];
  /** Runtime name for container IDs (`containerd`). */
  readonly scheme: string;
  /** The pod's `sidecar-termination-<uid>` CRR is in the daemon's cache (the manager's or our record). */
  readonly crrCached: boolean;
  /** This daemon already stopped the pod's sidecars (its record may not be cached, or could not be written). */
  readonly stoppedHere: boolean;
}

/** What the node-local terminator does for one pod now. */
export function decideNodeLocal(input: NodeLocalInput): NodeLocalStep {
  const { pod } = input;
  if (!isCandidate(pod)) return { action: 'none', reason: 'not a Job pod with marked sidecars' };
  // The daemon runs where a kubelet runs containers over CRI: a normal node (virtual-kubelet pods are the manager's).
  const d = decide({
    pod: podWithCriStatus(pod, input.instances, input.scheme),
    nodeKind: 'normal',
    crrExists: input.crrCached || input.stoppedHere,
  });
  if (d.action !== 'act') return { action: 'none', reason: d.reason };
  if (!d.createCrr) return { action: 'none', reason: "what is left (pod phase, condition) is the manager's" };
  // Ignore-exit-code sidecars stop only once the pod's phase is terminal in the API (the manager writes it first): a
  // sidecar stopped earlier exits non-zero, the kubelet reports the pod Failed, and no phase can follow a terminal one.
  if (d.markTerminated?.phase)
    return { action: 'none', reason: `ignore-exit-code sidecars wait for the manager to mark the pod ${d.markTerminated.phase}` };
  const containers: { name: string; id: string }[] = [];
  for (const name of d.createCrr.containers) {
    const running = input.instances.filter((i) => i.name === name && i.state === 'running').sort((a, b) => b.attempt - a.attempt)[0];
    if (running) containers.push({ name, id: running.id });
  }
  if (containers.length === 0) return { action: 'none', reason: 'no sidecar to stop is running' };
  return { action: 'stop', crr: d.createCrr.name, containers };
}

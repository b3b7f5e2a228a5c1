/**
 * Enhanced liveness (gate EnhancedLivenessProbe), the manager's side; pure. Two decisions:
 * - which liveness probes a node's NodePodProbe lists: the probes the pod webhook moved out of that node's opted-in
 *   pods, named `enhanced-liveness:<container>` beside the PodProbeMarkers' `<marker>#<probe>` entries, which stay;
 * - what each opted-in pod looks like to its budget (available, restarting, failing containers) and what its
 *   waiting condition must say; the budget arithmetic itself is `admitLivenessRestarts` in control/.
 */
import { createHash } from 'node:crypto';
import type { ContainerProbe, NodePodProbe, PodProbe, PodProbeStatus } from '../../../api/kinds/podprobemarker.js';
import {
  ANNOTATION_PUB_NO_PROTECT,
  CONDITION_LIVENESS_RESTART_PENDING,
  KRUISE_API_VERSION,
  LABEL_LIVENESS_RESTART,
} from '../../../contracts/index.js';
import { livenessProbeContainer, livenessProbeName, movedLivenessProbes, type BudgetMember } from '../../control/enhanced-liveness.js';
import { nonRunningMessage } from '../../control/pod-probe.js';
import { isPodActive, isPodAvailable } from '../../control/pod-unavailable-budget.js';
import { podOwnerReference } from '../../core/meta.js';
import type { KubeObject, Pod, PodCondition } from '../../core/types.js';

export type NodePodProbeObject = NodePodProbe & KubeObject;

/** CRR annotation (ours): the id of the container instance the liveness restart replaces. */
export const ANNOTATION_LIVENESS_RESTART_FROM = 'kruise.cdk8s.io/liveness-restart-from';
/** How long a finished liveness CRR is kept (the daemon's TTL), and how long one may run before it fails. */
export const LIVENESS_CRR_TTL_SECONDS = 60;
export const LIVENESS_CRR_DEADLINE_SECONDS = 120;

/** Event reasons. */
export const EVENT_LIVENESS_RESTART = 'LivenessRestart';
export const EVENT_LIVENESS_RESTART_WAITING = 'LivenessRestartWaiting';
export const EVENT_CLUSTER_WIDE_LIVENESS_FAILURE = 'ClusterWideLivenessFailure';
/** Reasons of the waiting condition. */
export const REASON_BUDGET_EXHAUSTED = 'BudgetExhausted';
export const REASON_NOT_WAITING = 'NotWaiting';

/** Whether the pod's moved probes belong in its node's NodePodProbe: opted in, active, bound, with probes moved. */
export function probedPod(pod: Pod): boolean {
  return !!pod.spec?.nodeName && isPodActive(pod) && movedLivenessProbes(pod).length > 0;
}

/** The NodePodProbe entry of one opted-in pod's moved probes. */
function entryProbes(pod: Pod): ContainerProbe[] {
  return movedLivenessProbes(pod).map((m) => ({ name: livenessProbeName(m.name), containerName: m.name, probe: m.livenessProbe }));
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * A node's podProbes with the liveness entries replaced by those of `pods` (the node's opted-in pods): other probes
 * keep their place, a pod's entry keeps its marker probes, and a pod gone loses its liveness probes. Undefined when
 * nothing changes.
 */
export function nodeLivenessProbes(npp: NodePodProbeObject, pods: readonly Pod[]): PodProbe[] | undefined {
  const want = new Map(pods.filter(probedPod).map((p) => [p.metadata.uid!, p]));
  const current = npp.spec?.podProbes ?? [];
  const out: PodProbe[] = [];
  const seen = new Set<string>();
  for (const entry of current) {
    const pod = want.get(entry.uid);
    const others = (entry.probes ?? []).filter((p) => livenessProbeContainer(p.name) === undefined);
    const mine = pod && pod.metadata.name === entry.name && pod.metadata.namespace === entry.namespace ? entryProbes(pod) : [];
    if (mine.length) seen.add(entry.uid);
    const probes = [...others, ...mine];
    if (!probes.length) continue;
    const ip = mine.length && typeof pod?.status?.podIP === 'string' && pod.status.podIP ? pod.status.podIP : entry.IP;
    out.push({ ...entry, IP: ip, probes });
  }
  for (const [uid, pod] of want) {
    if (seen.has(uid)) continue;
    out.push({
      name: pod.metadata.name!,
      namespace: pod.metadata.namespace!,
      uid,
      IP: typeof pod.status?.podIP === 'string' ? pod.status.podIP : '',
      probes: entryProbes(pod),
    });
  }
  return same(current, out) ? undefined : out;
}

/** A liveness restart request of ours, as the budget counts it. */
export interface LivenessCrrView {
  readonly podUid: string;
  readonly container: string;
  /** The container instance it replaces. */
  readonly fromContainerId: string;
}

export function livenessCrrView(crr: KubeObject): LivenessCrrView | undefined {
  const container = crr.metadata.labels?.[LABEL_LIVENESS_RESTART];
  const owner = crr.metadata.ownerReferences?.find((o) => o.kind === 'Pod');
  if (!container || !owner?.uid) return undefined;
  return { podUid: owner.uid, container, fromContainerId: crr.metadata.annotations?.[ANNOTATION_LIVENESS_RESTART_FROM] ?? '' };
}

function containerStatus(pod: Pod, name: string) {
  return pod.status?.containerStatuses?.find((c) => c.name === name);
}

/**
 * A restart is under way while a request of ours for the pod exists and the pod has not come back from it: available
 * again, with a container other than the one the request replaces. Until the kubelet reports the new container the
 * pod's Ready may still be the old container's, so availability alone does not end it.
 */
export function isRestarting(pod: Pod, crrs: readonly LivenessCrrView[]): boolean {
  return crrs.some((c) => {
    if (c.podUid !== pod.metadata.uid) return false;
    const now = containerStatus(pod, c.container)?.containerID ?? '';
    return !(isPodAvailable(pod) && now !== '' && now !== c.fromContainerId);
  });
}

/**
 * The kubelet reports a container's start to the second, truncated, so a result of the instance before it (the
 * daemon reports the old container "Non-running" while it is being replaced) can carry a later time than the start
 * it reports. The daemon runs no probe of a new container before its initial delay (at least 1 s), so a result less
 * than this long after the reported start is the old instance's.
 */
export const START_TIME_GRAIN_MS = 1_000;

/**
 * Containers whose moved liveness probe fails on the container now running, oldest failure first. A result from
 * before the container's start (to the kubelet's grain) belongs to the instance before it; a container not running
 * is the kubelet's to restart.
 */
export function failingContainers(pod: Pod, status: PodProbeStatus | undefined): string[] {
  const out: { name: string; at: number }[] = [];
  for (const st of status?.probeStates ?? []) {
    const name = livenessProbeContainer(st.name);
    // A container not running (the one being replaced, seen through the daemon's container list of up to a second ago)
    // is the kubelet's to restart, whenever the report was made.
    if (!name || st.state !== 'Failed' || st.message === nonRunningMessage(name)) continue;
    const cs = containerStatus(pod, name);
    const started = Date.parse(cs?.state?.running?.startedAt ?? '');
    const at = Date.parse(st.lastProbeTime ?? '');
    if (!Number.isFinite(started) || !Number.isFinite(at) || at < started + START_TIME_GRAIN_MS) continue;
    out.push({ name, at });
  }
  return out.sort((a, b) => a.at - b.at || a.name.localeCompare(b.name)).map((x) => x.name);
}

/** One pod as its budget sees it. */
export function budgetMember(pod: Pod, status: PodProbeStatus | undefined, crrs: readonly LivenessCrrView[]): BudgetMember {
  return {
    uid: pod.metadata.uid!,
    name: pod.metadata.name!,
    available: isPodAvailable(pod),
    restarting: isRestarting(pod, crrs),
    failing: isPodActive(pod) ? failingContainers(pod, status) : [],
  };
}

/** Pods annotated `pub.kruise.io/no-protect: "true"` are outside every budget: each counts alone, one restart at a time. */
export function unprotected(pod: Pod): boolean {
  return pod.metadata.annotations?.[ANNOTATION_PUB_NO_PROTECT] === 'true';
}

/** The restart request of one failing container instance (its name is stable per instance: one request each). */
export function livenessCrr(pod: Pod, container: string): KubeObject {
  const from = containerStatus(pod, container)?.containerID ?? '';
  const hash = createHash('sha256').update(`${pod.metadata.uid}/${container}/${from}`).digest('hex').slice(0, 10);
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'ContainerRecreateRequest',
    metadata: {
      name: `${pod.metadata.name!.slice(0, 200)}-liveness-${hash}`,
      namespace: pod.metadata.namespace!,
      labels: { [LABEL_LIVENESS_RESTART]: container },
      annotations: { [ANNOTATION_LIVENESS_RESTART_FROM]: from },
      ownerReferences: [podOwnerReference(pod, { controller: true, blockOwnerDeletion: true })],
    },
    spec: {
      podName: pod.metadata.name,
      containers: [{ name: container }],
      // The container's preStop runs first, as the kubelet runs it before a liveness restart.
      strategy: { failurePolicy: 'Fail' },
      activeDeadlineSeconds: LIVENESS_CRR_DEADLINE_SECONDS,
      ttlSecondsAfterFinished: LIVENESS_CRR_TTL_SECONDS,
    },
  };
}

/**
 * The waiting condition a pod must carry: True with the reason while a restart of it waits, False once nothing
 * waits (only where it was True: a pod that never waited gets no condition). Undefined when the pod's is right.
 */
export function waitingCondition(pod: Pod, waiting: string | undefined, nowIso: string): PodCondition | undefined {
  const cur = pod.status?.conditions?.find((c) => c.type === CONDITION_LIVENESS_RESTART_PENDING);
  if (waiting === undefined) {
    if (!cur || cur.status !== 'True') return undefined;
    return {
      type: CONDITION_LIVENESS_RESTART_PENDING,
      status: 'False',
      reason: REASON_NOT_WAITING,
      message: '',
      lastTransitionTime: nowIso,
    };
  }
  if (cur?.status === 'True' && cur.message === waiting) return undefined;
  return {
    type: CONDITION_LIVENESS_RESTART_PENDING,
    status: 'True',
    reason: REASON_BUDGET_EXHAUSTED,
    message: waiting,
    lastTransitionTime: cur?.status === 'True' && cur.lastTransitionTime ? cur.lastTransitionTime : nowIso,
  };
}

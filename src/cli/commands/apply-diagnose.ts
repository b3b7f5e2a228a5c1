// What `cdk8s-kruise apply` says when a phase does not finish: the cause, read from the objects kubectl returns
// (pods and events), and whether kubectl failed to reach the cluster at all rather than being refused by it. Pure
// functions of kubectl's output, so each case has a table test.

/** The fields of a Pod that say why it is not ready. */
export interface PodFacts {
  metadata?: { name?: string };
  status?: {
    phase?: string;
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
    initContainerStatuses?: ContainerFacts[];
    containerStatuses?: ContainerFacts[];
  };
}

interface ContainerFacts {
  name?: string;
  image?: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; terminated?: { exitCode?: number; reason?: string } };
  lastState?: { terminated?: { exitCode?: number; reason?: string } };
}

/** The fields of an Event that are shown. */
export interface EventFacts {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string };
  lastTimestamp?: string | null;
  eventTime?: string | null;
  metadata?: { creationTimestamp?: string };
}

/** Why a workload did not roll out: one line naming the cause, then the facts it rests on. */
export interface StallDiagnosis {
  readonly cause: string;
  readonly details: string[];
}

const IMAGE_PULL = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'RegistryUnavailable']);
const CREATE_FAILED = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);
/** At most this many events are shown: the newest Warning events about the workload and its pods. */
const MAX_EVENTS = 8;
const MAX_TEXT = 300;

function clip(s: string | undefined): string {
  const one = (s ?? '').replace(/\s+/g, ' ').trim();
  return one.length > MAX_TEXT ? `${one.slice(0, MAX_TEXT)}…` : one;
}

function containersOf(pod: PodFacts): ContainerFacts[] {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
}

function podLine(pod: PodFacts): string {
  const parts = [pod.status?.phase ?? 'Unknown'];
  const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (unscheduled) parts.push(`not scheduled (${unscheduled.reason ?? 'unknown reason'}): ${clip(unscheduled.message)}`);
  for (const c of containersOf(pod)) {
    const waiting = c.state?.waiting;
    const last = c.lastState?.terminated;
    if (waiting?.reason)
      parts.push(
        `container ${c.name}: ${waiting.reason}${waiting.message ? `: ${clip(waiting.message)}` : ''}` +
          (last ? ` (last exit code ${last.exitCode}, ${c.restartCount ?? 0} restart(s))` : ''),
      );
    else if (c.ready === false) parts.push(`container ${c.name}: not ready`);
  }
  return `pod ${pod.metadata?.name ?? '?'}: ${parts.join('; ')}`;
}

function eventTime(e: EventFacts): string {
  return e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '';
}

/**
 * The cause of a stalled rollout of `workload` ("Deployment ns/name"), from its pods and the namespace's events
 * (only those about the workload, its ReplicaSets and its pods are used).
 */
export function diagnoseStall(
  workload: { kind: string; name: string },
  pods: readonly PodFacts[],
  events: readonly EventFacts[],
): StallDiagnosis {
  const podNames = new Set(pods.map((p) => p.metadata?.name).filter((n): n is string => !!n));
  const relevant = events
    .filter((e) => {
      const o = e.involvedObject ?? {};
      if (o.kind === 'Pod') return podNames.has(o.name ?? '');
      if (o.kind === workload.kind) return o.name === workload.name;
      return o.kind === 'ReplicaSet' && (o.name ?? '').startsWith(`${workload.name}-`);
    })
    .sort((a, b) => eventTime(b).localeCompare(eventTime(a)));
  const warnings = relevant.filter((e) => e.type === 'Warning');
  const details = [
    ...pods.map(podLine),
    ...warnings
      .slice(0, MAX_EVENTS)
      .map(
        (e) =>
          `event ${e.involvedObject?.kind ?? '?'}/${e.involvedObject?.name ?? '?'} ${e.reason ?? ''}: ${clip(e.message)}${(e.count ?? 1) > 1 ? ` (×${e.count})` : ''}`,
      ),
  ];
  return { cause: causeOf(workload, pods, warnings), details };
}

function causeOf(workload: { kind: string; name: string }, pods: readonly PodFacts[], warnings: readonly EventFacts[]): string {
  if (pods.length === 0) {
    const failedCreate = warnings.find((e) => e.reason === 'FailedCreate');
    if (failedCreate) return `no pod could be created: ${clip(failedCreate.message)}`;
    return `no pod was created for the ${workload.kind} (is the cluster's controller manager running?)`;
  }
  for (const pod of pods)
    for (const c of containersOf(pod)) {
      const w = c.state?.waiting;
      if (w?.reason && IMAGE_PULL.has(w.reason))
        return `the image ${c.image ?? '?'} of container ${c.name} cannot be pulled (${w.reason})${w.message ? `: ${clip(w.message)}` : ''}; push it or set the runtime image's registry`;
    }
  const pullFailed = warnings.find((e) => e.reason === 'Failed' && /pull|image/i.test(e.message ?? ''));
  if (pullFailed) return `an image cannot be pulled: ${clip(pullFailed.message)}`;
  for (const pod of pods)
    for (const c of containersOf(pod)) {
      const w = c.state?.waiting;
      const last = c.lastState?.terminated ?? c.state?.terminated;
      if (w?.reason === 'CrashLoopBackOff' || (last && last.exitCode !== 0 && (c.restartCount ?? 0) > 0))
        return `container ${c.name} of pod ${pod.metadata?.name} is crash-looping (last exit code ${last?.exitCode ?? '?'}${last?.reason ? `, ${last.reason}` : ''}, ${c.restartCount ?? 0} restart(s)); see its log: kubectl logs -p`;
      if (w?.reason && CREATE_FAILED.has(w.reason))
        return `container ${c.name} of pod ${pod.metadata?.name} cannot be created (${w.reason})${w.message ? `: ${clip(w.message)}` : ''}`;
    }
  for (const pod of pods) {
    const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    if (unscheduled) return `pod ${pod.metadata?.name} cannot be scheduled: ${clip(unscheduled.message) || unscheduled.reason}`;
  }
  const notReady = pods.find((p) => p.status?.phase === 'Running' && containersOf(p).some((c) => c.ready === false));
  if (notReady) {
    const probe = warnings.find((e) => e.reason === 'Unhealthy' && e.involvedObject?.name === notReady.metadata?.name);
    return `pod ${notReady.metadata?.name} runs but is not ready${probe ? `: ${clip(probe.message)}` : ' (its readiness probe has not passed yet)'}`;
  }
  const phases = [...new Set(pods.map((p) => p.status?.phase ?? 'Unknown'))].join(', ');
  return `${pods.length} pod(s) not ready yet (${phases}); the rollout may need a longer --timeout`;
}

/** kubectl's messages when it could not talk to the API server at all (as opposed to a refusal by it). */
const UNREACHABLE: readonly RegExp[] = [
  /Unable to connect to the server/i,
  /connect: connection refused/i,
  /dial tcp .*: (i\/o timeout|connect:)/i,
  /no such host/i,
  /TLS handshake timeout/i,
  /net\/http: request canceled/i,
  /context deadline exceeded/i,
  /The connection to the server .* was refused/i,
  /x509: |tls: failed to verify certificate/i,
];
const UNAUTHORIZED: readonly RegExp[] = [/\(Unauthorized\)/, /must be logged in to the server/i, /provide credentials/i];

/** What a failed kubectl call means: the cluster cannot be reached, refused the credentials, or refused the request. */
export function kubectlFailure(output: string): { kind: 'unreachable' | 'unauthorized' | 'refused'; what: string } {
  if (UNREACHABLE.some((r) => r.test(output)))
    return { kind: 'unreachable', what: 'cannot reach the cluster (check --kubeconfig/--context, the network and the server address)' };
  if (UNAUTHORIZED.some((r) => r.test(output)))
    return { kind: 'unauthorized', what: 'the cluster refused the credentials (check --kubeconfig/--context and that they are current)' };
  return { kind: 'refused', what: 'apply was rejected' };
}

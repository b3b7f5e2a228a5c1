/**
 * The node side of PodProbeMarker (upstream kruise-daemon `podprobe`): which probes this node's NodePodProbe asks
 * for, the success/failure thresholds of one probe, the HTTP request of an httpGet probe, and the NodePodProbe
 * status that the held results make. Pure; the workers, the prober and the status write are in the other files.
 */
import type { V1Probe } from '../../../api/core/k8s-core-types.js';
import type { ContainerProbeState, NodePodProbe, NodePodProbeStatus, ProbeState } from '../../../api/kinds/podprobemarker.js';

/** Longest probe message kept in the status (upstream's bound). */
export const MAX_PROBE_MESSAGE = 1024;
/** A held result is written again after this long even if unchanged, so lastProbeTime stays recent (upstream's). */
export const RESYNC_PROBE_TIME_MS = 600_000;

/** One probe to run: a pod's container probe from the NodePodProbe spec. */
export interface ProbeTask {
  /** `uid/<marker>#<probe>`: one worker per key. */
  readonly key: string;
  readonly podNamespace: string;
  readonly podName: string;
  readonly podUid: string;
  readonly podIP: string;
  readonly containerName: string;
  readonly probeName: string;
  readonly probe: V1Probe;
}

export function taskKey(podUid: string, probeName: string): string {
  return `${podUid}/${probeName}`;
}

/** Every probe the NodePodProbe's spec asks for. */
export function probeTasks(npp: NodePodProbe | undefined): ProbeTask[] {
  const out: ProbeTask[] = [];
  for (const pp of npp?.spec?.podProbes ?? []) {
    for (const p of pp.probes ?? []) {
      out.push({
        key: taskKey(pp.uid, p.name),
        podNamespace: pp.namespace,
        podName: pp.name,
        podUid: pp.uid,
        podIP: pp.IP,
        containerName: p.containerName,
        probeName: p.name,
        probe: p.probe,
      });
    }
  }
  return out;
}

/** Whether a running worker must restart its counting: the handler changed (upstream resets to Unknown then). */
export function handlerChanged(a: V1Probe, b: V1Probe): boolean {
  const h = (p: V1Probe) => JSON.stringify([p.exec ?? null, p.httpGet ?? null, p.tcpSocket ?? null, p.grpc ?? null]);
  return h(a) !== h(b);
}

/** Seconds, with the floors upstream applies (a zero or absent value means 1, and thresholds mean 1). */
export function probeTiming(p: V1Probe): { periodMs: number; timeoutMs: number; initialDelayMs: number; success: number; failure: number } {
  const atLeast1 = (v: number | undefined) => (v && v > 0 ? v : 1);
  return {
    periodMs: atLeast1(p.periodSeconds) * 1000,
    timeoutMs: atLeast1(p.timeoutSeconds) * 1000,
    initialDelayMs: atLeast1(p.initialDelaySeconds) * 1000,
    success: atLeast1(p.successThreshold),
    failure: atLeast1(p.failureThreshold),
  };
}

/** Consecutive equal outcomes of one worker. */
export interface RunState {
  readonly last?: 'Succeeded' | 'Failed';
  readonly run: number;
}

/**
 * One outcome through the thresholds: the next run state, and the state to report when the run reached its
 * threshold (undefined: below it, the reported state stays as it was).
 */
export function applyThreshold(
  prev: RunState,
  outcome: 'Succeeded' | 'Failed',
  t: { success: number; failure: number },
): { run: RunState; report?: 'Succeeded' | 'Failed' } {
  const run: RunState = prev.last === outcome ? { last: outcome, run: prev.run + 1 } : { last: outcome, run: 1 };
  const need = outcome === 'Succeeded' ? t.success : t.failure;
  return run.run >= need ? { run, report: outcome } : { run };
}

/** The URL and headers of an httpGet probe against the pod (no redirects followed, as upstream). */
export function httpProbeRequest(
  httpGet: NonNullable<V1Probe['httpGet']>,
  podIP: string,
): { url: URL; headers: Record<string, string> } | { error: string } {
  const scheme = (httpGet.scheme ?? 'HTTP').toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return { error: `httpGet scheme ${JSON.stringify(httpGet.scheme)} is not HTTP or HTTPS` };
  const port = typeof httpGet.port === 'number' ? httpGet.port : Number(httpGet.port);
  if (!Number.isInteger(port) || port <= 0 || port >= 65536) return { error: `invalid port number: ${String(httpGet.port)}` };
  const host = httpGet.host || podIP;
  if (!host) return { error: 'the pod has no IP yet' };
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  let url: URL;
  try {
    url = new URL(httpGet.path ?? '/', `${scheme}://${hostPart}:${port}`);
  } catch {
    return { error: `httpGet path ${JSON.stringify(httpGet.path)} is not a URL path` };
  }
  const headers: Record<string, string> = {};
  for (const h of httpGet.httpHeaders ?? []) headers[h.name] = h.value;
  const has = (n: string) => Object.keys(headers).some((k) => k.toLowerCase() === n);
  if (!has('user-agent')) headers['User-Agent'] = 'kube-probe';
  if (!has('accept')) headers['Accept'] = '*/*';
  return { url, headers };
}

/** An HTTP status as a probe outcome: 2xx and 3xx succeed (a redirect is not followed). */
export function httpOutcome(status: number): 'Succeeded' | 'Failed' {
  return status >= 200 && status < 400 ? 'Succeeded' : 'Failed';
}

export function truncateMessage(msg: string): string {
  return msg.length > MAX_PROBE_MESSAGE ? msg.slice(0, MAX_PROBE_MESSAGE) : msg;
}

/** The latest reported result of one probe, held by the daemon until written. */
export interface HeldResult {
  readonly task: Pick<ProbeTask, 'podNamespace' | 'podName' | 'podUid' | 'probeName'>;
  readonly state: ProbeState;
  readonly message: string;
  /** RFC 3339. */
  readonly probedAt: string;
}

/**
 * The status the held results make: entries of probes the spec no longer lists dropped, each held result written
 * over its entry (lastTransitionTime moves only when the state changes). Returns undefined when nothing differs
 * from the current status, so a batch of unchanged results costs no write.
 */
export function nextStatus(npp: NodePodProbe, held: Iterable<HeldResult>, nowIso: string, nowMs: number): NodePodProbeStatus | undefined {
  const valid = new Set(probeTasks(npp).map((t) => t.key));
  const pods = (npp.status?.podProbeStatuses ?? [])
    .map((p) => ({ ...p, probeStates: (p.probeStates ?? []).filter((s) => valid.has(taskKey(p.uid, s.name))) }))
    .filter((p) => p.probeStates.length > 0);
  let changed = pods.length !== (npp.status?.podProbeStatuses ?? []).length;
  changed ||= pods.some((p, i) => p.probeStates.length !== (npp.status!.podProbeStatuses![i]!.probeStates ?? []).length);
  for (const r of held) {
    if (!valid.has(taskKey(r.task.podUid, r.task.probeName))) continue;
    let pod = pods.find((p) => p.uid === r.task.podUid);
    if (!pod) {
      pod = { name: r.task.podName, namespace: r.task.podNamespace, uid: r.task.podUid, probeStates: [] };
      pods.push(pod);
    }
    const i = pod.probeStates.findIndex((s) => s.name === r.task.probeName);
    const cur: ContainerProbeState | undefined = i >= 0 ? pod.probeStates[i] : undefined;
    const stale = !cur?.lastProbeTime || nowMs - Date.parse(cur.lastProbeTime) >= RESYNC_PROBE_TIME_MS;
    if (cur && cur.state === r.state && (cur.message ?? '') === r.message && !stale) continue;
    const next: ContainerProbeState = {
      name: r.task.probeName,
      state: r.state,
      lastProbeTime: r.probedAt,
      lastTransitionTime: cur && cur.state === r.state && cur.lastTransitionTime ? cur.lastTransitionTime : nowIso,
      ...(r.message ? { message: r.message } : {}),
    };
    if (i >= 0) pod.probeStates[i] = next;
    else pod.probeStates.push(next);
    changed = true;
  }
  if (!changed) return undefined;
  return { podProbeStatuses: pods };
}

/**
 * PodProbeMarker (upstream `podprobemarker-controller`, gate PodProbeMarkerGate): the marker's probes are listed,
 * per pod it selects, in the NodePodProbe of the pod's node, where the node's daemon runs them. A named port of an
 * httpGet or tcpSocket probe is resolved against the pod's container, since the daemon sees only the NodePodProbe.
 *
 * Beyond upstream, which only ever adds: the marker's entries are kept equal to what it selects now, so a probe
 * removed from the spec, or a pod whose labels no longer match, stops being probed. Entries of other markers are
 * left where they are (two markers' reconciles must not reorder each other's writes back and forth).
 */
import type { ContainerProbe, PodProbe, PodProbeMarker, NodePodProbe } from '../../../api/kinds/podprobemarker.js';
import { FINALIZER_NODE_POD_PROBE_CLEANUP, selectorMatches } from '../../../contracts/index.js';
import { isProbeOfMarker, nodeProbeName } from '../../control/pod-probe.js';
import type { KubeObject, Pod } from '../../core/types.js';

export type PodProbeMarkerObject = PodProbeMarker & KubeObject;
export type NodePodProbeObject = NodePodProbe & KubeObject;

/** What the decision needs of a pod the marker may probe. */
export interface ProbePodView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly ip: string;
  readonly nodeName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly containers: readonly {
    readonly name: string;
    readonly ports: readonly { readonly name?: string; readonly containerPort: number }[];
  }[];
}

/**
 * The pod as a probe target, or undefined when it is not one yet or any more: as upstream, only an active pod
 * (not deleted, not finished) that is bound to a node and Initialized.
 */
export function probeTarget(pod: Pod): ProbePodView | undefined {
  const phase = pod.status?.phase;
  if (pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') return undefined;
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return undefined;
  if (!pod.status?.conditions?.some((c) => c.type === 'Initialized' && c.status === 'True')) return undefined;
  return {
    namespace: pod.metadata.namespace ?? '',
    name: pod.metadata.name ?? '',
    uid: pod.metadata.uid ?? '',
    ip: typeof pod.status?.podIP === 'string' ? pod.status.podIP : '',
    nodeName,
    labels: pod.metadata.labels ?? {},
    containers: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      ports: ((c.ports as { name?: string; containerPort: number }[] | undefined) ?? []).map((p) => ({
        ...(p.name ? { name: p.name } : {}),
        containerPort: p.containerPort,
      })),
    })),
  };
}

/** A port as written in a probe: a number, or a container port's name. */
function resolvePort(port: unknown, pod: ProbePodView, containerName: string): number | string {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^[0-9]+$/.test(port)) return Number(port);
  const container = pod.containers.find((c) => c.name === containerName);
  if (!container) return `container ${JSON.stringify(containerName)} is not in pod ${pod.namespace}/${pod.name}`;
  const found = container.ports.find((p) => p.name === port);
  if (!found)
    return `container ${JSON.stringify(containerName)} of pod ${pod.namespace}/${pod.name} has no port named ${JSON.stringify(port)}`;
  return found.containerPort;
}

/** The marker's probes as the node's daemon runs them on `pod`, and the probes that could not be resolved. */
export function nodeProbesFor(marker: PodProbeMarkerObject, pod: ProbePodView): { probes: ContainerProbe[]; problems: string[] } {
  const probes: ContainerProbe[] = [];
  const problems: string[] = [];
  for (const p of marker.spec.probes ?? []) {
    const probe = structuredClone(p.probe);
    let problem: string | undefined;
    for (const handler of [probe.httpGet, probe.tcpSocket]) {
      if (!handler) continue;
      const port = resolvePort(handler.port, pod, p.containerName);
      if (typeof port === 'string') problem = `probe ${JSON.stringify(p.name)}: ${port}`;
      else handler.port = port;
    }
    if (problem) problems.push(problem);
    else probes.push({ name: nodeProbeName(marker.metadata.name!, p.name), containerName: p.containerName, probe });
  }
  return { probes, problems };
}

export interface NodePodProbeWrite {
  readonly name: string;
  /** The NodePodProbe's resourceVersion the write is based on (a conditional write: another marker may write too). */
  readonly resourceVersion?: string;
  readonly podProbes: PodProbe[];
}

export interface PodProbeMarkerDecision {
  readonly finalizer?: 'add' | 'remove';
  /** NodePodProbes whose spec.podProbes change, with the whole new list. */
  readonly writes: NodePodProbeWrite[];
  readonly status?: { readonly observedGeneration: number; readonly matchedPods: number };
  /** Probes left out for a pod (a named port that does not resolve), for an event. */
  readonly problems: string[];
}

export interface PodProbeMarkerInput {
  readonly marker: PodProbeMarkerObject;
  /** Probe targets in the marker's namespace (see {@link probeTarget}); the decision applies the selector. */
  readonly pods: readonly ProbePodView[];
  readonly nodePodProbes: readonly NodePodProbeObject[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** One NodePodProbe's podProbes with this marker's entries replaced by `want` (pod uid → its probes of this marker). */
function rewrite(
  current: readonly PodProbe[],
  marker: PodProbeMarkerObject,
  want: ReadonlyMap<string, { pod: ProbePodView; probes: ContainerProbe[] }>,
): PodProbe[] {
  const name = marker.metadata.name!;
  const ns = marker.metadata.namespace;
  const out: PodProbe[] = [];
  const seen = new Set<string>();
  for (const entry of current) {
    if (entry.namespace !== ns) {
      out.push(entry);
      continue;
    }
    const wanted = entry.name === want.get(entry.uid)?.pod.name ? want.get(entry.uid) : undefined;
    if (wanted) seen.add(entry.uid);
    const byName = new Map((wanted?.probes ?? []).map((p) => [p.name, p]));
    const probes: ContainerProbe[] = [];
    // In place: this marker's probes keep their position among other markers' probes.
    for (const p of entry.probes ?? []) {
      if (!isProbeOfMarker(p.name, name)) probes.push(p);
      else if (byName.has(p.name)) {
        probes.push(byName.get(p.name)!);
        byName.delete(p.name);
      }
    }
    probes.push(...byName.values());
    if (!probes.length) continue;
    const ip = wanted && wanted.pod.ip ? wanted.pod.ip : entry.IP;
    out.push({ ...entry, IP: ip, probes });
  }
  for (const [uid, { pod, probes }] of want) {
    if (seen.has(uid) || !probes.length) continue;
    out.push({ name: pod.name, namespace: pod.namespace, uid, IP: pod.ip, probes });
  }
  return out;
}

export function decidePodProbeMarker(input: PodProbeMarkerInput): PodProbeMarkerDecision {
  const { marker } = input;
  const finalizers = marker.metadata.finalizers ?? [];
  const hasFinalizer = finalizers.includes(FINALIZER_NODE_POD_PROBE_CLEANUP);
  const deleting = !!marker.metadata.deletionTimestamp;
  const problems: string[] = [];

  // Pod uid → its probes, by node.
  const byNode = new Map<string, Map<string, { pod: ProbePodView; probes: ContainerProbe[] }>>();
  let matched = 0;
  if (!deleting) {
    for (const pod of input.pods) {
      if (pod.namespace !== marker.metadata.namespace || !selectorMatches(marker.spec.selector ?? {}, pod.labels)) continue;
      matched++;
      const { probes, problems: p } = nodeProbesFor(marker, pod);
      problems.push(...p);
      const node = byNode.get(pod.nodeName) ?? new Map<string, { pod: ProbePodView; probes: ContainerProbe[] }>();
      node.set(pod.uid, { pod, probes });
      byNode.set(pod.nodeName, node);
    }
  }
  const writes: NodePodProbeWrite[] = [];
  if (!deleting || hasFinalizer) {
    for (const npp of input.nodePodProbes) {
      const current = npp.spec?.podProbes ?? [];
      const next = rewrite(
        current,
        marker,
        byNode.get(npp.metadata.name!) ?? new Map<string, { pod: ProbePodView; probes: ContainerProbe[] }>(),
      );
      if (!same(current, next))
        writes.push({
          name: npp.metadata.name!,
          ...(npp.metadata.resourceVersion ? { resourceVersion: npp.metadata.resourceVersion } : {}),
          podProbes: next,
        });
    }
  }
  if (deleting) return { writes, problems, ...(hasFinalizer ? { finalizer: 'remove' as const } : {}) };

  const generation = marker.metadata.generation ?? 0;
  const st = marker.status;
  const status =
    st?.observedGeneration === generation && (st.matchedPods ?? 0) === matched
      ? undefined
      : { observedGeneration: generation, matchedPods: matched };
  return { writes, problems, ...(hasFinalizer ? {} : { finalizer: 'add' as const }), ...(status ? { status } : {}) };
}

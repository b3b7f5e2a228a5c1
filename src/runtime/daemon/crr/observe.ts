import type { CriClient } from '../../cri/client.js';
import { KubeletLabels, type Container } from '../../cri/types.js';
import type { ObservedContainer } from './decision.js';
import type { CriInstance } from './node-local-decision.js';

/** Epoch ms from a CRI int64 nanosecond string. */
export const nsToMs = (ns: string): number => (ns && ns !== '0' ? Number(BigInt(ns) / 1_000_000n) : 0);

/**
 * The prefix the kubelet puts on container IDs in pod status (`containerd://…`): the runtime name
 * CRI Version reports (containerd, cri-o, docker).
 */
export async function runtimeScheme(cri: CriClient): Promise<string> {
  const v = await cri.version();
  return v.runtimeName || 'containerd';
}

/** Newest instance per container name: highest attempt, then latest creation. */
export function newestByName(containers: readonly Container[]): Map<string, Container> {
  const out = new Map<string, Container>();
  for (const c of containers) {
    const name = c.labels[KubeletLabels.containerName] ?? c.metadata?.name;
    if (!name) continue;
    const prev = out.get(name);
    const attempt = c.metadata?.attempt ?? 0;
    const prevAttempt = prev?.metadata?.attempt ?? 0;
    if (!prev || attempt > prevAttempt || (attempt === prevAttempt && BigInt(c.createdAt || '0') > BigInt(prev.createdAt || '0')))
      out.set(name, c);
  }
  return out;
}

/**
 * The pod's containers on this node, found the kubelet's way: CRI labels io.kubernetes.pod.uid and
 * io.kubernetes.container.name; ContainerStatus gives the start time.
 */
export async function observePod(cri: CriClient, podUid: string, scheme: string): Promise<Map<string, ObservedContainer>> {
  const list = await cri.listContainers({ labelSelector: { [KubeletLabels.podUid]: podUid } });
  const out = new Map<string, ObservedContainer>();
  for (const [name, c] of newestByName(list)) {
    const st = await cri.containerStatus(c.id);
    out.set(name, {
      name,
      containerID: `${scheme}://${c.id}`,
      running: st.state === 'CONTAINER_RUNNING',
      exited: st.state === 'CONTAINER_EXITED',
      startedAtMs: nsToMs(st.startedAt),
      restartCount: c.metadata?.attempt ?? 0,
    });
  }
  return out;
}

/** `containerd://abc` -> `abc`. */
export const bareContainerId = (containerID: string): string => containerID.replace(/^[a-z0-9-]+:\/\//, '');

/**
 * The pod's container instances on this node for the node-local sidecar terminator: per container the newest two
 * attempts (the state, and the previous exit the kubelet reports as lastState); exit codes from ContainerStatus of the
 * exited ones only.
 */
export async function observeInstances(cri: CriClient, podUid: string): Promise<CriInstance[]> {
  const list = await cri.listContainers({ labelSelector: { [KubeletLabels.podUid]: podUid } });
  const byName = new Map<string, Container[]>();
  for (const c of list) {
    const name = c.labels[KubeletLabels.containerName] ?? c.metadata?.name;
    if (name) byName.set(name, [...(byName.get(name) ?? []), c]);
  }
  const out: CriInstance[] = [];
  for (const [name, all] of byName) {
    const recent = all.sort((a, b) => (b.metadata?.attempt ?? 0) - (a.metadata?.attempt ?? 0)).slice(0, 2);
    for (const c of recent) {
      const state =
        c.state === 'CONTAINER_RUNNING'
          ? 'running'
          : c.state === 'CONTAINER_EXITED'
            ? 'exited'
            : c.state === 'CONTAINER_CREATED'
              ? 'created'
              : 'unknown';
      const exitCode = state === 'exited' ? (await cri.containerStatus(c.id)).exitCode : 0;
      out.push({ name, id: c.id, attempt: c.metadata?.attempt ?? 0, state, exitCode });
    }
  }
  return out;
}

/**
 * Cache transforms of the shared informers: keep only the fields some controller or webhook of this
 * process reads, so 10,000 pods fit the memory budget. Add a field here when a new reader needs it.
 */
import type { Container, ContainerStatus, KubeObject, Node, Pod } from '../core/types.js';

const KRUISE_ENV = /^KRUISE_/;

function slimContainer(c: Container): Container {
  const env = c.env?.filter((e) => KRUISE_ENV.test(e.name)).map((e) => ({ name: e.name, value: e.value }));
  return { name: c.name, image: c.image, ...(env && env.length ? { env } : {}) };
}

function slimStatus(s: ContainerStatus): ContainerStatus {
  // The previous instance's exit code only: the sidecar terminator tells a kubelet restart after a
  // failed exit (OnFailure) from a sidecar that never stopped.
  const lastExit = s.lastState?.terminated?.exitCode;
  return {
    name: s.name,
    containerID: s.containerID,
    restartCount: s.restartCount,
    state: s.state,
    ...(lastExit !== undefined ? { lastState: { terminated: { exitCode: lastExit } } } : {}),
  };
}

/** Pods: identity, node, restart policy, containers' names/images/KRUISE_* env, phase, conditions, states. */
export function podCacheTransform(obj: KubeObject): Pod {
  const p = obj as Pod;
  const md = p.metadata;
  return {
    apiVersion: p.apiVersion,
    kind: p.kind,
    metadata: {
      name: md.name,
      namespace: md.namespace,
      uid: md.uid,
      resourceVersion: md.resourceVersion,
      ...(md.deletionTimestamp ? { deletionTimestamp: md.deletionTimestamp } : {}),
    },
    spec: {
      nodeName: p.spec?.nodeName,
      restartPolicy: p.spec?.restartPolicy,
      containers: (p.spec?.containers ?? []).map(slimContainer),
    },
    status: {
      phase: p.status?.phase,
      conditions: p.status?.conditions?.map((c) => ({ type: c.type, status: c.status })),
      containerStatuses: p.status?.containerStatuses?.map(slimStatus),
    },
  };
}

/** Nodes: name and labels only (virtual-kubelet detection). */
export function nodeCacheTransform(obj: KubeObject): Node {
  const md = obj.metadata;
  // The NodeImage controller reads readiness and deletion (one NodeImage per Ready node).
  const ready = ((obj as Node).status?.conditions as Array<{ type: string; status: string }> | undefined)?.filter((c) => c.type === 'Ready');
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: md.name, uid: md.uid, resourceVersion: md.resourceVersion, labels: md.labels,
      ...(md.deletionTimestamp ? { deletionTimestamp: md.deletionTimestamp } : {}),
    },
    ...(ready?.length ? { status: { conditions: ready.map((c) => ({ type: c.type, status: c.status })) } } : {}),
  };
}

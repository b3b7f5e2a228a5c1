// The kubelet's part for workload pods in the runtime e2e suites, which run no kubelet: the pods are Running with
// the spec's images, and Ready as the kubelet computes it (containers ready AND every readiness gate True).
import { CoreV1Api, type V1Pod, type V1PodCondition } from '@kubernetes/client-node';
import { adminKubeConfig, bindPod, mergePatch } from '../../harness/index.js';

/**
 * Binds `pod` to `node` when unbound and reports its containers running the spec's images; Ready follows the
 * readiness gates and keeps its transition time while it does not change, and conditions of other writers stay.
 */
export async function reportRunning(pod: V1Pod, node: string): Promise<void> {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  if (!pod.spec!.nodeName) await bindPod(pod, node);
  const fresh = await core.readNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace! });
  const others = (fresh.status?.conditions ?? []).filter((c) => !['Ready', 'ContainersReady', 'PodScheduled'].includes(c.type));
  const gatesTrue = (fresh.spec!.readinessGates ?? []).every((g) => others.find((c) => c.type === g.conditionType)?.status === 'True');
  const now = new Date();
  const was = (fresh.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const readyStatus = gatesTrue ? 'True' : 'False';
  const conditions: V1PodCondition[] = [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
    { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
    { type: 'Ready', status: readyStatus, lastTransitionTime: was?.status === readyStatus ? was.lastTransitionTime : now },
    ...others,
  ];
  const containerStatuses = fresh.spec!.containers.map((c) => ({
    name: c.name,
    image: c.image!,
    imageID: `${c.image}@sha256:fake`,
    containerID: `containerd://${fresh.metadata!.uid}-${c.image}`,
    ready: true,
    restartCount: 0,
    started: true,
    state: { running: { startedAt: now } },
  }));
  await core.patchNamespacedPodStatus(
    {
      name: fresh.metadata!.name!,
      namespace: fresh.metadata!.namespace!,
      body: { status: { phase: 'Running', conditions, containerStatuses } },
    },
    mergePatch,
  );
}

// The kubelet's status writes for the pods of one namespace, for the peer benches that run without a node: every pod
// is reported Running with its spec's containers started and ready (a new container ID and image ID when a
// container's image changes, as after an in-place restart), and Ready from its readiness gates as the kubelet
// computes it. Conditions go through a strategic merge patch keyed by type, as the kubelet's status manager writes
// them, so a condition a controller owns (InPlaceUpdateReady, KruisePodReady) is never overwritten. Each pod event
// queues the pod; a stale view is corrected by the event of the write that follows it.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { Informer, PatchStrategy, PODS, type KubeClient, type Pod } from '../../src/runtime/core/index.js';

const KUBELET_CONDITIONS = ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'];

type ContainerStatus = {
  name: string;
  image: string;
  imageID: string;
  containerID: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: { running: { startedAt: string } };
};

const digest = (image: string) => `sha256:${createHash('sha256').update(image).digest('hex')}`;

/** The status the kubelet would report for `pod` now, or undefined when it already reports it. */
export function kubeletStatus(pod: Pod, now: string): Record<string, unknown> | undefined {
  const prev = (pod.status?.containerStatuses ?? []) as ContainerStatus[];
  const statuses: ContainerStatus[] = pod.spec!.containers.map((c) => {
    const was = prev.find((s) => s.name === c.name);
    if (was && was.image === c.image) return was;
    const restarts = was ? was.restartCount + 1 : 0;
    return {
      name: c.name,
      image: c.image!,
      imageID: `${c.image!.split(':')[0]}@${digest(c.image!)}`,
      containerID: `containerd://${pod.metadata.uid}-${c.name}-${restarts}`,
      ready: true,
      started: true,
      restartCount: restarts,
      state: { running: { startedAt: now } },
    };
  });
  const conditions = (pod.status?.conditions ?? []) as Array<{ type: string; status: string; lastTransitionTime?: string }>;
  const gatesTrue = ((pod.spec as { readinessGates?: Array<{ conditionType: string }> }).readinessGates ?? []).every(
    (g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True',
  );
  const want: Record<string, string> = {
    PodScheduled: 'True',
    Initialized: 'True',
    ContainersReady: 'True',
    Ready: gatesTrue ? 'True' : 'False',
  };
  const changedConditions = KUBELET_CONDITIONS.filter((t) => conditions.find((c) => c.type === t)?.status !== want[t]);
  const containersChanged = statuses.some((s, i) => s !== prev[i]) || prev.length !== statuses.length;
  if (pod.status?.phase === 'Running' && changedConditions.length === 0 && !containersChanged) return undefined;
  return {
    phase: 'Running',
    ...(containersChanged ? { containerStatuses: statuses } : {}),
    conditions: changedConditions.map((type) => ({ type, status: want[type], lastTransitionTime: now })),
  };
}

/** Runs the status writes for the pods of `namespace` until stop(). */
export class StandInKubelet {
  private readonly informer: Informer<Pod>;
  private readonly queued = new Set<string>();
  private readonly waiting: string[] = [];
  private running = 0;
  private stopped = false;
  /** Status writes made, and those that failed (a pod deleted meanwhile, a conflict the next event repairs). */
  writes = 0;
  failures = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    logger: Logger,
    private readonly concurrency = 16,
  ) {
    this.informer = new Informer<Pod>(client, PODS, { namespace, logger });
    const enqueue = (p: Pod) => {
      if (p.metadata.deletionTimestamp) return;
      const name = p.metadata.name!;
      if (this.queued.has(name)) return;
      this.queued.add(name);
      this.waiting.push(name);
      this.pump();
    };
    this.informer.addHandlers({ add: enqueue, update: enqueue });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
  }

  private pump(): void {
    while (!this.stopped && this.running < this.concurrency && this.waiting.length > 0) {
      const name = this.waiting.shift()!;
      this.queued.delete(name);
      this.running++;
      void this.sync(name).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async sync(name: string): Promise<void> {
    const pod = this.informer.get(`${this.namespace}/${name}`);
    if (!pod || pod.metadata.deletionTimestamp) return;
    const status = kubeletStatus(pod, new Date().toISOString());
    if (!status) return;
    try {
      await this.client.patch(PODS, name, this.namespace, { status }, PatchStrategy.StrategicMergePatch, { subresource: 'status' });
      this.writes++;
    } catch {
      this.failures++;
    }
  }
}

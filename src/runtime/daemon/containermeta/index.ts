import { ANNOTATION_RUNTIME_CONTAINERS_META } from '../../../contracts/index.js';
import { PatchStrategy } from '../../core/client.js';
import { PODS, type Pod } from '../../core/index.js';
import type { ControllerDefinition, Reconciler } from '../../core/controller.js';
import type { ProcessResult } from '../../core/queue.js';
import type { Informer } from '../../core/informer.js';
import { currentEnvHash, parseEnvOutput, parseRuntimeContainerMeta } from '../../control/env-from-metadata.js';
import { runPreStop } from '../prestop.js';
import type { DaemonContext } from '../context.js';
import { decideContainerMeta, metadataAges, noteMetadata, watchesPod, type MetadataSeen, type ObservedContainer } from './decision.js';

/** How long `env` may run in a container when its env is read (upstream's bound). */
const ENV_READ_TIMEOUT_SECONDS = 3;
/** A container whose env could not be read (starting, or no `env` in its image) is tried again after this. */
const ENV_READ_RETRY_MS = 3_000;
/** Delay between a pod event and its reconcile (upstream's). */
const EVENT_DELAY_MS = 1_000;
/** The kubelet's minimum grace period for a kill without a pod: what upstream's restarter gives. */
const MIN_STOP_GRACE_SECONDS = 2;

/** The kubelet's container annotations: its hash of the container spec (hex) and the restart count. */
const KUBELET_HASH = 'io.kubernetes.container.hash';
const KUBELET_RESTART_COUNT = 'io.kubernetes.container.restartCount';

/**
 * Env from metadata on this node (gate InPlaceUpdateEnvFromMetadata; upstream kruise-daemon's containermeta
 * controller): records in `apps.kruise.io/runtime-containers-meta` the env hash each container started with and,
 * while the pod's in-place update is under way, stops the containers whose labels/annotations behind their env
 * changed (once the new values have been the pod's for METADATA_SETTLE_MS, so the kubelet has them too) and the
 * kubelet starts them again. The CloneSet controller waits for the record to match.
 */
export const containerMetaController: ControllerDefinition<DaemonContext> = {
  name: 'daemon-containermeta',
  featureGate: 'InPlaceUpdateEnvFromMetadata',
  defaultWorkers: 2,
  reads: [
    {
      resource: PODS,
      fields: [
        'metadata.labels',
        'metadata.annotations',
        'metadata.ownerReferences',
        'metadata.deletionTimestamp',
        'spec.nodeName',
        'spec.terminationGracePeriodSeconds',
        'spec.containers[].name',
        // Which labels/annotations each container reads into its env (names and field paths; values are never needed).
        'spec.containers[].env[].name',
        'spec.containers[].env[].valueFrom.fieldRef.fieldPath',
        'spec.containers[].lifecycle.preStop',
        'status.podIP',
        'status.conditions',
        'status.containerStatuses',
      ],
    },
  ],
  setup(ctx, enqueue) {
    const pods = ctx.informers.for<Pod>(PODS, { fieldSelector: `spec.nodeName=${ctx.nodeName}` });
    // As upstream's daemon does, a pod event is acted on a second later: a restart decided at once can beat the
    // kubelet to the new labels/annotations, and the container would start again with the old env.
    const pending = new Map<string, NodeJS.Timeout>();
    // When the daemon first saw each watched pod's current env metadata: a restart waits until it has settled.
    const seen = new Map<string, MetadataSeen>();
    const onPod = (p: Pod) => {
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      if (!watchesPod(p)) {
        seen.delete(key);
        return;
      }
      seen.set(key, noteMetadata(seen.get(key), p, Date.now()));
      if (pending.has(key)) return;
      const t = setTimeout(() => {
        pending.delete(key);
        enqueue(key);
      }, EVENT_DELAY_MS);
      t.unref();
      pending.set(key, t);
    };
    ctx.onStop(async () => {
      for (const t of pending.values()) clearTimeout(t);
      pending.clear();
    });
    pods.addHandlers({ add: onPod, update: onPod, delete: (p) => seen.delete(`${p.metadata.namespace}/${p.metadata.name}`) });
    return new ContainerMetaReconciler(ctx, pods, (key) => metadataAges(seen.get(key), Date.now()));
  },
};

class ContainerMetaReconciler implements Reconciler {
  constructor(
    private readonly ctx: DaemonContext,
    private readonly pods: Informer<Pod>,
    /** How long the daemon has seen the pod's current env metadata, per container. */
    private readonly ages: (key: string) => ReadonlyMap<string, number>,
  ) {}

  async reconcile(key: string): Promise<ProcessResult> {
    const pod = this.pods.get(key);
    if (!pod || pod.metadata.deletionTimestamp || !watchesPod(pod) || !pod.status?.containerStatuses?.length) return;
    const observed = await this.observe(pod);
    const old = parseRuntimeContainerMeta(pod.metadata.annotations?.[ANNOTATION_RUNTIME_CONTAINERS_META]);
    const ages = this.ages(key);
    let decision = decideContainerMeta(pod, observed, old, ages);
    let retry = false;
    if (decision.readEnv.length) {
      const withEnv = await Promise.all(
        observed.map(async (o) => {
          if (!decision.readEnv.includes(o.name)) return o;
          const spec = pod.spec!.containers.find((c) => c.name === o.name)!;
          try {
            const res = await this.ctx.cri.execSync(bareId(o.containerID), ['env'], ENV_READ_TIMEOUT_SECONDS);
            if (res.exitCode !== 0) throw new Error(`env exited ${res.exitCode}: ${res.stderr.toString().trim()}`);
            return { ...o, currentEnvHash: currentEnvHash(spec, parseEnvOutput(res.stdout.toString())) };
          } catch (err) {
            this.ctx.logger.warn({ pod: key, container: o.name, err: (err as Error).message }, 'reading the env of a container failed');
            retry = true;
            return { ...o, running: false };
          }
        }),
      );
      decision = decideContainerMeta(pod, withEnv, old, ages);
    }
    if (decision.restart.length) {
      this.ctx.logger.info(
        {
          pod: key,
          restart: decision.restart,
          have: decision.record?.containers ?? old?.containers,
          resourceVersion: pod.metadata.resourceVersion,
        },
        'env from metadata changed during an in-place update',
      );
    }
    for (const id of decision.restart) await this.restart(pod, id);
    if (decision.record) {
      await this.ctx.client.patch(
        PODS,
        pod.metadata.name!,
        pod.metadata.namespace,
        { metadata: { annotations: { [ANNOTATION_RUNTIME_CONTAINERS_META]: JSON.stringify(decision.record) } } },
        PatchStrategy.StrategicMergePatch,
        { subresource: 'status' },
      );
    }
    const waits = [...(retry ? [ENV_READ_RETRY_MS] : []), ...(decision.waitMs !== undefined ? [decision.waitMs] : [])];
    return waits.length ? { requeueAfterMs: Math.min(...waits) } : undefined;
  }

  /** The pod's containers as the runtime has them, by the IDs in pod status. */
  private async observe(pod: Pod): Promise<ObservedContainer[]> {
    const out: ObservedContainer[] = [];
    for (const s of pod.status?.containerStatuses ?? []) {
      if (!s.containerID) continue;
      const id = bareId(s.containerID);
      // Exact ID: the runtime may match the filter by prefix.
      const found = (await this.ctx.cri.listContainers({ id })).find((c) => c.id === id);
      if (!found) continue;
      out.push({
        name: s.name,
        containerID: s.containerID,
        running: found.state === 'CONTAINER_RUNNING',
        plainHash: parseInt(found.annotations?.[KUBELET_HASH] ?? '', 16) || 0,
        restartCount: Number(found.annotations?.[KUBELET_RESTART_COUNT] ?? s.restartCount) || 0,
      });
    }
    return out;
  }

  /** Stops a container as the kubelet's kill does (its own preStop, then StopContainer); the kubelet starts it again. */
  private async restart(pod: Pod, containerID: string): Promise<void> {
    const status = pod.status?.containerStatuses?.find((s) => s.containerID === containerID);
    const podContainer = pod.spec?.containers.find((c) => c.name === status?.name);
    const grace = Math.max(MIN_STOP_GRACE_SECONDS, Number(pod.spec?.terminationGracePeriodSeconds ?? 30) || 0);
    const id = bareId(containerID);
    this.ctx.logger.info(
      { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, container: status?.name },
      'restarting a container for its env from metadata',
    );
    const started = Date.now();
    try {
      await runPreStop(this.ctx.cri, { containerId: id, podContainer, podIP: pod.status?.podIP as string | undefined }, grace);
    } catch (err) {
      this.ctx.logger.warn({ container: status?.name, err: (err as Error).message }, 'preStop failed; stopping anyway');
    }
    const left = Math.max(MIN_STOP_GRACE_SECONDS, grace - Math.floor((Date.now() - started) / 1000));
    await this.ctx.cri.stopContainer(id, left);
    this.ctx.events.emit(
      PODS,
      pod,
      'Normal',
      'ContainerRestarted',
      `stopped container ${status?.name} so it restarts with the env from the pod's metadata`,
    );
  }
}

/** `containerd://abc` → `abc`. */
function bareId(containerID: string): string {
  const i = containerID.indexOf('://');
  return i < 0 ? containerID : containerID.slice(i + 3);
}

import {
  CONDITION_SIDECAR_TERMINATED,
  CONDITION_SIDECAR_TERMINATED_MESSAGE,
  EVENT_REASON_SIDECAR_TERMINATOR,
  LABEL_NODE_TYPE,
  NODE_TYPE_VIRTUAL_KUBELET,
  sidecarTerminationCrrName,
} from '../../../api/pod-contracts.js';
import { isAlreadyExists, isConflict, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext, Reconciler } from '../../core/controller.js';
import type { Informer } from '../../core/informer.js';
import { rfc3339 } from '../../core/meta.js';
import type { ProcessResult } from '../../core/queue.js';
import { CONTAINER_RECREATE_REQUESTS, PODS } from '../../../contracts/index.js';
import type { KubeObject, Node, Pod } from '../../core/types.js';
import { decide, sidecarTerminationCrr, type Decision, type ImageSwap, type NodeKind } from '../../control/sidecar-termination.js';

type Act = Extract<Decision, { action: 'act' }>;

/** Reads caches, calls `decide`, applies the result idempotently (I/O half of the controller). */
export class SidecarTerminatorReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly pods: Informer<Pod>,
    private readonly nodes: Informer<Node>,
    private readonly crrs: Informer<KubeObject>,
  ) {}

  nodeKind(name: string | undefined): NodeKind | undefined {
    if (!name) return undefined;
    const node = this.nodes.get(name);
    if (!node) return undefined;
    return node.metadata.labels?.[LABEL_NODE_TYPE] === NODE_TYPE_VIRTUAL_KUBELET ? 'virtual-kubelet' : 'normal';
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const pod = this.pods.get(key);
    if (!pod) return;
    const ns = pod.metadata.namespace!;
    const crrName = sidecarTerminationCrrName(pod.metadata.uid ?? '');
    const decision = decide({
      pod,
      nodeKind: this.nodeKind(pod.spec?.nodeName),
      crrExists: this.crrs.get(`${ns}/${crrName}`) !== undefined,
    });
    if (decision.action !== 'act') {
      this.ctx.logger.debug({ pod: key, decision: decision.action, reason: decision.reason }, 'sidecar terminator');
      return decision.action === 'wait' && decision.requeueAfterMs !== undefined ? { requeueAfterMs: decision.requeueAfterMs } : undefined;
    }
    await this.apply(pod, decision);
  }

  private async apply(pod: Pod, d: Act): Promise<void> {
    if (d.swapImages.length > 0) await this.swapImages(pod, d.swapImages);
    if (d.markTerminated) await this.markTerminated(pod, d.markTerminated.phase);
    if (d.createCrr) await this.createCrr(pod, d.createCrr.name, d.createCrr.containers);
  }

  /** Get+Update on the pod (only sidecar images change), retried on conflict like upstream. */
  private async swapImages(pod: Pod, swaps: readonly ImageSwap[]): Promise<void> {
    const { namespace, name } = pod.metadata;
    for (let attempt = 0; ; attempt++) {
      let fresh: Pod;
      try {
        fresh = await this.ctx.client.get<Pod>(PODS, name!, namespace);
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      if (fresh.metadata.uid !== pod.metadata.uid || fresh.metadata.deletionTimestamp) return;
      let changed = false;
      for (const s of swaps) {
        const c = fresh.spec?.containers.find((x) => x.name === s.container);
        if (c && c.image !== s.image) {
          c.image = s.image;
          changed = true;
        }
      }
      if (!changed) return;
      try {
        await this.ctx.client.update<Pod>(PODS, fresh);
        break;
      } catch (err) {
        if (isConflict(err) && attempt < 5) continue;
        throw err;
      }
    }
    this.ctx.events.emit(
      PODS,
      pod,
      'Normal',
      EVENT_REASON_SIDECAR_TERMINATOR,
      `Replaced the image of sidecar(s) ${swaps.map((s) => s.container).join(', ')} with the quick-exit image to terminate them`,
    );
  }

  private async createCrr(pod: Pod, name: string, containers: readonly string[]): Promise<void> {
    const ns = pod.metadata.namespace!;
    const crr = sidecarTerminationCrr(pod, name, containers);
    try {
      await this.ctx.client.create(CONTAINER_RECREATE_REQUESTS, crr, ns);
    } catch (err) {
      if (isAlreadyExists(err)) return;
      throw err;
    }
    this.ctx.events.emit(
      PODS,
      pod,
      'Normal',
      EVENT_REASON_SIDECAR_TERMINATOR,
      `Created ContainerRecreateRequest ${name} to terminate sidecar(s) ${containers.join(', ')}`,
    );
  }

  private async markTerminated(pod: Pod, phase: 'Succeeded' | 'Failed' | undefined): Promise<void> {
    const status: Record<string, unknown> = {
      conditions: [
        {
          type: CONDITION_SIDECAR_TERMINATED,
          status: 'True',
          reason: EVENT_REASON_SIDECAR_TERMINATOR,
          message: CONDITION_SIDECAR_TERMINATED_MESSAGE,
          lastTransitionTime: rfc3339(),
        },
      ],
    };
    if (phase) status.phase = phase;
    try {
      // Strategic merge: conditions merge by `type`, so other conditions stay untouched.
      await this.ctx.client.patch(PODS, pod.metadata.name!, pod.metadata.namespace, { status }, PatchStrategy.StrategicMergePatch, {
        subresource: 'status',
      });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    this.ctx.events.emit(
      PODS,
      pod,
      'Normal',
      EVENT_REASON_SIDECAR_TERMINATOR,
      `Set condition ${CONDITION_SIDECAR_TERMINATED}${phase ? ` and phase ${phase} from the main containers' exit codes` : ''}`,
    );
  }
}

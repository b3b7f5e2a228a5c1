import type { NodePodProbe as ApiNodePodProbe } from '../../../api/kinds/podprobemarker.js';
import {
  NODE_POD_PROBES,
  PatchStrategy,
  isNotFound,
  rfc3339,
  type Informer,
  type KubeObject,
  type ProcessResult,
} from '../../core/index.js';
import type { DaemonContext } from '../context.js';
import { nextStatus, probeTasks, taskKey, type HeldResult } from './decision.js';
import { Prober, type ProbeReport } from './prober.js';

export type NodePodProbe = ApiNodePodProbe & KubeObject;

/**
 * I/O of the daemon's probes: the workers follow this node's NodePodProbe spec; each result past its thresholds is
 * held and the node is queued, so the results reported while a status write is queued or running go out together
 * in the next write (the queue holds one key per node).
 */
export class NodePodProbeReconciler {
  private readonly held = new Map<string, HeldResult>();
  readonly prober: Prober;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly nodePodProbes: Informer<NodePodProbe>,
    maxConcurrent: number,
    enqueue: (key: string) => void,
  ) {
    this.prober = new Prober(ctx.cri, maxConcurrent, ctx.logger, (r: ProbeReport) => {
      this.held.set(taskKey(r.task.podUid, r.task.probeName), {
        task: r.task,
        state: r.state,
        message: r.message,
        probedAt: rfc3339(r.probedAt),
      });
      enqueue(ctx.nodeName);
    });
    ctx.onStop(async () => this.prober.stop());
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const npp = this.nodePodProbes.get(key);
    const tasks = probeTasks(npp);
    this.prober.sync(tasks);
    // Results of probes the spec no longer lists are forgotten (the map stays as small as the spec).
    const valid = new Set(tasks.map((t) => t.key));
    for (const k of this.held.keys()) if (!valid.has(k)) this.held.delete(k);
    if (!npp) return;
    const now = Date.now();
    const status = nextStatus(npp, this.held.values(), rfc3339(now), now);
    if (!status) return;
    await this.ctx.client
      .patch(NODE_POD_PROBES, key, undefined, { status }, PatchStrategy.MergePatch, { subresource: 'status' })
      .catch((err) => {
        if (!isNotFound(err)) throw err;
      });
  }
}

import {
  BROADCAST_JOBS,
  PODS,
  PatchStrategy,
  isNotFound,
  type ControllerContext,
  type Informer,
  type Node,
  type Pod,
  type ProcessResult,
  type Reconciler,
} from '../../core/index.js';
import { kruiseControllerOf } from '../../core/meta.js';
import { ScaleExpectations } from '../../core/expectations.js';
import { assignedNode } from '../../control/node-placement.js';
import { decide, podFor, statusChanged, type BroadcastJobObject } from './decision.js';

/** Pods by the uid of their BroadcastJob controller. */
export const INDEX_JOB_UID = 'broadcastjob/controller-uid';
export const byJobUid = (p: Pod): string[] => {
  const ref = kruiseControllerOf(p, 'BroadcastJob');
  return ref ? [ref.uid] : [];
};

/** Requeue while the pod cache has not yet shown our own creates and deletes. */
const EXPECTATION_WAIT_MS = 500;

/**
 * I/O half of the BroadcastJob controller: reads the caches, calls the decision and applies it (pod creates and
 * deletes under scale expectations keyed by node, as upstream: a pod's name is generated, its node is its identity),
 * then the status and the TTL deletion.
 */
export class BroadcastJobSync implements Reconciler {
  /** Pod creates and deletes in flight per job, by node name; met by the pod informer's events (index.ts). */
  readonly expectations = new ScaleExpectations();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly jobs: Informer<BroadcastJobObject>,
    private readonly pods: Informer<Pod>,
    private readonly nodes: Informer<Node>,
  ) {
    pods.addIndex(INDEX_JOB_UID, byJobUid);
  }

  async reconcile(key: string): Promise<ProcessResult> {
    const job = this.jobs.get(key);
    if (!job) {
      this.expectations.forget(key);
      return;
    }
    const exp = this.expectations.satisfied(key, this.pods.lastSyncResourceVersion);
    if (exp.leaked.length > 0) this.ctx.logger.warn({ broadcastjob: key, leaked: exp.leaked }, 'pod expectations timed out; dropped');
    if (!exp.ok) return { requeueAfterMs: EXPECTATION_WAIT_MS };

    const ns = job.metadata.namespace!;
    const pods = this.pods.byIndex(INDEX_JOB_UID, job.metadata.uid!);
    const nodes = this.nodes.list();
    const d = decide({ job, pods, nodes, nowMs: Date.now() });
    this.ctx.logger.debug(
      {
        broadcastjob: key,
        ineligible: d.ineligible,
        createOn: d.createOn,
        deletePods: d.deletePods.map((p) => p.metadata.name),
        phase: d.status?.phase,
      },
      'broadcastjob decision',
    );

    if (d.deleteJob) {
      this.ctx.logger.info({ broadcastjob: key }, 'deleting finished BroadcastJob after ttlSecondsAfterFinished');
      await this.ctx.client.delete(BROADCAST_JOBS, job.metadata.name!, ns).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
      return;
    }
    for (const e of d.events) this.ctx.events.emit(BROADCAST_JOBS, job, e.type, e.reason, e.message);

    const errors: Error[] = [];
    await Promise.all(
      d.deletePods.map(async (p) => {
        const node = assignedNode(p) ?? '';
        this.expectations.expect(key, 'delete', node, p.metadata.uid);
        try {
          await this.ctx.client.delete(PODS, p.metadata.name!, ns);
          this.ctx.events.emit(BROADCAST_JOBS, job, 'Normal', 'SuccessfulDelete', `Delete pod: ${p.metadata.name}`);
        } catch (err) {
          this.expectations.failed(key, 'delete', node);
          if (!isNotFound(err)) errors.push(err as Error);
        }
      }),
    );
    await Promise.all(
      d.createOn.map(async (node) => {
        this.expectations.expect(key, 'create', node);
        try {
          const created = await this.ctx.client.create(PODS, podFor(job, node), ns);
          this.expectations.created(key, node, created.metadata.resourceVersion);
          this.ctx.events.emit(BROADCAST_JOBS, job, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
        } catch (err) {
          this.expectations.failed(key, 'create', node);
          this.ctx.events.emit(BROADCAST_JOBS, job, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`);
          errors.push(err as Error);
        }
      }),
    );

    if (d.status && statusChanged(job.status, d.status)) {
      // Written only over the status it was computed from: a reconcile from a cache that has not seen this
      // controller's last write (a failed job, its active pods deleted since) would count again and overwrite the
      // final counts; the conflict requeues it until the cache has the write.
      const body = { metadata: { resourceVersion: job.metadata.resourceVersion }, status: d.status };
      await this.ctx.client.patch(BROADCAST_JOBS, job.metadata.name!, ns, body, PatchStrategy.MergePatch, { subresource: 'status' });
    }
    // A failed write is retried with the queue's backoff, after the status that counts what did happen.
    if (errors.length > 0) throw errors[0]!;
    return d.requeueAfterMs !== undefined ? { requeueAfterMs: d.requeueAfterMs } : undefined;
  }
}

import { isConflict, isNotFound, PatchStrategy } from '../../core/client.js';
import type { ControllerContext, Reconciler } from '../../core/controller.js';
import type { Informer } from '../../core/informer.js';
import { rfc3339 } from '../../core/meta.js';
import type { ProcessResult } from '../../core/queue.js';
import { PODS } from '../../../contracts/index.js';
import type { Pod } from '../../core/types.js';
import { conditionsToInitialise } from './decision.js';

export class PodReadinessReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly pods: Informer<Pod>,
  ) {}

  async reconcile(key: string): Promise<ProcessResult> {
    const pod = this.pods.get(key);
    if (!pod) return;
    const types = conditionsToInitialise(pod);
    if (types.length === 0) return;
    const now = rfc3339();
    try {
      // resourceVersion makes the patch conditional: if another writer (a hook marking the pod not ready)
      // changed the pod since the cache saw it, the API server answers Conflict and we decide again.
      await this.ctx.client.patch(
        PODS,
        pod.metadata.name!,
        pod.metadata.namespace,
        {
          metadata: { resourceVersion: pod.metadata.resourceVersion },
          status: { conditions: types.map((type) => ({ type, status: 'True', lastTransitionTime: now })) },
        },
        PatchStrategy.StrategicMergePatch,
        { subresource: 'status' },
      );
    } catch (err) {
      if (isNotFound(err)) return;
      if (isConflict(err)) return { requeueAfterMs: 200 };
      throw err;
    }
  }
}

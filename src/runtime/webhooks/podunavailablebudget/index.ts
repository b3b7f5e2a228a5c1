import { PODS, POD_VALIDATING_PATH } from '../../../contracts/index.js';
import { askBudget } from '../../control/pod-unavailable-budget-spend.js';
import { isNotFound } from '../../core/client.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { Pod } from '../../core/types.js';
import type { AdmissionResult } from '../../core/webhook/server.js';
import { classify } from './decision.js';

/**
 * The PodUnavailableBudget side of the pod validating webhook (`/validate-pod`): refuses a deletion, an eviction or
 * (gate PodUnavailableBudgetUpdateGate) an in-place update of a covered pod once its budget allows no more, and
 * records each one it lets go in the budget's status before answering, as upstream does.
 */
export const podUnavailableBudgetWebhook: WebhookDefinition = {
  name: 'podunavailablebudget',
  featureGate: 'PodUnavailableBudgetDeleteGate',
  // Reads no cache: the budget is read from the API server and written back conditionally on its resourceVersion,
  // so two replicas (or two reviews) can never spend the same unit; an evicted pod is read the same way.
  reads: [],
  setup(ctx) {
    const deleteGate = ctx.featureGates.get('PodUnavailableBudgetDeleteGate') !== false;
    const updateGate = ctx.featureGates.get('PodUnavailableBudgetUpdateGate') === true;
    const client = ctx.client;
    return [
      {
        name: 'vpod',
        path: POD_VALIDATING_PATH,
        type: 'validating',
        async handle(req): Promise<AdmissionResult> {
          const c = classify({
            operation: req.operation,
            ...(req.subResource ? { subResource: req.subResource } : {}),
            ...(req.namespace ? { namespace: req.namespace } : {}),
            ...(req.name ? { name: req.name } : {}),
            ...(req.object ? { object: req.object as Pod } : {}),
            ...(req.oldObject ? { oldObject: req.oldObject as Pod } : {}),
            deleteGate,
            updateGate,
          });
          if (c.skip) return { allowed: true };
          let pod = c.pod;
          if (!pod && c.evictee) {
            try {
              pod = await client.get<Pod>(PODS, c.evictee.name, c.evictee.namespace);
            } catch (err) {
              // The eviction itself answers NotFound for a pod that is gone.
              if (isNotFound(err)) return { allowed: true };
              throw err;
            }
          }
          if (!pod) return { allowed: true };
          const a = await askBudget(ctx, pod, c.operation, { dryRun: !!req.dryRun });
          return a.allowed ? { allowed: true } : { allowed: false, code: a.code, message: a.message };
        },
      },
    ];
  },
};

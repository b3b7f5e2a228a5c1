import { PODS, POD_UNAVAILABLE_BUDGETS, POD_VALIDATING_PATH } from '../../../contracts/index.js';
import type { PubObject } from '../../control/pod-unavailable-budget.js';
import { isConflict, isNotFound } from '../../core/client.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { rfc3339 } from '../../core/meta.js';
import type { KubeObject, Pod } from '../../core/types.js';
import type { AdmissionResult } from '../../core/webhook/server.js';
import { budgetNameOf, classify, forbidden, judge } from './decision.js';

/** Attempts at spending from a budget whose status others write at the same time (upstream: 4). */
const ATTEMPTS = 4;

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
          const pubName = pod && budgetNameOf(pod);
          if (!pod || !pubName) return { allowed: true };
          const ns = pod.metadata.namespace!;
          for (let i = 0; i < ATTEMPTS; i++) {
            let pub: PubObject & KubeObject;
            try {
              pub = await client.get<PubObject & KubeObject>(POD_UNAVAILABLE_BUDGETS, pubName, ns);
            } catch (err) {
              if (isNotFound(err)) return { allowed: true };
              throw err;
            }
            const j = judge(pub, pod.metadata.name!, c.operation, rfc3339());
            if (!j.allowed) {
              ctx.events.emit(PODS, pod, 'Warning', 'PubPreventPodDeletion', 'openkruise pub prevents pod deletion');
              return { allowed: false, code: 403, message: j.message };
            }
            if (!j.spend || req.dryRun) return { allowed: true };
            try {
              await client.update(POD_UNAVAILABLE_BUDGETS, { ...pub, status: j.spend } as KubeObject, 'status');
              return { allowed: true };
            } catch (err) {
              if (isNotFound(err)) return { allowed: true };
              if (!isConflict(err)) throw err;
            }
          }
          return {
            allowed: false,
            code: 504,
            message: forbidden(pubName, `couldn't update PodUnavailableBudget ${pubName} due to conflicts`),
          };
        },
      },
    ];
  },
};

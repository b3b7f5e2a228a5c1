import type { ControllerDefinition } from '../../core/controller.js';
import {
  CLONESETS,
  DEPLOYMENTS,
  ENV_IS_INJECTED,
  PODS,
  POD_UNAVAILABLE_BUDGETS,
  STATEFUL_SETS,
  selectorMatches,
  type ResourceType,
} from '../../../contracts/index.js';
import { isPodAvailable, type PubObject } from '../../control/pod-unavailable-budget.js';
import { NAMESPACE_INDEX, objectNamespace } from '../../core/indexes.js';
import { objectKey, type KubeObject, type Pod } from '../../core/types.js';
import { budgetsOfWorkload, type WatchedWorkload } from './decision.js';
import { PodUnavailableBudgetReconciler } from './reconcile.js';

/**
 * The workloads whose replicas a budget counts and that it watches (upstream watches the same four, Advanced
 * StatefulSet among them once served): a change of their replicas or their deletion changes the budget's
 * desired count without any pod changing. A deleted workload's pods are then garbage-collected, and those
 * deletions come to the webhook: a budget still counting the gone workload's replicas would refuse them.
 */
const WATCHED_WORKLOADS: readonly ResourceType[] = [DEPLOYMENTS, STATEFUL_SETS, CLONESETS];
const WORKLOAD_FIELDS = ['spec.replicas', 'spec.template.metadata.labels'];

interface WorkloadObject extends KubeObject {
  spec?: WatchedWorkload['spec'];
}

/** What of a pod its budget's counts depend on. */
function facts(p: Pod): string {
  return JSON.stringify([p.metadata.labels ?? {}, isPodAvailable(p), !!p.metadata.deletionTimestamp, p.status?.phase]);
}

/**
 * PodUnavailableBudget controller (upstream `podunavailablebudget-controller`, gate PodUnavailableBudgetDeleteGate or
 * PodUnavailableBudgetUpdateGate): the budget's counts (desired, current, allowed, total) and the webhook's records of
 * the pods it let go, and the `kruise.io/related-pub` annotation on every pod the budget covers.
 */
export const podUnavailableBudgetController: ControllerDefinition = {
  name: 'podunavailablebudget',
  featureGate: 'PodUnavailableBudgetDeleteGate',
  // Upstream runs 3 workers; one key is never reconciled by two workers at once.
  defaultWorkers: 3,
  reads: [
    { resource: POD_UNAVAILABLE_BUDGETS, fields: ['*'] },
    {
      resource: PODS,
      fields: [
        'metadata.labels',
        'metadata.annotations',
        'metadata.ownerReferences',
        'metadata.deletionTimestamp',
        'status.phase',
        'status.conditions[].type',
        'status.conditions[].status',
        'status.containerStatuses[].name',
        'status.containerStatuses[].imageID',
        'status.containerStatuses[].containerID',
        // A SidecarSet's in-place sidecar update under way (the sidecar's marker env, its spec and status images).
        'spec.containers[].name',
        'spec.containers[].image',
        `spec.containers[].env[name=${ENV_IS_INJECTED}]`,
        'status.containerStatuses[].image',
      ],
    },
    ...WATCHED_WORKLOADS.map((resource) => ({ resource, fields: WORKLOAD_FIELDS })),
  ],
  setup(ctx, enqueue) {
    const budgets = ctx.informers.for<PubObject & KubeObject>(POD_UNAVAILABLE_BUDGETS);
    const pods = ctx.informers.for<Pod>(PODS);
    pods.addIndex(NAMESPACE_INDEX, objectNamespace);
    const byKey = (b: PubObject & KubeObject) => enqueue(objectKey(b));
    budgets.addHandlers({ add: byKey, update: byKey, delete: byKey });
    // A pod concerns the budgets of its namespace that select it now or selected it before, and every targetRef
    // budget there (its workload's selector is not cached).
    const toBudgets = (p: Pod, old?: Pod) => {
      for (const b of budgets.list()) {
        if (b.metadata.namespace !== p.metadata.namespace) continue;
        const sel = b.spec?.selector;
        if (
          b.spec?.targetRef ||
          (sel && (selectorMatches(sel, p.metadata.labels ?? {}) || (old && selectorMatches(sel, old.metadata.labels ?? {}))))
        )
          byKey(b);
      }
    };
    pods.addHandlers({
      add: (p) => toBudgets(p),
      update: (p, old) => {
        if (p !== old && facts(p) !== facts(old)) toBudgets(p, old);
      },
      delete: (p) => toBudgets(p),
    });
    for (const w of WATCHED_WORKLOADS) {
      const toBudgets = (o: WorkloadObject) => {
        for (const b of budgetsOfWorkload(budgets.list(), { group: w.group, kind: w.kind, metadata: o.metadata, spec: o.spec })) {
          byKey(b as PubObject & KubeObject);
        }
      };
      ctx.informers.for<WorkloadObject>(w).addHandlers({
        add: toBudgets,
        update: (o, old) => {
          if ((o.spec?.replicas ?? 1) !== (old.spec?.replicas ?? 1)) toBudgets(o);
        },
        delete: toBudgets,
      });
    }
    return new PodUnavailableBudgetReconciler(ctx, budgets, pods);
  },
};

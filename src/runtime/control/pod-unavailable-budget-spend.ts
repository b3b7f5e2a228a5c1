/**
 * Asking a pod's PodUnavailableBudget before making the pod unavailable, and spending from it: the one road the pod
 * webhook (deletions, evictions, in-place updates) and the workload controllers (CloneSet in-place and recreate
 * updates, SidecarSet sidecar updates) share, as upstream's PodUnavailableBudgetValidatePod is. The budget is read
 * from the API server (never a cache), judged (pod-unavailable-budget.ts) and the spending written back conditional
 * on the version read, so two askers, in one process or in two, can never spend the same unit; a conflict reads
 * again. Within one process the askers of one budget take turns (upstream's keyed lock), so a controller updating
 * many pods at once does not burn its attempts conflicting with itself.
 */
import { PODS, POD_UNAVAILABLE_BUDGETS } from '../../contracts/index.js';
import { isConflict, isNotFound, KubeApiError } from '../core/client.js';
import type { ControllerContext } from '../core/controller.js';
import { rfc3339 } from '../core/meta.js';
import type { KubeObject, Pod } from '../core/types.js';
import { budgetNameOf, forbidden, judge, type PubObject, type PubOperation } from './pod-unavailable-budget.js';

/** Attempts at spending from a budget whose status others write at the same time (upstream: 4). */
export const SPEND_ATTEMPTS = 4;

/** The budget's answer: go (spent and recorded when it had to be), or not now, with upstream's message. */
export type BudgetAnswer =
  | { readonly allowed: true; readonly budget?: string }
  | { readonly allowed: false; readonly budget: string; readonly code: 403 | 504; readonly message: string };

/** The askers in this process of each budget (`namespace/name`): each waits for the one before it. */
const turns = new Map<string, Promise<unknown>>();

async function inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const run = (turns.get(key) ?? Promise.resolve()).then(fn, fn);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  turns.set(key, tail);
  try {
    return await run;
  } finally {
    if (turns.get(key) === tail) turns.delete(key);
  }
}

/**
 * Asks the budget `pod` names whether it may be made unavailable by `operation`; when it may and that costs a
 * unit, spends the unit and records the pod before answering (unless `dryRun`). `pod` is the pod as it is before
 * the operation: a pod already unavailable, opted out or covered by no budget goes at once.
 */
export async function askBudget(
  ctx: Pick<ControllerContext, 'client' | 'events'>,
  pod: Pod,
  operation: PubOperation,
  opts: { readonly dryRun?: boolean } = {},
): Promise<BudgetAnswer> {
  const budget = budgetNameOf(pod);
  if (!budget) return { allowed: true };
  const ns = pod.metadata.namespace ?? '';
  return inTurn(`${ns}/${budget}`, async (): Promise<BudgetAnswer> => {
    for (let i = 0; i < SPEND_ATTEMPTS; i++) {
      let pub: PubObject & KubeObject;
      try {
        pub = await ctx.client.get<PubObject & KubeObject>(POD_UNAVAILABLE_BUDGETS, budget, ns);
      } catch (err) {
        if (isNotFound(err)) return { allowed: true };
        throw err;
      }
      const j = judge(pub, pod.metadata.name!, operation, rfc3339());
      if (!j.allowed) {
        ctx.events.emit(PODS, pod, 'Warning', 'PubPreventPodDeletion', 'openkruise pub prevents pod deletion');
        return { allowed: false, budget, code: 403, message: j.message };
      }
      if (!j.spend || opts.dryRun) return { allowed: true, budget };
      try {
        await ctx.client.update(POD_UNAVAILABLE_BUDGETS, { ...pub, status: j.spend } as KubeObject, 'status');
        return { allowed: true, budget };
      } catch (err) {
        if (isNotFound(err)) return { allowed: true };
        if (!isConflict(err)) throw err;
      }
    }
    return {
      allowed: false,
      budget,
      code: 504,
      message: forbidden(budget, `couldn't update PodUnavailableBudget ${budget} due to conflicts`),
    };
  });
}

/**
 * Whether a write was refused by a PodUnavailableBudget (the pod webhook's answer, as the API server relays it): the
 * writer's budget check and the webhook's raced with another spender, and the pod waits for a later round.
 */
export function isBudgetRefusal(err: unknown): boolean {
  return err instanceof KubeApiError && /denied the request: podunavailablebudgets\.policy\.kruise\.io "/.test(err.message);
}

/**
 * The admission pair of the workload kinds (CloneSet, Advanced StatefulSet, Advanced DaemonSet): defaulting on the
 * kind's mutate path, and the kind's own checks beyond the schema on its validate path, chained after the policy
 * rules of `kruisevalidation` (VALIDATING_CHAIN_ORDER). Each webhook supplies only its pure decisions.
 */
import { kindWebhookPath, type ResourceType } from '../../contracts/index.js';
import type { KubeObject } from '../core/types.js';
import type { OrderedAdmissionHandler } from '../core/webhook/compose.js';
import type { AdmissionResult, JsonPatchOp } from '../core/webhook/types.js';
import { VALIDATING_CHAIN_ORDER } from './admission-order.js';

export interface WorkloadAdmission<T> {
  /** The handlers are named `m<name>` and `v<name>`. */
  readonly name: string;
  readonly resource: ResourceType;
  /** The operations the defaulting runs on. */
  readonly defaultOn: ReadonlyArray<'CREATE' | 'UPDATE'>;
  defaults(obj: T): JsonPatchOp[];
  /** Refuses a created or updated object, or undefined. */
  validate(obj: T): AdmissionResult | undefined;
  /** Refuses an update by what it changes, or undefined. */
  validateUpdate(obj: T, old: T): AdmissionResult | undefined;
}

/** The kind's mutating and validating handlers. */
export function workloadAdmissionHandlers<T>(a: WorkloadAdmission<T>): OrderedAdmissionHandler[] {
  const as = (o: KubeObject) => o as T;
  return [
    {
      name: `m${a.name}`,
      path: kindWebhookPath('mutate', a.resource),
      type: 'mutating',
      async handle(req) {
        if (!(a.defaultOn as readonly string[]).includes(req.operation) || !req.object) return { allowed: true };
        const patch = a.defaults(as(req.object));
        return { allowed: true, ...(patch.length ? { patch } : {}) };
      },
    },
    {
      name: `v${a.name}`,
      path: kindWebhookPath('validate', a.resource),
      type: 'validating',
      order: VALIDATING_CHAIN_ORDER.kindChecks,
      async handle(req) {
        if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
        const obj = as(req.object);
        const bad = a.validate(obj) ?? (req.operation === 'UPDATE' && req.oldObject ? a.validateUpdate(obj, as(req.oldObject)) : undefined);
        return bad ?? { allowed: true };
      },
    },
  ];
}

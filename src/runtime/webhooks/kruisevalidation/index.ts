import { KRUISE_KINDS, kindWebhookPath, kruiseResource, type KruiseKindName } from '../../../contracts/index.js';
import { VALIDATING_CHAIN_ORDER } from '../../control/admission-order.js';
import type { WebhookDefinition } from '../../core/controller.js';
import type { OrderedAdmissionHandler } from '../../core/webhook/compose.js';
import type { AdmissionResult } from '../../core/webhook/server.js';
import type { KubeObject } from '../../core/types.js';

/** `/validate-apps-kruise-io-v1alpha1-<kind>` for every kind of ours except CRR (its own webhook). */
export const kruiseValidationWebhook: WebhookDefinition = {
  name: 'kruisevalidation',
  // Reads no cache: every admission request carries the object it is about.
  reads: [],
  setup(ctx) {
    // The rules (the API model's schemas, ajv and its compiled validators, the policy engine) load on the
    // first admission request rather than at start: most of a cluster's life has no such request, and
    // they were a large part of the manager's idle memory (bench/memory-peer.bench.ts).
    let loading: Promise<(obj: KubeObject) => AdmissionResult> | undefined;
    const load = () =>
      (loading ??= (async () => {
        const [{ schemaOnlyValidator, validateWith }, injected] = await Promise.all([import('./decision.js'), ctx.objectValidator?.()]);
        const validator = injected ?? schemaOnlyValidator;
        return (obj: KubeObject) => validateWith(validator, obj);
      })().catch((err: unknown) => {
        loading = undefined; // a failed load is retried by the next request
        throw err;
      }));
    // Kinds come from the contract layer, not the API model's registry: the registry builds every kind's
    // schema, which is what the lazy load above keeps out of an idle manager.
    const kinds = (Object.keys(KRUISE_KINDS) as KruiseKindName[]).filter((k) => k !== 'ContainerRecreateRequest').map(kruiseResource);
    return kinds.map((k): OrderedAdmissionHandler => ({
      name: `v${k.kind.toLowerCase()}`,
      path: kindWebhookPath('validate', k),
      type: 'validating',
      // First on its path: kinds with their own checks (CloneSet, SidecarSet) chain after the shared rules.
      order: VALIDATING_CHAIN_ORDER.policyRules,
      async handle(req) {
        if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
        return (await load())(req.object as KubeObject);
      },
    }));
  },
};

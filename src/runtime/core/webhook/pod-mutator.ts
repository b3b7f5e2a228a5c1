/**
 * The pod webhook's mutator shape. A pod mutator edits a copy of the pod it is given (or refuses it); the
 * adapter turns that into the JSON patch composable admission expects, so a mutator never writes JSON
 * pointers by hand. Every mutator runs on `/mutate-pod` for pod CREATE only (as upstream registers it).
 */
import jsonPatch from 'fast-json-patch';
import { POD_MUTATING_PATH } from '../../../contracts/index.js';
import type { Pod } from '../types.js';
import type { OrderedAdmissionHandler } from './compose.js';
import type { AdmissionRequest, JsonPatchOp } from './types.js';

/** What a mutator answers: nothing (the edits made to `pod` are kept), or a refusal with its reason. */
export type PodMutation = void | { readonly deny: string; readonly code?: number } | { readonly warnings: readonly string[] };

/**
 * One step of the pod webhook: `mutate` edits `pod` (a private copy) in place. `req.namespace` is the
 * pod's namespace (a pod under generateName may not have `metadata.namespace` yet).
 */
export type PodMutateFn = (pod: Pod, req: AdmissionRequest) => PodMutation | Promise<PodMutation>;

/** An ordered handler on `/mutate-pod` from a pod mutator; `order` is its place in the chain (lower runs first). */
export function podMutator(name: string, order: number, mutate: PodMutateFn): OrderedAdmissionHandler {
  return {
    name,
    path: POD_MUTATING_PATH,
    type: 'mutating',
    order,
    async mutateInPlace(object, req) {
      if (req.operation !== 'CREATE' || req.subResource) return { allowed: true };
      const result = await mutate(object as Pod, req);
      if (result && 'deny' in result) return { allowed: false, code: result.code ?? 400, message: result.deny };
      return result && 'warnings' in result && result.warnings.length
        ? { allowed: true, warnings: [...result.warnings] }
        : { allowed: true };
    },
    async handle(req) {
      if (req.operation !== 'CREATE' || !req.object || req.subResource) return { allowed: true };
      const original = req.object as Pod;
      const pod = jsonPatch.deepClone(original) as Pod;
      const result = await mutate(pod, req);
      if (result && 'deny' in result) return { allowed: false, code: result.code ?? 400, message: result.deny };
      const patch = jsonPatch.compare(original, pod) as JsonPatchOp[];
      const warnings = result && 'warnings' in result && result.warnings.length ? { warnings: [...result.warnings] } : {};
      return { allowed: true, ...(patch.length ? { patch } : {}), ...warnings };
    },
  };
}

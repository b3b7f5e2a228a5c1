/**
 * Composable admission: one HTTP handler per path that runs an ordered list of steps, as upstream's pod
 * webhook runs SidecarSet injection, readiness gates and launch priority in turn. Each webhook definition
 * contributes its steps for a path; the manager composes every step of a path into one handler.
 *
 * A mutating step sees the object as the steps before it left it. The first step that denies ends the
 * chain. The answer carries one minimal JSON patch from the submitted object to the final one.
 */
import jsonPatch from 'fast-json-patch';
import type { KubeObject } from '../types.js';
import type { AdmissionHandler, AdmissionRequest, AdmissionResult, JsonPatchOp } from './server.js';

/** A handler that shares its path with others: `order` fixes its place in the chain (lower runs first). */
export interface OrderedAdmissionHandler extends AdmissionHandler {
  readonly order?: number;
  /**
   * Optional in-place form of a mutating step: edits `object` (the chain's private copy) and answers without
   * a patch. When every step of a chain has it, the chain copies the object once and diffs once, instead of
   * a copy, a diff and a patch application per step (the pod webhook's cost per pod is mostly those).
   */
  readonly mutateInPlace?: (object: KubeObject, req: AdmissionRequest) => Promise<AdmissionResult>;
}

function chain(path: string, steps: readonly OrderedAdmissionHandler[]): AdmissionHandler {
  const type = steps[0]!.type;
  const inPlace = type === 'mutating' && steps.every((s) => s.mutateInPlace);
  const runInPlace = async (req: AdmissionRequest, original: KubeObject): Promise<AdmissionResult> => {
    const work = jsonPatch.deepClone(original) as KubeObject;
    const warnings: string[] = [];
    for (const step of steps) {
      const result = await step.mutateInPlace!(work, { ...req, object: work });
      if (!result.allowed) return result;
      if (result.warnings) warnings.push(...result.warnings);
    }
    const patch = jsonPatch.compare(original, work) as JsonPatchOp[];
    return { allowed: true, ...(patch.length ? { patch } : {}), ...(warnings.length ? { warnings } : {}) };
  };
  return {
    name: steps.map((s) => s.name).join('+'),
    path,
    type,
    async handle(req: AdmissionRequest): Promise<AdmissionResult> {
      const original = req.object;
      if (original !== undefined && inPlace) return runInPlace(req, original as KubeObject);
      let current = original;
      const warnings: string[] = [];
      for (const step of steps) {
        const result = await step.handle({ ...req, object: current });
        if (!result.allowed) return result;
        if (result.warnings) warnings.push(...result.warnings);
        if (result.patch?.length && current !== undefined) {
          // Each step's patch is relative to what it saw; apply it to a copy so later steps see the result.
          current = jsonPatch.applyPatch(
            jsonPatch.deepClone(current) as KubeObject,
            result.patch as jsonPatch.Operation[],
            true,
            false,
          ).newDocument;
        }
      }
      const patch = original && current !== original ? (jsonPatch.compare(original, current!) as JsonPatchOp[]) : [];
      return { allowed: true, ...(patch.length ? { patch } : {}), ...(warnings.length ? { warnings } : {}) };
    },
  };
}

/**
 * One handler per path. Handlers alone on their path pass through unchanged; handlers sharing a path are
 * chained in `order`. Refuses (throws) a shared path whose handlers disagree on mutating/validating or
 * lack distinct orders, so two steps can never run in an accidental order.
 */
export function composeAdmission(handlers: readonly OrderedAdmissionHandler[]): AdmissionHandler[] {
  const byPath = new Map<string, OrderedAdmissionHandler[]>();
  for (const h of handlers) byPath.set(h.path, [...(byPath.get(h.path) ?? []), h]);
  const out: AdmissionHandler[] = [];
  for (const [path, group] of byPath) {
    if (group.length === 1) {
      out.push(group[0]!);
      continue;
    }
    const names = group.map((h) => h.name).join(', ');
    if (new Set(group.map((h) => h.type)).size > 1) throw new Error(`admission path ${path}: ${names} mix mutating and validating steps`);
    const orders = group.map((h) => h.order);
    if (orders.some((o) => o === undefined) || new Set(orders).size !== orders.length) {
      throw new Error(
        `admission path ${path}: ${names} share the path, so each needs a distinct \`order\` (got ${orders.map(String).join(', ')})`,
      );
    }
    out.push(
      chain(
        path,
        [...group].sort((a, b) => a.order! - b.order!),
      ),
    );
  }
  return out;
}

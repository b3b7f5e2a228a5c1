/**
 * Validation of our kinds at admission: one object in, error findings out, each with its rule id, JSON
 * pointer and fix hint. The rules are injected: `cdk8s-kruise controller` passes the policy engine that
 * `cdk8s-kruise validate` runs (schema plus semantic rules); without one, the API model's schema check
 * runs alone. The runtime itself never depends on the policy engine.
 */
import { validateObject } from '../../../api/validate.js';
import type { ObjectFinding, ObjectValidator } from '../../core/controller.js';
import type { AdmissionResult } from '../../core/webhook/server.js';
import type { KubeObject } from '../../core/types.js';

/** What the user wrote: server-populated metadata and status are not the user's to fix. */
function authored(obj: KubeObject): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = obj;
  const md: Record<string, unknown> = {};
  for (const k of ['name', 'generateName', 'namespace', 'labels', 'annotations'] as const) {
    if (metadata?.[k] !== undefined) md[k] = metadata[k];
  }
  return { ...rest, metadata: md };
}

/** The schema check of the API model, as findings: the validator used when none is injected. */
export const schemaOnlyValidator: ObjectValidator = (obj) =>
  validateObject(obj).issues.map(
    (i): ObjectFinding => ({ ruleId: 'KRUISE-SCHEMA', jsonPointer: i.jsonPointer, message: i.message, hint: i.hint ?? 'see `cdk8s-kruise explain`' }),
  );

export function validateWith(validator: ObjectValidator, obj: KubeObject): AdmissionResult {
  const findings = validator(authored(obj));
  if (findings.length === 0) return { allowed: true };
  const kind = obj.kind ?? 'object';
  const lines = findings.map((f) => `${f.ruleId} ${f.jsonPointer || '/'}: ${f.message} (fix: ${f.hint})`);
  return { allowed: false, code: 422, reason: 'Invalid', message: `${kind} ${obj.metadata?.name ?? ''} is invalid: ${lines.join('; ')}` };
}

/**
 * Validation of our kinds at admission: one object in, error findings out, each with its rule id, JSON
 * pointer and fix hint. The rules are injected: `cdk8s-kruise controller` passes the policy engine that
 * `cdk8s-kruise validate` runs (schema plus semantic rules); without one, the API model's schema check
 * runs alone. The runtime itself never depends on the policy engine. An admitted object is answered with a
 * warning for each part this runtime does not carry out (the feature table, as `validate` reports it).
 */
import { unsupportedUseWarnings } from '../../../api/feature-uses.js';
import { findKind } from '../../../api/registry.js';
import { toIssues, validateObject, validatorFor } from '../../../api/validate.js';
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

/**
 * Past this many schema errors the object is refused on the first of them alone: turning each error into
 * an issue with a "did you mean" hint costs ~0.1 ms, so an object with thousands of unknown fields would
 * otherwise hold the event loop (and every other admission request) for a second.
 */
export const MAX_SCHEMA_ERRORS = 50;
const LISTED_ERRORS = 5;

function tooManySchemaErrors(obj: Record<string, unknown>): AdmissionResult | undefined {
  const def = typeof obj.apiVersion === 'string' && typeof obj.kind === 'string' ? findKind(obj.apiVersion, obj.kind) : undefined;
  if (!def) return undefined;
  const validate = validatorFor(def);
  const valid = (validate as (o: unknown) => boolean)(obj);
  if (valid || (validate.errors?.length ?? 0) <= MAX_SCHEMA_ERRORS) return undefined;
  const count = validate.errors!.length;
  const issues = toIssues(validate.errors!.slice(0, MAX_SCHEMA_ERRORS)).slice(0, LISTED_ERRORS);
  const name = (obj.metadata as { name?: string } | undefined)?.name ?? '';
  const lines = issues.map((i) => `${i.jsonPointer || '/'}: ${i.message}`);
  return {
    allowed: false,
    code: 422,
    reason: 'Invalid',
    message: `${def.kind} ${name} is invalid: ${count} schema errors (more than ${MAX_SCHEMA_ERRORS}; not all listed): ${lines.join('; ')}; and ${count - issues.length} more`,
  };
}

/** The schema check of the API model, as findings: the validator used when none is injected. */
export const schemaOnlyValidator: ObjectValidator = (obj) =>
  validateObject(obj).issues.map((i): ObjectFinding => ({
    ruleId: 'KRUISE-SCHEMA',
    jsonPointer: i.jsonPointer,
    message: i.message,
    hint: i.hint ?? 'see `cdk8s-kruise explain`',
  }));

export function validateWith(validator: ObjectValidator, obj: KubeObject): AdmissionResult {
  const mine = authored(obj);
  const flood = tooManySchemaErrors(mine);
  if (flood) return flood;
  const findings = validator(mine);
  if (findings.length === 0) {
    // The API server shows these to the client (kubectl prints them): the object is stored, but this runtime does
    // not act on those parts of it.
    const warnings = unsupportedUseWarnings(mine, 'bundled');
    return warnings.length ? { allowed: true, warnings } : { allowed: true };
  }
  const kind = obj.kind ?? 'object';
  const lines = findings.map((f) => `${f.ruleId} ${f.jsonPointer || '/'}: ${f.message} (fix: ${f.hint})`);
  return { allowed: false, code: 422, reason: 'Invalid', message: `${kind} ${obj.metadata?.name ?? ''} is invalid: ${lines.join('; ')}` };
}

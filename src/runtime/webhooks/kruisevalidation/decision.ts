/**
 * Validation of our kinds at admission with the same rules `cdk8s-kruise validate` runs (src/policy):
 * one object in, error-severity findings out, formatted with rule id, JSON pointer and fix hint.
 */
import { RULES } from '../../../policy/rules/index.js';
import type { Manifest, RuleFinding } from '../../../policy/types.js';
import type { AdmissionResult } from '../../core/webhook/server.js';
import type { KubeObject } from '../../core/types.js';

export function validateWithPolicy(obj: KubeObject): AdmissionResult {
  const manifest: Manifest = { object: obj as Record<string, unknown> };
  const manifests = [manifest];
  const findings: Array<RuleFinding & { ruleId: string }> = [];
  for (const rule of RULES) {
    if (rule.severity !== 'error') continue;
    for (const f of rule.check(manifests, { manifests })) findings.push({ ...f, ruleId: rule.id });
  }
  if (findings.length === 0) return { allowed: true };
  const kind = obj.kind ?? 'object';
  const lines = findings.map((f) => `${f.ruleId} ${f.jsonPointer || '/'}: ${f.message} (fix: ${f.hint})`);
  return { allowed: false, code: 422, reason: 'Invalid', message: `${kind} ${obj.metadata?.name ?? ''} is invalid: ${lines.join('; ')}` };
}

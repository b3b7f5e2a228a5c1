/**
 * Validation of our kinds at admission with the same engine `cdk8s-kruise validate` runs (src/policy:
 * schema rules from src/api plus the semantic rules): one object in, error findings out, each with its
 * rule id, JSON pointer and fix hint.
 */
import { validateManifests } from '../../../policy/index.js';
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

export function validateWithPolicy(obj: KubeObject): AdmissionResult {
  const findings = validateManifests([authored(obj)]).filter((f) => f.severity === 'error');
  if (findings.length === 0) return { allowed: true };
  const kind = obj.kind ?? 'object';
  const lines = findings.map((f) => `${f.ruleId} ${f.jsonPointer || '/'}: ${f.message} (fix: ${f.hint})`);
  return { allowed: false, code: 422, reason: 'Invalid', message: `${kind} ${obj.metadata?.name ?? ''} is invalid: ${lines.join('; ')}` };
}

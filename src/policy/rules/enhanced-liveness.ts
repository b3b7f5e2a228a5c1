import { ANNOTATION_USING_ENHANCED_LIVENESS } from '../../contracts/keys.js';
import { obj, podTemplates } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';

/** JSON pointer escaping of one key (RFC 6901). */
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const POINTER = `/metadata/annotations/${escape(ANNOTATION_USING_ENHANCED_LIVENESS)}`;

function annotated(manifests: readonly Manifest[]) {
  return manifests.flatMap((m) =>
    podTemplates(m).flatMap((t) => {
      const value = obj(t.metadata.annotations)[ANNOTATION_USING_ENHANCED_LIVENESS];
      return value === undefined ? [] : [{ t, value }];
    }),
  );
}

export const enhancedLivenessNoProbe: Rule = {
  id: 'KRUISE-LIVENESS-001',
  severity: 'warning',
  title: 'Enhanced liveness on a pod without a liveness probe',
  doc:
    `A pod annotated ${ANNOTATION_USING_ENHANCED_LIVENESS}: "true" asks the runtime to run its containers' liveness ` +
    "probes within the pod's disruption budget, but no container of the template declares one: nothing is probed, so " +
    'nothing is ever restarted. Give the containers that can hang a livenessProbe, or drop the annotation.',
  check: (manifests) => {
    const out: RuleFinding[] = [];
    for (const { t, value } of annotated(manifests)) {
      if (value !== 'true') continue;
      const containers = Array.isArray(t.spec.containers) ? (t.spec.containers as unknown[]) : [];
      if (containers.some((c) => obj(c).livenessProbe)) continue;
      out.push({
        manifest: t.manifest,
        jsonPointer: `${t.pointer}${POINTER}`,
        message: 'the pod opts into enhanced liveness, but no container declares a livenessProbe',
        hint: 'give a container a livenessProbe (EnhancedLiveness.of(workload).enable(container) checks this at synth), or remove the annotation',
      });
    }
    return out;
  },
};

export const enhancedLivenessValue: Rule = {
  id: 'KRUISE-LIVENESS-002',
  severity: 'warning',
  title: 'Enhanced liveness annotation is neither "true" nor "false"',
  doc:
    `Both runtimes act on ${ANNOTATION_USING_ENHANCED_LIVENESS} only when it is exactly "true". Any other value ` +
    '("True", "yes", "1") leaves the liveness probes to the kubelet, which restarts every failing container at once, ' +
    'whatever the budget: almost certainly not what the annotation meant.',
  check: (manifests) =>
    annotated(manifests)
      .filter(({ value }) => value !== 'true' && value !== 'false')
      .map(({ t, value }) => ({
        manifest: t.manifest,
        jsonPointer: `${t.pointer}${POINTER}`,
        message: `${ANNOTATION_USING_ENHANCED_LIVENESS} is ${JSON.stringify(value)}, which no runtime reads as on`,
        hint: 'write "true" to have the runtime run the liveness probes within the budget, or remove the annotation',
      })),
};

export const ENHANCED_LIVENESS_RULES = [enhancedLivenessNoProbe, enhancedLivenessValue];

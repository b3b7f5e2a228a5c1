import { EXIT_PRIORITY_ANNOTATION } from '../contracts.js';
import { checkExitPriority, type ExitPriorityFinding, EXIT_LEVEL_MIN_SECONDS } from '../../api/pod-contracts.js';
import { memo, obj, podTemplates, type PodTemplate } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';

interface Checked {
  readonly t: PodTemplate;
  readonly findings: readonly ExitPriorityFinding[];
}

/**
 * The findings of every annotated pod template, from the API model's one checker, so `validate`, `synth`
 * and the refusing pod webhook report the same messages.
 */
const checkedPods = memo(checkedPodsOf);

function checkedPodsOf(manifests: readonly Manifest[]): Checked[] {
  const out: Checked[] = [];
  for (const m of manifests) {
    for (const t of podTemplates(m)) {
      if (!(EXIT_PRIORITY_ANNOTATION in obj(t.metadata.annotations))) continue;
      out.push({ t, findings: checkExitPriority({ metadata: t.metadata, spec: t.spec } as Parameters<typeof checkExitPriority>[0]) });
    }
  }
  return out;
}

function findingsOf(manifests: readonly Manifest[], kind: ExitPriorityFinding['kind']): RuleFinding[] {
  const out: RuleFinding[] = [];
  for (const { t, findings } of checkedPods(manifests)) {
    for (const f of findings) {
      if (f.kind !== kind) continue;
      out.push({ manifest: t.manifest, jsonPointer: `${t.pointer}${f.jsonPointer}`, message: f.message, hint: f.hint });
    }
  }
  return out;
}

const EXAMPLE = '{"log-agent":1,"envoy":2}';

export const exitPriorityJson: Rule = {
  id: 'KRUISE-EXITPRIO-001',
  severity: 'error',
  title: 'Container exit priority annotation is not a JSON object',
  doc:
    `The pod annotation ${EXIT_PRIORITY_ANNOTATION} must be a JSON object mapping container names to integers, e.g. ` +
    `${EXAMPLE} (main containers exit first, then log-agent, then envoy). Anything else is ignored by the runtime, ` +
    'so the declared shutdown order silently does not happen.',
  check: (manifests) => findingsOf(manifests, 'json'),
};

export const exitPriorityUnknownContainer: Rule = {
  id: 'KRUISE-EXITPRIO-002',
  severity: 'error',
  title: 'Container exit priority names a container the pod does not have',
  doc:
    `Every key of ${EXIT_PRIORITY_ANNOTATION} must be the name of a container in the same pod template ` +
    '(spec.containers). A misspelt or removed name leaves that container at the default priority, so it may exit ' +
    'before the containers it was meant to outlive.',
  check: (manifests) => findingsOf(manifests, 'unknown-container'),
};

export const exitPriorityValue: Rule = {
  id: 'KRUISE-EXITPRIO-003',
  severity: 'error',
  title: 'Container exit priority is negative or not an integer',
  doc:
    `Values of ${EXIT_PRIORITY_ANNOTATION} are non-negative integers (0 = main containers, larger exits later). ` +
    "Strings, fractions and negative numbers are rejected by the runtime's decoder, which then ignores the whole annotation.",
  check: (manifests) => findingsOf(manifests, 'value'),
};

export const exitPriorityGrace: Rule = {
  id: 'KRUISE-EXITPRIO-004',
  severity: 'error',
  title: 'The grace period cannot fit the exit levels',
  doc:
    `The runtime stops one exit level at a time and gives each level an equal share of terminationGracePeriodSeconds ` +
    `(default 30). A level needs at least ${EXIT_LEVEL_MIN_SECONDS} s (the kubelet's minimum after a preStop hook), ` +
    `so a pod with N distinct levels (containers without a priority count as one) needs at least ${EXIT_LEVEL_MIN_SECONDS}×N s; ` +
    'with less, later levels would be killed before the earlier ones could finish, and the order would not hold.',
  check: (manifests) => findingsOf(manifests, 'grace'),
};

export const EXIT_PRIORITY_RULES = [exitPriorityJson, exitPriorityUnknownContainer, exitPriorityValue, exitPriorityGrace];

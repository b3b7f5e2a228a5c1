import { EXIT_PRIORITY_ANNOTATION, parseExitPriority } from '../contracts.js';
import { toPointer } from '../locate.js';
import { containers, memo, obj, podTemplates, type PodTemplate } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { listNames, quoteValue } from '../../api/quote.js';

interface Annotated {
  readonly t: PodTemplate;
  readonly raw: unknown;
  readonly pointer: string;
}

const annotatedPods = memo(annotatedPodsOf);

function annotatedPodsOf(manifests: readonly Manifest[]): Annotated[] {
  const out: Annotated[] = [];
  for (const m of manifests) {
    for (const t of podTemplates(m)) {
      const annotations = obj(t.metadata.annotations);
      if (!(EXIT_PRIORITY_ANNOTATION in annotations)) continue;
      out.push({
        t,
        raw: annotations[EXIT_PRIORITY_ANNOTATION],
        pointer: `${t.pointer}${toPointer(['metadata', 'annotations', EXIT_PRIORITY_ANNOTATION])}`,
      });
    }
  }
  return out;
}

/** The annotation parsed by the API model's parser (one decoder for the runtime, constructs and rules). */
const parsedCache = new WeakMap<Annotated, ReturnType<typeof parseExitPriority> | undefined>();
function parsed(a: Annotated): ReturnType<typeof parseExitPriority> | undefined {
  if (!parsedCache.has(a)) parsedCache.set(a, typeof a.raw === 'string' ? parseExitPriority(a.raw) : undefined);
  return parsedCache.get(a);
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
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const a of annotatedPods(manifests)) {
      const result = parsed(a);
      if (result?.value) continue;
      const why = result ? result.issues.map((i) => i.message).join('; ') : 'it is not a string';
      out.push({
        manifest: a.t.manifest,
        jsonPointer: a.pointer,
        message: `annotation ${EXIT_PRIORITY_ANNOTATION} = ${quoteValue(a.raw)} is unusable: ${why}`,
        hint: `Write a JSON object of container name → non-negative integer, e.g. '${EXAMPLE}'.`,
      });
    }
    return out;
  },
};

export const exitPriorityUnknownContainer: Rule = {
  id: 'KRUISE-EXITPRIO-002',
  severity: 'error',
  title: 'Container exit priority names a container the pod does not have',
  doc:
    `Every key of ${EXIT_PRIORITY_ANNOTATION} must be the name of a container in the same pod template ` +
    '(spec.containers). A misspelt or removed name leaves that container at the default priority, so it may exit ' +
    'before the containers it was meant to outlive.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const a of annotatedPods(manifests)) {
      const map = parsed(a)?.value;
      if (!map) continue;
      const names = containers(a.t).map((c) => c.name);
      for (const key of Object.keys(map)) {
        if (names.includes(key)) continue;
        out.push({
          manifest: a.t.manifest,
          jsonPointer: a.pointer,
          message: `annotation ${EXIT_PRIORITY_ANNOTATION} names container ${quoteValue(key)}, which is not in the pod (containers: ${listNames(names) || 'none'})`,
          hint: `Use one of the pod's container names, or remove ${quoteValue(key)} from the annotation.`,
        });
      }
    }
    return out;
  },
};

export const exitPriorityValue: Rule = {
  id: 'KRUISE-EXITPRIO-003',
  severity: 'error',
  title: 'Container exit priority is negative or not an integer',
  doc:
    `Values of ${EXIT_PRIORITY_ANNOTATION} are non-negative integers (0 = main containers, larger exits later). ` +
    "Strings, fractions and negative numbers are rejected by the runtime's decoder, which then ignores the whole annotation.",
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const a of annotatedPods(manifests)) {
      const result = parsed(a);
      if (!result?.value) continue;
      for (const issue of result.issues) {
        out.push({
          manifest: a.t.manifest,
          jsonPointer: a.pointer,
          message: `annotation ${EXIT_PRIORITY_ANNOTATION}: ${issue.message}`,
          hint: `Write plain integers ≥ 0 without quotes (${issue.hint ?? 'e.g. {"envoy":1}'}).`,
        });
      }
    }
    return out;
  },
};

export const EXIT_PRIORITY_RULES = [exitPriorityJson, exitPriorityUnknownContainer, exitPriorityValue];

/**
 * Which pods need the runtime's pod webhook for correctness, as a CEL expression the API server evaluates before it
 * calls the webhook (`matchConditions`). The install registers the pod webhook twice on the same path: a `Fail` entry
 * limited to these pods and an `Ignore` entry for every other pod, so a manager that is down (image that cannot be
 * pulled, crash loop, deleted Service) refuses only the pods that would be created wrong without it.
 *
 * A pod needs the webhook when it carries an explicit marker a mutator acts on (exit priority, launch priority,
 * enhanced liveness), when a Kruise workload owns it (its readiness gates), or when its labels match a SidecarSet of
 * the app. The expression
 * only ever grows under the pod webhook's own mutations (they add containers, env and annotations, never remove a
 * marker, label or owner), so a pod the `Fail` entry mutated still matches it afterwards and the `Ignore` entry, whose
 * condition is the negation, never calls the webhook for the same pod again.
 */
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS,
  ANNOTATION_CONTAINER_LAUNCH_PRIORITY,
  ANNOTATION_USING_ENHANCED_LIVENESS,
  ENV_CONTAINER_PRIORITY,
  isEmptySelector,
  KRUISE_GROUP,
  LABEL_NAMESPACE_NAME,
  type LabelSelectorLike,
} from '../contracts/index.js';
import type { KubeObject } from './types.js';

/** A SidecarSet of the app as the pod webhook's match sees it: where it injects and into which labels. */
export interface SidecarSetTarget {
  readonly name: string;
  /** `spec.namespace`; undefined: every namespace. */
  readonly namespace?: string;
  /**
   * `spec.selector`. A `spec.namespaceSelector` is not part of the match: a match condition sees no namespace labels,
   * so the pods the selector matches are held to `Fail` in every namespace the set could reach.
   */
  readonly selector: LabelSelectorLike;
}

/**
 * How pod admission fails when the runtime does not answer: `needed` refuses only the pods the expression matches
 * (the SidecarSets are the app's), `all` refuses every pod the webhook covers (one entry, no match conditions).
 */
export type PodFailClosed = { readonly mode: 'all' } | { readonly mode: 'needed'; readonly sidecarSets: readonly SidecarSetTarget[] };

/** A CEL string literal (JSON's escapes are CEL's). */
function lit(s: string): string {
  return JSON.stringify(s);
}

const LABELS = 'object.metadata.labels';
const ANNOTATIONS = 'object.metadata.annotations';

function hasKey(map: string, key: string): string {
  return `(has(${map}) && ${lit(key)} in ${map})`;
}

function valueIn(key: string, values: readonly string[]): string {
  return `(${hasKey(LABELS, key)} && ${LABELS}[${lit(key)}] in [${values.map(lit).join(', ')}])`;
}

function record(x: unknown): Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

/**
 * Label-selector semantics over the pod's labels as CEL, or undefined when the selector matches no pod (empty: Kruise
 * matches nothing; an unknown operator matches nothing), as `selectorMatches` decides.
 */
export function selectorExpression(selector: LabelSelectorLike): string | undefined {
  if (isEmptySelector(selector)) return undefined;
  const terms: string[] = [];
  for (const [k, v] of Object.entries(record(selector.matchLabels))) terms.push(valueIn(k, [String(v)]));
  for (const raw of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    const e = record(raw);
    const key = String(e.key);
    const values = (Array.isArray(e.values) ? e.values : []).map(String);
    switch (e.operator) {
      case 'In':
        terms.push(valueIn(key, values));
        break;
      case 'NotIn':
        terms.push(`!${valueIn(key, values)}`);
        break;
      case 'Exists':
        terms.push(hasKey(LABELS, key));
        break;
      case 'DoesNotExist':
        terms.push(`!${hasKey(LABELS, key)}`);
        break;
      default:
        return undefined;
    }
  }
  return terms.join(' && ');
}

/**
 * The markers and owners every install treats as needing the webhook, whatever the app contains. Every field is
 * tested with `has` first: an evaluation error would refuse the request through the Fail entry, and a malformed pod
 * must meet the API server's own validation message instead.
 */
function markerTerms(): string[] {
  return [
    // Exit priority: the preStop wiring to the node daemon.
    hasKey(ANNOTATIONS, ANNOTATION_CONTAINER_EXIT_PRIORITY),
    // Exit priority by name or pattern: resolved into the annotation above, then wired the same way.
    hasKey(ANNOTATIONS, ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS),
    // Launch priority: the barrier env. The annotation counts whatever its value, so that no mutation of it can
    // take a pod out of the expression.
    hasKey(ANNOTATIONS, ANNOTATION_CONTAINER_LAUNCH_PRIORITY),
    // Enhanced liveness: without the webhook the kubelet would keep running the probes the runtime also runs.
    hasKey(ANNOTATIONS, ANNOTATION_USING_ENHANCED_LIVENESS),
    `(has(object.spec) && has(object.spec.containers) && object.spec.containers.exists(c, has(c.env) && c.env.exists(e, has(e.name) && e.name == ${lit(ENV_CONTAINER_PRIORITY)})))`,
    // Pods of Kruise workloads: the readiness gates in-place updates and lifecycle hooks rely on.
    `(has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, has(o.controller) && o.controller == true && has(o.apiVersion) && o.apiVersion.startsWith(${lit(`${KRUISE_GROUP}/`)})))`,
  ];
}

/** One term per SidecarSet: its namespace (when it names one) and its selector. */
function sidecarSetTerm(set: SidecarSetTarget): string | undefined {
  const labels = selectorExpression(set.selector);
  if (labels === undefined) return undefined;
  return set.namespace === undefined ? `(${labels})` : `(request.namespace == ${lit(set.namespace)} && ${labels})`;
}

/** The CEL expression true for the pods that need the pod webhook (see the module comment). */
export function podNeedsWebhookExpression(sidecarSets: readonly SidecarSetTarget[]): string {
  const terms = [...markerTerms()];
  const seen = new Set<string>();
  for (const set of [...sidecarSets].sort((a, b) => a.name.localeCompare(b.name) || (a.namespace ?? '').localeCompare(b.namespace ?? ''))) {
    const t = sidecarSetTerm(set);
    if (t !== undefined && !seen.has(t)) {
      seen.add(t);
      terms.push(t);
    }
  }
  return terms.join(' || ');
}

/**
 * The one namespace a namespaceSelector names by its `kubernetes.io/metadata.name` label alone: how v1beta1 (which has
 * no `spec.namespace`) says what v1alpha1's `namespace` said; undefined for any other selector.
 */
function namespaceOfSelector(selector: unknown): string | undefined {
  const s = record(selector);
  const labels = record(s.matchLabels);
  const keys = Object.keys(s);
  if (keys.length !== 1 || keys[0] !== 'matchLabels' || Object.keys(labels).length !== 1) return undefined;
  const name = labels[LABEL_NAMESPACE_NAME];
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** The SidecarSets among rendered objects, as the pod webhook's match sees them. */
export function sidecarSetTargets(objects: readonly KubeObject[]): SidecarSetTarget[] {
  const out: SidecarSetTarget[] = [];
  for (const o of objects) {
    if (o.kind !== 'SidecarSet' || typeof o.apiVersion !== 'string' || !o.apiVersion.startsWith(`${KRUISE_GROUP}/`)) continue;
    const spec = record((o as Record<string, unknown>).spec);
    const namespace =
      typeof spec.namespace === 'string' && spec.namespace !== '' ? spec.namespace : namespaceOfSelector(spec.namespaceSelector);
    out.push({
      name: String(o.metadata?.name ?? ''),
      ...(namespace !== undefined ? { namespace } : {}),
      selector: record(spec.selector) as LabelSelectorLike,
    });
  }
  return out;
}

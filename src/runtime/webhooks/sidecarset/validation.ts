/**
 * SidecarSet admission checks that need the cluster (chained after the policy rules on the SidecarSet
 * validate path), pure: as upstream, a SidecarSet is refused when it and an existing SidecarSet may select
 * the same pods and inject a container of the same name (or a same-named volume with another definition),
 * because every such pod's creation would then be refused; and when its patchPodMetadata keys are outside
 * the kruise-configuration whitelist.
 */
import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import { canonicalJson, patchMetadataKeysRefused, type PatchMetadataWhitelist } from '../../control/sidecarset-pod.js';
import type { LabelSelectorLike } from '../../../contracts/index.js';
import { resourcesPolicyProblems, type SidecarLike } from '../../../api/sidecar-resources.js';

interface Expr {
  key: string;
  operator: string;
  values: string[];
}

function exprs(s: LabelSelectorLike | undefined): Expr[] {
  const out: Expr[] = [];
  const labels = (s?.matchLabels ?? {}) as Record<string, unknown>;
  for (const [key, v] of Object.entries(labels)) out.push({ key, operator: 'In', values: [String(v)] });
  for (const raw of Array.isArray(s?.matchExpressions) ? (s.matchExpressions as unknown[]) : []) {
    const e = (raw ?? {}) as { key?: unknown; operator?: unknown; values?: unknown };
    out.push({ key: String(e.key), operator: String(e.operator), values: Array.isArray(e.values) ? e.values.map(String) : [] });
  }
  return out;
}

/** True when no label set can satisfy both requirements on one key. */
function contradict(a: Expr, b: Expr): boolean {
  const has = (e: Expr) => e.operator === 'In' || e.operator === 'Exists';
  if ((has(a) && b.operator === 'DoesNotExist') || (has(b) && a.operator === 'DoesNotExist')) return true;
  if (a.operator === 'In' && b.operator === 'In') return !a.values.some((v) => b.values.includes(v));
  if (a.operator === 'In' && b.operator === 'NotIn') return a.values.every((v) => b.values.includes(v));
  if (a.operator === 'NotIn' && b.operator === 'In') return b.values.every((v) => a.values.includes(v));
  return false;
}

/**
 * Whether two selectors may select a common label set. Conservative: true unless some key carries
 * requirements no value satisfies together (different matchLabels values, disjoint In lists, In vs NotIn
 * covering it, Exists vs DoesNotExist).
 */
export function selectorsMayOverlap(a: LabelSelectorLike | undefined, b: LabelSelectorLike | undefined): boolean {
  const ea = exprs(a);
  const eb = exprs(b);
  return !ea.some((x) => eb.some((y) => x.key === y.key && contradict(x, y)));
}

/** Whether two sets may select pods of a common namespace. */
function namespacesMayOverlap(a: SidecarSet, b: SidecarSet): boolean {
  if (a.spec.namespace && b.spec.namespace && a.spec.namespace !== b.spec.namespace) return false;
  // A `namespace` is the namespace's kubernetes.io/metadata.name label: test it against the other selector.
  const asSelector = (s: SidecarSet): LabelSelectorLike | undefined =>
    s.spec.namespace ? { matchLabels: { 'kubernetes.io/metadata.name': s.spec.namespace } } : undefined;
  const na = asSelector(a);
  const nb = asSelector(b);
  if (na && b.spec.namespaceSelector && !selectorsMayOverlap(na, b.spec.namespaceSelector as LabelSelectorLike)) return false;
  if (nb && a.spec.namespaceSelector && !selectorsMayOverlap(nb, a.spec.namespaceSelector as LabelSelectorLike)) return false;
  if (a.spec.namespaceSelector && b.spec.namespaceSelector) {
    return selectorsMayOverlap(a.spec.namespaceSelector as LabelSelectorLike, b.spec.namespaceSelector as LabelSelectorLike);
  }
  return true;
}

function injectedNames(s: SidecarSet): Set<string> {
  return new Set([...(s.spec.containers ?? []), ...(s.spec.initContainers ?? [])].map((c) => c.name));
}

/**
 * The first conflict of `set` with one of `others` (the cluster's SidecarSets; the set itself by name, and
 * sets being deleted, are skipped), as a message naming the other set and what collides; undefined if none.
 */
export function sidecarSetConflict(set: SidecarSet, others: readonly SidecarSet[]): string | undefined {
  const mine = injectedNames(set);
  const myVolumes = new Map(((set.spec.volumes ?? []) as Array<{ name: string }>).map((v) => [v.name, canonicalJson(v)]));
  for (const other of [...others].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1))) {
    if (other.metadata.name === set.metadata.name || other.metadata.deletionTimestamp) continue;
    if (!namespacesMayOverlap(set, other)) continue;
    if (!selectorsMayOverlap(set.spec.selector as LabelSelectorLike, other.spec.selector as LabelSelectorLike)) continue;
    const shared = [...injectedNames(other)].filter((n) => mine.has(n)).sort();
    if (shared.length) {
      return `SidecarSet ${set.metadata.name} and the existing SidecarSet ${other.metadata.name} may select the same pods and both inject a container named "${shared[0]}"; make their selectors (or namespaces) disjoint or rename the container`;
    }
    for (const v of (other.spec.volumes ?? []) as Array<{ name: string }>) {
      const mineV = myVolumes.get(v.name);
      if (mineV !== undefined && mineV !== canonicalJson(v)) {
        return `SidecarSet ${set.metadata.name} and the existing SidecarSet ${other.metadata.name} may select the same pods and define volume "${v.name}" differently; give the volume one definition or another name`;
      }
    }
  }
  return undefined;
}

/** The patchPodMetadata refusal (upstream's whitelist semantics), as a message; undefined when allowed. */
export function patchMetadataRefusal(
  set: SidecarSet,
  whitelist: PatchMetadataWhitelist | undefined,
  defaultsAllowed: boolean,
): string | undefined {
  const { refused, reason } = patchMetadataKeysRefused(set, whitelist, defaultsAllowed);
  if (!refused.length) return undefined;
  return `spec.patchPodMetadata: annotation ${refused.length > 1 ? 'keys' : 'key'} ${refused.map((k) => `"${k}"`).join(', ')} not allowed: ${reason}; an admin allows keys in ConfigMap kruise-configuration (key SidecarSet_PatchPodMetadata_WhiteList) of the runtime namespace`;
}

/**
 * The resourcesPolicy refusal, as upstream's SidecarSet validation words it (field path, then the reason): a policy
 * beside resources, on a non-native init container, with an empty or invalid regex, no expressions, or an
 * expression that does not parse; undefined when every policy is valid.
 */
export function resourcesPolicyRefusal(set: SidecarSet): string | undefined {
  const problems: string[] = [];
  for (const field of ['initContainers', 'containers'] as const) {
    (set.spec[field] ?? []).forEach((c, i) => {
      for (const p of resourcesPolicyProblems(c as unknown as SidecarLike, field === 'initContainers')) {
        problems.push(`spec.${field}[${i}].${p.field}: ${p.message}`);
      }
    });
  }
  return problems.length ? problems.join('; ') : undefined;
}

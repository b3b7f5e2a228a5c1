import { isEmptySelector, isKind, isObj, memo, obj, podTemplateProjection, podTemplates, selectorMatches, type Obj } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { quoteValue } from '../../api/quote.js';
import { budgetValueProblem } from '../../contracts/index.js';
import { specRuleFor } from './kind-rule.js';

const GROUP = 'policy.kruise.io';
const rule = specRuleFor(GROUP, 'PodUnavailableBudget');

export const podUnavailableBudgetSpec = rule(
  'KRUISE-PUB-001',
  'PodUnavailableBudget without pods to cover, or without exactly one valid maxUnavailable/minAvailable',
  'A PodUnavailableBudget covers the pods of its targetRef (a workload in its namespace) or of a non-empty selector ' +
    '(an empty one covers nothing, upstream says so and the budget protects no pod), and bounds them with exactly one ' +
    'of maxUnavailable or minAvailable, each a non-negative integer or a percentage from 0% to 100% of the replicas ' +
    'the workloads expect. Upstream rejects the same (with both set, it would ignore minAvailable).',
  (_m, spec) => {
    const out: Omit<RuleFinding, 'manifest'>[] = [];
    const ref = isObj(spec.targetRef) ? spec.targetRef : undefined;
    if (ref) {
      if (!ref.name || !ref.kind || !ref.apiVersion)
        out.push({
          jsonPointer: '/spec/targetRef',
          message: 'targetRef needs apiVersion, kind and name',
          hint: 'Name the workload, e.g. {apiVersion: apps/v1, kind: Deployment, name: web}.',
        });
      if (isObj(spec.selector))
        out.push({
          jsonPointer: '/spec/selector',
          message: 'selector and targetRef are both set: targetRef wins and the selector is ignored',
          hint: 'Keep one of them.',
        });
    } else if (!isObj(spec.selector) || isEmptySelector(spec.selector)) {
      out.push({
        jsonPointer: '/spec/selector',
        message: 'neither targetRef nor a non-empty selector: the budget covers no pod',
        hint: 'Set targetRef to the workload, or selector.matchLabels to its pod labels.',
      });
    }
    const has = (k: string) => spec[k] !== undefined && spec[k] !== null;
    if (has('maxUnavailable') === has('minAvailable'))
      out.push({
        jsonPointer: '/spec',
        message: has('maxUnavailable') ? 'both maxUnavailable and minAvailable are set' : 'neither maxUnavailable nor minAvailable is set',
        hint: 'Set exactly one, e.g. maxUnavailable: 25%.',
      });
    for (const k of ['maxUnavailable', 'minAvailable'])
      if (has(k)) {
        const problem = budgetValueProblem(spec[k]);
        if (problem)
          out.push({
            jsonPointer: `/spec/${k}`,
            message: `${k}: ${problem}`,
            hint: 'Use a count such as 1 or a percentage such as "25%".',
          });
      }
    return out;
  },
);

const budgets = memo((manifests: readonly Manifest[]): Manifest[] => manifests.filter((m) => isKind(m, GROUP, 'PodUnavailableBudget')));
const workloadParts = podTemplateProjection(['metadata.labels']);
const namespaceOf = (m: Manifest): string => {
  const ns = obj(m.object.metadata).namespace;
  return typeof ns === 'string' ? ns : '';
};
const groupOfApiVersion = (v: unknown) => (typeof v === 'string' && v.includes('/') ? v.slice(0, v.indexOf('/')) : '');

export const podUnavailableBudgetSelectsNothing: Rule = {
  id: 'KRUISE-PUB-002',
  severity: 'warning',
  title: 'PodUnavailableBudget covers none of the workloads in its namespace',
  doc:
    'A PodUnavailableBudget protects only the pods of its targetRef or its selector in its own namespace, so a typo in ' +
    'a name or a label leaves every pod unprotected, silently. When the inputs hold pod templates in the budget’s ' +
    'namespace and its targetRef names none of those workloads, or its selector matches none of their pod labels, this ' +
    'warns. A budget for pods other apps create is legitimate: skip the rule (--skip-rule KRUISE-PUB-002) for such inputs.',
  retain: (m: Manifest) => (isKind(m, GROUP, 'PodUnavailableBudget') ? m.object : workloadParts(m)),
  check(manifests: readonly Manifest[]): RuleFinding[] {
    return budgets(manifests).flatMap((b): RuleFinding[] => {
      const spec = obj(b.object.spec);
      const ns = namespaceOf(b);
      const owners = manifests.filter((m) => namespaceOf(m) === ns && podTemplates(m).length > 0);
      if (!owners.length) return [];
      const where = quoteValue(ns || 'default');
      if (isObj(spec.targetRef)) {
        const ref = spec.targetRef as Obj;
        const hit = owners.some(
          (m) =>
            m.object.kind === ref.kind &&
            obj(m.object.metadata).name === ref.name &&
            groupOfApiVersion(m.object.apiVersion) === groupOfApiVersion(ref.apiVersion),
        );
        return hit
          ? []
          : [
              {
                manifest: b,
                jsonPointer: '/spec/targetRef',
                message: `targetRef ${quoteValue(`${String(ref.kind)}/${String(ref.name)}`)} is none of the ${owners.length} workload(s) in namespace ${where}, so no pod is protected`,
                hint: 'Fix the targetRef; if the workload is created elsewhere, skip this rule.',
              },
            ];
      }
      const sel = spec.selector;
      if (!isObj(sel) || isEmptySelector(sel)) return [];
      const templates = owners.flatMap((m) => podTemplates(m));
      return templates.some((t) => selectorMatches(sel, obj(t.metadata.labels)))
        ? []
        : [
            {
              manifest: b,
              jsonPointer: '/spec/selector',
              message: `selector matches none of the ${templates.length} pod template(s) in namespace ${where}, so no pod is protected`,
              hint: 'Fix the selector or the pod labels; if the budget is for pods created elsewhere, skip this rule.',
            },
          ];
    });
  },
};

export const PODUNAVAILABLEBUDGET_RULES: readonly Rule[] = [podUnavailableBudgetSpec, podUnavailableBudgetSelectsNothing];

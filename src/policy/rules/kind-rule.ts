import { isKind, obj } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';

/** What one rule finds in one object of its kind, given the object's spec. */
export type SpecCheck = (m: Manifest, spec: Record<string, unknown>) => Omit<RuleFinding, 'manifest'>[];

/**
 * A factory of error rules that each look at the objects of one kind: the rule files of the job kinds share it,
 * so each rule states only what it checks.
 */
export function specRuleFor(group: string, kind: string) {
  return (id: string, title: string, doc: string, find: SpecCheck): Rule => ({
    id,
    severity: 'error',
    title,
    doc,
    check(manifests) {
      return manifests
        .filter((m) => isKind(m, group, kind))
        .flatMap((m) => find(m, obj(m.object.spec)).map((f) => ({ manifest: m, ...f })));
    },
  });
}

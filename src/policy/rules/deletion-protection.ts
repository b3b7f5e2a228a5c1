import { deletionProtectedKind, deletionProtectionValueProblem, LABEL_DELETE_PROTECTION, PERMISSIONS } from '../../contracts/index.js';
import { obj } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';

const POINTER = `/metadata/labels/${LABEL_DELETE_PROTECTION.replace(/~/g, '~0').replace(/\//g, '~1')}`;

function labelOf(m: Manifest): { has: boolean; value: unknown } {
  const labels = obj(obj(m.object.metadata).labels);
  return { has: Object.prototype.hasOwnProperty.call(labels, LABEL_DELETE_PROTECTION), value: labels[LABEL_DELETE_PROTECTION] };
}

function kindOf(m: Manifest) {
  const { apiVersion, kind } = m.object;
  return typeof apiVersion === 'string' && typeof kind === 'string' ? deletionProtectedKind(apiVersion, kind) : undefined;
}

export const deletionProtectionValue: Rule = {
  id: 'KRUISE-PROTECT-001',
  severity: 'error',
  title: 'Deletion-protection label with a value its kind does not honour',
  doc:
    'policy.kruise.io/delete-protection protects Namespaces, CRDs, Deployments, ReplicaSets, StatefulSets, CloneSets, ' +
    'Advanced StatefulSets and UnitedDeployments with Always or Cascading, and Services and Ingresses with Always only. ' +
    'Both runtimes let any other value through as if the label were absent, so the object the label was meant to ' +
    'protect can be deleted.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      const { has, value } = labelOf(m);
      const p = has ? kindOf(m) : undefined;
      const problem = p ? deletionProtectionValueProblem(p, value) : undefined;
      if (!p || !problem) continue;
      out.push({
        manifest: m,
        jsonPointer: POINTER,
        message: problem,
        hint: p.cascading
          ? 'Use Always (never deleted while labelled) or Cascading (not deleted while it still holds something).'
          : `Use Always: a ${p.kind} holds nothing a Cascading check could count.`,
      });
    }
    return out;
  },
};

export const deletionProtectionKind: Rule = {
  id: 'KRUISE-PROTECT-002',
  severity: 'warning',
  title: 'Deletion-protection label on a kind no runtime protects',
  doc:
    'The deletion-protection webhooks of both runtimes are registered for Namespaces, CRDs, the replicated workloads, ' +
    'Services and Ingresses only. On any other kind the label is inert: the object is deleted like any other.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (!labelOf(m).has || kindOf(m) || typeof m.object.kind !== 'string') continue;
      out.push({
        manifest: m,
        jsonPointer: POINTER,
        message: `${LABEL_DELETE_PROTECTION} on a ${m.object.kind} protects nothing: no runtime checks deletions of this kind`,
        hint: 'Protect the Namespace that holds it (Cascading refuses while pods run there), or remove the label.',
      });
    }
    return out;
  },
};

/** `group/plural` of the custom resources the bundled manager may list (its own kinds). */
const COUNTABLE = new Set(
  PERMISSIONS.MANAGER.filter((r) => r.verbs.includes('list')).flatMap((r) =>
    r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`)),
  ),
);

export const deletionProtectionCrdCascading: Rule = {
  id: 'KRUISE-PROTECT-003',
  severity: 'warning',
  title: 'CRD protected with Cascading',
  doc:
    'Cascading on a CustomResourceDefinition refuses its deletion while a custom resource of it exists, and only with ' +
    'feature gate DeletionProtectionForCRDCascadingGate (Alpha, off by default); without the gate both runtimes refuse ' +
    'every deletion of it, as Always does. Counting the resources needs the right to list them: upstream grants its ' +
    'manager list on every resource, the bundled manager lists only its own kinds, so a Cascading CRD of any other ' +
    'group cannot be deleted while labelled under the bundled runtime.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (labelOf(m).value !== 'Cascading' || kindOf(m)?.kind !== 'CustomResourceDefinition') continue;
      const spec = obj(m.object.spec);
      const id = `${String(spec.group)}/${String(obj(spec.names).plural)}`;
      const countable = COUNTABLE.has(id);
      out.push({
        manifest: m,
        jsonPointer: POINTER,
        message: countable
          ? 'Cascading on a CRD is honoured only with feature gate DeletionProtectionForCRDCascadingGate; without it every deletion is refused'
          : `Cascading on a CRD is honoured only with feature gate DeletionProtectionForCRDCascadingGate, and the bundled runtime may not list ${id} to count its resources: it refuses every deletion of this CRD while labelled`,
        hint: countable
          ? 'Turn the gate on (KruiseRuntime featureGates { DeletionProtectionForCRDCascadingGate: true }) or use Always.'
          : 'Use Always (remove the label to delete it), or run upstream OpenKruise with the gate on.',
      });
    }
    return out;
  },
};

export const DELETION_PROTECTION_RULES: readonly Rule[] = [deletionProtectionValue, deletionProtectionKind, deletionProtectionCrdCascading];

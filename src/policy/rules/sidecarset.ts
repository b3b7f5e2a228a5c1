import { arr, containers, isEmptySelector, isKind, isObj, obj, podTemplates, selectorMatches, type Obj } from '../k8s.js';
import type { Manifest, Rule, RuleContext, RuleFinding } from '../types.js';

function sidecarSets(manifests: readonly Manifest[]): Manifest[] {
  return manifests.filter((m) => isKind(m, 'apps.kruise.io', 'SidecarSet'));
}

interface SidecarContainer {
  readonly name: string;
  readonly pointer: string;
}

function sidecarContainers(m: Manifest): SidecarContainer[] {
  const spec = obj(m.object.spec);
  const out: SidecarContainer[] = [];
  for (const field of ['initContainers', 'containers'] as const) {
    arr(spec[field]).forEach((c, i) => {
      const name = obj(c).name;
      if (typeof name === 'string') out.push({ name, pointer: `/spec/${field}/${i}/name` });
    });
  }
  return out;
}

function namespaceOf(m: Manifest): string | undefined {
  const ns = obj(m.object.metadata).namespace;
  return typeof ns === 'string' ? ns : undefined;
}

/** Whether a SidecarSet's namespace scope admits `ns` (unknown namespaces are assumed to match). */
function namespaceAdmits(set: Obj, ns: string | undefined, ctx: RuleContext): boolean {
  if (typeof set.namespace === 'string' && ns !== undefined && set.namespace !== ns) return false;
  if (isObj(set.namespaceSelector) && ns !== undefined) {
    const nsObj = ctx.manifests.find((m) => isKind(m, '', 'Namespace') && obj(m.object.metadata).name === ns);
    if (nsObj) {
      const labels = { 'kubernetes.io/metadata.name': ns, ...obj(obj(nsObj.object.metadata).labels) };
      if (!selectorMatches(set.namespaceSelector, labels)) return false;
    }
  }
  return true;
}

export const sidecarSetDuplicateNames: Rule = {
  id: 'KRUISE-SIDECARSET-001',
  severity: 'error',
  title: 'SidecarSet declares the same container name twice',
  doc:
    'Container names must be unique across a SidecarSet\'s containers and initContainers: they become containers of ' +
    'the same pod. The upstream validating webhook rejects the SidecarSet ("duplicate container name").',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const seen = new Set<string>();
      for (const c of sidecarContainers(m)) {
        if (seen.has(c.name)) {
          out.push({
            manifest: m,
            jsonPointer: c.pointer,
            message: `container name "${c.name}" appears more than once in the SidecarSet`,
            hint: 'Rename one of the containers; names must be unique across containers and initContainers.',
          });
        }
        seen.add(c.name);
      }
    }
    return out;
  },
};

export const sidecarSetNameCollision: Rule = {
  id: 'KRUISE-SIDECARSET-002',
  severity: 'error',
  title: 'SidecarSet container has the name of an app container of a workload it selects',
  doc:
    'When a pod already has a container with the sidecar\'s name, the injection treats it as present and does not ' +
    'inject the sidecar, so the pod runs without it and nothing reports why. The check looks at every pod-template ' +
    'owner in the same manifests whose pod labels match the SidecarSet selector and whose namespace its ' +
    'namespace/namespaceSelector admits.',
  check(manifests, ctx) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const spec = obj(m.object.spec);
      if (!isObj(spec.selector) || isEmptySelector(spec.selector)) continue;
      const sidecars = sidecarContainers(m);
      for (const w of ctx.manifests) {
        for (const t of podTemplates(w)) {
          if (!namespaceAdmits(spec, namespaceOf(w), ctx)) continue;
          if (!selectorMatches(spec.selector, obj(t.metadata.labels))) continue;
          const appNames = new Set([...containers(t).map((c) => c.name), ...arr(t.spec.initContainers).map((c) => obj(c).name)]);
          for (const s of sidecars) {
            if (!appNames.has(s.name)) continue;
            const ref = `${String(w.object.kind)} ${namespaceOf(w) ? namespaceOf(w) + '/' : ''}${String(obj(w.object.metadata).name)}`;
            out.push({
              manifest: m,
              jsonPointer: s.pointer,
              message: `sidecar "${s.name}" has the name of a container of ${ref}, which this SidecarSet selects; it would not be injected there`,
              hint: `Rename the sidecar (e.g. "${s.name}-sidecar") or the app container, or narrow the selector.`,
            });
          }
        }
      }
    }
    return out;
  },
};

function isZero(v: unknown): boolean {
  return v === 0 || v === '0' || v === '0%';
}

export const sidecarSetMaxUnavailableZero: Rule = {
  id: 'KRUISE-SIDECARSET-003',
  severity: 'error',
  title: 'SidecarSet rolling update with maxUnavailable 0',
  doc:
    'A SidecarSet upgrades sidecars in place, one unavailable pod at a time per maxUnavailable; with 0 no pod may ' +
    'become unavailable, so the rollout can never start. Upstream rejects it. Leave it unset (default 1) or set a ' +
    'positive number or percentage.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const strategy = obj(obj(m.object.spec).updateStrategy);
      if (!isZero(strategy.maxUnavailable) || strategy.type === 'NotUpdate') continue;
      out.push({
        manifest: m,
        jsonPointer: '/spec/updateStrategy/maxUnavailable',
        message: `updateStrategy.maxUnavailable is ${JSON.stringify(strategy.maxUnavailable)}, so the rolling update can never proceed`,
        hint: 'Set maxUnavailable to 1 (the default), a larger number, or a percentage such as "10%".',
      });
    }
    return out;
  },
};

export const sidecarSetEmptySelector: Rule = {
  id: 'KRUISE-SIDECARSET-004',
  severity: 'error',
  title: 'SidecarSet selector is missing or empty',
  doc:
    'Unlike most Kubernetes selectors, an empty SidecarSet selector matches no pod, and upstream\'s validating webhook ' +
    'rejects it ("empty selector is invalid for sidecarset"); a missing selector is refused as required. Give ' +
    'matchLabels or matchExpressions that select the pods to inject.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const selector = obj(m.object.spec).selector;
      if (isObj(selector) && !isEmptySelector(selector)) continue;
      out.push({
        manifest: m,
        jsonPointer: isObj(selector) ? '/spec/selector' : '/spec',
        message: isObj(selector) ? 'spec.selector is empty, so the SidecarSet matches no pod' : 'spec.selector is missing',
        hint: 'Add spec.selector.matchLabels (e.g. app: webserver) for the pods that should get the sidecars.',
      });
    }
    return out;
  },
};

/** Whether two label selectors can match a common pod, judged on matchLabels only (conservative). */
function selectorsOverlap(a: Obj, b: Obj): boolean {
  const la = obj(a.matchLabels);
  const lb = obj(b.matchLabels);
  for (const [k, v] of Object.entries(la)) if (k in lb && lb[k] !== v) return false;
  return true;
}

export const sidecarSetConflict: Rule = {
  id: 'KRUISE-SIDECARSET-005',
  severity: 'error',
  title: 'Two SidecarSets inject a container of the same name into the same pods',
  doc:
    'When two SidecarSets can select the same pods (their namespaces and matchLabels do not exclude each other) and ' +
    'both declare a container with the same name, upstream\'s validating webhook rejects the second one as in ' +
    'conflict: a pod cannot hold two containers of one name.',
  check(manifests) {
    const out: RuleFinding[] = [];
    const sets = sidecarSets(manifests);
    for (let i = 0; i < sets.length; i++) {
      for (let j = 0; j < i; j++) {
        const a = obj(sets[i]!.object.spec);
        const b = obj(sets[j]!.object.spec);
        if (typeof a.namespace === 'string' && typeof b.namespace === 'string' && a.namespace !== b.namespace) continue;
        if (!isObj(a.selector) || !isObj(b.selector) || isEmptySelector(a.selector) || isEmptySelector(b.selector)) continue;
        if (!selectorsOverlap(a.selector, b.selector)) continue;
        const other = new Set(sidecarContainers(sets[j]!).map((c) => c.name));
        for (const c of sidecarContainers(sets[i]!)) {
          if (!other.has(c.name)) continue;
          out.push({
            manifest: sets[i]!,
            jsonPointer: c.pointer,
            message: `container "${c.name}" is also declared by SidecarSet "${String(obj(sets[j]!.object.metadata).name)}", whose selector can match the same pods`,
            hint: 'Rename one container, or make the selectors disjoint (different values for a shared label key).',
          });
        }
      }
    }
    return out;
  },
};

export const SIDECARSET_RULES = [sidecarSetDuplicateNames, sidecarSetNameCollision, sidecarSetMaxUnavailableZero, sidecarSetEmptySelector, sidecarSetConflict];

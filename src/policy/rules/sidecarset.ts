import {
  arr,
  containers,
  isEmptySelector,
  isKind,
  isObj,
  memo,
  obj,
  podTemplateProjection,
  podTemplates,
  selectorMatches,
  type Obj,
  type PodTemplate,
} from '../k8s.js';
import type { Manifest, Rule, RuleContext, RuleFinding } from '../types.js';
import { listNames, quoteValue, truncate } from '../../api/quote.js';
import { closestMatch } from '../../api/validate.js';
import { LABEL_NAMESPACE_NAME } from '../../contracts/keys.js';
import { dns1123LabelError } from '../../contracts/validators.js';
import { COMMON_LABELS } from '../../install/spec.js';
import { resourcesPolicyProblems, type SidecarLike } from '../../api/sidecar-resources.js';

/** What the cross-document SidecarSet rules read of a workload: its pods' labels and container names. */
const workloadParts = podTemplateProjection(['metadata.labels', 'spec.containers[].name', 'spec.initContainers[].name']);

const sidecarSets = memo((manifests: readonly Manifest[]): Manifest[] =>
  manifests.filter((m) => isKind(m, 'apps.kruise.io', 'SidecarSet')),
);

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

/** The Namespace objects of the inputs, by name: their labels, with the name label the API server sets. */
const namespaceLabels = memo((manifests: readonly Manifest[]): Map<string, Obj> => {
  const out = new Map<string, Obj>();
  for (const m of manifests) {
    if (!isKind(m, '', 'Namespace')) continue;
    const meta = obj(m.object.metadata);
    if (typeof meta.name === 'string' && !out.has(meta.name))
      out.set(meta.name, { [LABEL_NAMESPACE_NAME]: meta.name, ...obj(meta.labels) });
  }
  return out;
});

/** Whether a SidecarSet's namespace scope admits `ns` (unknown namespaces are assumed to match). */
function namespaceAdmits(set: Obj, ns: string | undefined, ctx: RuleContext): boolean {
  if (typeof set.namespace === 'string' && ns !== undefined && set.namespace !== ns) return false;
  if (isObj(set.namespaceSelector) && ns !== undefined) {
    const labels = namespaceLabels(ctx.manifests).get(ns);
    if (labels && !selectorMatches(set.namespaceSelector, labels)) return false;
  }
  return true;
}

export const sidecarSetDuplicateNames: Rule = {
  id: 'KRUISE-SIDECARSET-001',
  severity: 'error',
  title: 'SidecarSet declares the same container name twice',
  doc:
    "Container names must be unique across a SidecarSet's containers and initContainers: they become containers of " +
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
            message: `container name ${quoteValue(c.name)} appears more than once in the SidecarSet`,
            hint: 'Rename one of the containers; names must be unique across containers and initContainers.',
          });
        }
        seen.add(c.name);
      }
    }
    return out;
  },
};

interface TemplateIndex {
  readonly all: PodTemplate[];
  /** Templates by one of their pod labels (`key=value`), to look up selector candidates without a full scan. */
  readonly byLabel: Map<string, PodTemplate[]>;
}

const templateIndex = memo((manifests: readonly Manifest[]): TemplateIndex => {
  const all: PodTemplate[] = [];
  const byLabel = new Map<string, PodTemplate[]>();
  for (const m of manifests) {
    for (const t of podTemplates(m)) {
      all.push(t);
      for (const [k, v] of Object.entries(obj(t.metadata.labels))) {
        const key = `${k}=${String(v)}`;
        let list = byLabel.get(key);
        if (!list) byLabel.set(key, (list = []));
        list.push(t);
      }
    }
  }
  return { all, byLabel };
});

/** Templates that can match `selector`: the smallest bucket of one of its matchLabels, else all of them. */
function candidates(index: TemplateIndex, selector: Obj): PodTemplate[] {
  let best: PodTemplate[] | undefined;
  for (const [k, v] of Object.entries(obj(selector.matchLabels))) {
    const list = index.byLabel.get(`${k}=${String(v)}`) ?? [];
    if (!best || list.length < best.length) best = list;
  }
  return best ?? index.all;
}

export const sidecarSetNameCollision: Rule = {
  id: 'KRUISE-SIDECARSET-002',
  severity: 'error',
  title: 'SidecarSet container has the name of an app container of a workload it selects',
  doc:
    "When a pod already has a container with the sidecar's name, the injection treats it as present and does not " +
    'inject the sidecar, so the pod runs without it and nothing reports why. The check looks at every pod-template ' +
    'owner in the same manifests whose pod labels match the SidecarSet selector and whose namespace its ' +
    'namespace/namespaceSelector admits.',
  retain: (m) => (isKind(m, 'apps.kruise.io', 'SidecarSet') || isKind(m, '', 'Namespace') ? m.object : workloadParts(m)),
  activatedBy: (m) => isKind(m, 'apps.kruise.io', 'SidecarSet'),
  check(manifests, ctx) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const spec = obj(m.object.spec);
      if (!isObj(spec.selector) || isEmptySelector(spec.selector)) continue;
      const sidecars = sidecarContainers(m);
      for (const t of candidates(templateIndex(ctx.manifests), spec.selector)) {
        const w = t.manifest;
        {
          if (!namespaceAdmits(spec, namespaceOf(w), ctx)) continue;
          if (!selectorMatches(spec.selector, obj(t.metadata.labels))) continue;
          const appNames = new Set([...containers(t).map((c) => c.name), ...arr(t.spec.initContainers).map((c) => obj(c).name)]);
          for (const s of sidecars) {
            if (!appNames.has(s.name)) continue;
            const ref = `${String(w.object.kind)} ${namespaceOf(w) ? namespaceOf(w) + '/' : ''}${String(obj(w.object.metadata).name)}`;
            out.push({
              manifest: m,
              jsonPointer: s.pointer,
              message: `sidecar ${quoteValue(s.name)} has the name of a container of ${ref}, which this SidecarSet selects; it would not be injected there`,
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
        message: `updateStrategy.maxUnavailable is ${quoteValue(strategy.maxUnavailable)}, so the rolling update can never proceed`,
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
    "Unlike most Kubernetes selectors, an empty SidecarSet selector matches no pod, and upstream's validating webhook " +
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

export const sidecarSetConflict: Rule = {
  id: 'KRUISE-SIDECARSET-005',
  severity: 'error',
  title: 'Two SidecarSets inject a container of the same name into the same pods',
  doc:
    'When two SidecarSets can select the same pods (their namespaces and matchLabels do not exclude each other; ' +
    'matchExpressions are not compared, so the check is conservative) and ' +
    "both declare a container with the same name, upstream's validating webhook rejects the second one as in " +
    'conflict: a pod cannot hold two containers of one name.',
  retain: (m) => (isKind(m, 'apps.kruise.io', 'SidecarSet') ? m.object : undefined),
  activatedBy: (m) => isKind(m, 'apps.kruise.io', 'SidecarSet'),
  check(manifests) {
    const out: RuleFinding[] = [];
    const sets = sidecarSets(manifests).map((m) => {
      const spec = obj(m.object.spec);
      return { m, spec, containers: sidecarContainers(m), usable: isObj(spec.selector) && !isEmptySelector(spec.selector) };
    });
    // Only SidecarSets sharing a container name can conflict: compare within those groups.
    const byName = new Map<string, number[]>();
    sets.forEach((s, i) => {
      if (!s.usable) return;
      for (const name of new Set(s.containers.map((c) => c.name))) {
        let list = byName.get(name);
        if (!list) byName.set(name, (list = []));
        list.push(i);
      }
    });
    for (const [name, members] of byName) {
      // Hash join instead of all pairs: selectors can only overlap if they agree on the keys they share, so group
      // the members by label-key signature and, per pair of signatures, bucket by the values of the shared keys.
      const bySignature = new Map<string, { keys: string[]; idx: number[] }>();
      for (const i of members) {
        const keys = Object.keys(obj(obj(sets[i]!.spec.selector).matchLabels)).sort();
        const sig = keys.join('\0');
        let g = bySignature.get(sig);
        if (!g) bySignature.set(sig, (g = { keys, idx: [] }));
        g.idx.push(i);
      }
      const conflicts = new Map<number, number>(); // later set → first earlier set it conflicts with
      const groups = [...bySignature.values()];
      for (let ga = 0; ga < groups.length; ga++) {
        for (let gb = ga; gb < groups.length; gb++) {
          const A = groups[ga]!;
          const B = groups[gb]!;
          const shared = A.keys.filter((k) => B.keys.includes(k));
          const project = (i: number) => {
            const labels = obj(obj(sets[i]!.spec.selector).matchLabels);
            return shared.map((k) => String(labels[k])).join('\0');
          };
          const buckets = new Map<string, number[]>();
          for (const j of B.idx) {
            const key = project(j);
            let list = buckets.get(key);
            if (!list) buckets.set(key, (list = []));
            list.push(j);
          }
          for (const i of A.idx) {
            for (const j of buckets.get(project(i)) ?? []) {
              if (i === j) continue;
              const [later, earlier] = i > j ? [i, j] : [j, i];
              const a = sets[later]!.spec;
              const b = sets[earlier]!.spec;
              if (typeof a.namespace === 'string' && typeof b.namespace === 'string' && a.namespace !== b.namespace) continue;
              const prev = conflicts.get(later);
              if (prev === undefined || earlier < prev) conflicts.set(later, earlier);
            }
          }
        }
      }
      for (const [later, earlier] of [...conflicts].sort((x, y) => x[0] - y[0])) {
        const c = sets[later]!.containers.find((cc) => cc.name === name)!;
        out.push({
          manifest: sets[later]!.m,
          jsonPointer: c.pointer,
          message: `container ${quoteValue(name)} is also declared by SidecarSet ${quoteValue(obj(sets[earlier]!.m.object.metadata).name)}, whose selector can match the same pods`,
          hint: 'Rename one container, or make the selectors disjoint (different values for a shared label key).',
        });
      }
    }
    return out;
  },
};

const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;
const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;

/** The first thing the API server would refuse in one injected container, as [pointer suffix, message, hint]. */
function containerProblem(c: Obj, volumes: ReadonlySet<string>, init: boolean): [string, string, string] | undefined {
  const name = c.name;
  if (typeof name !== 'string' || dns1123LabelError(name)) {
    return [
      '/name',
      `container name ${quoteValue(name)} is not a DNS-1123 label`,
      'Use lowercase letters, digits and "-", at most 63 characters.',
    ];
  }
  if (typeof c.image !== 'string' || c.image.trim() === '') {
    return ['/image', `container "${name}" has no image`, 'Set image, e.g. "example.io/logtail:1.0.0".'];
  }
  const portNames = new Set<string>();
  for (const [i, raw] of arr(c.ports).entries()) {
    const port = obj(raw);
    const n = port.containerPort;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535) {
      return [
        `/ports/${i}/containerPort`,
        `container "${name}" port ${quoteValue(n)} is not between 1 and 65535`,
        'Set containerPort to the port the sidecar listens on.',
      ];
    }
    if (port.name !== undefined) {
      const pn = port.name;
      if (
        typeof pn !== 'string' ||
        !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(pn) ||
        pn.length > 15 ||
        !/[a-z]/.test(pn) ||
        pn.includes('--')
      ) {
        return [
          `/ports/${i}/name`,
          `container "${name}" port name ${quoteValue(pn)} is not an IANA service name`,
          'Use at most 15 lowercase letters, digits and single "-", with at least one letter.',
        ];
      }
      if (portNames.has(pn)) return [`/ports/${i}/name`, `container "${name}" names two ports "${pn}"`, 'Give each port a distinct name.'];
      portNames.add(pn);
    }
    if (port.protocol !== undefined && !(['TCP', 'UDP', 'SCTP'] as unknown[]).includes(port.protocol)) {
      return [
        `/ports/${i}/protocol`,
        `container "${name}" port protocol ${quoteValue(port.protocol)} is not TCP, UDP or SCTP`,
        'Use TCP (the default), UDP or SCTP.',
      ];
    }
  }
  for (const probe of PROBES) {
    if (c[probe] === undefined) continue;
    if (init && c.restartPolicy !== 'Always') {
      return [
        `/${probe}`,
        `init container "${name}" has a ${probe}`,
        'Only containers and native sidecars (restartPolicy Always) may have probes; remove it.',
      ];
    }
    const handlers = PROBE_HANDLERS.filter((h) => obj(c[probe])[h] !== undefined);
    if (handlers.length !== 1) {
      return [
        `/${probe}`,
        `container "${name}" ${probe} has ${handlers.length === 0 ? 'no handler' : `${handlers.length} handlers (${handlers.join(', ')})`}`,
        'Give the probe exactly one of exec, httpGet, tcpSocket or grpc.',
      ];
    }
  }
  const paths = new Set<string>();
  for (const [i, raw] of arr(c.volumeMounts).entries()) {
    const m = obj(raw);
    if (typeof m.name !== 'string' || !volumes.has(m.name)) {
      return [
        `/volumeMounts/${i}/name`,
        `container "${name}" mounts volume ${quoteValue(m.name)}, which spec.volumes does not define`,
        'Add the volume to spec.volumes (only volumes the sidecars use are injected), or fix the name.',
      ];
    }
    if (typeof m.mountPath !== 'string' || m.mountPath === '') {
      return [
        `/volumeMounts/${i}/mountPath`,
        `container "${name}" mounts "${m.name}" without a mountPath`,
        'Set mountPath, e.g. /var/log/app.',
      ];
    }
    if (paths.has(m.mountPath))
      return [
        `/volumeMounts/${i}/mountPath`,
        `container "${name}" mounts two volumes at ${m.mountPath}`,
        'Use a distinct mountPath per volume.',
      ];
    paths.add(m.mountPath);
  }
  return undefined;
}

export const sidecarSetInvalidContainer: Rule = {
  id: 'KRUISE-SIDECARSET-006',
  severity: 'error',
  title: 'Injected container is not a valid pod container',
  doc:
    'Every pod a SidecarSet matches gets its containers, so a container the API server would refuse in a pod (a name ' +
    'that is not a DNS label, no image, a port outside 1-65535 or a bad port name, a probe without exactly one ' +
    'handler, a probe on a plain init container, a volume mount of a volume spec.volumes lacks) makes the creation of ' +
    'every matched pod fail, across all their workloads. Upstream validates the same when the SidecarSet is applied.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const spec = obj(m.object.spec);
      const volumes = new Set(arr(spec.volumes).map((v) => String(obj(v).name)));
      for (const field of ['containers', 'initContainers'] as const) {
        arr(spec[field]).forEach((c, i) => {
          const problem = containerProblem(obj(c), volumes, field === 'initContainers');
          if (problem) out.push({ manifest: m, jsonPointer: `/spec/${field}/${i}${problem[0]}`, message: problem[1], hint: problem[2] });
        });
      }
    }
    return out;
  },
};

/** True for the bundled runtime's own objects (its install manifests carry COMMON_LABELS). */
function isRuntimeObject(object: Obj): boolean {
  const labels = obj(obj(object.metadata).labels);
  return Object.entries(COMMON_LABELS).every(([k, v]) => labels[k] === v);
}

/** What KRUISE-SIDECARSET-007 reads of a workload: its pods' labels, and its own labels (to skip the runtime's). */
const workloadLabels = podTemplateProjection(['metadata.labels'], ['metadata.labels']);

/**
 * The pod templates a SidecarSet in these inputs is plausibly meant for: those of the app's workloads, not of the
 * runtime's own (its install manifests), not in kube-system or the runtime's namespaces (no pod webhook reaches
 * them) and not of PodTemplate objects (they create no pod). Counted by namespace, with the label values and keys
 * they use for "did you mean" hints.
 */
interface SelectorScope {
  /** Templates whose owner names its namespace, by namespace. */
  readonly byNamespace: Map<string, number>;
  /** All of them, those without a namespace included (applied into whatever namespace the user picks). */
  readonly total: number;
  readonly valuesByKey: Map<string, Set<string>>;
  readonly keysByValue: Map<string, Set<string>>;
}

const selectorScope = memo((manifests: readonly Manifest[]): SelectorScope => {
  const excluded = new Set(['kube-system']);
  for (const m of manifests) {
    const name = obj(m.object.metadata).name;
    if (isKind(m, '', 'Namespace') && typeof name === 'string' && isRuntimeObject(m.object)) excluded.add(name);
  }
  const byNamespace = new Map<string, number>();
  const valuesByKey = new Map<string, Set<string>>();
  const keysByValue = new Map<string, Set<string>>();
  let total = 0;
  for (const m of manifests) {
    if (isKind(m, '', 'PodTemplate') || isRuntimeObject(m.object)) continue;
    const ns = namespaceOf(m);
    if (ns !== undefined && excluded.has(ns)) continue;
    for (const t of podTemplates(m)) {
      total++;
      if (ns !== undefined) byNamespace.set(ns, (byNamespace.get(ns) ?? 0) + 1);
      for (const [k, raw] of Object.entries(obj(t.metadata.labels))) {
        const v = String(raw);
        let values = valuesByKey.get(k);
        if (!values) valuesByKey.set(k, (values = new Set()));
        values.add(v);
        let keys = keysByValue.get(v);
        if (!keys) keysByValue.set(v, (keys = new Set()));
        keys.add(k);
      }
    }
  }
  return { byNamespace, total, valuesByKey, keysByValue };
});

/**
 * Whether the namespace `ns` is surely selected by `selector`: by the labels of its Namespace object in the
 * inputs, else by its name label alone when labels the inputs do not show could not unselect it (no NotIn or
 * DoesNotExist).
 */
function namespaceSurelySelected(selector: Obj, ns: string, ctx: RuleContext): boolean {
  const known = namespaceLabels(ctx.manifests).get(ns);
  if (!selectorMatches(selector, known ?? { [LABEL_NAMESPACE_NAME]: ns })) return false;
  return known !== undefined || !arr(selector.matchExpressions).some((e) => ['NotIn', 'DoesNotExist'].includes(String(obj(e).operator)));
}

/** How many of the scope's templates surely lie in the SidecarSet's namespace scope (namespace, namespaceSelector). */
function templatesInScope(spec: Obj, scope: SelectorScope, ctx: RuleContext): number {
  const ns = typeof spec.namespace === 'string' && spec.namespace !== '' ? spec.namespace : undefined;
  const nsSelector = isObj(spec.namespaceSelector) ? spec.namespaceSelector : undefined;
  if (ns === undefined && nsSelector === undefined) return scope.total;
  let n = 0;
  for (const [name, count] of ns !== undefined ? [[ns, scope.byNamespace.get(ns) ?? 0] as const] : scope.byNamespace) {
    if (nsSelector === undefined || namespaceSurelySelected(nsSelector, name, ctx)) n += count;
  }
  return n;
}

/** Past this many candidates a "did you mean" is not looked for (edit distances cost; real apps have few). */
const MAX_SUGGESTION_CANDIDATES = 256;

function closest(word: string, candidates: ReadonlySet<string> | undefined): string | undefined {
  return candidates && candidates.size <= MAX_SUGGESTION_CANDIDATES ? closestMatch(word, candidates) : undefined;
}

/** A label of the templates close to `key: value` (same key and a near value, or same value and a near key). */
function closeLabel(key: string, value: string, scope: SelectorScope): string | undefined {
  const v = closest(value, scope.valuesByKey.get(key));
  if (v !== undefined) return `${key}: ${v}`;
  const k = closest(key, scope.keysByValue.get(value));
  return k !== undefined ? `${k}: ${value}` : undefined;
}

/** For each selector requirement no template of the scope meets, the label it most likely meant. */
function selectorSuggestions(selector: Obj, scope: SelectorScope): string[] {
  const out: string[] = [];
  const present = (k: string, v: string) => scope.valuesByKey.get(k)?.has(v) ?? false;
  for (const [k, raw] of Object.entries(obj(selector.matchLabels))) {
    const v = String(raw);
    if (present(k, v)) continue;
    const s = closeLabel(k, v, scope);
    if (s !== undefined) out.push(s);
  }
  for (const raw of arr(selector.matchExpressions)) {
    const e = obj(raw);
    if (typeof e.key !== 'string') continue;
    const key = e.key;
    if (e.operator === 'In') {
      const values = arr(e.values).map(String);
      if (values.some((v) => present(key, v))) continue;
      const s = values.map((v) => closeLabel(key, v, scope)).find((x) => x !== undefined);
      if (s !== undefined) out.push(s);
    } else if (e.operator === 'Exists' && !scope.valuesByKey.has(key)) {
      const k = scope.valuesByKey.size <= MAX_SUGGESTION_CANDIDATES ? closestMatch(key, scope.valuesByKey.keys()) : undefined;
      if (k !== undefined) out.push(`the key ${k}`);
    }
  }
  return out;
}

/** A selector as `{app: web, tier In (a, b)}`, each value bounded. */
function describeSelector(selector: Obj): string {
  const parts = Object.entries(obj(selector.matchLabels)).map(([k, v]) => `${truncate(k)}: ${truncate(String(v))}`);
  for (const raw of arr(selector.matchExpressions)) {
    const e = obj(raw);
    const values = arr(e.values).map((v) => String(v));
    const list = e.operator === 'In' || e.operator === 'NotIn' ? ` (${listNames(values)})` : '';
    parts.push(`${truncate(String(e.key))} ${truncate(String(e.operator))}${list}`);
  }
  return `{${listNames(parts)}}`;
}

function ownerRef(m: Manifest): string {
  const ns = namespaceOf(m);
  return `${String(m.object.kind)} ${ns ? `${ns}/` : ''}${String(obj(m.object.metadata).name)}`;
}

export const sidecarSetSelectsNothing: Rule = {
  id: 'KRUISE-SIDECARSET-007',
  severity: 'warning',
  title: 'SidecarSet selector matches none of the pod templates in the inputs',
  doc:
    'A SidecarSet injects only into pods its selector matches, so a typo in a label (app: webserer) leaves every pod ' +
    'without the sidecars and nothing reports it. When the inputs validated together hold pod templates (Pods, ' +
    'Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, CloneSets, Advanced StatefulSets and ' +
    "DaemonSets, BroadcastJobs, AdvancedCronJobs) in the SidecarSet's namespace scope (spec.namespace, and " +
    'spec.namespaceSelector judged by the Namespace objects of the inputs) and its selector (matchLabels and ' +
    'matchExpressions) matches none of them, this warns and names the closest label of those templates (same key ' +
    'and a near value, or same value and a near key). Templates of the runtime itself, of kube-system and of ' +
    'PodTemplate objects do not count. A SidecarSet meant for pods that other apps create is legitimate: skip the ' +
    'rule (--skip-rule KRUISE-SIDECARSET-007, or skipRules in the cdk8s plugin) for such inputs.',
  retain: (m) => (isKind(m, 'apps.kruise.io', 'SidecarSet') || isKind(m, '', 'Namespace') ? m.object : workloadLabels(m)),
  activatedBy: (m) => isKind(m, 'apps.kruise.io', 'SidecarSet'),
  check(manifests, ctx) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const spec = obj(m.object.spec);
      const selector = spec.selector;
      // An empty or missing selector is KRUISE-SIDECARSET-004's.
      if (!isObj(selector) || isEmptySelector(selector)) continue;
      const matching = candidates(templateIndex(ctx.manifests), selector).filter((t) => selectorMatches(selector, obj(t.metadata.labels)));
      if (matching.some((t) => namespaceAdmits(spec, namespaceOf(t.manifest), ctx))) continue;
      const scope = selectorScope(ctx.manifests);
      const n = templatesInScope(spec, scope, ctx);
      if (n === 0) continue;
      const where =
        typeof spec.namespace === 'string' && spec.namespace !== ''
          ? ` in namespace ${quoteValue(spec.namespace)}`
          : isObj(spec.namespaceSelector)
            ? ' in the namespaces its namespaceSelector selects'
            : '';
      const outside = matching[0] ? `; ${ownerRef(matching[0].manifest)} matches it but lies outside its namespace scope` : '';
      const suggestions = selectorSuggestions(selector, scope);
      const none = n === 1 ? 'does not match the one pod template' : `matches none of the ${n} pod templates`;
      const skip = 'the SidecarSet targets pods created elsewhere, skip this rule with --skip-rule KRUISE-SIDECARSET-007.';
      out.push({
        manifest: m,
        jsonPointer: '/spec/selector',
        message: `selector ${describeSelector(selector)} ${none} in these inputs${where}${outside}, so its sidecars are injected into none of them`,
        hint:
          suggestions.length > 0
            ? `Did you mean ${listNames(suggestions, 3)}? If ${skip}`
            : `Fix the selector or the pod labels; if ${skip}`,
      });
    }
    return out;
  },
};

export const sidecarSetResourcesPolicy: Rule = {
  id: 'KRUISE-SIDECARSET-008',
  severity: 'error',
  title: 'SidecarSet resourcesPolicy is invalid',
  doc:
    "A container's resourcesPolicy computes the sidecar's requests and limits from the pod's containers at injection. " +
    'As the validating webhook (upstream and bundled) does, this refuses a policy beside resources.limits or ' +
    'resources.requests, on an initContainer that is not a native sidecar (restartPolicy Always), with an empty or ' +
    'invalid targetContainersNameRegex, with neither limits nor requests expressions, or with an expression that does ' +
    "not parse: + - * / parentheses, max(a, b), min(a, b), numbers (0.5, 50%), quantities (100m, 64Mi) and the field's " +
    'variable (cpu or memory). A quantity times a quantity, or a division by a quantity, is refused too: every pod ' +
    'injection would fail on it.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of sidecarSets(manifests)) {
      const spec = obj(m.object.spec);
      for (const field of ['initContainers', 'containers'] as const) {
        arr(spec[field]).forEach((c, i) => {
          if (!isObj(c) || !isObj(c.resourcesPolicy)) return;
          for (const p of resourcesPolicyProblems(c as unknown as SidecarLike, field === 'initContainers')) {
            out.push({
              manifest: m,
              jsonPointer: `/spec/${field}/${i}/${p.field.replaceAll('.', '/')}`,
              message: p.message,
              hint: 'See `cdk8s-kruise explain SidecarSet spec.containers.resourcesPolicy` for the expression language.',
            });
          }
        });
      }
    }
    return out;
  },
};

export const SIDECARSET_RULES = [
  sidecarSetDuplicateNames,
  sidecarSetNameCollision,
  sidecarSetMaxUnavailableZero,
  sidecarSetEmptySelector,
  sidecarSetConflict,
  sidecarSetInvalidContainer,
  sidecarSetSelectsNothing,
  sidecarSetResourcesPolicy,
];

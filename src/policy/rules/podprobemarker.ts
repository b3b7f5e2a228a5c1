import {
  arr,
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
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { listNames, quoteValue } from '../../api/quote.js';
import { specRuleFor } from './kind-rule.js';

const rule = specRuleFor('apps.kruise.io', 'PodProbeMarker');

/** The handlers the daemon runs (upstream v1.9 runs these three; gRPC is not among them). */
const HANDLERS = ['exec', 'httpGet', 'tcpSocket'] as const;

export const podProbeMarkerSpec = rule(
  'KRUISE-PODPROBEMARKER-001',
  'PodProbeMarker without a selector, or with a probe the runtime cannot run or mark',
  'A PodProbeMarker needs a non-empty selector (an empty one would probe every pod of its namespace); each probe ' +
    'needs a name unique in the marker (the pod condition and the NodePodProbe entry are keyed by it; the separator # ' +
    'may not appear in it), exactly one of exec, httpGet or tcpSocket, and a podConditionType or a markerPolicy (or the ' +
    'result would mark nothing), whose states are each named once. Upstream rejects the same.',
  (_m, spec) => {
    const out: Omit<RuleFinding, 'manifest'>[] = [];
    if (!isObj(spec.selector) || isEmptySelector(spec.selector))
      out.push({
        jsonPointer: '/spec/selector',
        message: 'selector is missing or empty: the marker would probe every pod of its namespace',
        hint: 'Select the pods to probe, e.g. selector.matchLabels: {app: web}.',
      });
    const seen = new Set<string>();
    arr(spec.probes).forEach((raw, i) => {
      const p = obj(raw);
      const at = `/spec/probes/${i}`;
      const name = typeof p.name === 'string' ? p.name : '';
      if (!name || name.includes('#'))
        out.push({
          jsonPointer: `${at}/name`,
          message: `probe name ${quoteValue(p.name)} is empty or holds #`,
          hint: 'Name the probe, e.g. healthy.',
        });
      else if (seen.has(name))
        out.push({
          jsonPointer: `${at}/name`,
          message: `probe name ${quoteValue(name)} is used twice`,
          hint: 'Give each probe its own name.',
        });
      seen.add(name);
      const probe = obj(p.probe);
      const handlers = HANDLERS.filter((h) => isObj(probe[h]));
      if (handlers.length !== 1)
        out.push({
          jsonPointer: `${at}/probe`,
          message: handlers.length
            ? `probe ${quoteValue(name)} has ${listNames(handlers)}; it needs exactly one`
            : `probe ${quoteValue(name)} has no exec, httpGet or tcpSocket`,
          hint: isObj(probe.grpc)
            ? 'gRPC probes are not run by kruise-daemon; use exec, httpGet or tcpSocket.'
            : 'Give the probe one handler.',
        });
      const policies = arr(p.markerPolicy).map(obj);
      if (!p.podConditionType && policies.length === 0)
        out.push({
          jsonPointer: at,
          message: `probe ${quoteValue(name)} has neither podConditionType nor markerPolicy, so its result marks nothing`,
          hint: 'Set podConditionType (a pod condition) and/or markerPolicy (labels and annotations per state).',
        });
      const states = policies.map((x) => x.state);
      states.forEach((s, j) => {
        if (states.indexOf(s) !== j)
          out.push({
            jsonPointer: `${at}/markerPolicy/${j}/state`,
            message: `markerPolicy names state ${quoteValue(s)} twice`,
            hint: 'One policy per state.',
          });
      });
    });
    return out;
  },
);

const markers = memo((manifests: readonly Manifest[]): Manifest[] =>
  manifests.filter((m) => isKind(m, 'apps.kruise.io', 'PodProbeMarker')),
);
/** What the cross-document rules read of a workload: its pods' labels and container names. */
const workloadParts = podTemplateProjection(['metadata.labels', 'spec.containers[].name']);
const namespaceOf = (m: Manifest): string => {
  const ns = obj(m.object.metadata).namespace;
  return typeof ns === 'string' ? ns : '';
};

/** The pod templates of the inputs a marker selects: same namespace, selector matches the pod labels. */
function selected(marker: Manifest, manifests: readonly Manifest[]): { templates: PodTemplate[]; inNamespace: number } {
  const selector = obj(obj(marker.object.spec).selector);
  const ns = namespaceOf(marker);
  const all = manifests.filter((m) => namespaceOf(m) === ns).flatMap((m) => podTemplates(m));
  return { templates: all.filter((t) => selectorMatches(selector, obj(t.metadata.labels))), inNamespace: all.length };
}

const crossDocument = (check: (marker: Manifest, templates: PodTemplate[], inNamespace: number) => RuleFinding[]) => ({
  retain: (m: Manifest) => (isKind(m, 'apps.kruise.io', 'PodProbeMarker') ? m.object : workloadParts(m)),
  check(manifests: readonly Manifest[]): RuleFinding[] {
    return markers(manifests).flatMap((m) => {
      const selector = obj(m.object.spec).selector;
      if (!isObj(selector) || isEmptySelector(selector)) return [];
      const { templates, inNamespace } = selected(m, manifests);
      return check(m, templates, inNamespace);
    });
  },
});

export const podProbeMarkerSelectsNothing: Rule = {
  id: 'KRUISE-PODPROBEMARKER-002',
  severity: 'warning',
  title: 'PodProbeMarker selector matches none of the pod templates in its namespace',
  doc:
    'A PodProbeMarker probes only the pods its selector matches in its own namespace, so a typo in a label leaves ' +
    'every pod unprobed and unmarked, silently. When the inputs hold pod templates in the marker’s namespace and the ' +
    'selector matches none of them, this warns. A marker for pods other apps create is legitimate: skip the rule ' +
    '(--skip-rule KRUISE-PODPROBEMARKER-002) for such inputs.',
  ...crossDocument((m, templates, inNamespace) =>
    templates.length === 0 && inNamespace > 0
      ? [
          {
            manifest: m,
            jsonPointer: '/spec/selector',
            message: `selector matches none of the ${inNamespace} pod template(s) in namespace ${quoteValue(namespaceOf(m) || 'default')}, so no pod is probed`,
            hint: 'Fix the selector or the pod labels; if the marker is for pods created elsewhere, skip this rule.',
          },
        ]
      : [],
  ),
};

export const podProbeMarkerUnknownContainer: Rule = {
  id: 'KRUISE-PODPROBEMARKER-003',
  severity: 'error',
  title: 'PodProbeMarker probe on a container the selected pods do not have',
  doc:
    'A probe runs against its containerName in each selected pod: an exec probe runs in that container, and the ' +
    'node daemon finds nothing to probe in a pod without it, so the pod is never marked. When the marker selects pod ' +
    'templates in the inputs and one of them lacks the container, this is an error naming the template.',
  ...crossDocument((m, templates) => {
    const out: RuleFinding[] = [];
    arr(obj(m.object.spec).probes).forEach((raw, i) => {
      const p: Obj = obj(raw);
      const name = p.containerName;
      if (typeof name !== 'string') return;
      for (const t of templates) {
        const names = arr(t.spec.containers).map((c) => obj(c).name);
        if (names.includes(name)) continue;
        const owner = `${String(t.manifest.object.kind)} ${String(obj(t.manifest.object.metadata).name)}`;
        out.push({
          manifest: m,
          jsonPointer: `/spec/probes/${i}/containerName`,
          message: `probe ${quoteValue(p.name)} targets container ${quoteValue(name)}, which ${owner} (selected) does not have; its containers: ${listNames(names.map(String))}`,
          hint: 'Name one of the containers of the selected pods, or narrow the selector.',
        });
        break;
      }
    });
    return out;
  }),
};

export const PODPROBEMARKER_RULES = [podProbeMarkerSpec, podProbeMarkerSelectsNothing, podProbeMarkerUnknownContainer];

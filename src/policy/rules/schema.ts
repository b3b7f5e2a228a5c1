import { findKind, KINDS } from '../../api/registry.js';
import { closestMatch, validateAgainst, validateCoreKind } from '../../api/validate.js';
import { coreKindDefinition, CORE_KINDS } from '../../api/core-kinds.js';
import { group, isKruise } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { quoteValue, truncate } from '../../api/quote.js';

// Kinds and versions upstream OpenKruise serves (its CRD bases at HEAD), so a kind we do not model can be told
// apart from a typo that no cluster would accept.
const UPSTREAM_KINDS: Record<string, Record<string, readonly string[]>> = {
  'apps.kruise.io': {
    AdvancedCronJob: ['v1alpha1', 'v1beta1'],
    BroadcastJob: ['v1alpha1', 'v1beta1'],
    CloneSet: ['v1alpha1', 'v1beta1'],
    ContainerRecreateRequest: ['v1alpha1', 'v1beta1'],
    DaemonSet: ['v1alpha1', 'v1beta1'],
    EphemeralJob: ['v1alpha1'],
    ImageListPullJob: ['v1alpha1', 'v1beta1'],
    ImagePullJob: ['v1alpha1', 'v1beta1'],
    NodeImage: ['v1alpha1', 'v1beta1'],
    NodePodProbe: ['v1alpha1'],
    PersistentPodState: ['v1alpha1', 'v1beta1'],
    PodProbeMarker: ['v1alpha1'],
    ResourceDistribution: ['v1alpha1', 'v1beta1'],
    SidecarSet: ['v1alpha1', 'v1beta1'],
    StatefulSet: ['v1alpha1', 'v1beta1'],
    UnitedDeployment: ['v1alpha1', 'v1beta1'],
    WorkloadSpread: ['v1alpha1', 'v1beta1'],
  },
  'policy.kruise.io': { PodUnavailableBudget: ['v1alpha1', 'v1beta1'] },
};

type Classified = { manifest: Manifest; status: 'modelled' | 'unmodelled' | 'unknown'; why?: string; hint?: string };

function classify(m: Manifest): Classified | undefined {
  if (!isKruise(m)) return undefined;
  const apiVersion = String(m.object.apiVersion);
  const kind = String(m.object.kind);
  if (findKind(apiVersion, kind)) return { manifest: m, status: 'modelled' };
  const grp = group(apiVersion);
  const version = apiVersion.slice(grp.length + 1);
  const kinds = UPSTREAM_KINDS[grp] ?? {};
  const versions = kinds[kind];
  if (versions?.includes(version)) return { manifest: m, status: 'unmodelled' };
  if (versions) {
    return {
      manifest: m,
      status: 'unknown',
      why: `${grp} serves ${kind} as ${versions.join(' and ')}, not ${version}`,
      hint: `Use apiVersion ${grp}/${versions[0]}.`,
    };
  }
  const guess = closestMatch(kind, Object.keys(kinds));
  return {
    manifest: m,
    status: 'unknown',
    why: `${quoteValue(grp)} has no kind ${quoteValue(kind)}`,
    hint: guess ? `Did you mean kind: ${guess}?` : `Kinds of ${grp}: ${Object.keys(kinds).join(', ')}.`,
  };
}

export const schemaValid: Rule = {
  id: 'KRUISE-SCHEMA-001',
  severity: 'error',
  title: 'Kruise object does not match its schema',
  doc:
    'Every apps.kruise.io / policy.kruise.io object of a kind cdk8s-kruise models is validated with ajv against the ' +
    'same schema its CRD is generated from, with one difference that matters: unknown fields are errors. The API ' +
    'server prunes unknown fields of a structural CRD silently, so a typo such as maxUnavaliable would be dropped ' +
    'and the default used. Wrong types, enum values, missing required fields and out-of-range numbers are reported too.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (!isKruise(m)) continue;
      const def = findKind(String(m.object.apiVersion), String(m.object.kind));
      if (!def) continue;
      addFindings(
        out,
        m,
        validateAgainst(def, m.object),
        () => `Fix the field to match the ${def.kind} schema (run \`cdk8s-kruise schema\` for the JSON Schema).`,
      );
    }
    return out;
  },
};

export const schemaValidCore: Rule = {
  id: 'KRUISE-SCHEMA-004',
  severity: 'error',
  title: 'Kubernetes core object does not match its schema',
  doc:
    `Objects of the common core kinds (${Object.keys(CORE_KINDS).join(', ')}) are validated against the ` +
    'Kubernetes schema as strictly as the Kruise kinds (and as kubeconform -strict does): unknown fields, wrong ' +
    'types, enum values and missing required fields are errors. The API server drops unknown fields silently ' +
    '(or refuses the object under strict field validation), so a typo such as imagePullPolcy is lost.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      const definition = coreKindDefinition(m.object.apiVersion, m.object.kind);
      if (!definition) continue;
      const kind = String(m.object.kind);
      addFindings(
        out,
        m,
        validateCoreKind(definition, m.object),
        (pointer) =>
          `Fix the field to match the Kubernetes ${kind} schema (kubectl explain ${kind.toLowerCase()}${pointer.replace(/\/\d+(?=\/|$)/g, '').replace(/\//g, '.')}).`,
      );
    }
    return out;
  },
};

export const schemaUnknownKind: Rule = {
  id: 'KRUISE-SCHEMA-002',
  severity: 'error',
  title: 'Kruise API group object of a kind or version that does not exist',
  doc:
    'An object in apps.kruise.io or policy.kruise.io whose kind is not one upstream OpenKruise defines (usually a ' +
    'typo such as ClonSet), or whose version the CRD does not serve, is refused by every cluster ("no matches for ' +
    'kind"). The message names the closest kind.',
  check(manifests) {
    return manifests
      .map(classify)
      .filter((c): c is Classified => c?.status === 'unknown')
      .map((c) => ({
        manifest: c.manifest,
        jsonPointer: c.why?.includes(' serves ') ? '/apiVersion' : '/kind',
        message: `${truncate(String(c.manifest.object.apiVersion))} ${truncate(String(c.manifest.object.kind))}: ${c.why}`,
        hint: c.hint ?? '',
      }));
  },
};

export const schemaUnmodelledKind: Rule = {
  id: 'KRUISE-SCHEMA-003',
  severity: 'warning',
  title: 'Kruise kind that cdk8s-kruise does not model is not validated',
  doc:
    `Upstream OpenKruise kinds and versions outside the cdk8s-kruise API model (it models ${KINDS.map((k) => k.kind).join(', ')} ` +
    'in apps.kruise.io/v1alpha1) are passed to the cluster unchecked: their fields are not validated here. The ' +
    'warning makes that gap visible; skip it with --skip-rule KRUISE-SCHEMA-003 when it is intended.',
  check(manifests) {
    return manifests
      .map(classify)
      .filter((c): c is Classified => c?.status === 'unmodelled')
      .map((c) => ({
        manifest: c.manifest,
        jsonPointer: '/kind',
        message: `${truncate(String(c.manifest.object.apiVersion))} ${truncate(String(c.manifest.object.kind))} is an upstream kind that cdk8s-kruise does not model, so its fields are not validated`,
        hint: 'Check it against the upstream CRD, or use a modelled kind/version (apps.kruise.io/v1alpha1).',
      }));
  },
};

/**
 * Schema issues as findings of one manifest, appended to `out` one by one (spreading a long list into push's
 * arguments overflows the stack). An issue's own hint becomes a sentence (capitalised, ending in a full stop unless
 * it already ends in punctuation); an issue without one gets the rule's `fallback`.
 */
function addFindings(
  out: RuleFinding[],
  manifest: Manifest,
  issues: readonly { jsonPointer: string; message: string; hint?: string }[],
  fallback: (jsonPointer: string) => string,
): void {
  for (const issue of issues) {
    out.push({
      manifest,
      jsonPointer: issue.jsonPointer,
      message: issue.message,
      hint: issue.hint ? sentence(issue.hint) : fallback(issue.jsonPointer),
    });
  }
}

function sentence(s: string): string {
  const c = capitalize(s);
  return /[.?!]$/.test(c) ? c : `${c}.`;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export const SCHEMA_RULES = [schemaValid, schemaUnknownKind, schemaUnmodelledKind, schemaValidCore];

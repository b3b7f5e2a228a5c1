import { noRuntimeCarriesOut, RUNTIME_SUPPORT_RULE_IDS } from '../../api/feature-uses.js';
import { detectFeatures } from '../../install/app-features.js';
import { unsupportedUses } from '../../install/runtime-support.js';
import { COMMON_LABELS } from '../../install/spec.js';
import { ANNOTATION_IGNORED_FEATURE_GATES } from '../../contracts/keys.js';
import { NAMES } from '../../contracts/names.js';
import { featureUsesOf, obj } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';

/** The bundled runtime's controller-manager Deployment, as the install renders it (name and labels). */
function isBundledManager(m: Manifest): boolean {
  if (m.object.kind !== 'Deployment' || m.object.apiVersion !== 'apps/v1') return false;
  const meta = obj(m.object.metadata);
  const labels = obj(meta.labels);
  return meta.name === NAMES.managerDeployment && Object.entries(COMMON_LABELS).every(([k, v]) => labels[k] === v);
}

export const bundledRuntimeSupport: Rule = {
  id: RUNTIME_SUPPORT_RULE_IDS.unsupported,
  severity: 'warning',
  title: 'Resource uses a feature the runtime does not carry out',
  doc:
    'Every kind, field path and Kruise annotation, label or env key an object uses is looked up in the feature table, ' +
    'which says which runtime carries it out. When the output holds the bundled cdk8s-kruise runtime (its ' +
    'controller-manager Deployment, as the KruiseRuntime construct renders it), a use the bundled runtime does not ' +
    'carry out is reported: valid for the API server, but nothing acts on it (for example an Advanced StatefulSet is ' +
    'stored and never scaled). The finding names a runtime that does carry it out (upstream OpenKruise: KruiseRuntime ' +
    'target openkruise) or a compile-time alternative. A use no runtime carries out (the enhanced liveness probe ' +
    'annotation) is reported whatever the output holds; other uses in outputs without the bundled runtime are not ' +
    'judged here: upstream installs are checked by the KruiseRuntime construct at synth time.',
  retain: retainForBundledSupport,
  // Without the bundled runtime, only a use no runtime carries out is judged: nothing else can be found.
  activatedBy: (m) => isBundledManager(m) || featureUsesOf(m.object).some((u) => noRuntimeCarriesOut(u.feature)),
  check: (manifests) => bundledSupportFindings(manifests),
};

function retainForBundledSupport(m: Manifest): Record<string, unknown> | undefined {
  return isBundledManager(m) || unsupportedUses(featureUsesOf(m.object), 'bundled').length > 0 ? m.object : undefined;
}

/**
 * The uses of features the bundled runtime does not carry out. Without the bundled runtime in the output only the
 * uses no runtime carries out are reported (they are wrong under any target).
 */
function bundledSupportFindings(manifests: readonly Manifest[]): RuleFinding[] {
  const bundled = manifests.some(isBundledManager);
  const all = detectFeatures(manifests.map((m, i) => ({ object: m.object as never, path: String(i) })));
  const uses = bundled ? all : all.filter((u) => noRuntimeCarriesOut(u.feature));
  const out: RuleFinding[] = [];
  for (const x of unsupportedUses(uses, 'bundled')) {
    const manifest = manifests[Number(x.use.resource.path)];
    if (manifest) out.push({ manifest, jsonPointer: x.use.pointer, message: x.problem, hint: x.advice });
  }
  return out;
}

export const ignoredGateOverrides: Rule = {
  id: 'KRUISE-RUNTIME-002',
  severity: 'warning',
  title: 'Feature gates forced on an install whose runtime does not know them',
  doc:
    'The KruiseRuntime construct passes the bundled runtime only the feature gates it knows (it refuses other ' +
    'names). A gate forced in featureGates that the bundled runtime does not know is recorded on its ' +
    `controller-manager Deployment (annotation ${ANNOTATION_IGNORED_FEATURE_GATES}) and has no effect; it only ` +
    'matters for target openkruise.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (!isBundledManager(m)) continue;
      const value = obj(obj(m.object.metadata).annotations)[ANNOTATION_IGNORED_FEATURE_GATES];
      if (typeof value !== 'string' || value === '') continue;
      out.push({
        manifest: m,
        jsonPointer: `/metadata/annotations/${ANNOTATION_IGNORED_FEATURE_GATES.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        message: `feature gate override(s) ${value} are not known to the bundled runtime and have no effect`,
        hint: 'Remove them from KruiseRuntime featureGates, or use target openkruise where they matter.',
      });
    }
    return out;
  },
};

export const RUNTIME_SUPPORT_RULES = [bundledRuntimeSupport, ignoredGateOverrides];

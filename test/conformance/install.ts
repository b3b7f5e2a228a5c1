// The runtime install the conformance tier judges: a KruiseRuntime rendered the way a user's app renders it, with
// every feature gate the bundled runtime knows turned on through `featureGates`. Upstream runs its own e2e suite
// against a manager and daemon started with `--feature-gates=AllAlpha=true,AllBeta=true` (its config/manager
// manifests); several specs rely on an alpha gate (PreparingUpdateAsUpdate, SidecarSetPatchPodMetadataDefaultsAllowed,
// KruisePodReadinessGate). The bundled runtime refuses gates it does not know, so "all" means all of its own.
// No test-only path: the manifests are what `synth` writes for such an app.
import { App } from 'cdk8s';
import YAML from 'yaml';
import { DaemonPlacement, KruiseRuntime, PodWebhookFailClosed } from '../../constructs/index.js';
import { BUNDLED_RUNTIME_GATES } from '../../src/contracts/features.js';
import type { RuntimeManifests } from '../harness/runtime-install.js';

/** The tier's gates: each gate the bundled runtime knows, on (the bundled counterpart of AllAlpha+AllBeta). */
export const TIER_FEATURE_GATES: Readonly<Record<string, boolean>> = Object.freeze(
  Object.fromEntries(Object.keys(BUNDLED_RUNTIME_GATES).map((g) => [g, true])),
);

/**
 * Renders the tier's install. The specs create their SidecarSets, CRRs and ImagePullJobs at run time, so nothing in
 * the app tells the install that it needs the daemon or the pod webhook: both are asked for explicitly, and the pod
 * webhook refuses pods while it does not answer, as upstream's (`Fail` for every pod outside the runtime's namespace).
 */
export function tierManifests(): RuntimeManifests {
  const app = new App();
  new KruiseRuntime(app, 'kruise', {
    featureGates: { ...TIER_FEATURE_GATES },
    daemon: { placement: DaemonPlacement.ALWAYS },
    alwaysRegisterPodWebhook: true,
    podWebhookFailClosed: PodWebhookFailClosed.ALL_PODS,
  });
  const docs = YAML.parseAllDocuments(app.synthYaml()).map((d) => d.toJS() as { kind?: string } | null);
  const yaml = (objects: readonly unknown[]) => objects.map((o) => YAML.stringify(o)).join('---\n');
  const crds = docs.filter((d) => d?.kind === 'CustomResourceDefinition');
  const runtime = docs.filter((d) => d !== null && d.kind !== 'CustomResourceDefinition');
  if (crds.length === 0 || !runtime.some((d) => d?.kind === 'DaemonSet'))
    throw new Error('the tier install rendered no CRDs or no daemon: check the KruiseRuntime props in test/conformance/install.ts');
  return { crds: yaml(crds), runtime: yaml(runtime) };
}

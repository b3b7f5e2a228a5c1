/**
 * The feature table: what each app feature needs from a runtime (feature gates, the node daemon, the pod
 * mutating webhook) and which runtimes carry it out. The install manifests, the synth warnings, the
 * `openkruise` target report, the policy engine's feature-gate rule and the runtime's own gate parsing all
 * read this one table, so "what the bundled runtime implements" cannot disagree with itself.
 *
 * Gates and cascades are upstream OpenKruise's at v1.9.x (`SetDefaultFeatureGates`).
 *
 * @module
 */

/** Maturity of a gate, as upstream declares it. */
export enum GateStage {
  ALPHA = 'Alpha',
  BETA = 'Beta',
  /** Defined only by the cdk8s-kruise runtime (not an upstream gate). */
  CDK8S_KRUISE = 'cdk8s-kruise',
}

export interface GateSpec {
  readonly name: string;
  readonly default: boolean;
  readonly stage: GateStage;
  /** True when upstream OpenKruise knows this gate. */
  readonly upstream: boolean;
}

function gate(name: string, def: boolean, stage: GateStage): GateSpec {
  return { name, default: def, stage, upstream: stage !== GateStage.CDK8S_KRUISE };
}

/** Every gate, with upstream's defaults at v1.9.x. */
export const FEATURE_GATES: readonly GateSpec[] = [
  gate('PodWebhook', true, GateStage.BETA),
  gate('KruiseDaemon', true, GateStage.BETA),
  gate('DaemonWatchingPod', true, GateStage.BETA),
  gate('WorkloadSpread', true, GateStage.BETA),
  gate('PodUnavailableBudgetDeleteGate', true, GateStage.BETA),
  gate('InPlaceUpdateEnvFromMetadata', true, GateStage.BETA),
  gate('StatefulSetAutoDeletePVC', true, GateStage.BETA),
  gate('PodProbeMarkerGate', true, GateStage.BETA),
  gate('PodIndexLabel', true, GateStage.BETA),
  gate('ResourcesDeletionProtection', false, GateStage.BETA),
  gate('CloneSetShortHash', false, GateStage.ALPHA),
  gate('KruisePodReadinessGate', false, GateStage.ALPHA),
  gate('PreDownloadImageForInPlaceUpdate', false, GateStage.ALPHA),
  gate('CloneSetPartitionRollback', false, GateStage.ALPHA),
  gate('PodUnavailableBudgetUpdateGate', false, GateStage.ALPHA),
  gate('TemplateNoDefaults', false, GateStage.ALPHA),
  gate('SidecarSetPatchPodMetadataDefaultsAllowed', false, GateStage.ALPHA),
  gate('SidecarTerminator', false, GateStage.ALPHA),
  gate('PreDownloadImageForDaemonSetUpdate', false, GateStage.ALPHA),
  gate('CloneSetEventHandlerOptimization', false, GateStage.ALPHA),
  gate('PreparingUpdateAsUpdate', false, GateStage.ALPHA),
  gate('ImagePullJobGate', false, GateStage.ALPHA),
  gate('ResourceDistributionGate', false, GateStage.BETA),
  gate('DeletionProtectionForCRDCascadingGate', false, GateStage.ALPHA),
  gate('EnhancedLivenessProbe', false, GateStage.ALPHA),
  gate('RecreatePodWhenChangeVCTInCloneSetGate', false, GateStage.ALPHA),
  gate('StatefulSetStartOrdinal', false, GateStage.ALPHA),
  gate('EnableExternalCerts', false, GateStage.ALPHA),
  gate('StatefulSetAutoResizePVCGate', false, GateStage.ALPHA),
  gate('ForceDeleteTimeoutExpectationGate', false, GateStage.ALPHA),
  gate('InPlaceWorkloadVerticalScaling', false, GateStage.ALPHA),
  gate('EnablePodProbeMarkerOnServerless', false, GateStage.ALPHA),
  gate('EnableSortSidecarContainerByName', false, GateStage.ALPHA),
  gate('InPlacePodVerticalScaling', false, GateStage.ALPHA),
  gate('DefaultHostNetworkHostPortsInPodTemplates', false, GateStage.ALPHA),
  gate('DaemonSetPruneIneligibleNodes', false, GateStage.ALPHA),
  // Ours: exit priority never shipped upstream (its proposal was closed), so the bundled runtime gates it itself.
  // On by default: it is the bundled runtime's own feature, with nothing upstream to stay compatible with.
  gate('ContainerExitPriority', true, GateStage.CDK8S_KRUISE),
];

const GATES_BY_NAME = new Map(FEATURE_GATES.map((g) => [g.name, g]));

export function gateSpec(name: string): GateSpec | undefined {
  return GATES_BY_NAME.get(name);
}

/**
 * Upstream cascades (`SetDefaultFeatureGates`): when `parent` ends up with value `when`, every gate in
 * `forces` is set to `to`.
 */
export interface GateCascade {
  readonly parent: string;
  readonly when: boolean;
  readonly forces: readonly string[];
  readonly to: boolean;
}

export const GATE_CASCADES: readonly GateCascade[] = [
  {
    parent: 'PodWebhook',
    when: false,
    to: false,
    forces: [
      'KruisePodReadinessGate',
      'PodUnavailableBudgetDeleteGate',
      'PodUnavailableBudgetUpdateGate',
      'WorkloadSpread',
      'SidecarSetPatchPodMetadataDefaultsAllowed',
      'EnhancedLivenessProbe',
      'ContainerExitPriority',
    ],
  },
  {
    parent: 'KruiseDaemon',
    when: false,
    to: false,
    forces: [
      'PreDownloadImageForInPlaceUpdate',
      'DaemonWatchingPod',
      'InPlaceUpdateEnvFromMetadata',
      'PreDownloadImageForDaemonSetUpdate',
      'PodProbeMarkerGate',
      'SidecarTerminator',
      'ImagePullJobGate',
      'EnhancedLivenessProbe',
    ],
  },
  { parent: 'PreDownloadImageForInPlaceUpdate', when: true, to: true, forces: ['ImagePullJobGate'] },
  { parent: 'PreDownloadImageForDaemonSetUpdate', when: true, to: true, forces: ['ImagePullJobGate'] },
  { parent: 'ResourcesDeletionProtection', when: false, to: false, forces: ['DeletionProtectionForCRDCascadingGate'] },
];

/** Gates that must be on for `gate` to stay on (the parents of every "parent=false forces gate off" cascade). */
export function prerequisitesOf(gateName: string): string[] {
  const out: string[] = [];
  const visit = (g: string) => {
    for (const c of GATE_CASCADES) {
      if (!c.when && !c.to && c.forces.includes(g) && !out.includes(c.parent)) {
        out.push(c.parent);
        visit(c.parent);
      }
    }
  };
  visit(gateName);
  return out;
}

/** Every feature the install cares about. The string values appear in messages. */
export enum AppFeature {
  /** A container marked with KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true (stopped through a CRR by the daemon). */
  SIDECAR_TERMINATOR_KILL = 'job sidecar termination (kill)',
  /** A container marked with KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE (image swap on virtual nodes). */
  SIDECAR_TERMINATOR_QUICK_EXIT = 'job sidecar termination (quick-exit image)',
  /** A SidecarSet (injected by the pod mutating webhook). */
  SIDECARSET = 'SidecarSet injection',
  /** A SidecarSet container with upgradeStrategy.upgradeType HotUpgrade (refused under the bundled target). */
  SIDECARSET_HOT_UPGRADE = 'SidecarSet hot upgrade',
  /** A SidecarSet with patchPodMetadata (needs a whitelist or the defaults-allowed gate). */
  SIDECARSET_PATCH_POD_METADATA = 'SidecarSet patchPodMetadata',
  /** An ImagePullJob or ImageListPullJob (pulled by the daemon on each node). */
  IMAGE_PULL_JOB = 'ImagePullJob',
  /** A ContainerRecreateRequest (executed by the daemon). */
  CONTAINER_RECREATE_REQUEST = 'ContainerRecreateRequest',
  /** Pod annotation kruise.io/container-exit-priority (cdk8s-kruise runtime only, never shipped upstream). */
  CONTAINER_EXIT_PRIORITY = 'container exit priority',
  /** Container launch priority (annotation or env), done by the pod mutating webhook. */
  CONTAINER_LAUNCH_PRIORITY = 'container launch priority',
  /** markPodNotReady in a workload lifecycle hook: needs the KruisePodReady readiness gate injected by the pod webhook. */
  LIFECYCLE_MARK_POD_NOT_READY = 'lifecycle hook markPodNotReady',
  /** In-place update of a container whose env comes from pod labels/annotations. */
  INPLACE_UPDATE_ENV_FROM_METADATA = 'in-place update with env from metadata',
  /** A PodProbeMarker (probes run by the daemon). */
  POD_PROBE_MARKER = 'PodProbeMarker',
  /** A WorkloadSpread (pod webhook). */
  WORKLOAD_SPREAD = 'WorkloadSpread',
  /** A PodUnavailableBudget (pod delete/eviction webhook). */
  POD_UNAVAILABLE_BUDGET = 'PodUnavailableBudget',
  /** A ResourceDistribution. */
  RESOURCE_DISTRIBUTION = 'ResourceDistribution',
  /** An object labelled policy.kruise.io/delete-protection. */
  DELETION_PROTECTION = 'deletion protection',
  /** An Advanced StatefulSet with persistentVolumeClaimRetentionPolicy. */
  STATEFULSET_AUTO_DELETE_PVC = 'StatefulSet PVC auto-deletion',
  /** An Advanced StatefulSet with spec.ordinals.start. */
  STATEFULSET_START_ORDINAL = 'StatefulSet start ordinal',
  /** A CloneSet (pods created, scaled and updated by the CloneSet controller). */
  CLONESET = 'CloneSet',
}

/** A runtime that can carry out features: the one bundled with cdk8s-kruise, or upstream OpenKruise. */
export type RuntimeName = 'bundled' | 'upstream';

/** What one app feature needs, and who carries it out. */
export interface FeatureSpec {
  /** Gates that must be on (their cascade parents are added by the install's gate resolution). */
  readonly gates: readonly string[];
  /** The node daemon must run (CRI work or per-node watches). */
  readonly needsDaemon: boolean;
  /** The pod mutating webhook must be registered. */
  readonly needsPodWebhook: boolean;
  /** Which runtimes carry the feature out. A feature neither carries out is compiled but inert. */
  readonly carriedOutBy: { readonly bundled: boolean; readonly upstream: boolean };
}

function feature(
  gates: readonly string[],
  needs: { daemon?: boolean; podWebhook?: boolean },
  carriedOutBy: { bundled: boolean; upstream: boolean },
): FeatureSpec {
  return Object.freeze({ gates, needsDaemon: needs.daemon ?? false, needsPodWebhook: needs.podWebhook ?? false, carriedOutBy });
}

const BOTH = { bundled: true, upstream: true } as const;
const UPSTREAM_ONLY = { bundled: false, upstream: true } as const;
const BUNDLED_ONLY = { bundled: true, upstream: false } as const;

/** Feature → what it needs and who carries it out. */
export const FEATURES: Readonly<Record<AppFeature, FeatureSpec>> = {
  [AppFeature.SIDECAR_TERMINATOR_KILL]: feature(['SidecarTerminator'], { daemon: true }, BOTH),
  [AppFeature.SIDECAR_TERMINATOR_QUICK_EXIT]: feature(['SidecarTerminator'], {}, BOTH),
  [AppFeature.SIDECARSET]: feature(['PodWebhook'], { podWebhook: true }, BOTH),
  [AppFeature.SIDECARSET_HOT_UPGRADE]: feature(['PodWebhook'], { podWebhook: true }, UPSTREAM_ONLY),
  [AppFeature.SIDECARSET_PATCH_POD_METADATA]: feature(['SidecarSetPatchPodMetadataDefaultsAllowed'], { podWebhook: true }, UPSTREAM_ONLY),
  [AppFeature.IMAGE_PULL_JOB]: feature(['ImagePullJobGate'], { daemon: true }, BOTH),
  [AppFeature.CONTAINER_RECREATE_REQUEST]: feature(['KruiseDaemon'], { daemon: true }, BOTH),
  // Upstream never shipped exit priority. The bundled runtime carries it out: its pod webhook gives prioritised
  // containers a preStop hook to the node daemon, which holds it until the lower levels have exited.
  [AppFeature.CONTAINER_EXIT_PRIORITY]: feature(['ContainerExitPriority'], { podWebhook: true, daemon: true }, BUNDLED_ONLY),
  [AppFeature.CONTAINER_LAUNCH_PRIORITY]: feature(['PodWebhook'], { podWebhook: true }, BOTH),
  [AppFeature.LIFECYCLE_MARK_POD_NOT_READY]: feature(['PodWebhook'], { podWebhook: true }, UPSTREAM_ONLY),
  [AppFeature.INPLACE_UPDATE_ENV_FROM_METADATA]: feature(['InPlaceUpdateEnvFromMetadata'], { daemon: true }, UPSTREAM_ONLY),
  [AppFeature.POD_PROBE_MARKER]: feature(['PodProbeMarkerGate'], { daemon: true }, UPSTREAM_ONLY),
  [AppFeature.WORKLOAD_SPREAD]: feature(['WorkloadSpread'], { podWebhook: true }, UPSTREAM_ONLY),
  [AppFeature.POD_UNAVAILABLE_BUDGET]: feature(['PodUnavailableBudgetDeleteGate'], { podWebhook: true }, UPSTREAM_ONLY),
  [AppFeature.RESOURCE_DISTRIBUTION]: feature(['ResourceDistributionGate'], {}, UPSTREAM_ONLY),
  [AppFeature.DELETION_PROTECTION]: feature(['ResourcesDeletionProtection'], {}, UPSTREAM_ONLY),
  [AppFeature.STATEFULSET_AUTO_DELETE_PVC]: feature(['StatefulSetAutoDeletePVC'], {}, UPSTREAM_ONLY),
  [AppFeature.STATEFULSET_START_ORDINAL]: feature(['StatefulSetStartOrdinal'], {}, UPSTREAM_ONLY),
  [AppFeature.CLONESET]: feature([], {}, BOTH),
};

/** True when `runtime` carries out `f`. */
export function carriesOut(runtime: RuntimeName, f: AppFeature): boolean {
  return FEATURES[f].carriedOutBy[runtime];
}

/**
 * The gates the bundled runtime knows, with upstream's defaults: those of the features it carries out and
 * the cascade parents that can switch them off. It refuses any other name in `--feature-gates`.
 */
export const BUNDLED_RUNTIME_GATES: Readonly<Record<string, boolean>> = Object.freeze(
  Object.fromEntries(
    [
      ...new Set(
        Object.values(FEATURES)
          .filter((f) => f.carriedOutBy.bundled)
          .flatMap((f) => f.gates.flatMap((g) => [g, ...prerequisitesOf(g)])),
      ),
    ]
      .sort()
      .map((g) => [g, gateSpec(g)!.default]),
  ),
);

/**
 * Parses `--feature-gates=A=true,B=false` as upstream kruise-manager takes it, against the gates `known`
 * (default: the bundled runtime's), then applies upstream's "parent off forces children off" cascades.
 */
export function parseFeatureGates(
  spec: string | undefined,
  known: Readonly<Record<string, boolean>> = BUNDLED_RUNTIME_GATES,
): Map<string, boolean> {
  const gates = new Map(Object.entries(known));
  for (const part of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9]+)=(true|false)$/i.exec(part);
    if (!m) throw new Error(`--feature-gates: "${part}" is not Name=true|false (e.g. --feature-gates=SidecarTerminator=true)`);
    const name = m[1]!;
    if (!(name in known)) {
      throw new Error(`--feature-gates: unknown gate "${name}"; this runtime knows ${Object.keys(known).join(', ')}`);
    }
    gates.set(name, m[2]!.toLowerCase() === 'true');
  }
  for (const c of GATE_CASCADES) {
    if (c.when || c.to || gates.get(c.parent) !== false) continue;
    for (const child of c.forces) if (gates.has(child)) gates.set(child, false);
  }
  return gates;
}

/**
 * The admission the bundled runtime serves. Registering a path nobody serves would make the API server
 * fail every matching request (failurePolicy Fail), so the install registers only these; a unit test holds
 * this against the runtime's webhook registry.
 */
export const BUNDLED_ADMISSION = Object.freeze({
  /** Whether `/mutate-pod` is served (mutators: `POD_MUTATORS` in src/runtime/manager/registry.ts). */
  podWebhook: true,
  /** Our kinds with a defaulting (mutating) webhook. */
  mutatingKinds: Object.freeze(['ContainerRecreateRequest', 'CloneSet']) as readonly string[],
  /** Our kinds with a validating webhook: all of them (the same rules `cdk8s-kruise validate` runs)... */
  validatingKinds: 'all' as const,
  /**
   * ...except these, validated by their mutating webhook on CREATE and UPDATE instead, as upstream does: one
   * admission review per write rather than two (a CRR is written per terminated Job pod, so this halves the
   * API server's webhook wait on the sidecar terminator's path).
   */
  validatedByMutatingKinds: Object.freeze(['ContainerRecreateRequest']) as readonly string[],
});

/**
 * The feature table: what each app feature needs from a runtime (feature gates, the node daemon, the pod
 * mutating webhook) and which runtimes carry it out; and, below it, which feature every part of an app belongs
 * to: each kind of the Kruise groups, each field path of the kinds we model, each Kruise annotation, label and env
 * key. The install manifests, the synth and validate warnings, the runtime's validating webhook, the `openkruise`
 * target report, the policy engine's feature-gate rule and the runtime's own gate parsing all read this one table,
 * so "what the bundled runtime implements" cannot disagree with itself.
 *
 * Gates and cascades are upstream OpenKruise's at v1.9.x (`SetDefaultFeatureGates`).
 *
 * @module
 */
import { groupOf, KRUISE_API_VERSION, KRUISE_GROUP, KRUISE_GROUPS, KRUISE_POLICY_GROUP, KRUISE_VERSION } from './groups.js';
import * as K from './keys.js';
import { KRUISE_KINDS } from './resources.js';

/** Maturity of a gate, as upstream declares it. */
export enum GateStage {
  ALPHA = 'Alpha',
  BETA = 'Beta',
  /** Defined only by the cdk8s-kruise runtime (not an upstream gate). */
  CDK8S_KRUISE = 'cdk8s-kruise',
}

export interface GateSpec<N extends string = FeatureGateName> {
  readonly name: N;
  readonly default: boolean;
  readonly stage: GateStage;
  /** True when upstream OpenKruise knows this gate. */
  readonly upstream: boolean;
}

function gate<N extends string>(name: N, def: boolean, stage: GateStage): GateSpec<N> {
  return { name, default: def, stage, upstream: stage !== GateStage.CDK8S_KRUISE };
}

/** Every gate, with upstream's defaults at v1.9.x. */
export const FEATURE_GATES = [
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
] as const;

/** A gate's name: only names of this table type-check, so a misspelt gate is a type error, not a gate that is never on. */
export type FeatureGateName = (typeof FEATURE_GATES)[number]['name'];

/** The gates of one process and whether each is on (`parseFeatureGates`). */
export type FeatureGates = ReadonlyMap<FeatureGateName, boolean>;

const GATES_BY_NAME: ReadonlyMap<string, GateSpec> = new Map(FEATURE_GATES.map((g) => [g.name, g]));

export function gateSpec(name: string): GateSpec | undefined {
  return GATES_BY_NAME.get(name);
}

/** Whether `name` is a gate of the table (for names read from flags, annotations or user config). */
export function isFeatureGateName(name: string): name is FeatureGateName {
  return GATES_BY_NAME.has(name);
}

/**
 * Upstream cascades (`SetDefaultFeatureGates`): when `parent` ends up with value `when`, every gate in
 * `forces` is set to `to`.
 */
export interface GateCascade {
  readonly parent: FeatureGateName;
  readonly when: boolean;
  readonly forces: readonly FeatureGateName[];
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

/**
 * Applies upstream's cascades to `values` in place ("parent off forces children off", "parent on forces children on").
 * Upstream applies them once in a fixed order; this iterates to a fixed point so that chains settle whatever the
 * order. Only gates `values` holds are set: a runtime knows a subset of the gates.
 */
export function applyGateCascades(values: Map<string, boolean>): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const c of GATE_CASCADES) {
      if (values.get(c.parent) !== c.when) continue;
      for (const child of c.forces) {
        if (values.has(child) && values.get(child) !== c.to) {
          values.set(child, c.to);
          changed = true;
        }
      }
    }
  }
}

/** Gates that must be on for `gate` to stay on (the parents of every "parent=false forces gate off" cascade). */
export function prerequisitesOf(gateName: string): FeatureGateName[] {
  const out: FeatureGateName[] = [];
  const visit = (g: string) => {
    for (const c of GATE_CASCADES) {
      if (!c.when && !c.to && (c.forces as readonly string[]).includes(g) && !out.includes(c.parent)) {
        out.push(c.parent);
        visit(c.parent);
      }
    }
  };
  visit(gateName);
  return out;
}

/** Every feature the install cares about. The string values appear in messages (`uses <feature> at …`). */
export enum AppFeature {
  /** A container marked with KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true (stopped through a CRR by the daemon). */
  SIDECAR_TERMINATOR_KILL = 'job sidecar termination (kill)',
  /** A container marked with KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE (image swap on virtual nodes). */
  SIDECAR_TERMINATOR_QUICK_EXIT = 'job sidecar termination (quick-exit image)',
  /** Pod annotation kruise.cdk8s.io/terminate-sidecars: sidecars declared by name or pattern (cdk8s-kruise runtime only). */
  SIDECAR_TERMINATOR_PATTERNS = 'job sidecar termination (declared by pattern)',
  /** A SidecarSet (injected by the pod mutating webhook). */
  SIDECARSET = 'SidecarSet injection',
  /** A SidecarSet container with upgradeStrategy.upgradeType HotUpgrade. */
  SIDECARSET_HOT_UPGRADE = 'SidecarSet hot upgrade',
  /** A SidecarSet with patchPodMetadata (needs a whitelist or the defaults-allowed gate). */
  SIDECARSET_PATCH_POD_METADATA = 'SidecarSet patchPodMetadata',
  /** A SidecarSet container with resourcesPolicy (resources computed from the app containers at injection). */
  SIDECARSET_RESOURCES_POLICY = 'SidecarSet resourcesPolicy',
  /** A SidecarSet annotated kruise.cdk8s.io/native-sidecars (injected as Kubernetes native sidecars; ours only). */
  SIDECARSET_NATIVE_SIDECARS = 'SidecarSet native sidecars',
  /** An ImagePullJob (pulled by the daemon on each node). */
  IMAGE_PULL_JOB = 'ImagePullJob',
  /** An ImageListPullJob (one child ImagePullJob per image). */
  IMAGE_LIST_PULL_JOB = 'ImageListPullJob',
  /** A NodeImage written by the app (pulled by the daemon of that node). */
  NODE_IMAGE = 'NodeImage',
  /** A ContainerRecreateRequest (executed by the daemon). */
  CONTAINER_RECREATE_REQUEST = 'ContainerRecreateRequest',
  /** Pod annotation kruise.io/container-exit-priority (cdk8s-kruise runtime only, never shipped upstream). */
  CONTAINER_EXIT_PRIORITY = 'container exit priority',
  /** Container launch priority (annotation or env), done by the pod mutating webhook. */
  CONTAINER_LAUNCH_PRIORITY = 'container launch priority',
  /**
   * markPodNotReady in a workload lifecycle hook: the pod needs the KruisePodReady readiness gate, which upstream's
   * pod webhook injects and the bundled CloneSet controller adds to the pods it creates.
   */
  LIFECYCLE_MARK_POD_NOT_READY = 'lifecycle hook markPodNotReady',
  /** In-place update of a container whose env comes from pod labels/annotations. */
  INPLACE_UPDATE_ENV_FROM_METADATA = 'in-place update with env from metadata',
  /** CloneSet progressDeadlineSeconds (the Progressing condition). */
  CLONESET_PROGRESS_DEADLINE = 'CloneSet progressDeadlineSeconds',
  /** CloneSet image pre-download for in-place updates (the apps.kruise.io/image-predownload-* annotations). */
  CLONESET_IMAGE_PRE_DOWNLOAD = 'CloneSet image pre-download',
  /** Advanced DaemonSet image pre-download for its updates (its own apps.kruise.io/image-predownload-* annotations). */
  DAEMONSET_IMAGE_PRE_DOWNLOAD = 'Advanced DaemonSet image pre-download',
  /** Pod annotation apps.kruise.io/using-enhanced-liveness. */
  ENHANCED_LIVENESS_PROBE = 'enhanced liveness probe',
  /** A PodProbeMarker (probes run by the daemon). */
  POD_PROBE_MARKER = 'PodProbeMarker',
  /** A NodePodProbe written by the app (upstream writes them for PodProbeMarkers; probes run by the daemon). */
  NODE_POD_PROBE = 'NodePodProbe',
  /** A WorkloadSpread (pod webhook). */
  WORKLOAD_SPREAD = 'WorkloadSpread',
  /** A PodUnavailableBudget (pod delete/eviction webhook). */
  POD_UNAVAILABLE_BUDGET = 'PodUnavailableBudget',
  /** A ResourceDistribution. */
  RESOURCE_DISTRIBUTION = 'ResourceDistribution',
  /** An object labelled policy.kruise.io/delete-protection. */
  DELETION_PROTECTION = 'deletion protection',
  /** A Namespace labelled kruise.cdk8s.io/pod-webhook=disabled (ours: the install keeps the pod webhook out of it). */
  POD_WEBHOOK_OPT_OUT = 'pod webhook namespace opt-out',
  /** An Advanced StatefulSet (apps.kruise.io StatefulSet). */
  ADVANCED_STATEFULSET = 'Advanced StatefulSet',
  /** An Advanced StatefulSet with persistentVolumeClaimRetentionPolicy. */
  STATEFULSET_AUTO_DELETE_PVC = 'StatefulSet PVC auto-deletion',
  /** An Advanced StatefulSet with spec.ordinals.start. */
  STATEFULSET_START_ORDINAL = 'StatefulSet start ordinal',
  /** An Advanced StatefulSet whose claims follow their template's size (volumeClaimUpdateStrategy). */
  STATEFULSET_AUTO_RESIZE_PVC = 'StatefulSet claim resize',
  /** An Advanced DaemonSet (apps.kruise.io DaemonSet). */
  ADVANCED_DAEMONSET = 'Advanced DaemonSet',
  /** An Advanced DaemonSet with a preNormal or inPlaceUpdate hook (upstream acts on its preDelete hook only). */
  DAEMONSET_PRENORMAL_INPLACE_HOOKS = 'Advanced DaemonSet preNormal and inPlaceUpdate hooks',
  /** A BroadcastJob. */
  BROADCAST_JOB = 'BroadcastJob',
  /** An AdvancedCronJob. */
  ADVANCED_CRON_JOB = 'AdvancedCronJob',
  /** A UnitedDeployment. */
  UNITED_DEPLOYMENT = 'UnitedDeployment',
  /** A PersistentPodState (pod webhook). */
  PERSISTENT_POD_STATE = 'PersistentPodState',
  /** An EphemeralJob. */
  EPHEMERAL_JOB = 'EphemeralJob',
  /** A CloneSet (pods created, scaled and updated by the CloneSet controller). */
  CLONESET = 'CloneSet',
  /**
   * An object of a Kruise API group whose kind, or version, neither the bundled runtime serves nor {@link KIND_FEATURES}
   * names (e.g. apps.kruise.io/v1beta1 CloneSet: the bundled runtime serves v1alpha1 only).
   */
  OTHER_KRUISE_KIND = 'an unmodelled Kruise kind or version',
}

/** A runtime that can carry out features: the one bundled with cdk8s-kruise, or upstream OpenKruise. */
export type RuntimeName = 'bundled' | 'upstream';

/** What a runtime needs to carry out one feature. */
export interface RuntimeNeeds {
  /** Gates that must be on (their cascade parents are added by the install's gate resolution). */
  readonly gates: readonly FeatureGateName[];
  /** The node daemon must run (CRI work or per-node watches). */
  readonly daemon: boolean;
  /** The pod mutating webhook must be registered. */
  readonly podWebhook: boolean;
}

/** What one app feature needs, and who carries it out. */
export interface FeatureSpec {
  /** Gates that must be on (their cascade parents are added by the install's gate resolution). */
  readonly gates: readonly FeatureGateName[];
  /** The node daemon must run (CRI work or per-node watches). */
  readonly needsDaemon: boolean;
  /** The pod mutating webhook must be registered. */
  readonly needsPodWebhook: boolean;
  /** Which runtimes carry the feature out. A feature neither carries out is compiled but inert. */
  readonly carriedOutBy: { readonly bundled: boolean; readonly upstream: boolean };
  /**
   * What the bundled runtime needs, where it carries the feature out differently from upstream (the fields above
   * are upstream's, and the bundled runtime's when this is absent).
   */
  readonly bundledNeeds?: RuntimeNeeds;
}

function feature(
  gates: readonly FeatureGateName[],
  needs: { daemon?: boolean; podWebhook?: boolean },
  carriedOutBy: { bundled: boolean; upstream: boolean },
  bundledNeeds?: RuntimeNeeds,
): FeatureSpec {
  return Object.freeze({
    gates,
    needsDaemon: needs.daemon ?? false,
    needsPodWebhook: needs.podWebhook ?? false,
    carriedOutBy,
    ...(bundledNeeds ? { bundledNeeds: Object.freeze(bundledNeeds) } : {}),
  });
}

const BOTH = { bundled: true, upstream: true } as const;
const UPSTREAM_ONLY = { bundled: false, upstream: true } as const;
const BUNDLED_ONLY = { bundled: true, upstream: false } as const;

/** Feature → what it needs and who carries it out. */
export const FEATURES: Readonly<Record<AppFeature, FeatureSpec>> = {
  [AppFeature.SIDECAR_TERMINATOR_KILL]: feature(['SidecarTerminator'], { daemon: true }, BOTH),
  [AppFeature.SIDECAR_TERMINATOR_QUICK_EXIT]: feature(['SidecarTerminator'], {}, BOTH),
  // Upstream reads only the env markers. The bundled manager and daemon match the annotation's patterns on the live pod.
  [AppFeature.SIDECAR_TERMINATOR_PATTERNS]: feature(['SidecarTerminator'], { daemon: true }, BUNDLED_ONLY),
  [AppFeature.SIDECARSET]: feature(['PodWebhook'], { podWebhook: true }, BOTH),
  // The bundled pod webhook injects the working/idle pair and the controller hands over between them, as upstream.
  [AppFeature.SIDECARSET_HOT_UPGRADE]: feature(['PodWebhook'], { podWebhook: true }, BOTH),
  // The bundled pod webhook patches the annotations its kruise-configuration whitelist (or, without one, the gate) allows,
  // and the SidecarSet controller re-applies them on upgrade, as upstream does.
  [AppFeature.SIDECARSET_PATCH_POD_METADATA]: feature(['SidecarSetPatchPodMetadataDefaultsAllowed'], { podWebhook: true }, BOTH),
  // The bundled pod webhook computes the sidecar's resources at injection and its SidecarSet webhook validates the policy.
  [AppFeature.SIDECARSET_RESOURCES_POLICY]: feature(['PodWebhook'], { podWebhook: true }, BOTH),
  // Upstream ignores the annotation and injects the containers as ordinary containers.
  [AppFeature.SIDECARSET_NATIVE_SIDECARS]: feature(['PodWebhook'], { podWebhook: true }, BUNDLED_ONLY),
  [AppFeature.IMAGE_PULL_JOB]: feature(['ImagePullJobGate'], { daemon: true }, BOTH),
  // The bundled ImageListPullJob controller makes one ImagePullJob per image; their pulls are the daemon's.
  [AppFeature.IMAGE_LIST_PULL_JOB]: feature(['ImagePullJobGate'], { daemon: true }, BOTH),
  [AppFeature.NODE_IMAGE]: feature(['ImagePullJobGate'], { daemon: true }, BOTH),
  [AppFeature.CONTAINER_RECREATE_REQUEST]: feature(['KruiseDaemon'], { daemon: true }, BOTH),
  // Upstream never shipped exit priority. The bundled runtime carries it out: its pod webhook gives prioritised
  // containers a preStop hook to the node daemon, which holds it until the lower levels have exited.
  [AppFeature.CONTAINER_EXIT_PRIORITY]: feature(['ContainerExitPriority'], { podWebhook: true, daemon: true }, BUNDLED_ONLY),
  [AppFeature.CONTAINER_LAUNCH_PRIORITY]: feature(['PodWebhook'], { podWebhook: true }, BOTH),
  // Upstream's pod webhook injects the KruisePodReady readiness gate; the bundled CloneSet controller adds it to the
  // pods it creates and sets it True itself, so under the bundled runtime neither the pod webhook nor its gate is needed.
  [AppFeature.LIFECYCLE_MARK_POD_NOT_READY]: feature(['PodWebhook'], { podWebhook: true }, BOTH, {
    gates: [],
    daemon: false,
    podWebhook: false,
  }),
  // The manager's CloneSet controller patches the metadata in place and waits for the daemon's containermeta unit,
  // which restarts the containers whose env from metadata no longer matches the pod.
  [AppFeature.INPLACE_UPDATE_ENV_FROM_METADATA]: feature(['InPlaceUpdateEnvFromMetadata'], { daemon: true }, BOTH),
  // Both CloneSet controllers write the Progressing condition (upstream's reasons and deadline).
  [AppFeature.CLONESET_PROGRESS_DEADLINE]: feature([], {}, BOTH),
  // The bundled CloneSet and Advanced StatefulSet controllers create the ImagePullJobs of an in-place update's changed
  // images (control/image-predownload.ts); the daemon pulls them.
  [AppFeature.CLONESET_IMAGE_PRE_DOWNLOAD]: feature(['PreDownloadImageForInPlaceUpdate'], { daemon: true }, BOTH),
  // The bundled DaemonSet controller creates the ImagePullJobs of an update's new images, Standard or in place
  // (controllers/daemonset/predownload-decision.ts); the daemon pulls them.
  [AppFeature.DAEMONSET_IMAGE_PRE_DOWNLOAD]: feature(['PreDownloadImageForDaemonSetUpdate'], { daemon: true }, BOTH),
  // Upstream's pod webhook (gate EnhancedLivenessProbe) removes the liveness probes and nothing restarts a container
  // whose probe fails, so upstream does not carry the promise out. The bundled pod webhook moves the probes the same
  // way, its manager lists them in the node's NodePodProbe (the PodProbeMarker path, hence PodProbeMarkerGate), the
  // daemon runs them, and the manager restarts a failing container through a ContainerRecreateRequest only while the
  // pod's disruption budget allows.
  [AppFeature.ENHANCED_LIVENESS_PROBE]: feature(['EnhancedLivenessProbe'], { podWebhook: true, daemon: true }, BUNDLED_ONLY, {
    gates: ['EnhancedLivenessProbe', 'PodProbeMarkerGate'],
    daemon: true,
    podWebhook: true,
  }),
  // The bundled manager lists the probes per node in NodePodProbes and marks the results on the pods; the daemon of
  // each node runs its node's probes (exec through CRI, http and tcp to the pod IP), as upstream splits the work.
  [AppFeature.POD_PROBE_MARKER]: feature(['PodProbeMarkerGate'], { daemon: true }, BOTH),
  [AppFeature.NODE_POD_PROBE]: feature(['PodProbeMarkerGate'], { daemon: true }, BOTH),
  [AppFeature.WORKLOAD_SPREAD]: feature(['WorkloadSpread'], { podWebhook: true }, UPSTREAM_ONLY),
  // The bundled manager keeps the budget's counts and its pod webhook refuses deletions and evictions (and, with
  // PodUnavailableBudgetUpdateGate, in-place updates) beyond it, as upstream's do.
  [AppFeature.POD_UNAVAILABLE_BUDGET]: feature(['PodUnavailableBudgetDeleteGate'], { podWebhook: true }, BOTH),
  [AppFeature.RESOURCE_DISTRIBUTION]: feature(['ResourceDistributionGate'], {}, UPSTREAM_ONLY),
  // The bundled manager's deletion-protection webhook refuses the DELETEs as upstream's do (src/contracts/deletion-protection.ts).
  [AppFeature.DELETION_PROTECTION]: feature(['ResourcesDeletionProtection'], {}, BOTH),
  [AppFeature.POD_WEBHOOK_OPT_OUT]: feature([], {}, BUNDLED_ONLY),
  // The bundled Advanced StatefulSet controller keeps ordered identities (reserved ordinals, start ordinal), claims
  // per pod and their retention, and rolls updates out by recreate or in place with partition, maxUnavailable, pause
  // and the lifecycle hooks, as upstream's.
  [AppFeature.ADVANCED_STATEFULSET]: feature([], {}, BOTH),
  [AppFeature.STATEFULSET_AUTO_DELETE_PVC]: feature(['StatefulSetAutoDeletePVC'], {}, BOTH),
  [AppFeature.STATEFULSET_START_ORDINAL]: feature(['StatefulSetStartOrdinal'], {}, BOTH),
  // Under OnPodRollingUpdate the bundled controller grows each pod's claims to their template's size before updating
  // the pod and its webhook refuses a template change a resize cannot carry out, as upstream's; the storage driver
  // (an external resizer) grows the volume.
  [AppFeature.STATEFULSET_AUTO_RESIZE_PVC]: feature(['StatefulSetAutoResizePVCGate'], {}, BOTH),
  // The bundled DaemonSet controller runs one pod per eligible node (bound by node affinity, as upstream) and rolls
  // updates out by recreate or in place, with partition, node selector, pause, surge and the preDelete hook.
  [AppFeature.ADVANCED_DAEMONSET]: feature([], {}, BOTH),
  // Upstream's webhook refuses an inPlaceUpdate hook on a DaemonSet and its controller ignores preNormal; the bundled
  // controller holds pods in both hooks as its CloneSet controller does.
  [AppFeature.DAEMONSET_PRENORMAL_INPLACE_HOOKS]: feature([], {}, BUNDLED_ONLY),
  // The bundled BroadcastJob controller runs one pod per eligible node, bound by node affinity as upstream.
  [AppFeature.BROADCAST_JOB]: feature([], {}, BOTH),
  [AppFeature.ADVANCED_CRON_JOB]: feature([], {}, UPSTREAM_ONLY),
  [AppFeature.UNITED_DEPLOYMENT]: feature([], {}, UPSTREAM_ONLY),
  [AppFeature.PERSISTENT_POD_STATE]: feature(['PodWebhook'], { podWebhook: true }, UPSTREAM_ONLY),
  [AppFeature.EPHEMERAL_JOB]: feature([], {}, UPSTREAM_ONLY),
  [AppFeature.CLONESET]: feature([], {}, BOTH),
  // Upstream may serve it (SCHEMA-002 reports a kind or version no cluster serves); the bundled runtime does not.
  [AppFeature.OTHER_KRUISE_KIND]: feature([], {}, UPSTREAM_ONLY),
};

/** True when `runtime` carries out `f`. */
export function carriesOut(runtime: RuntimeName, f: AppFeature): boolean {
  return FEATURES[f].carriedOutBy[runtime];
}

const NO_NEEDS: RuntimeNeeds = Object.freeze({ gates: [], daemon: false, podWebhook: false });

/**
 * What `runtime` needs for `f`: nothing when it does not carry `f` out (a daemon or a gate would not make it act),
 * its own needs where they differ. Without a runtime: the needs the table declares (upstream's), whoever carries it out.
 */
export function needsOf(f: AppFeature, runtime?: RuntimeName): RuntimeNeeds {
  const spec = FEATURES[f];
  if (runtime !== undefined && !spec.carriedOutBy[runtime]) return NO_NEEDS;
  if (runtime === 'bundled' && spec.bundledNeeds) return spec.bundledNeeds;
  return { gates: spec.gates, daemon: spec.needsDaemon, podWebhook: spec.needsPodWebhook };
}

/**
 * Gates that no app feature needs but that change how the bundled runtime carries out one it serves, with upstream's
 * meaning: the CloneSet controller's `CloneSetPartitionRollback` and `PreparingUpdateAsUpdate`, the pod webhook's
 * `KruisePodReadinessGate` (every pod gets the KruisePodReady gate) and the deletion-protection webhook's
 * `DeletionProtectionForCRDCascadingGate` (`Cascading` on a CRD counts its custom resources). Listed so `--feature-gates` accepts them: a gate
 * the runtime reads but refuses on its command line could never be turned on.
 */
const BUNDLED_BEHAVIOUR_GATES: readonly FeatureGateName[] = [
  'CloneSetPartitionRollback',
  'DeletionProtectionForCRDCascadingGate',
  'KruisePodReadinessGate',
  // Off by default upstream: the PUB webhook also holds back in-place updates of covered pods.
  'PodUnavailableBudgetUpdateGate',
  'PreparingUpdateAsUpdate',
  // Off by default upstream: a volumeClaimTemplates change recreates CloneSet pods (new PVCs) instead of updating them in place.
  'RecreatePodWhenChangeVCTInCloneSetGate',
];

/**
 * The gates the bundled runtime knows, with upstream's defaults: those of the features it carries out, the behaviour
 * gates above and the cascade parents that can switch them off. It refuses any other name in `--feature-gates`.
 */
export const BUNDLED_RUNTIME_GATES: Readonly<Partial<Record<FeatureGateName, boolean>>> = Object.freeze(
  Object.fromEntries(
    [
      ...new Set(
        [...(Object.keys(FEATURES) as AppFeature[]).flatMap((f) => needsOf(f, 'bundled').gates), ...BUNDLED_BEHAVIOUR_GATES].flatMap(
          (g) => [g, ...prerequisitesOf(g)],
        ),
      ),
    ]
      .sort()
      .map((g) => [g, gateSpec(g)!.default]),
  ),
);

/**
 * Parses `--feature-gates=A=true,B=false` as upstream kruise-manager takes it, against the gates `known`
 * (default: the bundled runtime's), then applies upstream's cascades (applyGateCascades).
 */
export function parseFeatureGates(
  spec: string | undefined,
  known: Readonly<Partial<Record<FeatureGateName, boolean>>> = BUNDLED_RUNTIME_GATES,
): Map<FeatureGateName, boolean> {
  const gates = new Map(Object.entries(known) as [FeatureGateName, boolean][]);
  for (const part of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9]+)=(true|false)$/i.exec(part);
    if (!m) throw new Error(`--feature-gates: "${part}" is not Name=true|false (e.g. --feature-gates=SidecarTerminator=true)`);
    const name = m[1]!;
    if (!(name in known) || !isFeatureGateName(name)) {
      throw new Error(`--feature-gates: unknown gate "${name}"; this runtime knows ${Object.keys(known).join(', ')}`);
    }
    gates.set(name, m[2]!.toLowerCase() === 'true');
  }
  // Image pre-download, for one, turns ImagePullJobGate on: its jobs need that controller.
  applyGateCascades(gates);
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
  mutatingKinds: Object.freeze(['ContainerRecreateRequest', 'CloneSet', 'DaemonSet', 'StatefulSet']) as readonly string[],
  /** Our kinds with a validating webhook: all of them (the same rules `cdk8s-kruise validate` runs)... */
  validatingKinds: 'all' as const,
  /**
   * ...except these, validated by their mutating webhook on CREATE and UPDATE instead, as upstream does: one
   * admission review per write rather than two (a CRR is written per terminated Job pod, so this halves the
   * API server's webhook wait on the sidecar terminator's path).
   */
  validatedByMutatingKinds: Object.freeze(['ContainerRecreateRequest']) as readonly string[],
});

// ─── What each part of an app belongs to ────────────────────────────────────────────────────────────────────────
//
// Every kind of the Kruise groups, every field path of the kinds we model and every Kruise annotation, label and env
// key is classified here: by the feature that gives it behaviour (whose `carriedOutBy` then says which runtime acts on
// it), or as INERT. src/api/feature-uses.ts walks an object against these tables; a use is reported where a part's
// feature differs from its parent's, so only the points where a feature starts are named. Tests walk the CRDs we emit
// and the keys above, and fail on anything unclassified (test/unit/feature-table.test.ts).

/**
 * A part with no behaviour of its own: status and object metadata (their keys are classified one by one below), keys
 * the runtimes write themselves, and Kubernetes keys both runtimes honour as Kubernetes does.
 */
export const INERT = 'inert';

/** A feature that a part belongs to only for some values; other values leave it with its parent's classification. */
export interface ConditionalClass {
  readonly feature: AppFeature;
  readonly when: (value: unknown) => boolean;
}

/** How one part is classified. */
export type PartClass = AppFeature | typeof INERT | ConditionalClass;

function when(f: AppFeature, test: (value: unknown) => boolean): ConditionalClass {
  return Object.freeze({ feature: f, when: test });
}

const isTrue = (v: unknown) => v === true;
const isTrueString = (v: unknown) => typeof v === 'string' && v.toLowerCase() === 'true';
const isNonEmpty = (v: unknown) => (typeof v === 'string' ? v !== '' : Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null);

/**
 * Field paths of one kind → what gives them behaviour. A path is the CRD schema's property names joined by `.`,
 * with `[]` for the items of an array and `*` for the values of a map (`spec.containers[].podInjectPolicy`,
 * `spec.images.*.tags[].tag`). A path classifies its node, and the content the CRD leaves unpruned below it (a pod
 * template, a core Container); every other field below needs its own path. `<path>.**` classifies the whole subtree:
 * for parts whose every field shares one fate (Kubernetes types such as selectors, status, a feature that a runtime
 * lacks as a whole). Kruise structs that a runtime carries out are listed field by field, so a field added to the
 * schema later is unclassified, and fails the test, until someone decides which runtime acts on it. An object's root
 * is classified by its kind ({@link KIND_FEATURES}).
 */
export type FieldTable = Readonly<Record<string, PartClass>>;

type Group = readonly [PartClass, readonly string[]];

function table(...groups: readonly Group[]): FieldTable {
  const out: Record<string, PartClass> = {};
  for (const [cls, paths] of groups) {
    for (const p of paths) {
      if (p in out) throw new Error(`feature table: field path "${p}" is classified twice`);
      out[p] = cls;
    }
  }
  return Object.freeze(out);
}

/** Object parts no runtime acts on: the kind's identity, metadata (keys: the key tables), status (written by the runtime). */
const OBJECT_PARTS: Group = [INERT, ['apiVersion', 'kind', 'metadata.**', 'status.**']];

const priorityStrategy = (p: string) => [
  p,
  `${p}.weightPriority`,
  `${p}.weightPriority[].weight`,
  `${p}.weightPriority[].matchSelector.**`,
  `${p}.orderPriority`,
  `${p}.orderPriority[].orderedKey`,
];
const scatterStrategy = (p: string) => [p, `${p}[].key`, `${p}[].value`];

function sidecarContainerFields(list: 'containers' | 'initContainers'): Group[] {
  const c = `spec.${list}`;
  return [
    [
      AppFeature.SIDECARSET,
      [
        // The core Container, injected as written (unpruned in the CRD, as upstream).
        c,
        `${c}[].podInjectPolicy`,
        `${c}[].upgradeStrategy`,
        // Read only by a hot upgrade, whose upgradeType is that feature's use.
        `${c}[].upgradeStrategy.hotUpgradeEmptyImage`,
        `${c}[].shareVolumePolicy`,
        `${c}[].shareVolumePolicy.type`,
        `${c}[].shareVolumeDevicePolicy`,
        `${c}[].shareVolumeDevicePolicy.type`,
        `${c}[].transferEnv`,
        `${c}[].transferEnv[].sourceContainerName`,
        `${c}[].transferEnv[].sourceContainerNameFrom`,
        `${c}[].transferEnv[].sourceContainerNameFrom.fieldRef.**`,
        `${c}[].transferEnv[].envName`,
        `${c}[].transferEnv[].envNames`,
      ],
    ],
    [when(AppFeature.SIDECARSET_HOT_UPGRADE, (v) => v === 'HotUpgrade'), [`${c}[].upgradeStrategy.upgradeType`]],
    [AppFeature.SIDECARSET_RESOURCES_POLICY, [`${c}[].resourcesPolicy.**`]],
  ];
}

const LIFECYCLE_HOOKS = ['preDelete', 'inPlaceUpdate', 'preNormal'] as const;
const markPodNotReady = when(AppFeature.LIFECYCLE_MARK_POD_NOT_READY, isTrue);

/** Field paths per `group/Kind`. Complete for the kinds we model (a test walks their CRDs); partial for others. */
export const FIELD_FEATURES: Readonly<Record<string, FieldTable>> = Object.freeze({
  [`${KRUISE_GROUP}/SidecarSet`]: table(
    OBJECT_PARTS,
    [
      AppFeature.SIDECARSET,
      [
        'spec',
        'spec.selector.**',
        'spec.namespace',
        'spec.namespaceSelector.**',
        'spec.volumes',
        'spec.updateStrategy',
        'spec.updateStrategy.type',
        'spec.updateStrategy.paused',
        'spec.updateStrategy.selector.**',
        'spec.updateStrategy.partition',
        'spec.updateStrategy.maxUnavailable',
        ...priorityStrategy('spec.updateStrategy.priorityStrategy'),
        ...scatterStrategy('spec.updateStrategy.scatterStrategy'),
        'spec.injectionStrategy',
        'spec.injectionStrategy.paused',
        'spec.injectionStrategy.revision',
        'spec.injectionStrategy.revision.customVersion',
        'spec.injectionStrategy.revision.revisionName',
        'spec.injectionStrategy.revision.policy',
        'spec.imagePullSecrets.**',
        'spec.revisionHistoryLimit',
        // v1beta1's place for the custom version (v1alpha1: the label), copied onto the revisions by both runtimes.
        'spec.customVersion',
      ],
    ],
    ...sidecarContainerFields('containers'),
    ...sidecarContainerFields('initContainers'),
    [when(AppFeature.SIDECARSET_PATCH_POD_METADATA, isNonEmpty), ['spec.patchPodMetadata']],
    [AppFeature.SIDECARSET_PATCH_POD_METADATA, ['spec.patchPodMetadata[].annotations', 'spec.patchPodMetadata[].patchPolicy']],
  ),
  [`${KRUISE_GROUP}/CloneSet`]: table(
    OBJECT_PARTS,
    [
      AppFeature.CLONESET,
      [
        'spec',
        'spec.replicas',
        'spec.selector.**',
        // The pod template and the PVC templates, read whole (unpruned in the CRD, as upstream).
        'spec.template',
        'spec.volumeClaimTemplates',
        'spec.scaleStrategy',
        'spec.scaleStrategy.podsToDelete',
        'spec.scaleStrategy.maxUnavailable',
        'spec.scaleStrategy.disablePVCReuse',
        'spec.updateStrategy',
        'spec.updateStrategy.type',
        'spec.updateStrategy.partition',
        'spec.updateStrategy.maxUnavailable',
        'spec.updateStrategy.maxSurge',
        'spec.updateStrategy.paused',
        ...priorityStrategy('spec.updateStrategy.priorityStrategy'),
        ...scatterStrategy('spec.updateStrategy.scatterStrategy'),
        'spec.updateStrategy.inPlaceUpdateStrategy',
        'spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds',
        'spec.revisionHistoryLimit',
        'spec.minReadySeconds',
        'spec.lifecycle',
        ...LIFECYCLE_HOOKS.flatMap((h) => [
          `spec.lifecycle.${h}`,
          `spec.lifecycle.${h}.labelsHandler`,
          `spec.lifecycle.${h}.finalizersHandler`,
        ]),
      ],
    ],
    [markPodNotReady, LIFECYCLE_HOOKS.map((h) => `spec.lifecycle.${h}.markPodNotReady`)],
    [AppFeature.CLONESET_PROGRESS_DEADLINE, ['spec.progressDeadlineSeconds']],
  ),
  [`${KRUISE_GROUP}/ImagePullJob`]: table(OBJECT_PARTS, [
    AppFeature.IMAGE_PULL_JOB,
    [
      'spec',
      'spec.image',
      'spec.pullSecrets',
      'spec.selector',
      'spec.selector.names',
      'spec.selector.matchLabels.**',
      'spec.selector.matchExpressions.**',
      'spec.podSelector.**',
      'spec.parallelism',
      'spec.pullPolicy',
      'spec.pullPolicy.timeoutSeconds',
      'spec.pullPolicy.backoffLimit',
      'spec.completionPolicy',
      'spec.completionPolicy.type',
      'spec.completionPolicy.activeDeadlineSeconds',
      'spec.completionPolicy.ttlSecondsAfterFinished',
      'spec.sandboxConfig',
      'spec.sandboxConfig.labels',
      'spec.sandboxConfig.annotations',
      'spec.imagePullPolicy',
    ],
  ]),
  [`${KRUISE_GROUP}/ImageListPullJob`]: table(OBJECT_PARTS, [
    AppFeature.IMAGE_LIST_PULL_JOB,
    [
      'spec',
      'spec.images',
      // The template every child ImagePullJob gets as it is.
      'spec.pullSecrets',
      'spec.selector',
      'spec.selector.names',
      'spec.selector.matchLabels.**',
      'spec.selector.matchExpressions.**',
      'spec.podSelector.**',
      'spec.parallelism',
      'spec.pullPolicy',
      'spec.pullPolicy.timeoutSeconds',
      'spec.pullPolicy.backoffLimit',
      'spec.completionPolicy',
      'spec.completionPolicy.type',
      'spec.completionPolicy.activeDeadlineSeconds',
      'spec.completionPolicy.ttlSecondsAfterFinished',
      'spec.sandboxConfig',
      'spec.sandboxConfig.labels',
      'spec.sandboxConfig.annotations',
      'spec.imagePullPolicy',
    ],
  ]),
  [`${KRUISE_GROUP}/ContainerRecreateRequest`]: table(OBJECT_PARTS, [
    AppFeature.CONTAINER_RECREATE_REQUEST,
    [
      'spec',
      'spec.podName',
      'spec.containers',
      'spec.containers[].name',
      // Copied from the pod by the webhook, read by the daemon (the handler and the ports it names).
      'spec.containers[].preStop.**',
      'spec.containers[].ports.**',
      'spec.containers[].statusContext.**',
      'spec.strategy',
      'spec.strategy.failurePolicy',
      'spec.strategy.orderedRecreate',
      'spec.strategy.forceRecreate',
      'spec.strategy.terminationGracePeriodSeconds',
      'spec.strategy.unreadyGracePeriodSeconds',
      'spec.strategy.minStartedSeconds',
      'spec.activeDeadlineSeconds',
      'spec.ttlSecondsAfterFinished',
    ],
  ]),
  // pullSecrets[].mode is v1beta1's: upstream's daemon marks the secrets it synchronized in one batch (the bundled one
  // reads the secrets themselves and ignores the mark).
  [`${KRUISE_GROUP}/NodeImage`]: table(OBJECT_PARTS, [
    AppFeature.NODE_IMAGE,
    [
      'spec',
      'spec.images',
      'spec.images.*.pullSecrets',
      'spec.images.*.pullSecrets[].namespace',
      'spec.images.*.pullSecrets[].name',
      'spec.images.*.pullSecrets[].mode',
      'spec.images.*.tags',
      'spec.images.*.tags[].tag',
      'spec.images.*.tags[].createdAt',
      'spec.images.*.tags[].pullPolicy',
      'spec.images.*.tags[].pullPolicy.timeoutSeconds',
      'spec.images.*.tags[].pullPolicy.backoffLimit',
      'spec.images.*.tags[].pullPolicy.ttlSecondsAfterFinished',
      'spec.images.*.tags[].pullPolicy.activeDeadlineSeconds',
      'spec.images.*.tags[].ownerReferences.**',
      'spec.images.*.tags[].version',
      'spec.images.*.tags[].imagePullPolicy',
      'spec.images.*.sandboxConfig',
      'spec.images.*.sandboxConfig.labels',
      'spec.images.*.sandboxConfig.annotations',
    ],
  ]),
  [`${KRUISE_GROUP}/BroadcastJob`]: table(OBJECT_PARTS, [
    AppFeature.BROADCAST_JOB,
    [
      'spec',
      'spec.parallelism',
      // The pod template, read whole (unpruned in the CRD, as upstream).
      'spec.template',
      'spec.completionPolicy',
      'spec.completionPolicy.type',
      'spec.completionPolicy.activeDeadlineSeconds',
      'spec.completionPolicy.ttlSecondsAfterFinished',
      'spec.paused',
      'spec.failurePolicy',
      'spec.failurePolicy.type',
      'spec.failurePolicy.restartLimit',
    ],
  ]),
  [`${KRUISE_GROUP}/PodProbeMarker`]: table(OBJECT_PARTS, [
    AppFeature.POD_PROBE_MARKER,
    [
      'spec',
      'spec.selector',
      'spec.selector.matchLabels.**',
      'spec.selector.matchExpressions.**',
      'spec.probes',
      'spec.probes[].name',
      'spec.probes[].containerName',
      // The core Probe, read whole by the daemon (exec, httpGet, tcpSocket and the timings).
      'spec.probes[].probe.**',
      'spec.probes[].markerPolicy',
      'spec.probes[].markerPolicy[].state',
      'spec.probes[].markerPolicy[].labels',
      'spec.probes[].markerPolicy[].annotations',
      'spec.probes[].podConditionType',
    ],
  ]),
  [`${KRUISE_GROUP}/NodePodProbe`]: table(OBJECT_PARTS, [
    AppFeature.NODE_POD_PROBE,
    [
      'spec',
      'spec.podProbes',
      'spec.podProbes[].name',
      'spec.podProbes[].namespace',
      'spec.podProbes[].uid',
      'spec.podProbes[].IP',
      'spec.podProbes[].probes',
      'spec.podProbes[].probes[].name',
      'spec.podProbes[].probes[].containerName',
      'spec.podProbes[].probes[].probe.**',
    ],
  ]),
  [`${KRUISE_POLICY_GROUP}/PodUnavailableBudget`]: table(OBJECT_PARTS, [
    AppFeature.POD_UNAVAILABLE_BUDGET,
    [
      'spec',
      'spec.selector',
      'spec.selector.matchLabels.**',
      'spec.selector.matchExpressions.**',
      'spec.targetRef',
      'spec.targetRef.apiVersion',
      'spec.targetRef.kind',
      'spec.targetRef.name',
      'spec.maxUnavailable',
      'spec.minAvailable',
    ],
  ]),
  [`${KRUISE_GROUP}/DaemonSet`]: table(
    OBJECT_PARTS,
    [
      AppFeature.ADVANCED_DAEMONSET,
      [
        'spec',
        'spec.selector.**',
        // The pod template, read whole (unpruned in the CRD, as upstream).
        'spec.template',
        'spec.updateStrategy',
        'spec.updateStrategy.type',
        'spec.updateStrategy.rollingUpdate',
        'spec.updateStrategy.rollingUpdate.rollingUpdateType',
        'spec.updateStrategy.rollingUpdate.maxUnavailable',
        'spec.updateStrategy.rollingUpdate.maxSurge',
        'spec.updateStrategy.rollingUpdate.selector.**',
        'spec.updateStrategy.rollingUpdate.partition',
        'spec.updateStrategy.rollingUpdate.paused',
        'spec.minReadySeconds',
        'spec.burstReplicas',
        'spec.revisionHistoryLimit',
        'spec.scaleStrategy',
        'spec.scaleStrategy.partitionedScaling',
        'spec.lifecycle',
        'spec.lifecycle.preDelete',
        'spec.lifecycle.preDelete.labelsHandler',
        'spec.lifecycle.preDelete.finalizersHandler',
      ],
    ],
    [
      AppFeature.DAEMONSET_PRENORMAL_INPLACE_HOOKS,
      (['inPlaceUpdate', 'preNormal'] as const).flatMap((h) => [
        `spec.lifecycle.${h}`,
        `spec.lifecycle.${h}.labelsHandler`,
        `spec.lifecycle.${h}.finalizersHandler`,
      ]),
    ],
    [markPodNotReady, LIFECYCLE_HOOKS.map((h) => `spec.lifecycle.${h}.markPodNotReady`)],
  ),
  [`${KRUISE_GROUP}/StatefulSet`]: table(
    OBJECT_PARTS,
    [
      AppFeature.ADVANCED_STATEFULSET,
      [
        'spec',
        'spec.replicas',
        'spec.selector.**',
        // The pod template and the claim templates, read whole (unpruned in the CRD, as upstream).
        'spec.template',
        'spec.volumeClaimTemplates',
        'spec.serviceName',
        'spec.podManagementPolicy',
        'spec.updateStrategy',
        'spec.updateStrategy.type',
        'spec.updateStrategy.rollingUpdate',
        'spec.updateStrategy.rollingUpdate.partition',
        'spec.updateStrategy.rollingUpdate.maxUnavailable',
        'spec.updateStrategy.rollingUpdate.podUpdatePolicy',
        'spec.updateStrategy.rollingUpdate.paused',
        'spec.updateStrategy.rollingUpdate.unorderedUpdate',
        ...priorityStrategy('spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy'),
        'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy',
        'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds',
        'spec.updateStrategy.rollingUpdate.minReadySeconds',
        'spec.revisionHistoryLimit',
        'spec.reserveOrdinals',
        'spec.scaleStrategy',
        'spec.scaleStrategy.maxUnavailable',
        'spec.lifecycle',
        ...LIFECYCLE_HOOKS.flatMap((h) => [
          `spec.lifecycle.${h}`,
          `spec.lifecycle.${h}.labelsHandler`,
          `spec.lifecycle.${h}.finalizersHandler`,
        ]),
      ],
    ],
    [AppFeature.STATEFULSET_AUTO_RESIZE_PVC, ['spec.volumeClaimUpdateStrategy', 'spec.volumeClaimUpdateStrategy.type']],
    [AppFeature.STATEFULSET_AUTO_DELETE_PVC, ['spec.persistentVolumeClaimRetentionPolicy.**']],
    [AppFeature.STATEFULSET_START_ORDINAL, ['spec.ordinals', 'spec.ordinals.start']],
    [markPodNotReady, LIFECYCLE_HOOKS.map((h) => `spec.lifecycle.${h}.markPodNotReady`)],
  ),
});

/** Every kind of the Kruise API groups that upstream OpenKruise defines (`group/Kind`) → the feature an object of it is. */
export const KIND_FEATURES: Readonly<Record<string, AppFeature>> = Object.freeze({
  [`${KRUISE_GROUP}/SidecarSet`]: AppFeature.SIDECARSET,
  [`${KRUISE_GROUP}/CloneSet`]: AppFeature.CLONESET,
  [`${KRUISE_GROUP}/ImagePullJob`]: AppFeature.IMAGE_PULL_JOB,
  [`${KRUISE_GROUP}/ContainerRecreateRequest`]: AppFeature.CONTAINER_RECREATE_REQUEST,
  [`${KRUISE_GROUP}/NodeImage`]: AppFeature.NODE_IMAGE,
  [`${KRUISE_GROUP}/ImageListPullJob`]: AppFeature.IMAGE_LIST_PULL_JOB,
  [`${KRUISE_GROUP}/PodProbeMarker`]: AppFeature.POD_PROBE_MARKER,
  [`${KRUISE_GROUP}/NodePodProbe`]: AppFeature.NODE_POD_PROBE,
  [`${KRUISE_GROUP}/WorkloadSpread`]: AppFeature.WORKLOAD_SPREAD,
  [`${KRUISE_GROUP}/ResourceDistribution`]: AppFeature.RESOURCE_DISTRIBUTION,
  [`${KRUISE_GROUP}/StatefulSet`]: AppFeature.ADVANCED_STATEFULSET,
  [`${KRUISE_GROUP}/DaemonSet`]: AppFeature.ADVANCED_DAEMONSET,
  [`${KRUISE_GROUP}/BroadcastJob`]: AppFeature.BROADCAST_JOB,
  [`${KRUISE_GROUP}/AdvancedCronJob`]: AppFeature.ADVANCED_CRON_JOB,
  [`${KRUISE_GROUP}/UnitedDeployment`]: AppFeature.UNITED_DEPLOYMENT,
  [`${KRUISE_GROUP}/PersistentPodState`]: AppFeature.PERSISTENT_POD_STATE,
  [`${KRUISE_GROUP}/EphemeralJob`]: AppFeature.EPHEMERAL_JOB,
  [`${KRUISE_POLICY_GROUP}/PodUnavailableBudget`]: AppFeature.POD_UNAVAILABLE_BUDGET,
});

/** The kinds the bundled runtime serves, each at {@link KRUISE_VERSION} of its group, in CRD order. */
export const BUNDLED_KINDS: readonly string[] = Object.freeze(Object.values(KRUISE_KINDS).map((k) => k.kind));

function bundledIdentity(group: string, kind: string): (typeof KRUISE_KINDS)[keyof typeof KRUISE_KINDS] | undefined {
  return Object.values(KRUISE_KINDS).find((k) => k.group === group && k.kind === kind);
}

function isBundledKind(group: string, kind: string): boolean {
  return bundledIdentity(group, kind) !== undefined;
}

/** Whether the bundled runtime serves `kind` of its group at `apiVersion` (its model version, or one it also serves). */
function isServedVersion(kind: string, apiVersion: string): boolean {
  const id = bundledIdentity(groupOf(apiVersion), kind);
  if (!id) return apiVersion === KRUISE_API_VERSION;
  return [KRUISE_VERSION, ...(id.alsoServed ?? [])].some((v) => apiVersion === `${id.group}/${v}`);
}

/**
 * The feature an object of `apiVersion`/`kind` is, or undefined outside the Kruise groups. The bundled runtime's kinds
 * count as theirs only at the version it serves; any other kind or version of the Kruise groups the table does not
 * name is {@link AppFeature.OTHER_KRUISE_KIND}.
 */
export function kindFeatureOf(apiVersion: string, kind: string): AppFeature | undefined {
  const group = groupOf(apiVersion);
  if (!KRUISE_GROUPS.has(group)) return undefined;
  if (isBundledKind(group, kind) && !isServedVersion(kind, apiVersion)) return AppFeature.OTHER_KRUISE_KIND;
  return KIND_FEATURES[`${group}/${kind}`] ?? AppFeature.OTHER_KRUISE_KIND;
}

/** The field table of `apiVersion`/`kind` (ours only at the version we model), or undefined. */
export function fieldTableOf(apiVersion: string, kind: string): FieldTable | undefined {
  const group = groupOf(apiVersion);
  if (isBundledKind(group, kind) && !isServedVersion(kind, apiVersion)) return undefined;
  return FIELD_FEATURES[`${group}/${kind}`];
}

/**
 * Annotations (on any object or pod template, and SidecarSet patchPodMetadata) → what gives them behaviour. A key
 * classified by a feature is a use of it wherever it appears.
 */
export const ANNOTATION_FEATURES: Readonly<Record<string, PartClass>> = Object.freeze({
  [K.ANNOTATION_CONTAINER_EXIT_PRIORITY]: AppFeature.CONTAINER_EXIT_PRIORITY,
  [K.ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD]: when(AppFeature.ADVANCED_DAEMONSET, isTrueString),
  [K.ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS]: AppFeature.CONTAINER_EXIT_PRIORITY,
  [K.ANNOTATION_TERMINATE_SIDECARS]: AppFeature.SIDECAR_TERMINATOR_PATTERNS,
  [K.ANNOTATION_CONTAINER_LAUNCH_PRIORITY]: AppFeature.CONTAINER_LAUNCH_PRIORITY,
  [K.ANNOTATION_SIDECARSET_NATIVE_SIDECARS]: when(AppFeature.SIDECARSET_NATIVE_SIDECARS, isTrueString),
  [K.ANNOTATION_USING_ENHANCED_LIVENESS]: when(AppFeature.ENHANCED_LIVENESS_PROBE, isTrueString),
  // Written by the pod webhook step for the annotation above (which is what opts a pod in), never the app's to set.
  [K.ANNOTATION_CONTAINER_PROBE_CONTEXT]: INERT,
  [K.ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM]: AppFeature.CLONESET_IMAGE_PRE_DOWNLOAD,
  [K.ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS]: AppFeature.CLONESET_IMAGE_PRE_DOWNLOAD,
  [K.ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS]: AppFeature.CLONESET_IMAGE_PRE_DOWNLOAD,
  // Kubernetes' own scale-in cost: both runtimes' CloneSet controllers rank by it, as a ReplicaSet does.
  [K.ANNOTATION_POD_DELETION_COST]: INERT,
  [K.ANNOTATION_PUB_NO_PROTECT]: AppFeature.POD_UNAVAILABLE_BUDGET,
  [K.ANNOTATION_PUB_PROTECT_OPERATIONS]: AppFeature.POD_UNAVAILABLE_BUDGET,
  [K.ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS]: AppFeature.POD_UNAVAILABLE_BUDGET,
  // Written by the PUB controller on the pods a budget covers.
  [K.ANNOTATION_RELATED_PUB]: INERT,
  // Written by the runtimes (pods, SidecarSets, CRRs, revisions, our install), never the app's to set.
  [K.ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED]: INERT,
  [K.ANNOTATION_LIFECYCLE_TIMESTAMP]: INERT,
  [K.ANNOTATION_CLAIM_OWNED_BY_STATEFULSET]: INERT,
  [K.ANNOTATION_SIDECARSET_HASH]: INERT,
  [K.ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE]: INERT,
  [K.ANNOTATION_SIDECARSET_INJECTED_LIST]: INERT,
  [K.ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE]: INERT,
  [K.ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER]: INERT,
  [K.ANNOTATION_CRR_UNREADY_ACQUIRED]: INERT,
  [K.ANNOTATION_IGNORED_FEATURE_GATES]: INERT,
  [K.ANNOTATION_INPLACE_UPDATE_STATE]: INERT,
  [K.ANNOTATION_INPLACE_UPDATE_GRACE]: INERT,
  [K.ANNOTATION_RUNTIME_CONTAINERS_META]: INERT,
  [K.ANNOTATION_CLONESET_VCT_HASH]: INERT,
  [K.ANNOTATION_SIDECARS_STOPPED_ON_NODE]: INERT,
  [K.ANNOTATION_PULL_SECRET_SOURCE]: INERT,
  [K.ANNOTATION_PULL_SECRET_REFERENCES]: INERT,
  // Written by the compiler to record a launch order lowered to native sidecars, which the kubelet carries out.
  [K.ANNOTATION_LAUNCH_PRIORITY_LOWERED]: INERT,
  // Pre-pull from the diff: read only by the compiler, but an opted-in workload gets ImagePullJobs in the output,
  // so the runtime must run the ImagePullJob controller and the daemon.
  [K.ANNOTATION_PRE_PULL_CHANGED_IMAGES]: AppFeature.IMAGE_PULL_JOB,
  [K.ANNOTATION_PRE_PULL_FOR]: INERT,
});

/**
 * An object's own annotations (`metadata.annotations`) that mean something else on its kind than
 * {@link ANNOTATION_FEATURES} says, by `<group>/<kind>`.
 */
export const KIND_ANNOTATION_FEATURES: Readonly<Record<string, Readonly<Record<string, PartClass>>>> = Object.freeze({
  // Upstream's DaemonSet controller tunes its own pre-download jobs with these (gate PreDownloadImageForDaemonSetUpdate);
  // it reads min-updated-ready-pods and leaves it unused.
  [`${KRUISE_GROUP}/DaemonSet`]: Object.freeze({
    [K.ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM]: AppFeature.DAEMONSET_IMAGE_PRE_DOWNLOAD,
    [K.ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS]: AppFeature.DAEMONSET_IMAGE_PRE_DOWNLOAD,
    [K.ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS]: INERT,
  }),
});

/** Labels of an object itself (`metadata.labels`) → what gives them behaviour. */
export const LABEL_FEATURES: Readonly<Record<string, PartClass>> = Object.freeze({
  [K.LABEL_DELETE_PROTECTION]: AppFeature.DELETION_PROTECTION,
  [K.LABEL_POD_WEBHOOK_OPT_OUT]: when(AppFeature.POD_WEBHOOK_OPT_OUT, (v) => v === K.POD_WEBHOOK_OPT_OUT_VALUE),
  // A pod's own label / a CloneSet's own label: read by both runtimes' CloneSet controllers.
  [K.LABEL_SPECIFIED_DELETE]: AppFeature.CLONESET,
  [K.LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE]: AppFeature.CLONESET,
  // A SidecarSet's custom version, copied onto its revisions by both runtimes.
  [K.LABEL_SIDECARSET_CUSTOM_VERSION]: AppFeature.SIDECARSET,
  // A NodeImage kept when its Node is gone, by both runtimes' NodeImage controllers.
  [K.LABEL_FAKE_NODEIMAGE]: AppFeature.NODE_IMAGE,
  // Node and namespace facts both runtimes read (virtual-kubelet nodes; the API server's namespace name label).
  [K.LABEL_NODE_TYPE]: INERT,
  [K.LABEL_NAMESPACE_NAME]: INERT,
  // Written by the runtimes (pods, CRRs, revisions), never the app's to set.
  [K.LABEL_CRR_POD_UID]: INERT,
  [K.LABEL_CRR_NODE_NAME]: INERT,
  [K.LABEL_CRR_ACTIVE]: INERT,
  [K.LABEL_CRR_POD_NAME]: INERT,
  [K.LABEL_LIVENESS_RESTART]: INERT,
  [K.LABEL_LIFECYCLE_STATE]: INERT,
  [K.LABEL_CLONESET_INSTANCE_ID]: INERT,
  [K.LABEL_SIDECARSET_NAME]: INERT,
  [K.LABEL_CONTROLLER_REVISION_HASH]: INERT,
  [K.LABEL_POD_TEMPLATE_HASH]: INERT,
  [K.LABEL_CONTROLLER_REVISION_HASH_KEY]: INERT,
  [K.LABEL_IMAGE_PREDOWNLOAD_CREATED]: INERT,
  [K.LABEL_IMAGE_PREDOWNLOAD_IGNORED]: INERT,
});

/** Container env (any container or init container list, at any depth) → what gives it behaviour, by the env's value. */
export const ENV_FEATURES: Readonly<Record<string, PartClass>> = Object.freeze({
  // Upstream's acceptance rules: WHEN_JOB_EXIT compared case-insensitively to "true", WITH_IMAGE when it names an image.
  [K.ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT]: when(AppFeature.SIDECAR_TERMINATOR_KILL, isTrueString),
  [K.ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE]: when(AppFeature.SIDECAR_TERMINATOR_QUICK_EXIT, isNonEmpty),
  // Honoured only beside WHEN_JOB_EXIT, whose use it belongs to.
  [K.ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE]: INERT,
  [K.ENV_CONTAINER_PRIORITY]: AppFeature.CONTAINER_LAUNCH_PRIORITY,
  // Written by the pod webhooks.
  [K.ENV_CONTAINER_BARRIER]: INERT,
  [K.ENV_IS_INJECTED]: INERT,
  [K.ENV_SIDECARSET_VERSION]: INERT,
  [K.ENV_SIDECARSET_VERSION_ALT]: INERT,
});

import { AppFeature, detectFeatures, type FeatureUse } from './app-features.js';
import type { KubeObject, SourcedObject } from './types.js';
import { describeRef } from './types.js';

/**
 * The feature-gate model: upstream OpenKruise's gates with their defaults at HEAD (v1.9.x), the
 * cascades upstream applies in `SetDefaultFeatureGates`, and which gates each app feature needs.
 * The install manifests, the `openkruise` target report and the policy engine's feature-gate rule all
 * read this one table.
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

/** Every gate, upstream HEAD defaults (API notes §7). */
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
  // Ours: exit priority never shipped upstream (API notes §2), so the bundled runtime gates it itself.
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
    forces: ['KruisePodReadinessGate', 'PodUnavailableBudgetDeleteGate', 'PodUnavailableBudgetUpdateGate', 'WorkloadSpread',
      'SidecarSetPatchPodMetadataDefaultsAllowed', 'EnhancedLivenessProbe', 'ContainerExitPriority'],
  },
  {
    parent: 'KruiseDaemon',
    when: false,
    to: false,
    forces: ['PreDownloadImageForInPlaceUpdate', 'DaemonWatchingPod', 'InPlaceUpdateEnvFromMetadata', 'PreDownloadImageForDaemonSetUpdate',
      'PodProbeMarkerGate', 'SidecarTerminator', 'ImagePullJobGate', 'EnhancedLivenessProbe'],
  },
  { parent: 'PreDownloadImageForInPlaceUpdate', when: true, to: true, forces: ['ImagePullJobGate'] },
  { parent: 'PreDownloadImageForDaemonSetUpdate', when: true, to: true, forces: ['ImagePullJobGate'] },
  { parent: 'ResourcesDeletionProtection', when: false, to: false, forces: ['DeletionProtectionForCRDCascadingGate'] },
];

/** What the runtime must provide for one app feature. */
export interface FeatureRequirement {
  /** Gates that must be on (their cascade parents are added by `requiredGates`). */
  readonly gates: readonly string[];
  /** The node daemon must run (CRI work or per-node watches). */
  readonly daemon: boolean;
  /** The pod mutating webhook must be registered. */
  readonly podWebhook: boolean;
  /** Upstream OpenKruise implements it. */
  readonly upstream: boolean;
  /** The cdk8s-kruise bundled runtime implements it. */
  readonly bundled: boolean;
}

function req(gates: string[], daemon: boolean, podWebhook: boolean, upstream = true, bundled = false): FeatureRequirement {
  return { gates, daemon, podWebhook, upstream, bundled };
}

/**
 * Feature → requirement. `bundled` marks what the cdk8s-kruise runtime implements (issues 6 and 7);
 * everything else needs upstream OpenKruise (`target: openkruise`).
 */
export const FEATURE_REQUIREMENTS: Readonly<Record<AppFeature, FeatureRequirement>> = {
  [AppFeature.SIDECAR_TERMINATOR_KILL]: req(['SidecarTerminator'], true, false, true, true),
  [AppFeature.SIDECAR_TERMINATOR_QUICK_EXIT]: req(['SidecarTerminator'], false, false, true, true),
  [AppFeature.SIDECARSET]: req(['PodWebhook'], false, true, true, true),
  [AppFeature.SIDECARSET_PATCH_POD_METADATA]: req(['SidecarSetPatchPodMetadataDefaultsAllowed'], false, true, true, true),
  [AppFeature.IMAGE_PULL_JOB]: req(['ImagePullJobGate'], true, false, true, true),
  [AppFeature.CONTAINER_RECREATE_REQUEST]: req(['KruiseDaemon'], true, false, true, true),
  [AppFeature.CONTAINER_EXIT_PRIORITY]: req(['ContainerExitPriority'], false, true, false, true),
  [AppFeature.CONTAINER_LAUNCH_PRIORITY]: req(['PodWebhook'], false, true),
  [AppFeature.LIFECYCLE_MARK_POD_NOT_READY]: req(['PodWebhook'], false, true),
  [AppFeature.INPLACE_UPDATE_ENV_FROM_METADATA]: req(['InPlaceUpdateEnvFromMetadata'], true, false),
  [AppFeature.POD_PROBE_MARKER]: req(['PodProbeMarkerGate'], true, false),
  [AppFeature.WORKLOAD_SPREAD]: req(['WorkloadSpread'], false, true),
  [AppFeature.POD_UNAVAILABLE_BUDGET]: req(['PodUnavailableBudgetDeleteGate'], false, true),
  [AppFeature.RESOURCE_DISTRIBUTION]: req(['ResourceDistributionGate'], false, false),
  [AppFeature.DELETION_PROTECTION]: req(['ResourcesDeletionProtection'], false, false),
  [AppFeature.STATEFULSET_AUTO_DELETE_PVC]: req(['StatefulSetAutoDeletePVC'], false, false),
  [AppFeature.STATEFULSET_START_ORDINAL]: req(['StatefulSetStartOrdinal'], false, false),
};

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

/** One gate an app needs, and why. */
export interface GateRequirement {
  readonly gate: string;
  /** The feature use that needs it. */
  readonly use: FeatureUse;
  /** Set when the gate is needed only as a prerequisite of this other gate (cascade). */
  readonly via?: string;
}

/**
 * Every gate the given objects need to be on, with the resource that needs it. Cascade prerequisites
 * are included (SidecarTerminator needs KruiseDaemon, because KruiseDaemon=false turns it off).
 * Accepts rendered objects, or `{object, path}` pairs to have construct paths in messages.
 */
export function requiredGates(objects: readonly (KubeObject | SourcedObject)[]): GateRequirement[] {
  return gatesForUses(detectFeatures(objects.map(toSourced)));
}

export function toSourced(o: KubeObject | SourcedObject): SourcedObject {
  return 'object' in o && typeof (o as SourcedObject).object === 'object' && !('apiVersion' in o) ? (o as SourcedObject) : { object: o as KubeObject };
}

export function gatesForUses(uses: readonly FeatureUse[]): GateRequirement[] {
  const out: GateRequirement[] = [];
  for (const use of uses) {
    for (const g of FEATURE_REQUIREMENTS[use.feature].gates) {
      out.push({ gate: g, use });
      for (const p of prerequisitesOf(g)) out.push({ gate: p, use, via: g });
    }
  }
  return out;
}

/** Result of combining the app's needs with the user's overrides. */
export interface ResolvedGates {
  /** Effective value of every gate after overrides and cascades. */
  readonly values: ReadonlyMap<string, boolean>;
  /**
   * The `--feature-gates` value: every gate that is required or overridden, `Name=bool`, sorted by name
   * (explicit rather than relying on defaults, so the manifest says what the app depends on).
   */
  readonly flag: string;
  /** Gates that must be on (deduplicated, sorted), with the first resource needing each. */
  readonly required: ReadonlyMap<string, GateRequirement>;
  /** Conflicts between forced-off gates and the app's needs; non-empty means synth must fail. */
  readonly conflicts: readonly string[];
}

/** Rejects unknown gate names with the list of known ones (eager error for a typo). */
export function checkGateNames(overrides: Readonly<Record<string, boolean>>, where: string): void {
  for (const name of Object.keys(overrides)) {
    if (!GATES_BY_NAME.has(name)) {
      throw new Error(`${where}: unknown feature gate "${name}". Known gates: ${FEATURE_GATES.map((g) => g.name).join(', ')}`);
    }
  }
}

/**
 * Applies overrides and requirements, then upstream's cascades, and reports every gate the app needs
 * that ends up off because the user forced it (or its cascade parent) off.
 */
export function resolveGates(requirements: readonly GateRequirement[], overrides: Readonly<Record<string, boolean>> = {}): ResolvedGates {
  checkGateNames(overrides, 'featureGates');
  const required = new Map<string, GateRequirement>();
  for (const r of [...requirements].sort((a, b) => a.gate.localeCompare(b.gate))) {
    if (!required.has(r.gate)) required.set(r.gate, r);
  }
  const values = new Map<string, boolean>(FEATURE_GATES.map((g) => [g.name, g.default]));
  for (const g of required.keys()) values.set(g, true);
  for (const [g, v] of Object.entries(overrides)) values.set(g, v);
  applyCascades(values);

  const conflicts: string[] = [];
  for (const [g, r] of required) {
    if (values.get(g)) continue;
    const forcedOff = overrides[g] === false ? g : prerequisitesOf(g).find((p) => overrides[p] === false) ?? g;
    const needer = r.via ? `${r.via} (which needs ${g})` : g;
    const how = forcedOff === g ? `feature gate ${g} is forced off` : `feature gate ${forcedOff} is forced off, which turns off ${g}`;
    conflicts.push(
      `${how}, but ${describeRef(r.use.resource)} uses ${r.use.feature}${r.use.pointer ? ` at ${r.use.pointer}` : ''}, which needs ${needer}. ` +
        `Remove the override ${forcedOff}=false or remove the resource.`,
    );
  }
  const flagged = new Set<string>([...required.keys(), ...Object.keys(overrides)]);
  const flag = [...flagged].sort().map((g) => `${g}=${values.get(g)}`).join(',');
  return { values, flag, required, conflicts: [...new Set(conflicts)] };
}

function applyCascades(values: Map<string, boolean>): void {
  // Upstream applies the cascades once in a fixed order; iterate to a fixed point so that chains
  // (ResourcesDeletionProtection → DeletionProtectionForCRDCascadingGate) settle regardless of order.
  for (let changed = true; changed; ) {
    changed = false;
    for (const c of GATE_CASCADES) {
      if (values.get(c.parent) !== c.when) continue;
      for (const f of c.forces) {
        if (values.get(f) !== c.to) {
          values.set(f, c.to);
          changed = true;
        }
      }
    }
  }
}

/** The feature uses that need the node daemon / the pod webhook. */
export function needsDaemon(uses: readonly FeatureUse[]): FeatureUse | undefined {
  return uses.find((u) => FEATURE_REQUIREMENTS[u.feature].daemon);
}
export function needsPodWebhook(uses: readonly FeatureUse[]): FeatureUse | undefined {
  return uses.find((u) => FEATURE_REQUIREMENTS[u.feature].podWebhook);
}

/** Markdown table of the gates an app needs (used in the openkruise-target report and docs). */
export function gatesMarkdownTable(resolved: ResolvedGates): string {
  const rows = [...resolved.required.values()].map((r) => {
    const spec = GATES_BY_NAME.get(r.gate)!;
    return `| ${r.gate} | ${spec.default} | ${spec.stage} | ${describeRef(r.use.resource)}: ${r.use.feature}${r.via ? ` (via ${r.via})` : ''} |`;
  });
  return ['| gate | upstream default | stage | needed by |', '|---|---|---|---|', ...rows].join('\n');
}

/**
 * The `--feature-gates` overrides of a controller-manager found among `objects` (ours: command
 * `cdk8s-kruise controller`; upstream: the `manager` container of `kruise-controller-manager`), or
 * undefined when the objects hold no install. Unknown names are kept: the caller decides.
 */
export function featureGatesOfInstall(objects: readonly KubeObject[]): Record<string, boolean> | undefined {
  for (const o of objects) {
    if (o.kind !== 'Deployment') continue;
    const containers = ((o.spec as { template?: { spec?: { containers?: unknown } } } | undefined)?.template?.spec?.containers ?? []) as { name?: string; command?: string[]; args?: string[] }[];
    for (const c of containers) {
      const ours = c.command?.[0] === 'cdk8s-kruise' && c.args?.[0] === 'controller';
      const upstream = o.metadata?.name === 'kruise-controller-manager' && c.name === 'manager';
      if (!ours && !upstream) continue;
      const out: Record<string, boolean> = {};
      for (const arg of c.args ?? []) {
        const m = /^--feature-gates=(.*)$/.exec(arg);
        if (!m) continue;
        for (const part of m[1]!.split(',').filter(Boolean)) {
          const [name, value] = part.split('=');
          if (name) out[name.trim()] = /^true$/i.test((value ?? '').trim());
        }
      }
      return out;
    }
  }
  return undefined;
}

/**
 * Conflicts between what the app's objects need and the gates the install in the same output
 * passes (for the policy engine's feature-gate rule). Empty when there is no install in `objects`.
 */
export function installGateConflicts(objects: readonly (KubeObject | SourcedObject)[]): string[] {
  const sourced = objects.map(toSourced);
  const overrides = featureGatesOfInstall(sourced.map((s) => s.object));
  if (!overrides) return [];
  const known = Object.fromEntries(Object.entries(overrides).filter(([g]) => GATES_BY_NAME.has(g)));
  return [...resolveGates(requiredGates(sourced), known).conflicts];
}

export { AppFeature };

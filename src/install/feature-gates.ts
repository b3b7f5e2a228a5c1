import {
  AppFeature,
  applyGateCascades,
  FEATURE_GATES,
  GATE_CASCADES,
  gateSpec,
  GateStage,
  needsOf,
  prerequisitesOf,
  type GateCascade,
  type RuntimeName,
  type GateSpec,
} from '../contracts/features.js';
import { detectFeatures, type FeatureUse } from './app-features.js';
import type { KubeObject, SourcedObject } from './types.js';
import { describeRef } from './types.js';

/**
 * Gate resolution for an install: which gates an app needs (from the feature table in the contract
 * layer), the user's overrides, upstream's cascades, and the conflicts between them.
 */

export { FEATURE_GATES, GATE_CASCADES, gateSpec, GateStage, prerequisitesOf, type GateCascade, type GateSpec };

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
 * Accepts rendered objects, or `{object, path}` pairs to have construct paths in messages. With a `runtime`,
 * only what that runtime needs for the features it carries out; without, the gates the feature table declares.
 */
export function requiredGates(objects: readonly (KubeObject | SourcedObject)[], runtime?: RuntimeName): GateRequirement[] {
  return gatesForUses(detectFeatures(objects.map(toSourced)), runtime);
}

export function toSourced(o: KubeObject | SourcedObject): SourcedObject {
  return 'object' in o && typeof (o as SourcedObject).object === 'object' && !('apiVersion' in o)
    ? (o as SourcedObject)
    : { object: o as KubeObject };
}

export function gatesForUses(uses: readonly FeatureUse[], runtime?: RuntimeName): GateRequirement[] {
  const out: GateRequirement[] = [];
  for (const use of uses) {
    for (const g of needsOf(use.feature, runtime).gates) {
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
    if (!(gateSpec(name) !== undefined)) {
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
  applyGateCascades(values);

  const conflicts: string[] = [];
  for (const [g, r] of required) {
    if (values.get(g)) continue;
    const forcedOff = overrides[g] === false ? g : (prerequisitesOf(g).find((p) => overrides[p] === false) ?? g);
    const needer = r.via ? `${r.via} (which needs ${g})` : g;
    const how = forcedOff === g ? `feature gate ${g} is forced off` : `feature gate ${forcedOff} is forced off, which turns off ${g}`;
    conflicts.push(
      `${how}, but ${describeRef(r.use.resource)} uses ${r.use.feature}${r.use.pointer ? ` at ${r.use.pointer}` : ''}, which needs ${needer}. ` +
        `Remove the override ${forcedOff}=false or remove the resource.`,
    );
  }
  const flagged = new Set<string>([...required.keys(), ...Object.keys(overrides)]);
  const flag = [...flagged]
    .sort()
    .map((g) => `${g}=${values.get(g)}`)
    .join(',');
  return { values, flag, required, conflicts: [...new Set(conflicts)] };
}

/** The first feature use that needs the node daemon / the pod webhook of `runtime` (default: as the table declares). */
export function needsDaemon(uses: readonly FeatureUse[], runtime?: RuntimeName): FeatureUse | undefined {
  return uses.find((u) => needsOf(u.feature, runtime).daemon);
}
export function needsPodWebhook(uses: readonly FeatureUse[], runtime?: RuntimeName): FeatureUse | undefined {
  return uses.find((u) => needsOf(u.feature, runtime).podWebhook);
}

/** Markdown table of the gates an app needs (used in the openkruise-target report and docs). */
export function gatesMarkdownTable(resolved: ResolvedGates): string {
  const rows = [...resolved.required.values()].map((r) => {
    const spec = gateSpec(r.gate)!;
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
    const containers = ((o.spec as { template?: { spec?: { containers?: unknown } } } | undefined)?.template?.spec?.containers ?? []) as {
      name?: string;
      command?: string[];
      args?: string[];
    }[];
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
  const known = Object.fromEntries(Object.entries(overrides).filter(([g]) => gateSpec(g) !== undefined));
  return [...resolveGates(requiredGates(sourced), known).conflicts];
}

export { AppFeature };

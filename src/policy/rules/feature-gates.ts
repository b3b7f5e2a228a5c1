import {
  FEATURE_GATES,
  gatesForUses,
  prerequisitesOf,
  requiredGates,
  resolveGates,
  type GateRequirement,
} from '../../install/feature-gates.js';
import { BUNDLED_RUNTIME_GATES } from '../../contracts/features.js';
import { arr, containers, featureUsesOf, obj, podTemplates } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { quoteValue } from '../../api/quote.js';

const FLAG = '--feature-gates=';

/** A `--feature-gates` flag found on a container of the install manifests. */
interface GateConfig {
  readonly where: string;
  readonly explicit: ReadonlyMap<string, boolean>;
  /** Effective values after defaults and upstream cascades. */
  readonly values: ReadonlyMap<string, boolean>;
  /** Gates this install's runtime knows; others are not judged (the runtime ignores or lacks them). */
  readonly universe: ReadonlySet<string>;
  /** Whose install it is: what a use needs depends on how that runtime carries it out. */
  readonly runtime: 'bundled' | 'upstream';
}

const KNOWN = new Set<string>(FEATURE_GATES.map((g) => g.name));

function gateConfigs(manifests: readonly Manifest[]): GateConfig[] {
  const out: GateConfig[] = [];
  for (const m of manifests) {
    for (const t of podTemplates(m)) {
      for (const c of containers(t)) {
        for (const a of [...arr(c.value.args), ...arr(c.value.command)]) {
          if (typeof a !== 'string' || !a.startsWith(FLAG)) continue;
          const explicit = new Map<string, boolean>();
          for (const part of a.slice(FLAG.length).split(',')) {
            const match = /^\s*([A-Za-z0-9]+)=(true|false)\s*$/i.exec(part);
            if (match && KNOWN.has(match[1]!)) explicit.set(match[1]!, match[2]!.toLowerCase() === 'true');
          }
          // The bundled runtime's flag names only gates it implements; an upstream kruise-manager flag may name any.
          const bundled = [...explicit.keys()].every((g) => g in BUNDLED_RUNTIME_GATES);
          const universe = new Set(
            bundled ? Object.keys(BUNDLED_RUNTIME_GATES) : FEATURE_GATES.filter((g) => g.upstream).map((g) => g.name),
          );
          const values = resolveGates([], Object.fromEntries(explicit)).values;
          const meta = obj(m.object.metadata);
          out.push({
            where: `${String(m.object.kind)} ${typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/` : ''}${quoteValue(meta.name)} container ${quoteValue(c.name)}`,
            explicit,
            values,
            universe,
            runtime: bundled ? 'bundled' : 'upstream',
          });
        }
      }
    }
  }
  return out;
}

function whyOff(gate: string, cfg: GateConfig): string {
  if (cfg.explicit.get(gate) === false) return `it sets ${gate}=false`;
  const parent = prerequisitesOf(gate).find((p) => cfg.values.get(p) === false);
  if (parent) return `it sets ${parent}=false, which turns ${gate} off`;
  return `${gate} is off by default and the flag does not enable it`;
}

export const featureGateDisabled: Rule = {
  id: 'KRUISE-GATE-001',
  severity: 'error',
  title: 'Resource needs a feature gate that the install manifests turn off',
  doc:
    'Several Kruise features only work when a runtime feature gate is on: SidecarTerminator for Job sidecar ' +
    'markers, ImagePullJobGate (and KruiseDaemon) for ImagePullJobs, KruiseDaemon for ContainerRecreateRequests, ' +
    'PodWebhook for SidecarSets. When the install manifests in the same output (a container with --feature-gates, ' +
    'as the KruiseRuntime construct or the upstream chart renders it) leave such a gate off, explicitly or through ' +
    'an upstream cascade such as KruiseDaemon=false, the resource is accepted by the API server but never acted on ' +
    '(or rejected by the webhook). Outputs without install manifests are not judged.',
  retain: (m) => (gateConfigs([m]).length > 0 || gatesForUses(featureUsesOf(m.object)).length > 0 ? m.object : undefined),
  // Without install manifests (a --feature-gates flag) nothing is judged: see check.
  activatedBy: (m) => gateConfigs([m]).length > 0,
  check(manifests) {
    const configs = gateConfigs(manifests);
    if (configs.length === 0) return [];
    const sourced = manifests.map((m, i) => ({ object: m.object as never, path: String(i) }));
    const needsOf = new Map<'bundled' | 'upstream', GateRequirement[]>();
    const needs = (runtime: 'bundled' | 'upstream') => {
      let n = needsOf.get(runtime);
      if (!n) needsOf.set(runtime, (n = requiredGates(sourced, runtime)));
      return n;
    };
    const out: RuleFinding[] = [];
    const seen = new Set<string>();
    for (const cfg of configs) {
      for (const need of needs(cfg.runtime)) {
        const manifest = manifests[Number(need.use.resource.path)];
        if (!manifest) continue;
        if (!cfg.universe.has(need.gate) || cfg.values.get(need.gate) !== false) continue;
        // Off only because a prerequisite is off: the prerequisite's own finding says it once.
        if (
          cfg.explicit.get(need.gate) !== false &&
          prerequisitesOf(need.gate).some((p) => cfg.values.get(p) === false && cfg.universe.has(p))
        )
          continue;
        const key = `${need.use.resource.path}|${need.use.pointer}|${need.gate}|${cfg.where}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({
          manifest,
          jsonPointer: need.use.pointer,
          message: `${need.use.feature} needs feature gate ${need.gate}${need.via ? ` (required by ${need.via})` : ''}, but the install's ${cfg.where} leaves it off: ${whyOff(need.gate, cfg)}`,
          hint: `Turn ${need.gate} on in the install (KruiseRuntime featureGates, or --feature-gates=${need.gate}=true), or remove this use.`,
        });
      }
    }
    return out;
  },
};

export const FEATURE_GATE_RULES = [featureGateDisabled];
